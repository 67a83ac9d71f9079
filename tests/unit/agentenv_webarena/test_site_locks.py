"""SiteLocks: one state-changing episode per real site; all-or-nothing holds, waiting, freeing, the refusal."""
from __future__ import annotations

import threading
import time

import pytest

from agentenv_webarena.site_locks import Holder, SiteBusyError, SiteLocks


def _holder(instance: str, env_idx: int, task: int) -> Holder:
    return Holder(instance=instance, env_idx=env_idx, task_index=task, task_id=task)


def test_a_second_env_is_refused_naming_the_site_and_the_holder():
    locks = SiteLocks()
    locks.acquire(["reddit"], _holder("a", 0, 7))
    with pytest.raises(SiteBusyError) as err:
        locks.acquire(["reddit"], _holder("b", 1, 9))
    assert err.value.site == "reddit" and err.value.holder.env_idx == 0
    assert "'reddit'" in str(err.value) and "env 0 (task 7)" in str(err.value) and "--real-resets" in str(err.value)
    assert locks.held() == {"reddit": {"env_idx": 0, "task_index": 7, "task_id": 7}}
    locks.acquire(["gitlab"], _holder("b", 1, 9))  # another site is free
    assert locks.release("a") == ["reddit"]
    locks.acquire(["reddit"], _holder("c", 2, 11))


def test_holds_are_all_or_nothing_and_an_env_holds_only_its_last_task():
    locks = SiteLocks()
    locks.acquire(["reddit"], _holder("a", 0, 1))
    with pytest.raises(SiteBusyError):
        locks.acquire(["gitlab", "reddit"], _holder("b", 1, 2))
    assert "gitlab" not in locks.held()
    locks.acquire(["gitlab", "reddit"], _holder("a", 0, 3))  # its own site is not busy for it
    locks.acquire(["shopping"], _holder("a", 0, 4))  # a new task frees the last one's sites
    assert locks.held() == {"shopping": {"env_idx": 0, "task_index": 4, "task_id": 4}}
    assert locks.release("nobody") == []


def test_a_reset_waits_for_the_site_up_to_the_limit():
    locks = SiteLocks(wait_s=5.0)
    locks.acquire(["map"], _holder("a", 0, 1))
    threading.Timer(0.3, locks.release, args=("a",)).start()
    start = time.monotonic()
    locks.acquire(["map"], _holder("b", 1, 2))
    assert 0.2 < time.monotonic() - start < 4.0
    short = SiteLocks(wait_s=0.2)
    short.acquire(["map"], _holder("a", 0, 1))
    with pytest.raises(SiteBusyError, match=r"waited 0\.[2-9]"):
        short.acquire(["map"], _holder("b", 1, 2))


def test_a_negative_wait_is_refused():
    with pytest.raises(ValueError, match="-1"):
        SiteLocks(wait_s=-1)
