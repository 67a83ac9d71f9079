"""`InstanceStore`: the embedded sites' state, one in-memory SQLite database per *instance*.

Owns where the embedded sites keep their data and how it is restored. A pristine database is built
once (schema + deterministic seed of every site); each instance (one per env session, named by the
`X-Webarena-Instance` request header) is a private in-memory copy made with SQLite's backup API,
so a `/reset` restores an instance in milliseconds and parallel envs never see each other's posts,
carts or orders. It does not know any site's tables: the sites pass in their schema and seed.
"""
from __future__ import annotations

import contextlib
import logging
import re
import sqlite3
import threading
from typing import Callable, Iterator

__all__ = ["INSTANCE_HEADER", "DEFAULT_INSTANCE", "InstanceStore", "instance_of"]

logger = logging.getLogger(__name__)

INSTANCE_HEADER = "X-Webarena-Instance"
DEFAULT_INSTANCE = "default"
_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


def instance_of(request) -> str:
    """The instance a request belongs to: its `X-Webarena-Instance` header, else "default".

    Raises:
        ValueError: the header is not 1-64 characters of [A-Za-z0-9_.:-].
    """
    name = request.headers.get(INSTANCE_HEADER, DEFAULT_INSTANCE)
    return check_instance_name(name)


def check_instance_name(name: str) -> str:
    """Return `name` if it is a valid instance name, else raise ValueError naming the rule."""
    if not _NAME.match(name or ""):
        raise ValueError(f"instance name {name!r} is invalid: use 1-64 characters of [A-Za-z0-9_.:-]")
    return name


def _connect() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


class _Instance:
    __slots__ = ("conn", "lock")

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.lock = threading.RLock()


class InstanceStore:
    """Pristine seeded database plus one in-memory copy per instance.

    Args:
        build: `conn -> None`, creates every table and inserts the seed data (deterministic).
        max_instances: live instances kept; creating one more drops the least recently reset one.
    """

    def __init__(self, build: Callable[[sqlite3.Connection], None], max_instances: int = 4096):
        self._pristine = _connect()
        build(self._pristine)
        self._pristine.commit()
        self._instances: dict[str, _Instance] = {}
        self._lock = threading.Lock()
        self._pristine_lock = threading.Lock()  # sqlite3 objects are not safe for concurrent use
        self.max_instances = max_instances
        self.resets = 0

    def pristine(self) -> sqlite3.Connection:
        """The seeded database (read it, never write it: every reset copies it)."""
        return self._pristine

    def _get(self, instance: str) -> _Instance:
        with self._lock:
            inst = self._instances.get(instance)
            if inst is None:
                if len(self._instances) >= self.max_instances:
                    oldest = next(iter(self._instances))
                    self._instances.pop(oldest).conn.close()
                    logger.warning("instance limit %d reached: dropped %r", self.max_instances, oldest)
                inst = _Instance(_connect())
                with self._pristine_lock:
                    self._pristine.backup(inst.conn)
                self._instances[instance] = inst
            return inst

    @contextlib.contextmanager
    def connection(self, instance: str) -> Iterator[sqlite3.Connection]:
        """Hold instance `instance` (created from the pristine copy on first use) for one request.

        Commits when the block ends without an exception, rolls back otherwise.
        """
        inst = self._get(check_instance_name(instance))
        with inst.lock:
            try:
                yield inst.conn
                inst.conn.commit()
            except BaseException:
                inst.conn.rollback()
                raise

    def reset(self, instance: str) -> None:
        """Restore `instance` to the pristine data (creates it if new)."""
        inst = self._get(check_instance_name(instance))
        with inst.lock, self._pristine_lock:
            self._pristine.backup(inst.conn)
        self.resets += 1

    def drop(self, instance: str) -> bool:
        """Free `instance`; returns False when it did not exist."""
        with self._lock:
            inst = self._instances.pop(check_instance_name(instance), None)
        if inst is None:
            return False
        with inst.lock:
            inst.conn.close()
        return True

    def instances(self) -> list[str]:
        """Names of the live instances."""
        with self._lock:
            return list(self._instances)
