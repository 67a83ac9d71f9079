"""SessionRegistry: sequential ids, limits, TTL eviction, per-session locking, thread safety."""
import threading
import time

import pytest

from agentenv.server import EnvServerError, SessionRegistry


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_ids_are_sequential_and_never_reused():
    reg = SessionRegistry(dict)
    assert [reg.create() for _ in range(3)] == [0, 1, 2]
    reg.close(1)
    assert reg.create() == 3
    assert reg.ids() == [0, 2, 3] and len(reg) == 3


def test_max_sessions_gives_503_and_close_frees_a_slot():
    reg = SessionRegistry(dict, max_sessions=2)
    reg.create(), reg.create()
    with pytest.raises(EnvServerError) as info:
        reg.create()
    assert info.value.status == 503 and info.value.code == "too_many_sessions"
    assert info.value.details["max_sessions"] == 2
    reg.close(0)
    assert reg.create() == 2


def test_unknown_ids_are_404_with_a_reason():
    reg = SessionRegistry(dict, ttl_s=5)
    idx = reg.create()
    reg.close(idx)
    for bad, reason in [(idx, "closed or evicted"), (42, "ever created")]:
        with pytest.raises(EnvServerError) as info:
            with reg.use(bad):
                pass
        assert info.value.status == 404 and info.value.code == "unknown_env_idx"
        assert reason in info.value.message and info.value.details["env_idx"] == bad
    with pytest.raises(EnvServerError):
        reg.close(idx)


def test_close_calls_hook_and_factory_failure_releases_slot():
    closed = []
    calls = {"n": 0}

    def factory():
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("no browser")
        return {"n": calls["n"]}

    reg = SessionRegistry(factory, max_sessions=1, on_close=closed.append)
    with pytest.raises(RuntimeError):
        reg.create()
    idx = reg.create()  # the failed creation did not keep the only slot
    reg.close(idx)
    assert closed == [{"n": 2}]


def test_ttl_eviction_skips_recently_used_and_busy_sessions():
    clock = FakeClock()
    closed = []
    reg = SessionRegistry(lambda: object(), ttl_s=10, clock=clock, on_close=closed.append)
    idle, used, busy = reg.create(), reg.create(), reg.create()
    clock.now += 8
    with reg.use(used):
        pass
    clock.now += 5  # idle and busy are 13 s idle, used is 5 s idle
    with reg.use(busy):
        assert reg.sweep() == [idle]
    assert reg.ids() == [used, busy] and len(closed) == 1 and reg.num_evicted == 1
    clock.now += 11
    assert sorted(reg.sweep()) == [used, busy] and len(reg) == 0


def test_background_sweeper_evicts_idle_sessions():
    reg = SessionRegistry(dict, ttl_s=0.2)
    reg.start_sweeper(interval_s=0.05)
    try:
        keep, drop = reg.create(), reg.create()
        deadline = time.monotonic() + 3
        while drop in reg and time.monotonic() < deadline:
            with reg.use(keep):
                pass
            time.sleep(0.05)
        assert drop not in reg and keep in reg
    finally:
        reg.stop_sweeper()


def test_calls_on_one_session_are_serialised_and_close_waits():
    reg = SessionRegistry(lambda: {"inside": 0, "max": 0})
    idx = reg.create()

    def work():
        for _ in range(50):
            with reg.use(idx) as env:
                env["inside"] += 1
                env["max"] = max(env["max"], env["inside"])
                time.sleep(0.0005)
                env["inside"] -= 1

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with reg.use(idx) as env:
        assert env["max"] == 1


def test_concurrent_creates_get_unique_ids_under_the_limit():
    reg = SessionRegistry(dict, max_sessions=150)
    got, errors = [], []
    lock = threading.Lock()

    def work():
        for _ in range(25):
            try:
                idx = reg.create()
                with lock:
                    got.append(idx)
            except EnvServerError as exc:
                with lock:
                    errors.append(exc.code)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(150)) and len(errors) == 50
    assert set(errors) == {"too_many_sessions"}


def test_use_after_close_in_other_thread_is_404():
    reg = SessionRegistry(dict)
    idx = reg.create()
    started, release = threading.Event(), threading.Event()

    def hold():
        with reg.use(idx):
            started.set()
            release.wait(2)

    t = threading.Thread(target=hold)
    t.start()
    started.wait(2)
    closer = threading.Thread(target=reg.close, args=(idx,))
    closer.start()
    time.sleep(0.05)
    assert closer.is_alive()  # close waits for the call in progress
    release.set()
    closer.join(2)
    t.join(2)
    with pytest.raises(EnvServerError):
        with reg.use(idx):
            pass


@pytest.mark.parametrize("kw", [{"max_sessions": 0}, {"ttl_s": 0}])
def test_bad_settings_rejected(kw):
    with pytest.raises(ValueError):
        SessionRegistry(dict, **kw)
