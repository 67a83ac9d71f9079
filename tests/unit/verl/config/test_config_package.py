"""The config package is a leaf (imports nothing of verl outside itself, no torch), its generic loader
knows no section, and `strategy` is compatibility-only: accepted, warned about when it asks for FSDP1."""
from __future__ import annotations

import os
import pkgutil
import re
import subprocess
import sys

import pytest
from omegaconf import OmegaConf

import verl.config as config_pkg
from verl.config import schema
from verl.config.schema import default_config_path, load_config

MODULES = ["verl.config"] + [f"verl.config.{m.name}" for m in pkgutil.iter_modules(config_pkg.__path__)]
_PROBE = ("import importlib, sys; importlib.import_module({module!r}); "
          "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith(('verl.', 'agentenv')) "
          "and not m.startswith('verl.config')))")


@pytest.mark.parametrize("module", MODULES)
def test_importing_the_config_package_loads_nothing_above_it(module):
    out = subprocess.run([sys.executable, "-c", _PROBE.format(module=module)], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", f"{module} imports {out.stdout.strip()}"  # not even verl.agent_trainer


def test_the_loader_knows_no_section():
    code = ("import sys, verl.config.loader; "
            "print(sorted(m for m in sys.modules if m.startswith('verl.config.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['verl.config.loader']"


def test_every_section_dataclass_is_importable_from_schema():
    import dataclasses
    import importlib

    for name in ("data", "models", "rollout", "reward", "algorithm", "trainer"):
        module = importlib.import_module(f"verl.config.{name}")
        for attr in module.__all__:
            if dataclasses.is_dataclass(getattr(module, attr)):
                assert getattr(schema, attr) is getattr(module, attr), (name, attr)


def _cfg(*overrides):
    return load_config(OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist(list(overrides))),
                       resolve_auto=False)


STRATEGY_KEYS = ("actor_rollout_ref.actor.strategy", "critic.strategy", "reward_model.strategy")


def test_strategy_is_compatibility_only_and_warns_when_it_asks_for_fsdp1(caplog):
    schema._WARNED_COMPAT.clear()
    with caplog.at_level("WARNING"):
        _cfg()  # the default (fsdp2, what runs) is silent
        assert not caplog.records
        _cfg(*(f"{key}=fsdp" for key in STRATEGY_KEYS))
        _cfg(*(f"{key}=fsdp" for key in STRATEGY_KEYS))  # once per key
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 3
    for key in STRATEGY_KEYS:
        (message,) = [m for m in warned if m.startswith(f"{key}='fsdp'")]
        assert "FSDP2" in message and "default 'fsdp2'" in message
    for key in STRATEGY_KEYS:
        with pytest.raises(ValueError, match=rf"{re.escape(key)}='megatron' is not valid; choose one of"):
            _cfg(f"{key}=megatron")


def test_no_code_reads_strategy_and_the_yaml_says_so():
    root = os.path.dirname(config_pkg.__path__[0])  # verl/
    readers = []
    for dirpath, _, files in os.walk(root):
        if dirpath.startswith(config_pkg.__path__[0]):
            continue
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(dirpath, name)) as fh:
                    readers += [f"{name}: {line.strip()}" for line in fh if re.search(r"\.strategy\b", line)]
    assert readers == []  # if a worker starts reading it, the YAML comments and the compat note must change
    with open(default_config_path()) as fh:
        lines = [line for line in fh if re.match(r"\s*strategy:", line)]
    assert len(lines) == 3 and all("compatibility only" in line for line in lines)
