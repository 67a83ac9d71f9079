"""The LLM judge path of a WebArena episode against a scripted OpenAI-compatible server on 127.0.0.1:
judged pass and fail (fuzzy_match and N/A reasons), the verdict cache, and every way of getting no
verdict (timeout, HTTP error, a reply without one) reporting `needs_judge`, never a silent 0.
The browser is isolated by a fake session (stop is scored without touching it)."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from helpers import ScriptedJudge

from agentenv_webarena import environment as envmod
from agentenv_webarena.webarena.browser_env import Observation
from agentenv_webarena.webarena.evaluation_harness import LLMJudge, judge_calls, judge_from_settings
from agentenv_webarena.webarena.report import EpisodeRecord, summarize


@pytest.fixture
def judge_server():
    server = ScriptedJudge()
    try:
        yield server
    finally:
        server.close()


class FakeBrowser:
    def __init__(self, host):
        self.page = SimpleNamespace(url="")

    async def open(self, start_urls, **kwargs):
        self.page.url = start_urls[0]

    async def observe(self):
        return Observation(text="Tab 0 (current): Home\n\n[1] RootWebArea 'Home'", nodes_info={}, url=self.page.url,
                           tabs=["Home"])

    async def close(self):
        pass


class FakeHost:
    def run(self, coro, timeout_s=None):
        return asyncio.run(asyncio.wait_for(coro, timeout_s))


def _task(task_id, intent, reference_answers, string_note=""):
    return {"sites": ["shopping"], "task_id": task_id, "require_login": False, "start_url": "__SHOPPING__/a",
            "intent": intent, "intent_template_id": task_id,
            "eval": {"eval_types": ["string_match"], "reference_answers": reference_answers, "reference_url": "",
                     "program_html": [], "string_note": string_note}}


TASKS = [
    _task(0, "What is the status of my order #121?", {"fuzzy_match": ["On Hold"]}),
    _task(1, "What is the SKU of the Officio Mug?", {"fuzzy_match": "N/A"},
          "The store does not sell a product named Officio Mug."),
]


def _session(monkeypatch, judge):
    monkeypatch.setattr(envmod, "BrowserSession", FakeBrowser)
    config = envmod.EnvConfig(site_urls={"shopping": "http://127.0.0.1:9"}, embedded=False, call_timeout_s=5)
    return envmod.WebarenaSession(envmod.WebarenaWorld(config, TASKS, FakeHost(), judge=judge))


def _play(session, task, answer):
    session.reset(task)
    return session.step(f"```stop [{answer}]```")


def test_fuzzy_match_judged_pass_and_fail(monkeypatch, judge_server):
    judge = LLMJudge(base_url=judge_server.url, api_key="sk-test", model="judge-model", timeout_s=5)
    session = _session(monkeypatch, judge)
    passed = _play(session, 0, "The order is on hold right now")
    assert (passed.reward, passed.info["eval_status"]) == (1.0, "scored") and "eval_error" not in passed.info
    failed = _play(session, 0, "It was delivered")
    assert (failed.reward, failed.info["eval_status"]) == (0.0, "scored")
    sent = judge_server.requests
    assert [r["path"] for r in sent] == ["/v1/chat/completions"] * 2
    assert sent[0]["body"]["model"] == "judge-model" and sent[0]["body"]["temperature"] == 0
    assert sent[0]["auth"] == "Bearer sk-test"
    prompt = sent[0]["body"]["messages"][-1]["content"]
    assert "What is the status of my order #121?" in prompt and "On Hold" in prompt
    assert "the order is on hold right now" in prompt  # the cleaned answer, as WebArena sends it


def test_na_reason_judged_same_and_different(monkeypatch, judge_server):
    session = _session(monkeypatch, LLMJudge(base_url=judge_server.url, timeout_s=5))
    assert _play(session, 1, "N/A").reward == 1.0 and not judge_server.requests  # exact N/A needs no judge
    assert _play(session, 1, "The shop does not sell that mug").reward == 1.0
    out = _play(session, 1, "The site was down")
    assert (out.reward, out.info["eval_status"]) == (0.0, "scored")
    prompt = judge_server.requests[0]["body"]["messages"][-1]["content"]
    assert "The store does not sell a product named Officio Mug." in prompt
    assert judge_server.requests[0]["auth"] is None  # no key: no Authorization header


def test_a_repeated_answer_is_judged_once(monkeypatch, judge_server):
    judge = LLMJudge(base_url=judge_server.url, timeout_s=5)
    session = _session(monkeypatch, judge)
    first = _play(session, 0, "it is on hold")
    again = _play(session, 0, "  'It is ON HOLD' ")  # the same cleaned answer
    assert first.reward == again.reward == 1.0 and len(judge_server.requests) == 1
    assert (judge.cache.hits, judge.cache.misses) == (1, 1)
    _play(session, 0, "it is on hold, yes")  # another answer is another question
    assert len(judge_server.requests) == 2


def test_the_verdict_cache_is_bounded():
    judge = LLMJudge(base_url="http://127.0.0.1:9/v1", cache_size=2)
    for i in range(3):
        judge.cache.put(("fuzzy_match", "q", "r", str(i)), 1.0)
    assert len(judge.cache) == 2 and judge.cache.get(("fuzzy_match", "q", "r", "0")) is None
    assert judge.cache.get(("fuzzy_match", "q", "r", "2")) == 1.0


@pytest.mark.parametrize("mode, message", [("slow", "did not answer within"), ("error", "HTTP 500"),
                                           ("no_verdict", "no correct/incorrect verdict")])
def test_no_verdict_is_needs_judge_never_a_silent_zero(monkeypatch, judge_server, mode, message):
    judge_server.mode = mode
    judge = LLMJudge(base_url=judge_server.url, timeout_s=0.5)
    session = _session(monkeypatch, judge)
    out = _play(session, 0, "it is on hold")
    assert out.done and out.reward == 0.0
    assert out.info["eval_status"] == "needs_judge" and message in out.info["eval_error"]
    judge_server.mode = "ok"  # failures are not cached: the next episode is judged
    assert _play(session, 0, "it is on hold").info["eval_status"] == "scored"


def test_without_a_judge_the_episode_needs_one(monkeypatch):
    out = _play(_session(monkeypatch, None), 0, "it is on hold")
    assert (out.reward, out.info["eval_status"]) == (0.0, "needs_judge")
    assert "--judge-base-url" in out.info["eval_error"]


def test_judge_calls_bounds_the_evaluation_time():
    assert judge_calls(TASKS[0]) == 1 and judge_calls(TASKS[1]) == 1
    assert judge_calls(_task(2, "q", {"fuzzy_match": ["a", "b", "c"]})) == 3
    assert judge_calls(_task(3, "q", {"exact_match": "a"})) == 0


def test_flags_win_over_the_environment():
    env = {"WEBARENA_JUDGE_BASE_URL": "http://env:1/v1", "OPENAI_API_KEY": "env-key", "WEBARENA_JUDGE_MODEL": "em"}
    judge = judge_from_settings("http://flag:2/v1/", None, "flag-key", 7.0, environ=env)
    assert (judge.base_url, judge.api_key, judge.model, judge.timeout_s) == ("http://flag:2/v1", "flag-key", "em", 7.0)
    assert judge_from_settings(environ=env).base_url == "http://env:1/v1"
    assert judge_from_settings(environ={}) is None
    assert judge_from_settings("http://flag:2/v1", environ={}).api_key == ""
    assert "flag-key" not in repr(judge)  # the key stays out of logs
    with pytest.raises(ValueError, match="--judge-base-url"):
        judge_from_settings("flag:2/v1", environ={})
    with pytest.raises(ValueError, match="--judge-timeout-s"):
        judge_from_settings("http://flag:2/v1", timeout_s=0, environ={})


def test_launch_and_run_cli_take_the_judge_flags(monkeypatch, tmp_path):
    from agentenv.server.launch import CPU_ONLY_ENV
    from agentenv_webarena import launch
    from agentenv_webarena.webarena.run import RunConfig, build_arg_parser

    for key, value in CPU_ONLY_ENV.items():  # launch hides the accelerators; undo it after the test
        monkeypatch.setenv(key, value)
    with pytest.raises(SystemExit) as exc:
        launch.main(["--judge-base-url", "ftp://judge/v1"])
    assert exc.value.code == 2
    args = build_arg_parser().parse_args(["--agent_type", "teacher_forcing", "--judge-base-url", "http://j:1/v1",
                                          "--judge-model", "m", "--judge_timeout_s", "5"])
    cfg = RunConfig(**vars(args))
    assert (cfg.judge_base_url, cfg.judge_model, cfg.judge_timeout_s, cfg.judge_api_key) == (
        "http://j:1/v1", "m", 5.0, None)
    with pytest.raises(ValueError, match="--judge-base-url"):
        RunConfig(agent_type="teacher_forcing", judge_base_url="j:1")


def test_run_results_leave_needs_judge_out_of_the_success_rate():
    records = [EpisodeRecord(1, 1, "a", score=1.0, eval_status="scored"),
               EpisodeRecord(2, 2, "b", score=0.0, eval_status="scored"),
               EpisodeRecord(3, 3, "c", score=0.0, eval_status="needs_judge", eval_error="no judge")]
    out = summarize(records)
    assert (out["tasks"], out["scored"], out["needs_judge"], out["success"], out["success_rate"]) == (3, 2, 1, 1, 0.5)
