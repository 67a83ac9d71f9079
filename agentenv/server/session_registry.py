"""`SessionRegistry`: live environment sessions keyed by sequential integer ids.

Owns the session lifecycle every env server shares: ids 0, 1, 2, ... (never reused), a maximum
number of live sessions (503 JSON error when full), a per-session lock so concurrent calls to one
session run one at a time, idle-TTL eviction by a background sweeper thread, and close. It does
not know what a session is: a factory builds one and an optional hook frees one.

Logging: evictions at INFO; single creates/closes at DEBUG, because RL rollouts open and close
thousands of sessions a minute and a line each would cost more than the session itself.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any, Callable, Iterator, Optional

from agentenv.server.errors import EnvServerError

__all__ = ["SessionRegistry"]

logger = logging.getLogger(__name__)


class _Entry:
    __slots__ = ("env", "lock", "last_used", "closed")

    def __init__(self, env: Any, now: float):
        self.env = env
        self.lock = threading.Lock()
        self.last_used = now
        self.closed = False


class SessionRegistry:
    """Thread-safe map from env_idx to a live session.

    Args:
        factory: builds one new session object (called without the registry lock held).
        max_sessions: live-session limit; `create` beyond it raises a 503 error. None = unlimited.
        ttl_s: idle seconds after which `sweep` evicts a session. None = never.
        on_close: called with the session object when it is closed or evicted.
        clock: monotonic time source (injectable for tests).
    """

    def __init__(
        self,
        factory: Callable[[], Any],
        *,
        max_sessions: Optional[int] = None,
        ttl_s: Optional[float] = None,
        on_close: Optional[Callable[[Any], None]] = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if max_sessions is not None and max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1 or None, got {max_sessions}")
        if ttl_s is not None and ttl_s <= 0:
            raise ValueError(f"ttl_s must be > 0 or None, got {ttl_s}")
        self.factory = factory
        self.max_sessions = max_sessions
        self.ttl_s = ttl_s
        self.on_close = on_close
        self.clock = clock
        self._entries: dict[int, _Entry] = {}
        self._lock = threading.Lock()
        self._next_id = 0
        self._pending = 0  # creations in progress (count against max_sessions)
        self._sweeper: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self.num_evicted = 0

    # -- lifecycle -------------------------------------------------------------------------------
    def create(self) -> int:
        """Build a session with the factory and return its new id.

        Raises:
            EnvServerError: 503 "too_many_sessions" when `max_sessions` are live.
        """
        with self._lock:
            if self.max_sessions is not None and len(self._entries) + self._pending >= self.max_sessions:
                raise EnvServerError(
                    503, "too_many_sessions",
                    f"the server already holds its maximum of {self.max_sessions} live sessions; close some "
                    "with POST /close, wait for idle ones to expire, or restart with a larger --max-sessions",
                    max_sessions=self.max_sessions,
                )
            self._pending += 1
        try:
            env = self.factory()
        except BaseException:
            with self._lock:
                self._pending -= 1
            raise
        with self._lock:
            self._pending -= 1
            env_idx = self._next_id
            self._next_id += 1
            self._entries[env_idx] = _Entry(env, self.clock())
        logger.debug("session %d created (%d live)", env_idx, len(self._entries))
        return env_idx

    @contextlib.contextmanager
    def use(self, env_idx: int) -> Iterator[Any]:
        """Hold session `env_idx` exclusively for one call and mark it used.

        Raises:
            EnvServerError: 404 "unknown_env_idx" if the id is not live.
        """
        entry = self._entry_or_raise(env_idx)
        with entry.lock:
            if entry.closed:  # closed or evicted while we waited for the lock
                raise self._unknown(env_idx)
            entry.last_used = self.clock()
            try:
                yield entry.env
            finally:
                entry.last_used = self.clock()

    def close(self, env_idx: int) -> None:
        """Free session `env_idx`, waiting for a call in progress on it to finish.

        Raises:
            EnvServerError: 404 "unknown_env_idx" if the id is not live.
        """
        with self._lock:
            entry = self._entries.pop(env_idx, None)
        if entry is None:
            raise self._unknown(env_idx)
        with entry.lock:
            entry.closed = True
        self._free(env_idx, entry.env)
        logger.debug("session %d closed (%d live)", env_idx, len(self._entries))

    def close_all(self) -> None:
        """Close every live session (used at shutdown)."""
        for env_idx in self.ids():
            with contextlib.suppress(EnvServerError):
                self.close(env_idx)

    def sweep(self) -> list[int]:
        """Evict sessions idle for longer than `ttl_s`; sessions in use are skipped. Returns evicted ids."""
        if self.ttl_s is None:
            return []
        deadline = self.clock() - self.ttl_s
        with self._lock:
            candidates = [(i, e) for i, e in self._entries.items() if e.last_used < deadline]
        evicted = []
        for env_idx, entry in candidates:
            if not entry.lock.acquire(blocking=False):
                continue  # busy right now, so not idle
            try:
                if entry.closed or entry.last_used >= deadline:
                    continue
                with self._lock:
                    if self._entries.get(env_idx) is not entry:
                        continue
                    del self._entries[env_idx]
                entry.closed = True
            finally:
                entry.lock.release()
            self._free(env_idx, entry.env)
            evicted.append(env_idx)
        if evicted:
            self.num_evicted += len(evicted)
            logger.info("evicted %d idle session(s) after %.0f s: %s", len(evicted), self.ttl_s, evicted[:20])
        return evicted

    # -- background sweeper ------------------------------------------------------------------------
    def start_sweeper(self, interval_s: Optional[float] = None) -> None:
        """Run `sweep` every `interval_s` seconds (default: ttl/4, between 0.05 and 30 s) in a daemon thread."""
        if self.ttl_s is None or self._sweeper is not None:
            return
        interval = interval_s if interval_s is not None else min(max(self.ttl_s / 4, 0.05), 30.0)
        self._stop.clear()

        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    self.sweep()
                except Exception:  # a failing close hook must not kill the sweeper
                    logger.exception("session sweep failed")

        self._sweeper = threading.Thread(target=loop, name="session-sweeper", daemon=True)
        self._sweeper.start()

    def stop_sweeper(self) -> None:
        """Stop the sweeper thread (no-op if not running)."""
        if self._sweeper is None:
            return
        self._stop.set()
        self._sweeper.join(timeout=5)
        self._sweeper = None

    # -- queries ---------------------------------------------------------------------------------
    def ids(self) -> list[int]:
        """Live ids in creation order."""
        with self._lock:
            return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, env_idx: object) -> bool:
        return env_idx in self._entries

    # -- helpers ---------------------------------------------------------------------------------
    def _entry_or_raise(self, env_idx: int) -> _Entry:
        entry = self._entries.get(env_idx)
        if entry is None:
            raise self._unknown(env_idx)
        return entry

    def _unknown(self, env_idx: Any) -> EnvServerError:
        if isinstance(env_idx, int) and 0 <= env_idx < self._next_id:
            why = "it was closed" + (f" or evicted after {self.ttl_s:g} s idle" if self.ttl_s else "")
        else:
            why = f"no such id was ever created (ids so far: 0..{self._next_id - 1})" if self._next_id else \
                "no session was created yet"
        return EnvServerError(404, "unknown_env_idx",
                              f"env_idx {env_idx!r} is unknown: {why}; create one with POST /create",
                              env_idx=env_idx)

    def _free(self, env_idx: int, env: Any) -> None:
        if self.on_close is None:
            return
        try:
            self.on_close(env)
        except Exception:
            logger.exception("closing session %d failed", env_idx)
