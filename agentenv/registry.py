"""The environment registry: one record per environment, naming its client class and its server.

`ENVS` maps a task name (`actor_rollout_ref.agentgym.task_name`, the prefix of its item ids such as
`webshop_12`) to an `EnvRecord`: the agentenv client class (or a lazy ``"module:Class"`` string, so an
environment's package is imported only when it is asked for) and the module that starts its server
(`python -m <launch_module> --host H --port P`). Adding an environment is one record: a
`register_env` call here, or, for a package of your own, an entry point in the group
``agentenv.envs`` naming its `EnvRecord` (found when its name is first looked up, in every process,
Ray workers included). See docs/adding_an_environment.md. The trainer (`verl.utils.agentgym`)
reads this registry; it holds nothing of its own about environments.
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
from typing import Optional, Union

__all__ = ["ENTRY_POINT_GROUP", "ENVS", "EnvRecord", "get_env", "register_env"]

_TASK_KEY = "actor_rollout_ref.agentgym.task_name"
ENTRY_POINT_GROUP = "agentenv.envs"  # installed packages add environments here: `name = module:RECORD`


@dataclasses.dataclass(frozen=True)
class EnvRecord:
    """What the trainer needs to know about one environment.

    Attributes:
        task_name: the registry key (lower_snake); also the item-id prefix (`<task_name>_<index>`).
        client: the `BaseEnvClient` subclass, or ``"module:Class"`` naming it (imported on first use).
        launch_module: module whose `python -m <module> --host H --port P` starts the server, or None
            when the server is started some other way (then `env_servers.cmd` must say how).
    """

    task_name: str
    client: Union[str, type]
    launch_module: Optional[str] = None

    def client_cls(self) -> type:
        """The client class, importing it when the record names it lazily.

        Raises:
            ImportError: naming the module and the task when the client's package is missing.
        """
        if not isinstance(self.client, str):
            return self.client
        module_name, _, attr = self.client.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ImportError(f"{_TASK_KEY}={self.task_name!r} needs {module_name} ({exc}); "
                              "install the package that provides it") from exc
        return getattr(module, attr)

    def launch_command(self, host: str, port: int, python: str = "python") -> list[str]:
        """The command that starts this environment's server on host:port.

        Raises:
            ValueError: the record names no launch module.
        """
        if self.launch_module is None:
            raise ValueError(f"{_TASK_KEY}={self.task_name!r} has no launch module; say how to start its "
                             "server (actor_rollout_ref.agentgym.env_servers.cmd)")
        return [python, "-m", self.launch_module, "--host", host, "--port", str(port)]


class EnvRegistry(dict):
    """task name -> `EnvRecord`; a second, different record under a taken name is refused."""

    def register(self, record: EnvRecord) -> EnvRecord:
        """Add `record` (the same record again is a no-op).

        Raises:
            ValueError: the name is taken by a different record, or the name is not lower_snake.
        """
        name = record.task_name
        if not name or not name.replace("_", "").isalnum() or name != name.lower():
            raise ValueError(f"environment name {name!r} must be lower_snake (it is an item-id prefix)")
        old = super().get(name)
        if old is not None and old != record:
            raise ValueError(f"environment {name!r} is already registered ({old}); pick another name for {record}")
        self[name] = record
        return record

    def find(self, task_name: str) -> Optional[EnvRecord]:
        """The record of `task_name` (loading an installed package's entry point of that name if
        needed), or None."""
        if task_name not in self:
            self._load_entry_point(task_name)
        return super().get(task_name)

    def lookup(self, task_name: str) -> EnvRecord:
        """The record of `task_name`, as `find`.

        Raises:
            ValueError: naming the config key, the value and the registered names.
        """
        if self.find(task_name) is None:
            raise ValueError(f"{_TASK_KEY}={task_name!r} is not registered; choose one of {sorted(self)} "
                             "(or register it: agentenv.registry.register_env)")
        return self[task_name]

    def _load_entry_point(self, task_name: str) -> None:
        for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name=task_name):
            record = entry.load()
            if not isinstance(record, EnvRecord) or record.task_name != task_name:
                raise ValueError(f"entry point {entry.name} = {entry.value} in group {ENTRY_POINT_GROUP!r} must name "
                                 f"an agentenv.registry.EnvRecord with task_name={task_name!r}, got {record!r}")
            self.register(record)


ENVS = EnvRegistry()


def register_env(task_name: str, client: Union[str, type], launch_module: Optional[str] = None) -> EnvRecord:
    """Register an environment: its client class (or ``"module:Class"``) and its server's launch module."""
    return ENVS.register(EnvRecord(task_name, client, launch_module))


def get_env(task_name: str) -> EnvRecord:
    """The registered record of `task_name` (the error lists the registered names)."""
    return ENVS.lookup(task_name)


register_env("webshop", "agentenv.envs.webshop:WebshopEnvClient", "agentenv_webshop.launch")
register_env("webarena", "agentenv.envs.webarena:WebarenaEnvClient", "agentenv_webarena.launch")
