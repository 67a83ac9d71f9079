"""Agents with the LLM isolated by a scripted callable; run settings; results and the HTML report."""
from __future__ import annotations

import json
import math

import pytest

from agentenv_webarena.tasks.reference import ReplayError
from agentenv_webarena.webarena.agent import PromptAgent, TeacherForcingAgent, construct_agent
from agentenv_webarena.webarena.agent.prompts import DEFAULT_INSTRUCTION
from agentenv_webarena.webarena.agent.prompts.prompt_constructor import CharCodec, PromptState, build_prompt_constructor
from agentenv_webarena.webarena.report import EpisodeRecord, StepRecord, render_html, summarize, wilson_interval
from agentenv_webarena.webarena.run import RunConfig, build_arg_parser, select_tasks

STATE = PromptState("Tab 0 (current): Home\n\n[1] RootWebArea 'Home'", "http://x/", "Do it", "None")


class Scripted:
    mode = "chat"
    codec = CharCodec()

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts = []

    def __call__(self, prompt):
        self.prompts.append(prompt)
        return self.replies.pop(0)

    def close(self):
        pass


def _agent(replies, max_retry):
    return PromptAgent(build_prompt_constructor(DEFAULT_INSTRUCTION), Scripted(replies), max_retry=max_retry)


def test_prompt_agent_retries_until_a_valid_action():
    agent = _agent(["hmm", "```clack [3]```", "In summary, the next action I will perform is ```click [3]```"], 3)
    out = agent.next_action(STATE)
    assert out.action == "click [3]" and out.env_text == "```click [3]```"
    assert out.attempts[:2] == ["hmm", "```clack [3]```"] and len(agent.llm.prompts) == 3
    assert agent.llm.prompts[0] == agent.llm.prompts[2]  # a retry asks the same prompt again


def test_prompt_agent_gives_the_last_reply_to_the_env_after_max_retry():
    out = _agent(["no action", "still none", "```click [1]```"], 2).next_action(STATE)
    assert out.action == "" and out.attempts == ["no action", "still none"]
    assert out.env_text == "still none" and "cannot find an action" in out.parse_error
    with pytest.raises(ValueError, match="max_retry"):
        _agent([], 0)


def test_teacher_forcing_resolves_elements_and_substitutes_urls():
    task = {"task_id": 3, "reference_action_sequence": [
        {"action": "click", "element": {"role": "link", "name": "Next"}},
        {"action": "goto", "url": "__SHOPPING__/cart"}, {"action": "stop", "answer": "$1"}]}
    agent = TeacherForcingAgent()
    agent.reset(task, {"shopping": "http://127.0.0.1:9"})
    meta = {"obs_nodes_info": {"7": {"role": "link", "name": "Next"}}}
    assert agent.next_action(STATE, meta).env_text == "```click [7]```"
    assert agent.next_action(STATE, meta).action == "goto [http://127.0.0.1:9/cart]"
    assert agent.next_action(STATE, meta).action == "stop [$1]"
    with pytest.raises(ValueError, match="only 3 steps"):
        agent.next_action(STATE, meta)
    agent.reset(task, {})
    empty = {"obs_nodes_info": {}}
    assert [agent.next_action(STATE, empty).action for _ in range(2)] == ["scroll [down]"] * 2
    with pytest.raises(ReplayError, match="Next"):
        agent.next_action(STATE, empty)  # nothing in view to pause on between scrolls: give up


def test_teacher_forcing_scrolls_to_an_element_below_the_fold():
    task = {"task_id": 3, "reference_action_sequence": [
        {"action": "click", "element": {"role": "link", "name": "Next"}}, {"action": "stop", "answer": "$1"}]}
    agent = TeacherForcingAgent()
    agent.reset(task, {})
    above = {"obs_nodes_info": {"1": {"role": "StaticText", "name": "Top", "backend_id": 4,
                                      "union_bound": [10, 10, 100, 20]}}}
    moves = [agent.next_action(STATE, above).action for _ in range(4)]
    assert moves == ["scroll [down]", "scroll [down]", "hover [1]", "scroll [down]"]  # never 3 alike in a row
    assert agent.next_action(STATE, {"obs_nodes_info": {"7": {"role": "link", "name": "Next"}}}).action == "click [7]"
    assert agent.next_action(STATE, above).action == "stop [$1]"
    with pytest.raises(ValueError, match="reference_action_sequence"):
        agent.reset({"task_id": 1}, {})


def test_construct_agent():
    assert isinstance(construct_agent(RunConfig(agent_type="teacher_forcing")), TeacherForcingAgent)
    llm = Scripted([])
    agent = construct_agent(RunConfig(model="m", max_retry=2, max_obs_length=5), llm=llm)
    assert isinstance(agent, PromptAgent) and agent.llm is llm and agent.max_retry == 2
    assert agent.prompt_constructor.max_obs_length == 5
    with pytest.raises(ValueError, match="teacher_forcing"):
        construct_agent(type("A", (), {"agent_type": "random"})())


def test_run_flags_follow_webarena_and_defaults_come_from_run_config():
    args = build_arg_parser().parse_args(["--agent_type", "teacher_forcing", "--env-addr", "http://h:1",
                                          "--current_viewport_only", "--test_end_idx", "4"])
    cfg = RunConfig(**vars(args))
    assert cfg.env_addr == "http://h:1" and cfg.current_viewport_only and cfg.test_end_idx == 4
    limits = (cfg.max_steps, cfg.parsing_failure_th, cfg.repeating_action_failure_th, cfg.max_obs_length)
    assert limits == (30, 3, 3, 1920)
    assert (cfg.temperature, cfg.top_p, cfg.max_tokens, cfg.max_retry, cfg.mode) == (1.0, 0.9, 384, 1, "chat")
    with pytest.raises(ValueError, match="--model"):
        RunConfig(agent_type="prompt")
    with pytest.raises(ValueError, match="max_steps"):
        RunConfig(agent_type="teacher_forcing", max_steps=0)
    with pytest.raises(SystemExit):
        build_arg_parser().parse_args(["--observation_type", "html"])


def test_select_tasks(tmp_path):
    assert select_tasks(10, None, 2, 5) == [2, 3, 4]
    assert select_tasks(3, None, 0, None) == [0, 1, 2]
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps([{"item_id": f"webarena_{i}"} for i in (7, 1, 4)]))
    assert select_tasks(10, str(ids), 1, None) == [1, 4]
    with pytest.raises(ValueError, match="outside"):
        select_tasks(5, str(ids), 0, None)


def test_wilson_interval_and_results():
    lo, hi = wilson_interval(8, 10)
    assert math.isclose(lo, 0.4902, abs_tol=1e-4) and math.isclose(hi, 0.9433, abs_tol=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0) and wilson_interval(5, 5)[1] == 1.0
    records = [EpisodeRecord(1, 1, "a", score=1.0), EpisodeRecord(2, 2, "b", error="boom")]
    out = summarize(records, {"agent_type": "prompt"})
    assert (out["tasks"], out["success"], out["success_rate"], out["errors"]) == (2, 1, 0.5, 1)
    assert out["per_task"][1] == {"task_id": 2, "score": 0.0, "steps": 0, "error": "boom", "eval_status": "",
                                  "early_stop": "", "seconds": 0.0}
    assert out["agent_type"] == "prompt"


def test_html_report_escapes_and_lists_each_step():
    record = EpisodeRecord(4, 4, "Find <b>it</b>", score=0.0, early_stop="Same action for 3 times", steps=[
        StepRecord("[1] link '<script>'", "http://x/", "None", "resp <i>1</i>", "click [1]", attempts=["bad", "resp"]),
        StepRecord("obs2", "http://x/2", "click [1]", "junk", "", parse_error="no action")])
    page = render_html(record)
    assert page.count('<section class="step"') == 2 and "<script>" not in page and "&lt;script&gt;" in page
    assert "Replies retried (1)" in page and "Parse error: no action" in page and "0 (FAIL)" in page
    assert "data:image/png" not in page
