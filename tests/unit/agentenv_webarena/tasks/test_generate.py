"""The embedded task suite (`tasks.generate` over `tasks.templates`): shape, coverage, splits, determinism.

Generates the suite once from the pristine seed and checks what the suite must be: WebArena's
task format with task_id == index, enough tasks and templates, every evaluator kind, state-changing
and multi-tab tasks, reference sequences that end in a stop, splits that measure generalisation
(held-out templates in test, no judge-scored task in train), and that the packaged
`embedded.raw.json` and `AgentItemId/webarena_*.json` are exactly what the generator writes.
Whether the tasks check what they ask: `test_task_realism.py`.
"""
from __future__ import annotations

import json
import os
import random

import pytest

from agentenv_webarena.sites.apps import pristine_database
from agentenv_webarena.tasks import generate, stats
from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, SITE_ENV_VARS, load_tasks, start_urls, validate_task
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
            assert url.startswith(tuple(f"__{var}__" for var in SITE_ENV_VARS.values())), url
        for site in task["sites"]:
            assert site in SITE_ENV_VARS, site


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


def _site_kind(task: dict) -> str:
    return task["sites"][0] if len(task["sites"]) == 1 else "cross-site"


def test_splits_are_disjoint_and_cover_every_task(tasks):
    splits = generate.split_ids(tasks)
    assert list(splits) == list(generate.SPLITS)
    ids = [i for indices in splits.values() for i in indices]
    assert sorted(ids) == list(range(len(tasks)))  # disjoint and covering
    assert len(splits["test"]) >= 100 and len(splits["train"]) >= 300 and splits["test_iid"]


def test_test_split_holds_only_held_out_templates(tasks):
    """`webarena_test.json` measures generalisation to unseen task kinds: no template of it is trained on,
    at least 20% of all templates are held out, and every site kind is among them."""
    splits = generate.split_ids(tasks)
    templates = {split: {tasks[i]["intent_template_id"] for i in ids} for split, ids in splits.items()}
    assert not templates["test"] & (templates["train"] | templates["test_iid"] | templates["judge"])
    assert templates["test"] == held_out_templates()
    assert shopping.TEST_ONLY_TEMPLATES | admin.TEST_ONLY_TEMPLATES <= templates["test"]
    all_templates = {t["intent_template_id"] for t in tasks}
    assert len(templates["test"]) >= 0.2 * len(all_templates)
    assert {_site_kind(tasks[i]) for i in splits["test"]} == set(stats.SITE_KINDS)
    for kind in stats.SITE_KINDS:  # held out per kind, not whole kinds
        assert any(_site_kind(tasks[i]) == kind for i in splits["train"]), kind
    # the in-template split: new instances of training templates only
    assert templates["test_iid"] <= templates["train"]


def test_no_training_task_needs_an_llm_judge(tasks):
    """A `fuzzy_match` against a reference is scored by an LLM judge: such tasks live in test or in
    `webarena_judge.json`, never in train (nor in test_iid). N/A tasks answered "N/A" need no judge."""
    splits = generate.split_ids(tasks)
    for split in ("train", "test_iid"):
        assert not [i for i in splits[split] if generate.judge_scored(tasks[i])], split
    assert all(generate.judge_scored(tasks[i]) for i in splits["judge"])
    judged = [i for i, t in enumerate(tasks) if generate.judge_scored(t)]
    assert judged and set(judged) <= set(splits["test"]) | set(splits["judge"])
    answers = [(t["eval"]["reference_answers"] or {}) for i, t in enumerate(tasks) if i in set(splits["train"])]
    assert any(a.get("fuzzy_match") == "N/A" for a in answers)  # infeasible tasks stay trainable


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
    for name, indices in generate.split_ids(tasks).items():
        generate.write_ids(tmp_path / f"{name}.json", indices)
        packaged_ids = os.path.join(root, "AgentItemId", f"webarena_{name}.json")
        with open(packaged_ids) as f, open(tmp_path / f"{name}.json") as g:
            assert json.load(f) == json.load(g), name
