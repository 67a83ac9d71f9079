"""End to end: the WebArena server (`python -m agentenv_webarena.launch`) with its embedded sites and a
real Chromium, driven over HTTP by `WebarenaEnvClient` and the expert replay."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from helpers import embedded_sites_env, launched_server, require_chromium

require_chromium()

from agentenv.controller.http import EnvClientError  # noqa: E402
from agentenv.envs.webarena import OBSERVATION_LAYOUT, WebarenaEnvClient  # noqa: E402
from agentenv_webarena.expert import play_task  # noqa: E402
from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from webarena_obs_cap import cpu_profile_codec_and_cap, cut_answers, question_tasks  # noqa: E402


@pytest.fixture(scope="module")
def server():
    env = embedded_sites_env()
    with launched_server("agentenv_webarena.launch", env=env, timeout_s=120) as (base, proc):
        yield base
    # the embedded sites child must be gone with the server
    assert proc.poll() is not None


@pytest.fixture(scope="module")
def tasks():
    return load_tasks(EMBEDDED_TASK_FILE)


@pytest.fixture(scope="module")
def site_urls(server):
    return requests.get(server + "/tasks", timeout=10).json()["site_urls"]


def _post(base, path, body=None, **kw):
    return requests.post(f"{base}/{path}", json=body, timeout=120, **kw)


def _first(tasks, pred):
    return next(i for i, t in enumerate(tasks) if pred(t))


def _eval_types(task):
    return task["eval"]["eval_types"]


def test_agentgym_shapes_and_prompt_layout(server, tasks):
    env_idx = _post(server, "create").json()["env_idx"]
    try:
        idx = _first(tasks, lambda t: t["sites"] == ["shopping"])
        reset = _post(server, "reset", {"env_idx": env_idx, "seed": 0, "idx": idx}).json()
        assert set(reset) >= {"observation", "sites", "object"}
        assert reset["object"] == tasks[idx]["intent"] and reset["sites"] == ["shopping"]
        assert reset["observation"].startswith("OBSERVATION:\nTab 0 (current): ")  # the prompt layout, as /step's
        assert "\n\n[" in reset["observation"]
        obs = requests.get(f"{server}/observation", params={"env_idx": env_idx}, timeout=30).json()
        assert obs == reset["observation"]
        assert obs.startswith("OBSERVATION:\nTab 0 (current): ")
        assert "\nURL: http://onestopmarket.com" in obs  # WebArena's public name for the shop
        assert f"\nOBJECTIVE: {tasks[idx]['intent']}\nPREVIOUS ACTION: None" in obs
        meta = requests.get(f"{server}/observation_metadata", params={"env_idx": env_idx}, timeout=30).json()
        some_id, node = next(iter(meta["obs_nodes_info"].items()))
        assert f"[{some_id}]" in obs and {"role", "name", "union_bound"} <= set(node)

        bad = _post(server, "step", {"env_idx": env_idx, "action": "I will click the button"}).json()
        assert set(bad) == {"observation", "reward", "terminated", "truncated", "info"}
        assert bad["reward"] == 0.0 and not bad["terminated"] and not bad["truncated"]
        assert "format was incorrect" in bad["observation"] and "ActionParsingError" in bad["info"]["error"]

        ghost = _post(server, "step", {"env_idx": env_idx, "action": "```click [999999]```"}).json()
        assert not ghost["terminated"] and "999999" in ghost["observation"].split("PREVIOUS ACTION:")[1]
        assert "ActionExecutionError" in ghost["info"]["error"]

        refused = _post(server, "step", {"env_idx": env_idx, "action": "```goto [file:///etc/passwd]```"}).json()
        assert "file:///etc/passwd" in refused["info"]["error"] and "root:x:" not in refused["observation"]
        other = _post(server, "step", {"env_idx": env_idx, "action": "```goto [http://example.com/]```"}).json()
        assert "example.com" in other["info"]["error"]

        stop = _post(server, "step", {"env_idx": env_idx, "action": "```stop [no idea]```"}).json()
        assert stop["terminated"] and not stop["truncated"] and stop["info"]["eval_status"] in ("scored", "needs_judge")
        after = _post(server, "step", {"env_idx": env_idx, "action": "```go_back```"}).json()
        assert after["terminated"] and after["reward"] == 0.0 and "reset" in after["info"]["error"]
    finally:
        _post(server, "close", {"env_idx": env_idx})
    assert _post(server, "step", {"env_idx": env_idx, "action": "```go_back```"}).status_code == 404


def test_bad_requests_get_json_errors_and_the_server_survives(server, tasks):
    env_idx = _post(server, "create").json()["env_idx"]
    try:
        r = _post(server, "step", {"env_idx": env_idx, "action": "```go_back```"})
        assert r.status_code == 409 and r.json()["error"]["code"] == "not_reset"
        r = _post(server, "reset", {"env_idx": env_idx, "idx": len(tasks)})
        assert r.status_code == 422 and r.json()["error"]["code"] == "task_index_out_of_range"
        assert str(len(tasks)) in r.json()["error"]["message"]
        r = _post(server, "reset", {"env_idx": env_idx, "idx": "zero"})
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
        r = requests.post(f"{server}/step", data=b"{not json", headers={"content-type": "application/json"}, timeout=10)
        assert r.status_code == 400 and r.json()["error"]["code"] == "malformed_json"
        r = _post(server, "reset", {"env_idx": 10_000, "idx": 0})
        assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_env_idx"
    finally:
        _post(server, "close", {"env_idx": env_idx})
    assert requests.get(server + "/", timeout=10).json() == "ok"


def test_repeated_parse_failures_truncate_the_episode(server, tasks):
    with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as client:
        client.reset(0)
        outs = [client.step("no fenced action here") for _ in range(3)]
        assert [o.done for o in outs] == [False, False, True]
        assert outs[-1].info["early_stop"].startswith("Failed to parse")
        assert outs[-1].reward == 0.0


def test_max_steps_truncates(server, tasks):
    # WebArena's max_steps is 30; alternate scrolls so no repeated-action stop fires first
    with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as client:
        first = client.reset(0)
        assert "Tab 0 (current)" in first.observation and first.info["sites"] == tasks[0]["sites"]
        assert "observation" not in first.info  # the observation is the typed field, in the prompt layout
        outs = [client.step(f"```scroll [{'down' if i % 2 == 0 else 'up'}]```") for i in range(30)]
        assert [o.done for o in outs] == [False] * 29 + [True]
        assert outs[-1].truncated and not outs[-1].terminated  # the env's step limit, not the task's end
        assert "max steps" in outs[-1].info["early_stop"]


def test_reference_sequences_earn_one_and_wrong_episodes_zero(server, tasks, site_urls):
    """A seeded sample: one task of every template plays its reference to 1.0; every tenth template's
    task also plays a wrong episode to 0 (all tasks: tests/e2e/test_webarena_suite.py, marked slow).
    On the way, the CPU profile's observation cap keeps every answer a sampled question task's answer page
    shows (`max_obs_tokens` of scripts/profiles/webarena_{train,eval}_cpu.args, in the tiny model's tokens: the
    tree the CPU profile's policy is shown; every question task: tests/e2e/test_webarena_obs_cap.py, slow)."""
    by_template: dict = {}
    for i, t in enumerate(tasks):
        by_template.setdefault(t["intent_template_id"], []).append(i)
    rng = random.Random(0)
    sample = sorted(rng.choice(ids) for ids in by_template.values())
    jobs = [(i, False) for i in sample] + [(i, True) for i in sample[::10]]

    def run(chunk):
        with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as client:
            return [(wrong, play_task(client, i, tasks[i], site_urls, wrong=wrong)) for i, wrong in chunk]

    with ThreadPoolExecutor(2) as pool:
        results = [r for part in pool.map(run, [jobs[0::2], jobs[1::2]]) for r in part]
    assert len(by_template) >= 40
    assert [(r.index, r.reward, r.error) for wrong, r in results if not wrong and r.reward != 1.0] == []
    assert [(r.index, r.reward) for wrong, r in results if wrong and r.reward != 0.0] == []

    codec, cap = cpu_profile_codec_and_cap()
    questions = set(question_tasks(tasks))
    cap_checks = [cut_answers(tasks[r.index], OBSERVATION_LAYOUT.match(r.answer_page)["observation"], codec, cap)
                  for wrong, r in results if not wrong and r.index in questions]
    shown = sum(n for n, _ in cap_checks)
    assert shown >= len(cap_checks) // 2, f"only {shown} answers of {len(cap_checks)} question tasks on their pages"
    assert [c for _, cut in cap_checks for c in cut] == []


def test_reset_restores_site_state_and_envs_are_isolated(server, tasks, site_urls):
    """A state-changing task done in env A counts for A, not for B running the same task at once,
    and not for A's next episode after a reset (the embedded sites restore state per reset)."""
    idx = _first(tasks, lambda t: "program_html" in _eval_types(t) and t["sites"] == ["shopping"]
                 and "string_match" not in _eval_types(t) and "url_match" not in _eval_types(t))
    with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as a, \
            WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as b:
        assert play_task(a, idx, tasks[idx], site_urls).reward == 1.0
        assert play_task(b, idx, tasks[idx], site_urls, wrong=True).reward == 0.0
        assert play_task(a, idx, tasks[idx], site_urls, wrong=True).reward == 0.0


def test_envs_do_not_share_cookies(server, tasks):
    """Each env is its own browser context: logging out in one leaves the other logged in."""
    idx = _first(tasks, lambda t: t["sites"] == ["reddit"])
    with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as a, \
            WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as b:
        a.reset(idx)
        b.reset(idx)
        urls = requests.get(server + "/tasks", timeout=10).json()["site_urls"]
        from agentenv_webarena.tasks.reference import resolve_element

        logout = resolve_element(a.observation_metadata()["obs_nodes_info"], {"role": "button", "name": "Log out"})
        a.step(f"```click [{logout}]```")
        a_page = a.step(f"```goto [{urls['reddit']}/]```").state
        b_page = b.step(f"```goto [{urls['reddit']}/]```").state
        assert "button 'Log out'" in b_page
        assert "button 'Log out'" not in a_page


def test_repeated_actions_truncate(server, tasks):
    with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as client:
        client.reset(0)
        outs = [client.step("```scroll [down]```") for _ in range(3)]
        assert [o.done for o in outs] == [False, False, True]
        assert outs[-1].info["early_stop"] == "Same action for 3 times"


def test_parallel_envs_step_concurrently(server, tasks, site_urls):
    ids = [i for i, t in enumerate(tasks) if "string_match" in _eval_types(t)][:4]

    def run(i):
        with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as client:
            return play_task(client, i, tasks[i], site_urls).reward

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(run, ids)) == [1.0] * len(ids)


def test_expert_cli_prints_a_summary_line(server):
    ids = json.load(open(os.path.join(ROOT, "AgentItemId", "webarena_test.json")))[:3]
    path = os.path.join(os.environ.get("PYTEST_TMP", "/tmp"), f"wa_ids_{os.getpid()}.json")
    with open(path, "w") as f:
        json.dump(ids, f)
    out = subprocess.run([sys.executable, "-m", "agentenv_webarena.expert", "--env-addr", server, "--ids", path],
                         capture_output=True, text=True, timeout=600)
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["tasks"] == 3 and summary["success"] == 3, out.stderr
    assert out.returncode == 0


def test_client_recreates_an_evicted_session(server, tasks):
    client = WebarenaEnvClient(server, data_len=len(tasks), timeout=120)
    try:
        _post(server, "close", {"env_idx": client.env_id})
        old = client.env_id
        client.reset(0)
        assert client.env_id != old
        with pytest.raises(EnvClientError):
            _raise_for(server, old)
    finally:
        client.close()
        client.close()  # twice is fine


def _raise_for(server, env_idx):
    from agentenv.controller.http import EnvHttp

    EnvHttp(server, timeout=10, max_retries=0).get("observation", params={"env_idx": env_idx})


def test_session_limit_and_idle_eviction(tasks):
    env = embedded_sites_env()
    with launched_server("agentenv_webarena.launch", "--max-sessions", "2", "--session-ttl", "3", env=env) as (base, _):
        a = _post(base, "create").json()["env_idx"]
        _post(base, "create")
        full = _post(base, "create")
        assert full.status_code == 503 and full.json()["error"]["code"] == "too_many_sessions"
        assert _post(base, "reset", {"env_idx": a, "idx": 0}).status_code == 200
        import time

        deadline = time.monotonic() + 30
        while requests.get(base + "/list_envs", timeout=10).json() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert requests.get(base + "/list_envs", timeout=10).json() == []  # idle envs (and their contexts) evicted
        assert _post(base, "step", {"env_idx": a, "action": "```go_back```"}).status_code == 404
        assert _post(base, "create").status_code == 200  # room again


def test_webarena_interaction_lifecycle(server, tasks):
    """verl's interaction API on a real WebArena server: start -> observation -> a reply without an
    action gets a corrective observation -> stop ends the episode with its score -> finalize."""
    import asyncio

    from verl.interactions import WebarenaInteraction

    interaction = WebarenaInteraction({"env_server_base": server, "timeout": 120, "max_retries": 1})
    assert interaction.name == "webarena"
    idx = _first(tasks, lambda t: t["sites"] == ["shopping"])

    async def play():
        iid = await interaction.start_interaction(session_id=idx)
        first = interaction.get_observation(iid)
        done, text, score, extra = await interaction.generate_response(
            iid, [{"role": "assistant", "content": "I am not sure what to do yet."}])
        assert not done and score == 0.0 and "format was incorrect" in text
        done, text, score, extra = await interaction.generate_response(
            iid, [{"role": "assistant",
                   "content": "In summary, the next action I will perform is ```stop [no idea]```"}])
        total = await interaction.calculate_score(iid)
        await interaction.finalize_interaction(iid)
        return first, done, extra, total

    try:
        first, done, extra, total = asyncio.run(play())
    finally:
        interaction.close()
    assert "Tab 0 (current)" in first and tasks[idx]["intent"] in first
    assert done and extra["turns"] == 2 and total == extra["reward"] == 0.0  # a wrong answer scores 0
    assert len(interaction.pool) == 0  # closed with the interaction
