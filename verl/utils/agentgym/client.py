"""Routing from `actor_rollout_ref.agentgym` to an agentenv client, and a pool of live sessions.

`envclient_classes` maps each task name to its agentenv client class (AgentGym-RL's name; the
registry below, imported on first access). Extending with a new env = one client class + one
`register_env_client(task_name, cls)` (or an entry in `ENV_CLIENTS`).

`init_env_client(config)` maps `task_name` to the agentenv client class, waits for
the server at `env_addr` (up to `max_retries` attempts; the error names the address and how to start
the server), and creates one client with the configured `timeout`. `EnvClientPool` keeps idle
clients (server sessions) between trajectories and training steps, so a step does not POST /create
once per trajectory as AgentGym-RL does; `close()` frees them all.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any, Callable, Iterator

import requests

from verl.agent_trainer.config.schema import AgentGymConfig, as_section
from verl.utils.registry import Registry

__all__ = [
    "ENV_CLIENTS",
    "envclient_classes",
    "register_env_client",
    "get_env_client_cls",
    "wait_for_env_server",
    "init_env_client",
    "EnvClientPool",
    "EnvServerUnavailable",
]

logger = logging.getLogger(__name__)

# task_name -> "module:Class" (imported on first use, so webarena needs its package only when asked for).
ENV_CLIENTS = Registry("env client", "actor_rollout_ref.agentgym.task_name", {
    "webshop": "agentenv.envs.webshop:WebshopEnvClient",
    "webarena": "agentenv.envs.webarena:WebarenaEnvClient",
})

_LAUNCH_HINT = {
    "webshop": "python -m agentenv_webshop.launch --host 127.0.0.1 --port <port>",
    "webarena": "python -m agentenv_webarena.launch --host 127.0.0.1 --port <port>",
}


class _EnvClientClasses(Mapping):
    """Read-only view of `ENV_CLIENTS`: task name -> client class, imported on first access."""

    def __getitem__(self, task_name: str) -> type:
        if task_name not in ENV_CLIENTS:
            raise KeyError(task_name)
        return ENV_CLIENTS.get(task_name)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(ENV_CLIENTS))

    def __len__(self) -> int:
        return len(ENV_CLIENTS)


envclient_classes: Mapping[str, type] = _EnvClientClasses()


class EnvServerUnavailable(RuntimeError):
    """The environment server never answered at the configured address."""


def register_env_client(task_name: str, target: str | type) -> None:
    """Register an agentenv client class (or "module:Class") for `agentgym.task_name`."""
    ENV_CLIENTS.register(task_name)(target)


def get_env_client_cls(task_name: str) -> type:
    """Return the client class for `task_name`; errors list the registered task names."""
    return ENV_CLIENTS.get(task_name)


def wait_for_env_server(env_addr: str, max_retries: int = 10, timeout: float = 300.0, interval_s: float = 0.5,
                        task_name: str = "webshop") -> None:
    """Poll `GET env_addr/` until it answers 200; raise `EnvServerUnavailable` naming the address otherwise.

    Makes `max_retries + 1` attempts, sleeping `interval_s` (doubling, at most 5 s) between them; each
    attempt waits at most min(timeout, 10) s.
    """
    url = env_addr.rstrip("/") + "/"
    last: str = ""
    delay = interval_s
    start = time.monotonic()
    for attempt in range(max_retries + 1):
        try:
            resp = requests.get(url, timeout=min(float(timeout), 10.0))
            if resp.status_code == 200:
                return
            last = f"HTTP {resp.status_code}"
        except requests.RequestException as exc:
            last = f"{type(exc).__name__}: {exc}"
        if attempt < max_retries:
            time.sleep(delay)
            delay = min(delay * 2, 5.0)
    hint = _LAUNCH_HINT.get(task_name, "start the environment server")
    raise EnvServerUnavailable(
        f"{task_name} env server at {env_addr} did not answer after {max_retries + 1} attempts in "
        f"{time.monotonic() - start:.1f} s (last error: {last}). Start it (`{hint}`) or fix "
        f"actor_rollout_ref.agentgym.env_addr / max_retries."
    )


def _agentgym(agentgym_config: Any) -> AgentGymConfig:
    return as_section(AgentGymConfig, agentgym_config, "actor_rollout_ref.agentgym")


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
    cfg = _agentgym(agentgym_config)
    cls = get_env_client_cls(cfg.task_name)
    kwargs = {"env_server_base": str(cfg.env_addr).rstrip("/"), "data_len": cfg.data_len, "timeout": float(cfg.timeout)}
    if wait:
        wait_for_env_server(kwargs["env_server_base"], cfg.max_retries, cfg.timeout, task_name=cfg.task_name)
    # `max_retries` is the start-up wait (AgentGym-RL's meaning); per-call retries stay the client's own
    # small default, so a server that dies mid-rollout fails its trajectories in about a second.
    return cls(**kwargs)


class EnvClientPool:
    """Thread-safe pool of env clients (server sessions), reused across trajectories and steps.

    `acquire()` hands out an idle client or creates one (waiting for the server on first use);
    `release(client, healthy)` returns it (an unhealthy one, e.g. after a failed call, is closed
    instead); `close()` closes every client. `reset(idx)` on a reused client starts a new episode,
    so no state leaks between trajectories.

    Args:
        agentgym_config: the `actor_rollout_ref.agentgym` section (`AgentGymConfig` or a mapping of its keys).
        factory: builds a client without waiting (default `init_env_client(cfg, wait=False)`);
            tests pass a fake.
        max_idle: most idle clients kept; extra released clients are closed.
    """

    def __init__(self, agentgym_config: Any, factory: Callable[[], Any] | None = None, max_idle: int = 256):
        self.config = _agentgym(agentgym_config)
        self._factory = factory or (lambda: init_env_client(self.config, wait=False))
        self._waited = factory is not None
        self._idle: list = []
        self._lock = threading.Lock()
        self.max_idle = max_idle
        self.created = 0
        self.reused = 0

    def acquire(self):
        """Return an idle client or a new one (may raise the client's errors)."""
        with self._lock:
            if self._idle:
                self.reused += 1
                return self._idle.pop()
            need_wait = not self._waited
        if need_wait:
            cfg = self.config
            wait_for_env_server(cfg.env_addr, cfg.max_retries, cfg.timeout, task_name=cfg.task_name)
            self._waited = True
        client = self._factory()
        with self._lock:
            self.created += 1
        return client

    def release(self, client, healthy: bool = True) -> None:
        """Give `client` back for reuse, or close it when unhealthy or the pool is full."""
        if client is None:
            return
        with self._lock:
            if healthy and len(self._idle) < self.max_idle:
                self._idle.append(client)
                return
        _close_quietly(client)

    def close(self) -> None:
        """Close every idle client; safe to call twice."""
        with self._lock:
            idle, self._idle = self._idle, []
        for client in idle:
            _close_quietly(client)

    def __len__(self) -> int:
        return len(self._idle)


def _close_quietly(client) -> None:
    try:
        client.close()
    except Exception as exc:  # a dead server cannot free the session; nothing else to do
        logger.debug("closing env client failed: %s", exc)
