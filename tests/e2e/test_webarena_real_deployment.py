"""A real deployment, faked: the embedded sites served without their per-env controls
(`python -m agentenv_webarena.sites --as-deployment`), reached through WebArena's site variables as any
real deployment is. The server takes them for real sites (one shared state, no reset, login through the
UI), so it runs state-changing tasks one at a time per site: a second one is refused with 409 `site_busy`
(or waits, with --site-lock-wait-s) while read-only tasks and other sites go on; --real-resets lifts it.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
import requests
from helpers import launched_server, require_chromium, stop_process

from agentenv_webarena.tasks import EMBEDDED_TASK_FILE, SITE_ENV_VARS, changes_state, load_tasks

require_chromium()

STOP = "```stop [done]```"


@pytest.fixture(scope="module")
def deployment_env(tmp_path_factory):
    """WebArena's site variables pointing at the embedded sites served as a deployment."""
    urls_file = tmp_path_factory.mktemp("deployment") / "urls.json"
    proc = subprocess.Popen([sys.executable, "-m", "agentenv_webarena.sites", "--as-deployment",
                             "--urls-file", str(urls_file)], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not urls_file.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the sites did not start"
            time.sleep(0.1)
        urls = json.loads(urls_file.read_text())
        yield {SITE_ENV_VARS[site]: url for site, url in urls.items()}
    finally:
        stop_process(proc, timeout_s=15)


@pytest.fixture(scope="module")
def picks():
    """Task indices: two state-changing forum tasks, a read-only forum task, a state-changing code-host task."""
    tasks = load_tasks(EMBEDDED_TASK_FILE)

    def pick(site: str, changing: bool, n: int = 1) -> list[int]:
        return [i for i, t in enumerate(tasks) if t["sites"] == [site] and changes_state(t) is changing][:n]

    forum_a, forum_b = pick("reddit", True, 2)
    return {"forum_a": forum_a, "forum_b": forum_b, "forum_read": pick("reddit", False)[0],
            "gitlab": pick("gitlab", True)[0]}


def _create(base: str) -> int:
    return requests.post(base + "/create", timeout=30).json()["env_idx"]


def _reset(base: str, env_idx: int, idx: int) -> requests.Response:
    return requests.post(base + "/reset", json={"env_idx": env_idx, "idx": idx}, timeout=120)


def test_state_changing_episodes_run_one_at_a_time_per_site(deployment_env, picks):
    with launched_server("agentenv_webarena.launch", env=deployment_env) as (base, _proc):
        info = requests.get(base + "/tasks", timeout=10).json()
        assert info["embedded"] is False and info["state_guard"] == {"on": True, "held": {}}
        a, b, reader, coder = (_create(base) for _ in range(4))
        assert _reset(base, a, picks["forum_a"]).status_code == 200
        refused = _reset(base, b, picks["forum_b"])
        assert refused.status_code == 409
        error = refused.json()["error"]
        assert error["code"] == "site_busy" and error["site"] == "reddit"
        assert error["holder"] == {"env_idx": a, "task_index": picks["forum_a"], "task_id": picks["forum_a"]}
        assert "--real-resets" in error["message"]
        assert _reset(base, reader, picks["forum_read"]).status_code == 200  # read-only: not held, not refused
        assert _reset(base, coder, picks["gitlab"]).status_code == 200  # another site
        held = requests.get(base + "/tasks", timeout=10).json()["state_guard"]["held"]
        assert {site: h["env_idx"] for site, h in held.items()} == {"reddit": a, "gitlab": coder}
        step = requests.post(base + "/step", json={"env_idx": a, "action": STOP}, timeout=120).json()
        assert step["terminated"] is True  # the episode is scored and frees the forum
        assert _reset(base, b, picks["forum_b"]).status_code == 200
        requests.post(base + "/close", json={"env_idx": b}, timeout=30)
        requests.post(base + "/close", json={"env_idx": coder}, timeout=30)
        assert requests.get(base + "/tasks", timeout=10).json()["state_guard"]["held"] == {}


def test_a_reset_waits_for_the_site_when_told_to(deployment_env, picks):
    with launched_server("agentenv_webarena.launch", "--site-lock-wait-s", "60", env=deployment_env) as (base, _p):
        a, b = _create(base), _create(base)
        assert _reset(base, a, picks["forum_a"]).status_code == 200
        answer = {}
        waiter = threading.Thread(target=lambda: answer.update(r=_reset(base, b, picks["forum_b"]),
                                                               t=time.monotonic()))
        waiter.start()
        time.sleep(2.0)
        assert waiter.is_alive()  # still waiting for the forum
        stopped = time.monotonic()
        requests.post(base + "/step", json={"env_idx": a, "action": STOP}, timeout=120)
        waiter.join(timeout=120)
        assert answer["r"].status_code == 200 and answer["t"] >= stopped


def test_real_resets_let_state_changing_episodes_run_in_parallel(deployment_env, picks):
    with launched_server("agentenv_webarena.launch", "--real-resets", env=deployment_env) as (base, _proc):
        assert requests.get(base + "/tasks", timeout=10).json()["state_guard"] == {"on": False, "held": {}}
        a, b = _create(base), _create(base)
        assert _reset(base, a, picks["forum_a"]).status_code == 200
        assert _reset(base, b, picks["forum_b"]).status_code == 200
