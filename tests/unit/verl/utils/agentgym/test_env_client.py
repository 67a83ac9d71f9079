"""Env-client routing (verl.utils.agentgym.client) and the WebShop interaction, without a real server."""
import asyncio
import http.server
import threading
import time

import pytest

from agentenv.controller import ResetResult, StepResult
from verl.utils.agentgym import client as agc


def test_unknown_task_lists_choices():
    with pytest.raises(ValueError, match=r"task_name='nope'.*\['webarena', 'webshop'\]"):
        agc.get_env_client_cls("nope")


def test_webarena_routes_to_its_client():
    from agentenv.envs.webarena import WebarenaEnvClient

    assert agc.get_env_client_cls("webarena") is WebarenaEnvClient


def test_envclient_classes_maps_task_names_to_client_classes(monkeypatch):
    from agentenv.envs.webshop import WebshopEnvClient

    assert sorted(agc.envclient_classes) == ["webarena", "webshop"]
    assert agc.envclient_classes["webshop"] is WebshopEnvClient
    assert "nope" not in agc.envclient_classes
    # one record = a new env
    monkeypatch.setitem(agc.ENVS, "toy", agc.EnvRecord("toy", "agentenv.envs.webshop:WebshopEnvClient"))
    assert agc.envclient_classes["toy"] is WebshopEnvClient and len(agc.envclient_classes) == 3


def test_wait_names_the_address_when_server_never_answers():
    from helpers import free_port  # tests/ is on sys.path (tests/conftest.py)

    addr = f"http://127.0.0.1:{free_port()}"
    t = time.monotonic()
    with pytest.raises(agc.EnvServerUnavailable,
                       match=addr.replace(".", r"\.") + r".*3 attempts.*agentenv_webshop\.launch"):
        agc.init_env_client({"task_name": "webshop", "env_addr": addr, "max_retries": 2, "timeout": 1})
    assert time.monotonic() - t < 10


def test_init_env_client_waits_then_builds_with_timeout(monkeypatch):
    class Ok(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'"ok"')

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    seen = {}

    class Client:
        def __init__(self, env_server_base, data_len, timeout):
            seen.update(base=env_server_base, timeout=timeout)

    monkeypatch.setitem(agc.ENVS, "fakeshop", agc.EnvRecord("fakeshop", Client))
    try:
        addr = f"http://127.0.0.1:{server.server_address[1]}/"
        c = agc.init_env_client({"task_name": "fakeshop", "env_addr": addr, "max_retries": 0, "timeout": 7})
    finally:
        server.shutdown()
    assert isinstance(c, Client) and seen == {"base": addr.rstrip("/"), "timeout": 7.0}


class _Env:
    conversation_start = ()

    def __init__(self):
        self.closed = False
        self.t = 0

    def reset(self, idx):
        self.idx, self.t = idx, 0
        return ResetResult(observation=f"goal {idx}")

    def step(self, action):
        self.t += 1
        done = "buy now" in action
        return StepResult(observation=f"page {self.t}", reward=0.5 if done else 0.0, terminated=done)

    def close(self):
        self.closed = True


def test_pool_reuses_and_closes():
    made = []

    def factory():
        made.append(_Env())
        return made[-1]

    pool = agc.EnvClientPool(["http://127.0.0.1:36001"], "webshop", factory=factory, max_idle=1)
    a, b = pool.acquire(), pool.acquire()
    pool.release(a)
    pool.release(b)  # pool full: closed
    assert b.closed and not a.closed and pool.acquire() is a and pool.reused == 1 and pool.created == 2
    pool.release(a, healthy=False)
    assert a.closed
    c = pool.acquire()
    pool.release(c)
    pool.close()
    assert c.closed and len(pool) == 0


def test_webshop_interaction_round_trip():
    from verl.interactions import BaseInteraction, WebshopInteraction

    made = []

    def factory():
        made.append(_Env())
        return made[-1]

    inter = WebshopInteraction({"client_factory": factory})
    assert isinstance(inter, BaseInteraction) and inter.name == "webshop"

    async def play():
        iid = await inter.start_interaction(item_id="webshop_42")
        assert inter.get_observation(iid) == "goal 42"
        r1 = await inter.generate_response(iid, [{"role": "assistant", "content": "Action:\nsearch[mug]"}])
        r2 = await inter.generate_response(iid, [{"role": "user", "content": "x"},
                                                 {"role": "assistant", "content": "Action:\nclick[buy now]"}])
        score = await inter.calculate_score(iid)
        await inter.finalize_interaction(iid)
        iid2 = await inter.start_interaction(session_id=7)
        return r1, r2, score, iid2

    r1, r2, score, iid2 = asyncio.run(play())
    assert r1[:3] == (False, "page 1", 0.0) and r2[:3] == (True, "page 2", 0.5) and score == 0.5
    assert len(made) == 1 and made[0].idx == 7  # the session was reused for the second instance
    with pytest.raises(KeyError, match="start_interaction"):
        asyncio.run(inter.calculate_score("missing"))
    inter.close()
    assert made[0].closed


def test_importing_the_env_router_does_not_load_torch():
    import subprocess
    import sys

    code = ("import sys, verl.utils.agentgym.client as c; "
            "print(sorted(m for m in ('torch', 'transformers', 'verl.workers') if m in sys.modules)); "
            "print(c.init_env_client.__module__)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[]", "verl.utils.agentgym.client"]


def test_agentgym_data_len_reaches_the_client_and_unknown_keys_fail(monkeypatch):
    seen = {}

    class Client:
        def __init__(self, env_server_base, data_len, timeout):
            seen.update(data_len=data_len)

    monkeypatch.setitem(agc.ENVS, "fakeshop", agc.EnvRecord("fakeshop", Client))
    agc.init_env_client({"task_name": "fakeshop", "data_len": 200}, wait=False)
    assert seen == {"data_len": 200}
    with pytest.raises(ValueError, match=r"actor_rollout_ref\.agentgym\.env_adr.*env_addr"):
        agc.init_env_client({"task_name": "fakeshop", "env_adr": "http://x"}, wait=False)


def test_interaction_env_client_runs_any_interaction_behind_the_contract():
    from verl.interactions import BaseInteraction, InteractionEnvClient

    class Guess(BaseInteraction):  # verl's gsm8k-style interaction: no first observation of its own
        def __init__(self):
            super().__init__({"name": "guess"})
            self.finalized, self.started = [], {}

        async def start_interaction(self, instance_id=None, session_id=None, **kwargs):
            instance_id = await super().start_interaction(instance_id)
            self.started[instance_id] = (session_id, kwargs)
            return instance_id

        async def generate_response(self, instance_id, messages, **kwargs):
            right = messages[-1]["content"].strip() == "42"
            return right, "correct" if right else "try again", 1.0 if right else 0.0, {"turn": len(messages)}

        async def finalize_interaction(self, instance_id, **kwargs):
            self.finalized.append(instance_id)

    interaction = Guess()
    client = InteractionEnvClient(interaction, data_len=3, start_kwargs={"ground_truth": "42"})
    with pytest.raises(RuntimeError, match="before reset"):
        client.step("41")
    first = client.reset(7)
    assert isinstance(first, ResetResult) and first.observation == ""
    assert interaction.started[first.info["instance_id"]] == (7, {"ground_truth": "42"})
    assert client.step("41") == StepResult(observation="try again", reward=0.0, terminated=False, info={"turn": 1})
    assert client.step("42").done and client.observe() == "correct"
    client.reset(8)  # a new episode finalizes the previous instance
    client.close()
    client.close()
    assert len(interaction.finalized) == 2 and len(client) == 3


def test_interaction_registry_builds_from_verl_yaml(tmp_path):
    from verl.interactions import WebshopInteraction, initialize_interactions_from_config

    cfg = tmp_path / "webshop_interaction.yaml"
    cfg.write_text("interaction:\n"
                   "  - class_name: verl.interactions.webshop_interaction.WebshopInteraction\n"
                   "    config: {env_server_base: 'http://127.0.0.1:36003', timeout: 30, max_retries: 1}\n"
                   "  - name: shop2\n"
                   "    _target_: verl.interactions.webshop_interaction.WebshopInteraction\n"
                   "    config: {env_addr: 'http://127.0.0.1:36004'}\n")
    made = initialize_interactions_from_config(str(cfg))
    assert sorted(made) == ["shop2", "webshop"]  # name derived from the class when absent
    assert isinstance(made["webshop"], WebshopInteraction) and made["webshop"].name == "webshop"
    assert made["webshop"].pool.addrs == ["http://127.0.0.1:36003"]
    assert made["webshop"].pool.timeout == 30
    assert made["shop2"].pool.addrs == ["http://127.0.0.1:36004"]
    item = {"class_name": "verl.interactions.webshop_interaction.WebshopInteraction"}
    with pytest.raises(ValueError, match=r"interaction\[1\]: duplicate interaction name 'webshop'"):
        initialize_interactions_from_config({"interaction": [item, item]})
    with pytest.raises(ValueError, match=r"interaction\[0\]: cannot import interaction class 'nope.Missing'"):
        initialize_interactions_from_config({"interaction": [{"class_name": "nope.Missing"}]})
    with pytest.raises(ValueError, match="is not a verl.interactions.BaseInteraction"):
        initialize_interactions_from_config({"interaction": [{"class_name": "collections.OrderedDict"}]})
    with pytest.raises(ValueError, match="top-level list `interaction:`"):
        initialize_interactions_from_config({"tools": []})
