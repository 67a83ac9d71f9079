"""End to end: the env fleet launches two real WebShop servers as Ray actors, each serves a session,
and stopping the fleet (or killing an actor) ends its server process."""
from __future__ import annotations

import time

import pytest

from agentenv.health import server_answers
from verl.config.schema import EnvServersConfig
from verl.utils.agentgym.fleet import EnvServerFleet

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(num_cpus=2, object_store_memory=100_000_000, include_dashboard=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def _answers(addr: str) -> bool:
    return server_answers(addr, timeout_s=2)


def _gone_within(addr: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _answers(addr):
            return True
        time.sleep(0.2)
    return False


def test_fleet_starts_two_webshop_servers_and_stops_them(local_ray):
    from agentenv.envs.webshop import WebshopEnvClient

    fleet = EnvServerFleet(EnvServersConfig(num=2, resources={"CPU": 0.25}), task_name="webshop")
    try:
        addrs = fleet.start()
        assert len(addrs) == 2 and len(set(addrs)) == 2 and all(_answers(a) for a in addrs)
        for addr in addrs:  # each is a real WebShop server: a session resets to a goal
            with WebshopEnvClient(addr, data_len=0, timeout=30) as client:
                assert "Instruction" in client.reset(3).observation
        node = local_ray.get_runtime_context().get_node_id()
        assert fleet.node_ids() == [node, node]
    finally:
        fleet.stop()
    assert all(_gone_within(a, 20) for a in addrs)
    fleet.stop()  # safe twice


def test_killed_actor_takes_its_server_down(local_ray):
    fleet = EnvServerFleet(EnvServersConfig(num=1, resources={"CPU": 0.25}), task_name="webshop")
    try:
        (addr,) = fleet.start()
        local_ray.kill(fleet.actors[0])  # no stop(): the server must not outlive its actor
        assert _gone_within(addr, 20)
    finally:
        fleet.actors = []


def test_plan_refuses_what_cannot_fit(local_ray):
    with pytest.raises(ValueError, match=r"env_servers\.num=3.*per_node=1"):
        EnvServerFleet(EnvServersConfig(num=3, per_node=1), "webshop").plan()
    with pytest.raises(ValueError, match=r"env_servers\.resources=\{'CPU': 0\.25, 'env_node': 1\}"):
        EnvServerFleet(EnvServersConfig(num=1, resources={"CPU": 0.25, "env_node": 1}), "webshop").plan()
    with pytest.raises(ValueError, match=r"task_name='nope'"):
        EnvServerFleet(EnvServersConfig(num=1), "nope")


def test_a_server_that_exits_fails_the_start_with_its_log(local_ray):
    import sys

    cfg = EnvServersConfig(num=1, cmd=f"{sys.executable} -c 'import sys; print(\"boom {{port}}\"); sys.exit(3)'",
                           startup_timeout=30)
    fleet = EnvServerFleet(cfg, "webshop")
    with pytest.raises(RuntimeError, match=r"(?s)exited with code 3.*boom"):
        fleet.start()
    assert fleet.actors == []
