"""End to end: the WebArena server started with `--judge-base-url` grades a fuzzy_match answer through a
scripted OpenAI-compatible judge on 127.0.0.1, caches the verdict, and reports `needs_judge` (never a 0)
when the judge times out."""
from __future__ import annotations

import pytest
import requests
from helpers import ScriptedJudge, embedded_sites_env, launched_server, require_chromium

require_chromium()

from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks  # noqa: E402


def _verdict(prompt: str) -> str:
    """Correct when the student's answer contains the reference answer (case-insensitive)."""
    reference = prompt.split("reference answer:", 1)[1].split("\n", 1)[0].strip().lower()
    answer = prompt.split("student answer:", 1)[1].split("\n", 1)[0].strip().lower()
    return "correct" if reference in answer else "incorrect"


@pytest.fixture(scope="module")
def judge():
    server = ScriptedJudge(_verdict)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def server(judge):
    env = embedded_sites_env()
    args = ("--judge-base-url", judge.url, "--judge-model", "scripted", "--judge-timeout-s", "1")
    with launched_server("agentenv_webarena.launch", *args, env=env, timeout_s=120) as (base, _proc):
        yield base


def _play(server, env_idx, task, answer):
    assert requests.post(f"{server}/reset", json={"env_idx": env_idx, "idx": task}, timeout=120).ok
    return requests.post(f"{server}/step", json={"env_idx": env_idx, "action": f"```stop [{answer}]```"},
                         timeout=120).json()


def test_server_judges_fuzzy_answers_caches_them_and_reports_a_timeout(server, judge):
    tasks = load_tasks(EMBEDDED_TASK_FILE)
    task = next(i for i, t in enumerate(tasks) if isinstance((t["eval"]["reference_answers"] or {}).get("fuzzy_match"),
                                                              list) and t["eval"]["eval_types"] == ["string_match"])
    reference = tasks[task]["eval"]["reference_answers"]["fuzzy_match"][0]
    assert requests.get(f"{server}/tasks", timeout=10).json()["judge"] == "scripted"
    env_idx = requests.post(f"{server}/create", timeout=30).json()["env_idx"]
    try:
        right = _play(server, env_idx, task, f"I believe it is {reference} now")
        assert (right["reward"], right["info"]["eval_status"]) == (1.0, "scored")
        wrong = _play(server, env_idx, task, "I could not find it anywhere")
        assert (wrong["reward"], wrong["info"]["eval_status"]) == (0.0, "scored")
        assert len(judge.requests) == 2 and judge.requests[0]["body"]["model"] == "scripted"
        again = _play(server, env_idx, task, f"I believe it is {reference} now")
        assert again["reward"] == 1.0 and len(judge.requests) == 2  # the cached verdict: no request
        judge.mode = "slow"
        late = _play(server, env_idx, task, f"Surely {reference}")
        assert late["reward"] == 0.0 and late["info"]["eval_status"] == "needs_judge"
        assert "did not answer within" in late["info"]["eval_error"]
    finally:
        judge.mode = "ok"
        requests.post(f"{server}/close", json={"env_idx": env_idx}, timeout=30)
