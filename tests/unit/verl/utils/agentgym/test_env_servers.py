"""EnvServerSet (load spreading, health take-out, back-off re-admission) and EnvClientPool over
several real loopback HTTP servers speaking the WebShop client's API, one of them killed mid-run."""
import threading
import time

import pytest
from toy_env_server import ToyWebshopServer

from agentenv.controller import EnvClientError
from verl.utils.agentgym.client import EnvClientPool
from verl.utils.agentgym.servers import EnvServerSet, EnvServerUnavailable, env_server_metrics


class _Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def _set(n=2, healthy=None, backoff=5.0, max_backoff=20.0):
    healthy = healthy if healthy is not None else {}
    probes = []

    def probe(addr):
        probes.append(addr)
        return healthy.get(addr, True)

    clock = _Clock()
    servers = EnvServerSet([f"http://s{i}" for i in range(n)], probe=probe, backoff_s=backoff,
                           max_backoff_s=max_backoff, clock=clock)
    return servers, clock, healthy, probes


def test_sessions_go_to_the_least_loaded_server():
    servers, *_ = _set(3)
    picked = [servers.pick() for _ in range(6)]
    assert [s.index for s in picked] == [0, 1, 2, 0, 1, 2]
    servers.finished(picked[4], ok=True)  # server 1 now has one session fewer in flight
    assert servers.pick().index == 1
    snap = servers.snapshot()
    assert [s["in_flight"] for s in snap] == [2, 2, 2] and [s["sessions"] for s in snap] == [2, 3, 2]


def test_failed_session_probes_takes_out_and_backoff_readmits():
    servers, clock, healthy, probes = _set(2, backoff=5.0, max_backoff=12.0)
    a, _ = servers.pick(), servers.pick()
    healthy["http://s0"] = False
    servers.finished(a, ok=False)  # suspect: probed before its next session
    assert probes == []
    assert servers.pick().index == 1 and probes == ["http://s0"]  # probe failed: out, s1 serves
    assert servers.snapshot()[0] == {"addr": "http://s0", "up": False, "in_flight": 0, "sessions": 1,
                                     "failures": 1, "takeouts": 1}
    clock.t += 4.9
    assert servers.pick().index == 1 and probes == ["http://s0"]  # still backing off: not even probed
    clock.t += 0.2
    assert servers.pick().index == 1 and probes == ["http://s0"] * 2  # due, probed, still dead: 10 s now
    clock.t += 9.9
    assert servers.pick().index == 1 and len(probes) == 2
    clock.t += 0.2
    healthy["http://s0"] = True
    back = servers.pick()  # due again, answers: back in rotation and chosen (least loaded)
    assert back.index == 0 and servers.snapshot()[0]["up"] and len(probes) == 3
    servers.finished(back, ok=True)  # a good session resets the back-off
    assert servers.servers[0].backoff_s == 5.0


def test_backoff_stops_doubling_at_the_maximum():
    servers, clock, healthy, _ = _set(1, backoff=5.0, max_backoff=12.0)
    healthy["http://s0"] = False
    servers.take_out(servers.servers[0])
    waits = []
    for _ in range(4):
        start = clock.t
        with pytest.raises(EnvServerUnavailable):
            servers.pick()
        clock.t = servers.servers[0].down_until
        waits.append(clock.t - start)
        with pytest.raises(EnvServerUnavailable):
            servers.pick()  # probed at the due time, still dead
    assert waits == [5.0, 10.0, 12.0, 12.0]


def test_all_servers_out_names_them():
    servers, clock, healthy, _ = _set(2)
    for s in servers.servers:
        servers.take_out(s)
    with pytest.raises(EnvServerUnavailable, match=r"all 2 env servers.*http://s0, http://s1"):
        servers.pick()


def test_wait_all_takes_out_the_silent_and_fails_only_when_none_answers():
    servers, *_ = _set(2)

    def wait_one(addr):
        if addr == "http://s1":
            raise EnvServerUnavailable(f"{addr} never answered")

    servers.wait_all(wait_one)
    assert [s["up"] for s in servers.snapshot()] == [True, False]
    servers2, *_ = _set(2)
    with pytest.raises(EnvServerUnavailable, match="never answered"):
        servers2.wait_all(lambda addr: wait_one("http://s1"))


def test_env_server_metrics_counts_rows_per_server():
    rows = ["http://a", "http://b", "http://a", "", "http://a"]
    errors = ["", "", "EnvClientError: x", "", ""]
    assert env_server_metrics(rows, errors, ["http://a", "http://b", "http://c"]) == {
        "rollout/env_server0/sessions": 3.0, "rollout/env_server0/failures": 1.0,
        "rollout/env_server1/sessions": 1.0, "rollout/env_server1/failures": 0.0,
        "rollout/env_server2/sessions": 0.0, "rollout/env_server2/failures": 0.0}


# ----------------------------------------------------------------------------- real HTTP servers
@pytest.fixture
def toy_servers():
    servers = [ToyWebshopServer(step_delay_s=0.02) for _ in range(3)]
    try:
        yield servers
    finally:
        for s in servers:
            s.stop()


def _pool(addrs, **kw):
    return EnvClientPool(addrs, "webshop", **{"max_retries": 2, "timeout": 3, "health_timeout": 1.0, "backoff_s": 0.3,
                                             "max_backoff_s": 1.0, **kw})


def _episode(pool, idx, results):
    """One trajectory's env calls through the pool (what the agent loop does), recording the outcome."""
    client = pool.acquire()
    addr = pool.server_of(client)
    try:
        client.reset(idx)
        for _ in range(3):
            client.step("Action:\nclick[buy now]")
    except EnvClientError as exc:
        pool.release(client, healthy=False)
        results.append((addr, str(exc)))
        return
    pool.release(client, healthy=True)
    results.append((addr, ""))


def _run(pool, n, results, workers=6):
    threads = [threading.Thread(target=lambda i=i: _episode(pool, i, results)) for i in range(n)]
    batches = [threads[i:i + workers] for i in range(0, n, workers)]
    for batch in batches:
        for t in batch:
            t.start()
        for t in batch:
            t.join(timeout=60)


def test_pool_spreads_over_real_servers_and_survives_one_killed_mid_run(toy_servers):
    addrs = [s.url for s in toy_servers]
    victim = toy_servers[1]
    victim.kill_after_steps = 4  # dies while sessions are in flight on it
    pool = _pool(addrs)
    results: list = []
    _run(pool, 18, results)
    per_server = {a: [e for addr, e in results if addr == a] for a in addrs}
    assert len(results) == 18 and all(per_server[a] for a in addrs)  # every server got sessions
    failed = [(addr, e) for addr, e in results if e]
    assert failed and {addr for addr, _ in failed} == {victim.url}  # only the killed server's sessions failed
    snap = {s["addr"]: s for s in pool.servers.snapshot()}
    assert not snap[victim.url]["up"] and snap[victim.url]["takeouts"] == 1
    assert snap[victim.url]["failures"] == len(failed)
    assert snap[addrs[0]]["up"] and snap[addrs[2]]["up"] and snap[addrs[0]]["failures"] == 0

    # while it is down, every new session goes to the live servers and succeeds
    later: list = []
    _run(pool, 8, later)
    assert all(not e for _, e in later) and {a for a, _ in later} <= {addrs[0], addrs[2]}

    # it comes back on the same port: after the back-off it is probed, re-admitted and used again
    victim.restart()
    time.sleep(1.1)  # past the longest back-off (server_max_backoff_s=1.0)
    again: list = []
    _run(pool, 9, again)
    assert all(not e for _, e in again) and victim.url in {a for a, _ in again}
    assert {s["addr"]: s["up"] for s in pool.servers.snapshot()}[victim.url]
    pool.close()
    assert all(s.open_sessions == 0 for s in toy_servers if s is not victim)  # idle sessions were closed


def test_pool_starts_with_a_silent_server_out_of_rotation(toy_servers):
    from helpers import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    pool = _pool([dead, toy_servers[0].url], max_retries=0)
    results: list = []
    _run(pool, 4, results)
    assert [e for _, e in results] == [""] * 4 and {a for a, _ in results} == {toy_servers[0].url}
    assert [s["up"] for s in pool.servers.snapshot()] == [False, True]
    pool.close()
    with pytest.raises(EnvServerUnavailable, match=dead.replace(".", r"\.")):
        _pool([dead], max_retries=0).acquire()
