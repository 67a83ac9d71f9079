"""Storefront and admin families added later (`templates.shop_families`, ids 9000-9099): shape, splits, answers.

Replaying the reference sequences needs Chromium and the env server (`agentenv_webarena.expert` against
`agentenv_webarena.launch`); here the templates are checked on the pristine data alone.
"""
from __future__ import annotations

import random

import pytest

from agentenv_webarena.sites.shop import money
from agentenv_webarena.sites.shop.admin_reports import bestsellers, refunds_report, shipping_report
from agentenv_webarena.sites.shop.model import next_product_id
from agentenv_webarena.tasks import generate, stats
from agentenv_webarena.tasks.templates import MODULES, load_templates, shop_families
from agentenv_webarena.tasks.templates.common import BASE_PRODUCTS


@pytest.fixture(scope="module")
def db():
    from agentenv_webarena.sites.apps import pristine_database

    return pristine_database()


@pytest.fixture(scope="module")
def by_template(db):
    return {tid: [{**generate._DEFAULTS, **raw, "task_id": 0, "intent_template_id": tid}
                  for raw in fn(db, random.Random(generate.SEED * 100_000 + tid))]
            for tid, fn in shop_families.TEMPLATES}


@pytest.fixture(scope="module")
def tasks(by_template):
    return [t for ts in by_template.values() for t in ts]


def test_ids_in_range_and_after_the_earlier_modules():
    ids = [tid for tid, _ in shop_families.TEMPLATES]
    assert len(ids) == len(set(ids)) and all(9000 <= tid < 9100 for tid in ids)
    assert MODULES.index("shop_families") == MODULES.index("classic") + 1
    assert [tid for tid, _ in load_templates(["shop_families"])] == ids


def test_every_template_produces_valid_distinct_tasks(by_template, tasks):
    assert len(by_template) >= 12 and len(tasks) >= 110
    for template_id, group in by_template.items():
        assert len(group) >= 4, f"template {template_id} produced too few tasks"
        assert len({t["intent"] for t in group}) == len(group), f"template {template_id} repeats an intent"
        for t in group:
            generate._check(t, f"template {template_id}: ")
    s = stats.suite_stats(tasks)
    assert not s["all_na_templates"] and 0.02 <= s["na_tasks"] / len(tasks) <= 0.08


def test_judge_scored_answers_only_in_held_out_templates(by_template):
    judged = {tid for tid, group in by_template.items() if any(stats.needs_judge(t) for t in group)}
    assert judged and judged <= shop_families.TEST_ONLY_TEMPLATES
    held = shop_families.TEST_ONLY_TEMPLATES
    assert len(held) / len(by_template) >= 0.2
    state = {tid for tid in held if any(stats.is_state_changing(t) for t in by_template[tid])}
    assert state and held - state


def test_report_answers_come_from_the_report_functions(db, by_template):
    for t in by_template[9005]:
        steps = [s for s in t["reference_action_sequence"] if s["action"] == "type"]
        row = refunds_report(db, "year", steps[0]["text"], steps[1]["text"])[0]
        assert t["eval"]["reference_answers"]["must_include"] == [str(row["orders"]), money(row["total"])]
    for t in by_template[9012]:
        steps = [s for s in t["reference_action_sequence"] if s["action"] == "type"]
        row = shipping_report(db, "year", steps[0]["text"], steps[1]["text"])[0]
        assert t["eval"]["reference_answers"]["must_include"] == [money(row["total"])]
    for t in by_template[9006]:
        if stats.is_na(t):  # a period after the store's last order
            continue
        steps = [s for s in t["reference_action_sequence"] if s["action"] == "type"]
        top, second = bestsellers(db, "year", steps[0]["text"], steps[1]["text"], limit=2)
        assert top["qty"] > second["qty"] and t["eval"]["reference_answers"]["must_include"] == [top["name"]]


def test_new_records_are_checked_on_the_id_they_will_get(db, by_template):
    product = next_product_id(db)  # the lowest free id: WebArena's catalog entities keep higher ids
    assert product == BASE_PRODUCTS + 1
    rule = db.execute("SELECT MAX(id) + 1 FROM shop_sales_rules").fetchone()[0]
    for tid, path in ((9000, f"/catalog/product/edit/id/{product}/"),
                      (9001, f"/sales_rule/promo_quote/edit/id/{rule}/")):
        for t in by_template[tid]:
            assert {target["url"] for target in t["eval"]["program_html"]} == {f"__SHOPPING_ADMIN__{path}"}
