"""The embedded task suite (`tasks.generate` over `tasks.templates`): shape, coverage, splits, determinism.

Generates the suite once from the pristine seed and checks what the suite must be: WebArena's
task format with task_id == index, enough tasks and templates, every evaluator kind, state-changing
and multi-tab tasks, reference sequences that end in a stop, disjoint train/test splits with
test-only templates, and that the packaged `embedded.raw.json` is exactly what the generator writes.
"""
from __future__ import annotations

import json
import os
import random

import pytest

from agentenv_webarena.sites.apps import pristine_database
from agentenv_webarena.tasks import generate
from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks, start_urls, validate_task
from agentenv_webarena.tasks.templates import admin, load_templates, shopping
from agentenv_webarena.tasks.templates import test_only_templates as held_out_templates

SHOP_ADMIN = set(range(1000, 1100)) | set(range(2000, 2100))
B1_KEYS = ["sites", "task_id", "require_login", "storage_state", "start_url", "geolocation", "intent_template",
           "instantiation_dict", "intent", "require_reset", "eval", "intent_template_id"]


@pytest.fixture(scope="module")
def db():
    return pristine_database()


@pytest.fixture(scope="module")
def tasks(db):
    return generate.generate_tasks(db)


def _forum_present() -> bool:
    return any(3000 <= tid < 5000 for tid, _ in load_templates())


def test_format_and_numbering(tasks):
    for i, task in enumerate(tasks):
        assert task["task_id"] == i
        assert list(task)[:len(B1_KEYS)] == B1_KEYS
        assert task["require_login"] is True and task["require_reset"] is False
        assert task["storage_state"] is None and task["geolocation"] is None
        validate_task(task)
        assert task["reference_action_sequence"][-1]["action"] == "stop"
        assert "{{" not in task["intent"]
        for url in start_urls(task):
            assert url.startswith(("__SHOPPING__", "__SHOPPING_ADMIN__", "__REDDIT__"))


def test_sizes_and_template_ranges(tasks):
    ids = [t["intent_template_id"] for t in tasks]
    mine = [t for t in tasks if t["intent_template_id"] in SHOP_ADMIN]
    assert len({t["intent_template_id"] for t in mine}) >= 26
    for tid in {t["intent_template_id"] for t in mine}:
        assert 10 <= ids.count(tid) <= 15, tid
    for task in mine:
        site = task["sites"]
        assert site == (["shopping"] if task["intent_template_id"] < 2000 else ["shopping_admin"]) or \
            set(site) == {"shopping", "shopping_admin"}
    if _forum_present():
        assert len(tasks) >= 500 and len(set(ids)) >= 40
    else:
        assert len(mine) >= 300


def test_every_eval_kind_is_covered(tasks):
    mine = [t for t in tasks if t["intent_template_id"] in SHOP_ADMIN]
    kinds = set()
    for task in mine:
        ev = task["eval"]
        kinds.update(ev["eval_types"])
        answers = ev.get("reference_answers") or {}
        kinds.update(answers)
        if answers.get("fuzzy_match") == "N/A":
            kinds.add("N/A")
        for t in ev.get("program_html", []):
            if t["url"].startswith("func:shopping_get_latest_order_url"):
                kinds.add("func_url")
            if t["locator"].startswith("func:shopping_get_sku_latest_review_rating"):
                kinds.add("func_locator")
            if t.get("prep_actions"):
                kinds.add("prep_actions")
    assert kinds >= {"string_match", "url_match", "program_html", "exact_match", "must_include", "fuzzy_match", "N/A",
                     "func_url", "func_locator", "prep_actions"}
    multi_tab = {t["intent_template_id"] for t in mine if " |AND| " in t["start_url"]}
    assert len(multi_tab) >= 2


def test_state_changing_tasks_never_pass_at_the_start(tasks):
    # URL tasks: the start page must not already match; page-state tasks: their checks name new content
    for task in tasks:
        ev = task["eval"]
        if "url_match" in ev["eval_types"]:
            assert not generate._url_matches(start_urls(task)[0], ev["reference_url"]), task["task_id"]


def test_splits_are_disjoint_with_test_only_templates(tasks):
    train, test = generate.split_ids(tasks)
    assert not set(train) & set(test)
    assert sorted(train + test) == list(range(len(tasks)))
    assert len(test) >= 100
    train_templates = {tasks[i]["intent_template_id"] for i in train}
    held_out = {tasks[i]["intent_template_id"] for i in test} - train_templates
    assert len(held_out) >= 4
    assert shopping.TEST_ONLY_TEMPLATES | admin.TEST_ONLY_TEMPLATES <= held_out <= held_out_templates()


def test_generation_is_deterministic(db, tasks):
    again = generate.generate_tasks(pristine_database())
    assert json.dumps(again) == json.dumps(tasks)
    # one template run alone gives the same instances as inside the whole suite
    fn = dict(shopping.TEMPLATES)[1008]
    alone = fn(db, random.Random(generate.SEED * 100_000 + 1008))
    inside = [t for t in tasks if t["intent_template_id"] == 1008]
    assert [a["intent"] for a in alone] == [t["intent"] for t in inside]


def test_packaged_files_are_up_to_date(tasks, tmp_path):
    """embedded.raw.json and AgentItemId/webarena_*.json are what `generate` writes (run it after edits)."""
    packaged = load_tasks(EMBEDDED_TASK_FILE)
    assert packaged == json.loads(json.dumps(tasks)), "run: python -m agentenv_webarena.tasks.generate"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))
    train, test = generate.split_ids(tasks)
    generate.write_ids(tmp_path / "train.json", train)
    generate.write_ids(tmp_path / "test.json", test)
    for name, mine in (("webarena_train.json", "train.json"), ("webarena_test.json", "test.json")):
        with open(os.path.join(root, "AgentItemId", name)) as f, open(tmp_path / mine) as g:
            assert json.load(f) == json.load(g)
