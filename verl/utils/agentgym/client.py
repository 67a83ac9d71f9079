"""Routing from `actor_rollout_ref.agentgym` to an agentenv client, and a pool of live sessions.

Which environments exist is `agentenv.registry` (one record per environment: client class and the
module that launches its server); `envclient_classes` is AgentGym-RL's name for the task name ->
client class view of it, and `register_env_client` adds a record. Extending with a new env is one
record (docs/adding_an_environment.md).

`init_env_client(config)` (AgentGym-RL's entry) maps `task_name` to the agentenv client class, waits
for the server at `env_addr` (up to `max_retries` attempts; the error names the address and how to
start the server), and creates one client with the configured `timeout`. `EnvClientPool` takes the
server addresses and client settings themselves and keeps idle clients (server sessions) between
trajectories and training steps, so a step does not POST /create once per trajectory as AgentGym-RL
does; `close()` frees them all. With several servers the pool spreads sessions over them by load and
takes a server that stops answering out of rotation (`servers.EnvServerSet`).
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any, Callable, Iterator, Sequence

import requests

from agentenv.health import wait_until_healthy
from agentenv.registry import ENVS, EnvRecord, get_env, register_env
from verl.config.schema import AgentGymConfig, as_section
from verl.utils.agentgym.servers import EnvServerSet, EnvServerState, EnvServerUnavailable

__all__ = [
    "ENVS",
    "EnvRecord",
    "envclient_classes",
    "register_env_client",
    "get_env_client_cls",
    "wait_for_env_server",
    "init_env_client",
    "EnvClientPool",
    "EnvServerUnavailable",
]

logger = logging.getLogger(__name__)


class _EnvClientClasses(Mapping):
    """Read-only view of `agentenv.registry.ENVS`: task name -> client class, imported on first access."""

    def __getitem__(self, task_name: str) -> type:
        record = ENVS.find(task_name)
        if record is None:
            raise KeyError(task_name)
        return record.client_cls()

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(ENVS))

    def __len__(self) -> int:
        return len(ENVS)


envclient_classes: Mapping[str, type] = _EnvClientClasses()


def register_env_client(task_name: str, target: str | type, launch_module: str | None = None) -> EnvRecord:
    """Register an agentenv client class (or "module:Class") for `agentgym.task_name`, with the module
    that launches its server (`agentenv.registry.register_env`)."""
    return register_env(task_name, target, launch_module)


def get_env_client_cls(task_name: str) -> type:
    """Return the client class for `task_name`; errors list the registered task names."""
    return get_env(task_name).client_cls()


def wait_for_env_server(env_addr: str, max_retries: int = 10, timeout: float = 300.0, interval_s: float = 0.5,
                        task_name: str = "webshop") -> None:
    """Poll `GET env_addr/` until it answers 200; raise `EnvServerUnavailable` naming the address otherwise.

    Makes `max_retries + 1` attempts, sleeping `interval_s` (doubling, at most 5 s) between them; each
    attempt waits at most min(timeout, 10) s (`agentenv.health.wait_until_healthy`).
    """
    record = ENVS.find(task_name)
    module = record.launch_module if record is not None else None
    start = f"python -m {module} --host 127.0.0.1 --port <port>" if module else "start the environment server"
    wait_until_healthy(env_addr, timeout_s=None, interval_s=interval_s, max_attempts=max_retries + 1,
                       request_timeout_s=min(float(timeout), 10.0),
                       what=f"{task_name} env server",
                       hint=f"Start it (`{start}`) or fix actor_rollout_ref.agentgym.env_addr / max_retries.")


def init_env_client(agentgym_config: Any, wait: bool = True):
    """Create one agentenv client for `agentgym_config` (task_name, env_addr, max_retries, timeout, data_len).

    Args:
        agentgym_config: the `actor_rollout_ref.agentgym` section (`AgentGymConfig`, or a mapping of
            its keys, loaded with the dataclass's defaults and key checks).
        wait: poll the server first.

    Raises:
        EnvServerUnavailable: the server never answered.
        ValueError: an unknown task name or config key.
    """
    cfg = as_section(AgentGymConfig, agentgym_config, "actor_rollout_ref.agentgym")
    cls = get_env_client_cls(cfg.task_name)
    if len(cfg.env_addrs) != 1:
        raise ValueError(f"init_env_client builds one client for one server; actor_rollout_ref.agentgym.env_addr="
                         f"{cfg.env_addrs} names {len(cfg.env_addrs)} (EnvClientPool spreads sessions over them)")
    addr, = cfg.env_addrs
    if wait:
        wait_for_env_server(addr, cfg.max_retries, cfg.timeout, task_name=cfg.task_name)
    # `max_retries` is the start-up wait (AgentGym-RL's meaning); per-call retries stay the client's own
    # small default, so a server that dies mid-rollout fails its trajectories in about a second.
    return cls(env_server_base=addr, data_len=cfg.data_len, timeout=float(cfg.timeout))


class EnvClientPool:
    """Thread-safe pool of env clients (server sessions) over one or more servers, reused across
    trajectories and steps.

    `acquire()` picks a server by load (`EnvServerSet`: fewest sessions in flight, sick servers out
    of rotation) and hands out an idle client of that server or creates one (waiting for the servers
    on first use); `release(client, healthy)` returns it (an unhealthy one, e.g. after a failed call,
    is closed and makes its server suspect); `close()` closes every client. `reset(idx)` on a reused
    client starts a new episode, so no state leaks between trajectories.

    Args:
        addrs: the servers' base URLs (`AgentGymConfig.env_addrs`).
        task_name: the environment (its client class; names the server in errors).
        data_len, timeout: the client's arguments; `max_retries` (the start-up wait), `health_timeout`,
            `backoff_s`, `max_backoff_s`: as `actor_rollout_ref.agentgym`'s keys of those names
            (`server_backoff_s`, `server_max_backoff_s`).
        factory: builds a client without waiting; zero arguments (a custom env: one server slot,
            named by the first address, no health probes) or none for the task's client class.
        max_idle: most idle clients kept (over all servers); extra released clients are closed.
        probe: `probe(addr) -> bool` health check (default GET / with `health_timeout`).
    """

    def __init__(self, addrs: Sequence[str], task_name: str, *, data_len: int = AgentGymConfig.data_len,
                 timeout: float = AgentGymConfig.timeout, max_retries: int = AgentGymConfig.max_retries,
                 health_timeout: float = AgentGymConfig.health_timeout,
                 backoff_s: float = AgentGymConfig.server_backoff_s,
                 max_backoff_s: float = AgentGymConfig.server_max_backoff_s,
                 factory: Callable[[], Any] | None = None, max_idle: int = 256,
                 probe: Callable[[str], bool] | None = None):
        self.addrs = addrs = list(addrs)[:1] if factory is not None else list(addrs)
        self.task_name, self.timeout, self.max_retries = task_name, timeout, max_retries
        if factory is not None:
            self._connect = lambda addr: factory()
            probe = probe or (lambda addr: True)
        else:
            self._connect = lambda addr: get_env_client_cls(task_name)(env_server_base=addr, data_len=data_len,
                                                                       timeout=float(timeout))
        self.servers = EnvServerSet(addrs, probe=probe, backoff_s=backoff_s, max_backoff_s=max_backoff_s,
                                    health_timeout=health_timeout)
        self._waited = factory is not None
        self._wait_lock = threading.Lock()
        self._idle: dict[str, list] = {a: [] for a in addrs}
        self._owner: dict[int, EnvServerState] = {}
        self._lock = threading.Lock()
        self.max_idle = max_idle
        self.created = 0
        self.reused = 0

    def acquire(self):
        """Return a client on the least-loaded live server (may raise the client's errors, or
        `EnvServerUnavailable` when no server is in rotation). A server whose session cannot be
        created is marked suspect and the next server is tried."""
        self._wait_once()
        last: Exception | None = None
        for _ in range(len(self.servers.servers)):
            server = self.servers.pick()
            with self._lock:
                idle = self._idle[server.addr]
                if idle:
                    client = idle.pop()
                    self.reused += 1
                    self._owner[id(client)] = server
                    return client
            try:
                client = self._connect(server.addr)
            except Exception as exc:
                self.servers.finished(server, ok=False)
                if not _is_transport_error(exc):
                    raise
                last = exc
                continue
            with self._lock:
                self.created += 1
                self._owner[id(client)] = server
            return client
        raise last  # every server refused a new session

    def server_of(self, client) -> str:
        """Address of the server `client` (handed out by `acquire`) talks to."""
        with self._lock:
            server = self._owner.get(id(client))
        return server.addr if server is not None else ""

    def release(self, client, healthy: bool = True) -> None:
        """Give `client` back for reuse, or close it when unhealthy or the pool is full."""
        if client is None:
            return
        with self._lock:
            server = self._owner.pop(id(client), None)
        if server is not None:
            self.servers.finished(server, ok=healthy)
        with self._lock:
            if healthy and server is not None and server.up and self._idle_count() < self.max_idle:
                self._idle[server.addr].append(client)
                return
        _close_quietly(client)

    def close(self) -> None:
        """Close every idle client; safe to call twice."""
        with self._lock:
            idle = [c for clients in self._idle.values() for c in clients]
            for clients in self._idle.values():
                clients.clear()
        for client in idle:
            _close_quietly(client)

    def _wait_once(self) -> None:
        """On first use, wait for every server (`max_retries`); those that never answer start out of
        rotation, and `EnvServerUnavailable` is raised only when none answers."""
        if self._waited:
            return
        with self._wait_lock:
            if self._waited:
                return
            self.servers.wait_all(lambda addr: wait_for_env_server(addr, self.max_retries, self.timeout,
                                                                   task_name=self.task_name))
            self._waited = True

    def _idle_count(self) -> int:
        return sum(len(c) for c in self._idle.values())

    def __len__(self) -> int:
        with self._lock:
            return self._idle_count()


def _is_transport_error(exc: BaseException) -> bool:
    """A failure to reach a server (not a bug): worth trying another server."""
    from agentenv.controller import EnvClientError

    return isinstance(exc, (EnvClientError, EnvServerUnavailable, requests.RequestException, ConnectionError,
                            TimeoutError))


def _close_quietly(client) -> None:
    try:
        client.close()
    except Exception as exc:  # a dead server cannot free the session; nothing else to do
        logger.debug("closing env client failed: %s", exc)
