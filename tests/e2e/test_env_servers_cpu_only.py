"""Env servers never touch a GPU: each hides the accelerators from itself before importing its engine
(`agentenv.server.hide_accelerators`), so JAX (pulled in by bm25s when installed) and torch see none."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import psutil
import pytest
from helpers import launched_server

from agentenv.server import CPU_ONLY_ENV

# libraries that would mean a GPU runtime or JAX's XLA backend was loaded into the process
_GPU_LIBS = ("libcuda.so", "libcudart", "libnvidia", "libamdhip", "xla_extension", "libtpu")
_PRETEND_GPU = {"CUDA_VISIBLE_DEVICES": "0", "JAX_PLATFORMS": "cuda"}


def _environ(pid: int) -> dict[str, str]:
    """The environment a process started with (/proc shows the block given to exec)."""
    with open(f"/proc/{pid}/environ", "rb") as f:
        pairs = [item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item]
    return {k.decode(): v.decode(errors="replace") for k, v in pairs}


def _mapped_gpu_libs(pid: int) -> set[str]:
    with open(f"/proc/{pid}/maps") as f:
        return {lib for line in f for lib in _GPU_LIBS if lib in line}


def test_engine_imported_after_hiding_sees_no_accelerator():
    """What the server process does first: hide, then import the engine (bm25s, hence JAX if installed)."""
    code = """
import json, os, sys
from agentenv.server import hide_accelerators
hide_accelerators()
import agentenv_webshop.server  # the engine: bm25s (imports JAX when installed)
out = {k: os.environ.get(k) for k in %r}
if "jax" in sys.modules:
    out["jax_platforms"] = sorted({d.platform for d in sys.modules["jax"].devices()})
try:
    import torch
    out["torch_cuda_devices"] = torch.cuda.device_count()
except ImportError:
    pass
print(json.dumps(out))
""" % (sorted(CPU_ONLY_ENV),)
    env = {**os.environ, **_PRETEND_GPU}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    for key, value in CPU_ONLY_ENV.items():
        assert out[key] == value
    assert out.get("jax_platforms", ["cpu"]) == ["cpu"]
    assert out.get("torch_cuda_devices", 0) == 0


def test_webshop_main_hides_before_building_the_app(monkeypatch):
    import agentenv_webshop.launch as launch
    import agentenv_webshop.server as server

    for key, value in _PRETEND_GPU.items():
        monkeypatch.setenv(key, value)
    for key in CPU_ONLY_ENV:  # restored by monkeypatch after the test
        monkeypatch.setenv(key, os.environ.get(key, "unset"))
    seen = {}

    def fake_create_app(*args, **kwargs):
        seen.update({k: os.environ.get(k) for k in CPU_ONLY_ENV})
        return object()

    monkeypatch.setattr(server, "create_app", fake_create_app)
    monkeypatch.setattr(launch, "serve", lambda app, settings: None)
    launch.main(["--port", "1"])
    assert seen == CPU_ONLY_ENV


def test_webshop_server_loads_no_gpu_library():
    with launched_server("agentenv_webshop.launch", "--num-products", "200",
                         env={**os.environ, **_PRETEND_GPU}) as (base, proc):
        assert _mapped_gpu_libs(proc.pid) == set()


def test_webarena_server_and_its_children_are_cpu_only():
    pytest.importorskip("playwright")
    from agentenv_webarena.webarena.browser_env import default_chromium

    if not os.path.exists(default_chromium()):
        pytest.skip(f"no Chromium at {default_chromium()}")
    env = {k: v for k, v in os.environ.items() if k not in ("SHOPPING", "SHOPPING_ADMIN", "REDDIT")}
    env.update(_PRETEND_GPU)
    with launched_server("agentenv_webarena.launch", env=env) as (base, proc):
        assert _mapped_gpu_libs(proc.pid) == set()
        # the Playwright driver, the embedded sites and Chromium's browser process were started after
        # hide_accelerators, so they carry the server's live environment (Chromium's zygote and
        # helper processes rewrite theirs and are left out)
        children = [c for c in psutil.Process(proc.pid).children(recursive=True)
                    if not any(arg.startswith("--type=") for arg in c.cmdline())]
        assert len(children) >= 3, [c.cmdline()[:2] for c in children]
        for child in children:
            child_env = _environ(child.pid)
            for key, value in CPU_ONLY_ENV.items():
                assert child_env.get(key) == value, (child.cmdline()[:2], key, child_env.get(key))
