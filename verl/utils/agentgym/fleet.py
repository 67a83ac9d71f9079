"""The env fleet: env servers launched as Ray actors (`actor_rollout_ref.agentgym.env_servers`).

Each `EnvServerActor` owns one server process on its node (the usual `python -m <env>.launch`,
bound to the node's IP on a free port); the process dies with its actor. `EnvServerFleet` places
`num` actors round-robin over the cluster's GPU-less nodes (all nodes when none is GPU-less; only
nodes holding every resource in `resources`, so custom node resources choose the env nodes), at
most `per_node` on one node, waits until every server answers `GET /`, and hands their addresses to
`agentgym.env_addr`. `stop()` ends the processes and the actors.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

from agentenv.health import EnvServerUnavailable, wait_until_healthy
from agentenv.registry import ENVS
from verl.config.schema import EnvServersConfig
from verl.utils.ray_placement import alive_nodes, node_fits, node_has_gpu

__all__ = ["EnvServerActor", "EnvServerFleet", "launch_command"]

logger = logging.getLogger(__name__)


def launch_command(cfg: EnvServersConfig, task_name: str) -> str:
    """`env_servers.cmd`, or the default launch of `task_name`'s server, with {python} {host} {port} left open."""
    if cfg.cmd is not None:
        return cfg.cmd
    record = ENVS.find(task_name)
    if record is None or record.launch_module is None:
        known = sorted(name for name, r in ENVS.items() if r.launch_module)
        raise ValueError(f"actor_rollout_ref.agentgym.env_servers.cmd is null and task_name={task_name!r} has no "
                         f"known server module (known: {known}); set env_servers.cmd")
    return f"{{python}} -m {record.launch_module} --host {{host}} --port {{port}} --log-level warning"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the server gets SIGTERM when its actor process dies, even when the actor is killed."""
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class EnvServerActor:
    """One env server process on this actor's node (wrapped with `ray.remote` by `EnvServerFleet`)."""

    def __init__(self, cmd: str):
        self.cmd = cmd
        self.proc: subprocess.Popen | None = None
        self.addr = ""
        self.log_path = ""

    def start(self, timeout_s: float) -> str:
        """Start the server on a free port of this node's IP; return its address once `GET /` answers.

        Raises:
            RuntimeError: the process exited or did not answer within `timeout_s` (with its log's tail).
        """
        import shlex
        import socket

        import ray

        host = ray.util.get_node_ip_address()
        with socket.socket() as sock:
            sock.bind((host, 0))
            port = sock.getsockname()[1]
        argv = shlex.split(self.cmd.format(python=sys.executable, host=host, port=port))
        fd, self.log_path = tempfile.mkstemp(prefix=f"env_server_{port}_", suffix=".log")
        with os.fdopen(fd, "w") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                         preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        self.addr = f"http://{host}:{port}"
        try:
            wait_until_healthy(self.addr, timeout_s=timeout_s, proc=self.proc, interval_s=0.25, max_interval_s=0.25,
                               request_timeout_s=2.0, what=f"env server `{' '.join(argv)}`",
                               hint="(actor_rollout_ref.agentgym.env_servers.startup_timeout)")
        except EnvServerUnavailable as exc:
            self.stop()
            raise RuntimeError(f"{exc}; log tail:\n{self._log_tail()}") from exc
        return self.addr

    def node_id(self) -> str:
        """The Ray node this server runs on."""
        import ray

        return ray.get_runtime_context().get_node_id()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """Terminate the server process (safe twice)."""
        from agentenv.server import stop_process

        if self.proc is not None:
            stop_process(self.proc, timeout_s=15)

    def _log_tail(self, n: int = 20) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as fh:
                return "".join(fh.readlines()[-n:])
        except OSError:
            return "(no log)"


class EnvServerFleet:
    """`env_servers.num` env servers as Ray actors, spread over the cluster's nodes.

    Args:
        cfg: `actor_rollout_ref.agentgym.env_servers`.
        task_name: picks the default launch command (`agentenv_<task>.launch`).
    """

    def __init__(self, cfg: EnvServersConfig, task_name: str):
        self.cfg = cfg
        self.cmd = launch_command(cfg, task_name)
        self.actors: list = []
        self.addresses: list[str] = []

    def plan(self) -> list[str]:
        """The node id of each server: GPU-less nodes holding `resources` (else every such node),
        round-robin, at most `per_node` per node.

        Raises:
            ValueError: no node holds `resources`, or `num` exceeds `per_node` x the nodes.
        """
        cfg, p = self.cfg, "actor_rollout_ref.agentgym.env_servers"
        nodes = [n for n in alive_nodes() if node_fits(n, cfg.resources)]
        if not nodes:
            raise ValueError(f"no Ray node holds {p}.resources={cfg.resources}; start env nodes with matching "
                             f"`ray start --resources ...` or lower the request")
        cpu_only = [n for n in nodes if not node_has_gpu(n)]
        nodes = cpu_only or nodes
        if cfg.per_node and cfg.num > cfg.per_node * len(nodes):
            raise ValueError(f"{p}.num={cfg.num} servers do not fit {p}.per_node={cfg.per_node} on the "
                             f"{len(nodes)} node(s) that can hold them; raise per_node or add nodes")
        return [nodes[i % len(nodes)]["NodeID"] for i in range(cfg.num)]

    def start(self) -> list[str]:
        """Launch the servers, wait until each answers, return their addresses (stops them all on failure)."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        res = dict(self.cfg.resources)
        options: dict[str, Any] = {"num_cpus": res.pop("CPU", 0), "num_gpus": res.pop("GPU", 0), "resources": res}
        remote_cls = ray.remote(EnvServerActor)
        t0 = time.perf_counter()
        for node_id in self.plan():
            strategy = NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)
            self.actors.append(remote_cls.options(scheduling_strategy=strategy, **options).remote(self.cmd))
        timeout = self.cfg.startup_timeout
        try:
            self.addresses = ray.get([a.start.remote(timeout) for a in self.actors], timeout=timeout + 60)
        except Exception as exc:
            self.stop()
            raise RuntimeError(f"env fleet: a server failed to start ({type(exc).__name__}: {exc})") from exc
        logger.info("env fleet: %d server(s) up in %.1f s: %s", len(self.addresses), time.perf_counter() - t0,
                    self.addresses)
        return list(self.addresses)

    def node_ids(self) -> list[str]:
        """The node of each server (same order as `addresses`)."""
        import ray

        return ray.get([a.node_id.remote() for a in self.actors])

    def stop(self) -> None:
        """Stop every server process and its actor (safe twice)."""
        import ray

        if not self.actors:
            return
        try:
            ray.get([a.stop.remote() for a in self.actors], timeout=60)
        except Exception as exc:  # an actor already gone: killing it below ends its server too
            logger.warning("env fleet: stopping a server failed (%s); killing the actors", exc)
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        logger.info("env fleet: stopped %d server(s)", len(self.addresses))
