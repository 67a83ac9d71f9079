"""The WebShop server's HTTP API end to end: every endpoint and shape, AgentGym's client flow,
bad input, many concurrent sessions, and idle-TTL eviction on a real server process."""
from __future__ import annotations

import threading
import time

import pytest
import requests
from helpers import launched_server

from agentenv.controller import EnvClientError
from agentenv.envs import WebshopEnvClient
from agentenv.envs.webshop import INVALID_ACTION_PREFIX


@pytest.fixture
def api(webshop_url):
    session = requests.Session()
    created: list[int] = []

    class Api:
        url = webshop_url

        def post(self, path, payload=None, **kw):
            return session.post(f"{webshop_url}/{path}", json=payload, timeout=30, **kw)

        def get(self, path, **params):
            return session.get(f"{webshop_url}/{path}", params=params, timeout=30)

        def create(self) -> int:
            env_idx = self.post("create").json()
            created.append(env_idx)
            return env_idx

    yield Api()
    for env_idx in created:
        session.post(f"{webshop_url}/close", json={"env_idx": env_idx}, timeout=30)


def error_of(response, status, code):
    assert response.status_code == status, response.text
    err = response.json()["error"]
    assert err["code"] == code and err["message"]
    return err


def num_goals(api) -> int:
    env = api.create()
    return error_of(api.post("reset", {"env_idx": env, "session_id": 10 ** 9}), 422,
                    "session_id_out_of_range")["valid_range"][1] + 1


def test_every_endpoint_and_shape(api):
    assert api.get("").json() == "ok"
    a, b = api.create(), api.create()
    assert isinstance(a, int) and b > a
    assert {a, b} <= set(api.get("list_envs").json())

    obs, extra = api.post("reset", {"env_idx": a, "session_id": 0}).json()
    assert extra is None and obs.startswith("WebShop [SEP] Instruction: [SEP] ") and obs.endswith(" [SEP] Search")
    instruction = api.get("instruction_text", env_idx=a).json()
    assert isinstance(instruction, str) and instruction in obs
    assert api.get("observation", env_idx=a).json() == obs
    actions = api.get("available_actions", env_idx=a).json()
    assert actions == {"has_search_bar": True, "clickables": ["search"]}

    words = " ".join(instruction.split(" with ")[0].split()[-3:])
    step = api.post("step", {"env_idx": a, "action": f"search[{words}]"}).json()
    assert set(step) == {"state", "reward", "done", "info"}
    assert step["reward"] == 0 and step["done"] is False
    assert "Back to Search" in step["state"] and "Page 1 (Total results: " in step["state"]
    assert api.get("observation", env_idx=a).json() == step["state"]
    clickables = api.get("available_actions", env_idx=a).json()["clickables"]
    assert "back to search" in clickables
    product = next(c for c in clickables if c not in ("back to search", "next >", "< prev"))

    item = api.post("step", {"env_idx": a, "action": f"click[{product}]"}).json()
    assert "Buy Now" in item["state"] and item["done"] is False
    state = api.get("state", env_idx=a).json()
    assert set(state) == {"url", "html", "instruction_text"} and state["instruction_text"] == instruction
    assert isinstance(state["url"], str) and "<" in state["html"]

    bought = api.post("step", {"env_idx": a, "action": "click[buy now]"}).json()
    assert bought["done"] is True and 0.0 <= bought["reward"] <= 1.0

    # session b never saw a reset: it behaves like AgentGym's freshly created env (random goal)
    assert api.get("observation", env_idx=b).json().startswith("WebShop [SEP] Instruction:")
    assert api.post("close", {"env_idx": b}).json() == {"closed": True, "env_idx": b}
    assert b not in api.get("list_envs").json()
    error_of(api.get("observation", env_idx=b), 404, "unknown_env_idx")


def test_agentgym_client_flow_and_invalid_action(api):
    """Our client, used exactly as AgentGym-RL's rollout uses AgentGym's client."""
    with WebshopEnvClient(api.url, data_len=num_goals(api), timeout=30) as env:
        obs = env.reset(5).observation
        assert env.observe() == obs
        bad = env.step("I am not sure what to do.")
        assert bad.state == INVALID_ACTION_PREFIX + obs and bad.reward == 0 and not bad.done
        assert bad.info["valid"] is False
        out = env.step("Thought:\nI think I should search.\n\nAction:\nsearch[comfortable shoes]")
        assert "Page 1" in out.state and not out.done and not out.info
        refused = env.step("Thought:\nI think I should buy.\n\nAction:\nclick[buy now]")  # no product open yet
        assert refused.info["valid"] is False and "not clickable" in refused.info["reason"]
        env_id = env.env_id
    assert env_id not in api.get("list_envs").json()  # close() really freed the session
    with pytest.raises(EnvClientError, match="closed"):
        env.observe()


def test_bad_input_gets_json_4xx_and_leaves_other_sessions_alone(api):
    goals = num_goals(api)
    victim, env = api.create(), api.create()
    api.post("reset", {"env_idx": victim, "session_id": 1})
    api.post("step", {"env_idx": victim, "action": "search[blue]"})
    before = api.get("observation", env_idx=victim).json()
    api.post("reset", {"env_idx": env, "session_id": 2})
    page = api.get("observation", env_idx=env).json()

    for path in ("observation", "available_actions", "instruction_text", "state"):
        assert error_of(api.get(path, env_idx=10 ** 6), 404, "unknown_env_idx")["env_idx"] == 10 ** 6
        error_of(api.get(path, env_idx="abc"), 422, "invalid_request")
        error_of(api.get(path), 422, "invalid_request")
    error_of(api.post("step", {"env_idx": 10 ** 6, "action": "search[x]"}), 404, "unknown_env_idx")
    error_of(api.post("reset", {"env_idx": 10 ** 6, "session_id": 0}), 404, "unknown_env_idx")
    error_of(api.post("close", {"env_idx": 10 ** 6}), 404, "unknown_env_idx")
    for sid in (-1, goals):
        err = error_of(api.post("reset", {"env_idx": env, "session_id": sid}), 422, "session_id_out_of_range")
        assert err["valid_range"] == [0, goals - 1] and str(goals - 1) in err["message"]
    err = error_of(api.post("step", {"env_idx": str(env), "action": 5}), 422, "invalid_request")
    assert {tuple(p["loc"]) for p in err["problems"]} == {("body", "env_idx"), ("body", "action")}
    error_of(api.post("reset", {"env_idx": env, "session_id": "3"}), 422, "invalid_request")
    error_of(api.post("step", [env, "search[x]"]), 422, "invalid_request")
    err = error_of(api.post("step", {"env_idx": env, "action": "search[" + "a" * 5000 + "]"}), 422, "action_too_long")
    assert err["max_chars"] == 4096
    headers = {"Content-Type": "application/json"}
    for raw in (b'{"env_idx": 0, "action": "search[caf\xe9]"}', b"\xff\xfe\x00{", b'{"env_idx": '):
        error_of(api.post("step", data=raw, headers=headers), 400, "malformed_json")
    error_of(api.post("step", data=b"{" + b" " * (2 << 20) + b"}", headers=headers), 413, "body_too_large")
    error_of(api.get("no_such_endpoint"), 404, "not_found")
    surrogate = b'{"env_idx": %d, "action": "search[\\udcff]"}' % env
    assert "surrogate" in error_of(api.post("step", data=surrogate, headers=headers), 422, "invalid_request")["message"]

    # an empty action is a no-op step (WebShop's invalid-action rule), not an HTTP error
    empty = api.post("step", {"env_idx": env, "action": ""}).json()
    assert empty["state"] == page and empty["reward"] == 0 and empty["done"] is False
    assert api.get("observation", env_idx=victim).json() == before
    assert api.get("").json() == "ok"


def test_many_concurrent_sessions(api):
    goals = num_goals(api)
    results, errors = {}, []

    def agent(k: int) -> None:
        try:
            s = requests.Session()
            env = s.post(f"{api.url}/create", timeout=30).json()
            goal = (k * 37) % goals
            obs = s.post(f"{api.url}/reset", json={"env_idx": env, "session_id": goal}, timeout=30).json()[0]
            for _ in range(3):
                s.post(f"{api.url}/step", json={"env_idx": env, "action": f"search[item {k}]"}, timeout=30)
                s.post(f"{api.url}/step", json={"env_idx": env, "action": "click[back to search]"}, timeout=30)
            instruction = s.get(f"{api.url}/instruction_text", params={"env_idx": env}, timeout=30).json()
            results[k] = (env, goal, obs, instruction)
            assert s.post(f"{api.url}/close", json={"env_idx": env}, timeout=30).status_code == 200
        except Exception as exc:  # collected and reported by the main thread
            errors.append(repr(exc))

    threads = [threading.Thread(target=agent, args=(k,)) for k in range(48)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and len(results) == 48
    assert len({env for env, *_ in results.values()}) == 48  # every client got its own session
    for _env, _goal, obs, instruction in results.values():
        assert instruction in obs  # each session kept its own goal under concurrency
    # same goal index -> same instruction text, whatever session served it
    first = {}
    for _env, goal, _obs, instruction in results.values():
        assert first.setdefault(goal, instruction) == instruction


def test_idle_sessions_are_evicted_after_ttl():
    with launched_server("agentenv_webshop.launch", "--session-ttl", "2", "--max-sessions", "3",
                         "--num-products", "200", "--log-level", "warning") as (base, _proc):
        ids = [requests.post(f"{base}/create", timeout=10).json() for _ in range(2)]
        pooled = WebshopEnvClient(base, data_len=10, timeout=10)  # a long-lived pooled client, left idle
        ids.append(pooled.env_id)
        error_of(requests.post(f"{base}/create", timeout=10), 503, "too_many_sessions")
        keep = ids[0]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(requests.get(f"{base}/list_envs", timeout=10).json()) > 1:
            assert requests.get(f"{base}/observation", params={"env_idx": keep}, timeout=10).status_code == 200
            time.sleep(0.2)
        assert requests.get(f"{base}/list_envs", timeout=10).json() == [keep]
        err = error_of(requests.get(f"{base}/observation", params={"env_idx": ids[1]}, timeout=10), 404,
                       "unknown_env_idx")
        assert "evicted" in err["message"]
        assert requests.post(f"{base}/create", timeout=10).json() == 3  # a slot is free again; ids not reused
        # the evicted pooled client gets a fresh session on its next reset instead of failing
        assert pooled.reset(0).observation.startswith("WebShop [SEP] Instruction:") and pooled.env_id == 4
        pooled.close()
