"""Map task templates (`tasks.templates.map`, ids 6000-6199): the suite's targets and each task's shape."""
from __future__ import annotations

import collections

import pytest

from agentenv_webarena.sites.map import route
from agentenv_webarena.sites.map.roads import node_key
from agentenv_webarena.sites.map.search import lookup
from agentenv_webarena.tasks.generate import generate_tasks
from agentenv_webarena.tasks.templates import map as templates


@pytest.fixture(scope="module")
def tasks() -> list[dict]:
    return generate_tasks(only=["map"])


def _kinds(task: dict) -> set[str]:
    return set(task["eval"]["eval_types"])


def test_counts_ids_and_held_out_share(tasks):
    ids = [tid for tid, _ in templates.TEMPLATES]
    assert len(ids) >= 32 and len(set(ids)) == len(ids) and all(6000 <= i <= 6199 for i in ids)
    assert len(tasks) >= 180
    assert templates.TEST_ONLY_TEMPLATES <= set(ids) and len(templates.TEST_ONLY_TEMPLATES) * 5 >= len(ids)
    held = [t for t in tasks if t["intent_template_id"] in templates.TEST_ONLY_TEMPLATES]
    assert {"string_match", "program_html"} <= set().union(*(_kinds(t) for t in held))


def test_every_evaluator_kind_and_enough_page_state_tasks(tasks):
    kinds = collections.Counter(k for t in tasks for k in _kinds(t))
    assert {"string_match", "url_match", "program_html"} <= set(kinds)
    assert kinds["program_html"] >= 0.25 * len(tasks)
    answers = {k for t in tasks if "string_match" in _kinds(t) for k in t["eval"]["reference_answers"]}
    assert {"exact_match", "must_include"} <= answers and "fuzzy_match" not in answers


def test_multi_site_tasks_with_the_shop_admin(tasks):
    multi = [t for t in tasks if t["sites"] == ["map", "shopping_admin"]]
    assert len(multi) >= 6 and len({t["intent_template_id"] for t in multi}) >= 1
    assert all(" |AND| " in t["start_url"] for t in multi)


def test_sequences_are_short_and_answers_match_the_router(tasks):
    assert max(len(t["reference_action_sequence"]) for t in tasks) <= 29
    for t in tasks:
        if t["intent_template_id"] == 6000:  # travel time: the stop answer is the router's h:mm
            values = t["instantiation_dict"]
            mode = {"drive": "car", "cycle": "bicycle", "walk": "foot"}[values["verb"]]
            found = route(node_key(lookup(values["a"])), node_key(lookup(values["b"])), mode)
            assert t["eval"]["reference_answers"]["must_include"] == [found.time_text]
            assert t["reference_action_sequence"][-1]["answer"] == found.time_text


def test_generation_is_deterministic(tasks):
    assert generate_tasks(only=["map"]) == tasks


# State-changing template -> the intent slots its checks must contain verbatim (as tasks/test_task_realism.py
# declares for the other sites); [] = the check opens the target by its URL.
STATE_FIELDS = {6040: ["a", "b"], 6041: ["place"], 6042: ["place"], 6043: ["place"], 6044: [], 6045: ["text"],
                6046: [], 6047: [], 6048: ["phone"], 6049: ["hours"], 6050: ["url"], 6051: ["access"], 6052: []}


def test_state_checks_cover_the_fields_their_intents_name(tasks):
    state = [t for t in tasks if "program_html" in _kinds(t)]
    assert {t["intent_template_id"] for t in state} == set(STATE_FIELDS)
    for t in state:
        evidence = "\n".join(str(part) for target in t["eval"]["program_html"]
                             for part in (target["url"], target["locator"], *target["required_contents"].values()))
        for slot in STATE_FIELDS[t["intent_template_id"]]:
            assert str(t["instantiation_dict"][slot]) in evidence, (t["task_id"], slot)


def test_few_one_action_tasks_and_some_whole_page_checks(tasks):
    one_action = [t for t in tasks if len(t["reference_action_sequence"]) <= 2]
    assert len(one_action) <= 0.06 * len(tasks)
    state = [t for t in tasks if "program_html" in _kinds(t)]
    whole_page = [t for t in state if any(g["locator"] == "" for g in t["eval"]["program_html"])]
    assert len(whole_page) >= 0.10 * len(state)
