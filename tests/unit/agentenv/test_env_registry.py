"""The environment registry: one record per environment, refused duplicates, entry points."""
from __future__ import annotations

import importlib.metadata

import pytest

from agentenv import registry
from agentenv.envs.webshop import WebshopEnvClient


def test_the_shipped_records_name_client_and_launch_module():
    record = registry.get_env("webshop")
    assert record.client_cls() is WebshopEnvClient and record.launch_module == "agentenv_webshop.launch"
    assert record.launch_command("127.0.0.1", 36001)[1:] == ["-m", "agentenv_webshop.launch", "--host", "127.0.0.1",
                                                            "--port", "36001"]
    assert registry.get_env("webarena").launch_module == "agentenv_webarena.launch"


def test_lookup_errors_list_the_names_and_duplicates_are_refused(monkeypatch):
    with pytest.raises(ValueError, match=r"task_name='nope' is not registered.*\['webarena', 'webshop'\]"):
        registry.get_env("nope")
    monkeypatch.setattr(registry, "ENVS", registry.EnvRegistry(registry.ENVS))
    same = registry.register_env("webshop", "agentenv.envs.webshop:WebshopEnvClient", "agentenv_webshop.launch")
    assert same == registry.ENVS["webshop"]  # the same record again is a no-op
    with pytest.raises(ValueError, match="already registered"):
        registry.register_env("webshop", "my.module:Other")
    with pytest.raises(ValueError, match="lower_snake"):
        registry.register_env("My-Env", "my.module:Client")
    with pytest.raises(ValueError, match="no launch module"):
        registry.EnvRecord("bare", "x:Y").launch_command("127.0.0.1", 1)
    with pytest.raises(ImportError, match="no_such_module"):
        registry.EnvRecord("bare", "no_such_module:Client").client_cls()


class _EntryPoint:
    def __init__(self, name, value):
        self.name, self.value, self._value = name, f"pkg:{name.upper()}", value

    def load(self):
        return self._value


def test_entry_points_add_records_and_must_name_one(monkeypatch):
    found = {"toy": registry.EnvRecord("toy", "agentenv.envs.webshop:WebshopEnvClient", "toy.launch"),
             "odd": "not a record"}
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group, name: [_EntryPoint(name, found[name])] if name in found else [])
    monkeypatch.setattr(registry, "ENVS", registry.EnvRegistry(registry.ENVS))
    assert registry.get_env("toy").launch_module == "toy.launch" and "toy" in registry.ENVS
    assert registry.ENVS.find("missing") is None
    with pytest.raises(ValueError, match="must name an agentenv.registry.EnvRecord"):
        registry.get_env("odd")
