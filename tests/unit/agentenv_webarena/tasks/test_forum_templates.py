"""Forum (3000-3099) and cross-site (4000-4099) task templates: valid, deterministic, covering.

Replaying the reference sequences needs Chromium and the env server (tests/e2e/test_webarena_suite.py);
here the templates are checked on the pristine data alone.
"""
from __future__ import annotations

import json
import random

import pytest

from agentenv_webarena.tasks import generate
from agentenv_webarena.tasks.config import start_urls
from agentenv_webarena.tasks.templates import cross, forum


@pytest.fixture(scope="module")
def db():
    from agentenv_webarena.sites.apps import pristine_database

    return pristine_database()


def _instances(db, module) -> dict[int, list[dict]]:
    out = {}
    for template_id, fn in module.TEMPLATES:
        out[template_id] = [{**generate._DEFAULTS, **raw, "task_id": 0, "intent_template_id": template_id}
                            for raw in fn(db, random.Random(generate.SEED * 100_000 + template_id))]
    return out


@pytest.fixture(scope="module")
def forum_tasks(db):
    return _instances(db, forum)


@pytest.fixture(scope="module")
def cross_tasks(db):
    return _instances(db, cross)


def test_ids_counts_and_validity(forum_tasks, cross_tasks):
    assert len(forum_tasks) >= 14 and all(3000 <= t < 3100 for t in forum_tasks)
    assert len(cross_tasks) >= 4 and all(4000 <= t < 4100 for t in cross_tasks)
    for template_id, tasks in {**forum_tasks, **cross_tasks}.items():
        assert 10 <= len(tasks) <= 15, template_id
        assert len({t["intent"] for t in tasks}) == len(tasks), f"template {template_id} repeats an intent"
        for t in tasks:
            generate._check(t, f"template {template_id}: ")  # validates, stop last, start URL not already a match
    assert forum.TEST_ONLY_TEMPLATES <= set(forum_tasks) and cross.TEST_ONLY_TEMPLATES <= set(cross_tasks)


def test_deterministic(db, forum_tasks, cross_tasks):
    again = {**_instances(db, forum), **_instances(db, cross)}
    assert json.dumps(again, sort_keys=True) == json.dumps({**forum_tasks, **cross_tasks}, sort_keys=True)


def test_eval_kinds_are_covered(forum_tasks, cross_tasks):
    tasks = [t for group in (forum_tasks, cross_tasks) for ts in group.values() for t in ts]
    answers = [t["eval"]["reference_answers"] or {} for t in tasks]
    assert any("exact_match" in a for a in answers) and any("must_include" in a for a in answers)
    assert any(a.get("fuzzy_match") == "N/A" for a in answers)
    assert any(isinstance(a.get("fuzzy_match"), list) for a in answers)
    kinds = [t["eval"]["eval_types"] for t in tasks]
    assert ["url_match"] in kinds and ["program_html"] in kinds and ["url_match", "program_html"] in kinds
    targets = [tg for t in tasks for tg in t["eval"]["program_html"]]
    assert any(tg["url"] == "func:reddit_get_post_url('__last_url__')" for tg in targets)
    assert any(tg.get("prep_actions") for tg in targets)


def test_cross_tasks_span_both_sites_and_tabs(cross_tasks):
    tasks = [t for ts in cross_tasks.values() for t in ts]
    assert all(t["sites"] == ["shopping", "reddit"] for t in tasks)
    multi_tab_templates = {t["intent_template_id"] for t in tasks if len(start_urls(t)) > 1}
    assert len(multi_tab_templates) >= 2
    for t in tasks:
        if len(start_urls(t)) > 1 and "program_html" in t["eval"]["eval_types"]:  # acts in the other tab
            assert any(step["action"] == "tab_focus" for step in t["reference_action_sequence"])


def test_reference_answers_match_string_evals(forum_tasks, cross_tasks):
    for tasks in (*forum_tasks.values(), *cross_tasks.values()):
        for t in tasks:
            answers = t["eval"]["reference_answers"]
            final = t["reference_action_sequence"][-1]["answer"]
            if not answers:
                continue
            if "exact_match" in answers:
                assert final == answers["exact_match"]
            elif "must_include" in answers:
                assert all(ref in final for ref in answers["must_include"])
            elif answers["fuzzy_match"] == "N/A":
                assert final == "N/A"
            else:  # equal answers score 1 without an LLM judge
                assert final == answers["fuzzy_match"][0]
