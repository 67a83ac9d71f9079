"""Which sites of a real WebArena deployment a state-changing episode holds: one such episode per site at a time.

Owns the rule that keeps parallel RL samples from corrupting each other on a deployment that is not reset
between episodes: an episode of a task that changes site state (`tasks.config.changes_state`) holds every
site the task names from its reset until it ends (stop or early stop, a reset to another task, close or
eviction). A second state-changing reset on a held site waits up to `wait_s` for it, then is refused with
`SiteBusyError` (the server answers HTTP 409 `site_busy`, naming the site and the episode holding it).
Read-only episodes never take or wait for a site. The embedded sites (per-env state restored at every
reset) and deployments the user declares reset between episodes (`--real-resets`) do not use it.

It resets nothing: a real deployment keeps what every episode wrote (see docs/webarena.md).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Iterable, Optional

__all__ = ["Holder", "SiteBusyError", "SiteLocks"]


@dataclass(frozen=True)
class Holder:
    """The episode holding a site: its env (`env_idx`, as the server numbers it; the session's `instance`
    name) and its task (index in the server's task list and the config's `task_id`)."""

    instance: str
    env_idx: Optional[int]
    task_index: int
    task_id: Any

    def describe(self) -> dict:
        """The holder as JSON for an error body."""
        return {"env_idx": self.env_idx, "task_index": self.task_index, "task_id": self.task_id}


class SiteBusyError(RuntimeError):
    """A state-changing reset on a site another state-changing episode holds.

    Attributes:
        site: the busy site key.
        holder: the episode holding it.
        waited_s: how long the reset waited before giving up.
    """

    def __init__(self, site: str, holder: Holder, task_index: int, waited_s: float):
        self.site = site
        self.holder = holder
        self.waited_s = waited_s
        super().__init__(
            f"task {task_index} changes the state of site {site!r}, which the state-changing episode of env "
            f"{holder.env_idx} (task {holder.task_index}) is using on this real deployment (waited "
            f"{waited_s:.1f} s); a real deployment is not reset between episodes, so its state-changing tasks "
            "run one at a time per site: retry after that episode ends, or launch the server with --real-resets "
            "if your deployment is reset between episodes (docs/webarena.md)")


class SiteLocks:
    """The sites held by state-changing episodes, and the waiting for them.

    Args:
        wait_s: how long a reset waits for a busy site before `SiteBusyError` (0: refuse at once).
    """

    def __init__(self, wait_s: float = 0.0):
        if wait_s < 0:
            raise ValueError(f"site lock wait must be >= 0 seconds, got {wait_s}")
        self.wait_s = wait_s
        self._held: dict[str, Holder] = {}
        self._changed = threading.Condition()

    def acquire(self, sites: Iterable[str], holder: Holder) -> None:
        """Hold every site of `sites` for `holder`, and no other site for its env (waiting up to `wait_s` for
        sites other envs hold). All or nothing: a refusal changes nothing.

        Raises:
            SiteBusyError: a site is still held by another env after the wait.
        """
        wanted = sorted(set(sites))
        start = time.monotonic()
        with self._changed:
            while True:
                busy = [(s, self._held[s]) for s in wanted
                        if s in self._held and self._held[s].instance != holder.instance]
                if not busy:
                    for site in [s for s, h in self._held.items() if h.instance == holder.instance]:
                        del self._held[site]
                    for site in wanted:
                        self._held[site] = holder
                    self._changed.notify_all()
                    return
                left = self.wait_s - (time.monotonic() - start)
                if left <= 0:
                    site, other = busy[0]
                    raise SiteBusyError(site, other, holder.task_index, time.monotonic() - start)
                self._changed.wait(left)

    def release(self, instance: str) -> list[str]:
        """Free every site env `instance` holds; returns them (none: nothing changes)."""
        with self._changed:
            freed = [site for site, h in self._held.items() if h.instance == instance]
            for site in freed:
                del self._held[site]
            if freed:
                self._changed.notify_all()
            return freed

    def held(self) -> dict[str, dict]:
        """Site -> the episode holding it (as JSON)."""
        with self._changed:
            return {site: h.describe() for site, h in sorted(self._held.items())}
