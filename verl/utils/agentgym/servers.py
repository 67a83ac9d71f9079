"""The set of env servers one rollout talks to: sessions spread by load, sick servers taken out.

`EnvServerSet` holds one `EnvServerState` per address of `actor_rollout_ref.agentgym.env_addr`.
`pick()` hands out the server in rotation with the fewest sessions in flight (ties: the fewest
sessions so far, then list order). A session that fails (`finished(server, ok=False)`) makes its
server suspect: the next `pick()` that would choose it first probes `GET /` (`health_timeout`). A
server that does not answer is taken out of rotation for `server_backoff_s`, then probed again
(doubling the back-off up to `server_max_backoff_s` while it keeps failing; a session that ends
well resets it). Trajectories in flight on a server that died fail on their own calls and count
as env failures. `env_server_metrics` turns a rollout's per-row `env_server` into per-server
sessions and failures.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import logging
import threading
import time
from typing import Callable, Sequence

from agentenv.health import EnvServerUnavailable, server_answers

__all__ = ["EnvServerUnavailable", "EnvServerState", "EnvServerSet", "probe_env_server", "env_server_metrics"]

logger = logging.getLogger(__name__)


def probe_env_server(addr: str, timeout: float) -> bool:
    """True when `GET addr/` answers 200 within `timeout` seconds (`agentenv.health.server_answers`)."""
    return server_answers(addr, timeout_s=timeout)


@dataclasses.dataclass
class EnvServerState:
    """Load and health of one env server (owned by `EnvServerSet`; read under its lock)."""

    addr: str
    index: int
    backoff_s: float
    in_flight: int = 0         # sessions handed out and not yet finished
    sessions: int = 0          # sessions handed out so far
    failures: int = 0          # sessions that ended with an env error
    takeouts: int = 0          # times taken out of rotation
    suspect: bool = False      # a session failed: probe before the next session
    down_until: float | None = None  # out of rotation until then (None: in rotation)

    @property
    def up(self) -> bool:
        return self.down_until is None


class EnvServerSet:
    """Thread-safe load-based choice among env servers, with health take-out and back-off re-admission.

    Args:
        addrs: server base URLs.
        probe: `probe(addr) -> bool`, the health check (default `probe_env_server` with `health_timeout`).
        backoff_s: first wait before a server taken out is probed again.
        max_backoff_s: the back-off stops doubling here.
        health_timeout: seconds for the default probe.
        clock: monotonic seconds (tests pass a fake).
    """

    def __init__(self, addrs: Sequence[str], probe: Callable[[str], bool] | None = None, backoff_s: float = 5.0,
                 max_backoff_s: float = 120.0, health_timeout: float = 5.0,
                 clock: Callable[[], float] = time.monotonic):
        if not addrs:
            raise ValueError("EnvServerSet needs at least one server address")
        self.base_backoff_s, self.max_backoff_s = float(backoff_s), float(max_backoff_s)
        self.servers = [EnvServerState(addr=a, index=i, backoff_s=self.base_backoff_s) for i, a in enumerate(addrs)]
        self._probe = probe or (lambda addr: probe_env_server(addr, health_timeout))
        self._clock = clock
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ choosing
    def pick(self) -> EnvServerState:
        """The server for a new session (its `in_flight` and `sessions` already counted).

        Probes a suspect or due-again server first (outside the lock) and takes it out or re-admits it.

        Raises:
            EnvServerUnavailable: every server is out of rotation and none is due for a probe.
        """
        while True:
            with self._lock:
                now = self._clock()
                ready = [s for s in self.servers if s.down_until is None or s.down_until <= now]
                if not ready:
                    wait = min(s.down_until for s in self.servers) - now
                    raise EnvServerUnavailable(
                        f"all {len(self.servers)} env servers are out of rotation (next probe in {wait:.1f} s): "
                        + ", ".join(s.addr for s in self.servers))
                server = min(ready, key=lambda s: (s.in_flight, s.sessions, s.index))
                if not (server.suspect or server.down_until is not None):
                    server.in_flight += 1
                    server.sessions += 1
                    return server
            healthy = self._probe(server.addr)
            with self._lock:
                if healthy:
                    if server.down_until is not None:
                        logger.warning("env server %s answers again: back in rotation", server.addr)
                    server.suspect, server.down_until = False, None
                else:
                    self._take_out(server)

    def finished(self, server: EnvServerState, ok: bool) -> None:
        """A session on `server` ended; `ok=False` (an env error) makes the server suspect."""
        with self._lock:
            server.in_flight = max(0, server.in_flight - 1)
            if ok:
                server.backoff_s = self.base_backoff_s
            else:
                server.failures += 1
                server.suspect = True

    def take_out(self, server: EnvServerState) -> None:
        """Take `server` out of rotation now (e.g. it never answered at start-up)."""
        with self._lock:
            self._take_out(server)

    def _take_out(self, server: EnvServerState) -> None:
        if server.down_until is None:
            server.takeouts += 1
            logger.warning("env server %s does not answer: out of rotation, next probe in %.1f s",
                           server.addr, server.backoff_s)
        server.down_until = self._clock() + server.backoff_s
        server.backoff_s = min(server.backoff_s * 2, self.max_backoff_s)
        server.suspect = False

    # ------------------------------------------------------------------ start-up
    def wait_all(self, wait_one: Callable[[str], None]) -> None:
        """Run `wait_one(addr)` (raises when the server never answers) for every server at once;
        servers that never answer are taken out. Raises the first error when none answered."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(16, len(self.servers))) as pool:
            futures = {pool.submit(wait_one, s.addr): s for s in self.servers}
        errors = []
        for future, server in futures.items():
            if future.exception() is not None:
                errors.append(future.exception())
                self.take_out(server)
        if len(errors) == len(self.servers):
            raise errors[0]

    # ------------------------------------------------------------------ reporting
    def snapshot(self) -> list[dict]:
        """Per server: addr, up, in_flight, sessions, failures, takeouts (a copy, for metrics and logs)."""
        with self._lock:
            return [{"addr": s.addr, "up": s.up, "in_flight": s.in_flight, "sessions": s.sessions,
                     "failures": s.failures, "takeouts": s.takeouts} for s in self.servers]


def env_server_metrics(env_servers: Sequence[str], env_errors: Sequence, addrs: Sequence[str]) -> dict[str, float]:
    """Per-server rollout metrics from a rollout's rows (all ranks): `rollout/env_server{i}/sessions`
    (trajectories that ran on server i of `addrs`) and `.../failures` (those that ended with an env
    error). Rows with no server (chat rows, a session never created) count under no server."""
    out: dict[str, float] = {}
    for i, addr in enumerate(addrs):
        rows = [bool(err) for server, err in zip(env_servers, env_errors, strict=True) if server == addr]
        out[f"rollout/env_server{i}/sessions"] = float(len(rows))
        out[f"rollout/env_server{i}/failures"] = float(sum(rows))
    return out
