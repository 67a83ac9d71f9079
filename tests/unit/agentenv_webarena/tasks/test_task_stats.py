"""`python -m agentenv_webarena.tasks.stats`: the suite's numbers, and the replay's scrolling moves
(`tasks.reference.seek_actions`, `pause_action`). Page heights need Chromium: `--pages`, not run here."""
from __future__ import annotations

import json
import os

import pytest

from agentenv_webarena.tasks import generate, reference, stats
from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


@pytest.fixture(scope="module")
def tasks():
    return load_tasks(EMBEDDED_TASK_FILE)


def _task(template_id, sites, sequence_len, *, eval_types=("string_match",), answers=None, locators=()):
    return {"intent_template_id": template_id, "sites": sites,
            "reference_action_sequence": [{"action": "click"}] * (sequence_len - 1) + [{"action": "stop"}],
            "eval": {"eval_types": list(eval_types), "reference_answers": answers,
                     "program_html": [{"locator": loc} for loc in locators]}}


def test_suite_stats_counts_what_it_names():
    tasks = [
        _task(1, ["shopping"], 2, answers={"fuzzy_match": "N/A"}),
        _task(1, ["shopping"], 4, answers={"exact_match": "x"}),
        _task(2, ["reddit"], 3, answers={"fuzzy_match": ["a title"]}),
        _task(3, ["shopping", "reddit"], 5, eval_types=("program_html",), locators=("",)),
        _task(3, ["shopping", "reddit"], 5, eval_types=("program_html",), locators=("document.title",)),
        _task(4, ["reddit"], 2, answers={"fuzzy_match": "N/A"}),
    ]
    s = stats.suite_stats(tasks)
    assert (s["tasks"], s["templates"], s["one_action"], s["state_changing"], s["whole_page_checks"]) == (6, 4, 2, 2, 1)
    assert s["tasks_per_site"] == {"shopping": 2, "reddit": 2, "cross-site": 2}
    assert (s["needs_judge"], s["na_tasks"], s["all_na_templates"]) == (1, 2, [4])
    assert s["site_pairs"] == {"reddit+shopping": 2}
    assert s["eval_kinds_missing"] == {"reddit": ["url_match"], "shopping": ["url_match"]}


def test_split_stats_of_the_packaged_lists(tasks):
    out = stats.split_stats(tasks, os.path.join(ROOT, "AgentItemId"))
    assert set(out["splits"]) == set(generate.SPLITS)
    assert sum(s["tasks"] for s in out["splits"].values()) == len(tasks)
    assert out["shared_templates"] == 0 and out["test_tasks_sharing_a_train_template"] == 0
    assert out["held_out_share"] >= 0.2 and out["held_out_sites"] == sorted(stats.SITE_KINDS)
    assert stats.suite_stats(tasks)["eval_kinds_missing"] == {}
    assert out["splits"]["train"]["needs_judge"] == 0


def test_the_cli_prints_a_table_or_json(capsys):
    stats.main(["--ids-dir", os.path.join(ROOT, "AgentItemId")])
    table = capsys.readouterr().out
    assert "held-out templates (test only)" in table and "one action + stop" in table
    stats.main(["--ids-dir", os.path.join(ROOT, "AgentItemId"), "--json"])
    assert json.loads(capsys.readouterr().out)["tasks"] > 500


def test_seek_moves_never_repeat_an_action_three_times():
    moves = reference.seek_actions(7, 4)
    assert moves.count("scroll [down]") == 7 and moves.count("scroll [up]") == 4
    assert all(not (a == b == c) for a, b, c in zip(moves, moves[1:], moves[2:], strict=False))
    assert moves.index("scroll [up]") > max(i for i, m in enumerate(moves) if m == "scroll [down]")


def test_pause_hovers_over_text_wholly_in_view():
    nodes = {"1": {"role": "link", "name": "a", "backend_id": 5, "union_bound": [0, 10, 50, 20]},
             "2": {"role": "StaticText", "name": "cut", "backend_id": 6, "union_bound": [0, -8, 50, 20]},
             "3": {"role": "StaticText", "name": "shown", "backend_id": 7, "union_bound": [0, 40, 50, 20]}}
    assert reference.pause_action(nodes) == "hover [3]"
    with pytest.raises(reference.ReplayError, match="no text"):
        reference.pause_action({"1": nodes["1"], "2": nodes["2"]})
