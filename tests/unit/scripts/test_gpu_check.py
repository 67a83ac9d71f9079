"""scripts/gpu_check.sh --dry-run: the plan the lent GPU machine would run (phases, order, time limits,
commands), checked on CPU; the vLLM GPU test gets its own phase exactly where vLLM is importable."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
VLLM_TEST = "tests/gpu/test_vllm_engine_gpu.py"


def _dry_run(tmp_path, *args: str, extra_path: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHON=sys.executable, OUT=str(tmp_path / "out"), GPU_CHECK_BUDGET_S="520")
    env.pop("PYTHONPATH", None)
    if extra_path:
        env["PYTHONPATH"] = extra_path
    return subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu_check.sh"), *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=env)


def _plan(stdout: str) -> dict[str, tuple[int, int, str]]:
    """PLAN lines -> {phase: (limit_s, kept_for_later_s, command)}, in the order printed."""
    plan = {}
    for m in re.finditer(r"^PLAN  (\w+) \(<= (\d+) s, keeps (\d+) s for later phases, log \S+\): (.*)$", stdout, re.M):
        plan[m.group(1)] = (int(m.group(2)), int(m.group(3)), m.group(4))
    return plan


def test_dry_run_without_vllm_plans_every_phase_and_skips_the_vllm_test(tmp_path):
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is importable in this venv")
    res = _dry_run(tmp_path, "--dry-run")
    assert res.returncode == 0, res.stderr
    plan = _plan(res.stdout)
    assert list(plan) == ["install", "imports", "pytest", "bench_vs_static", "bench_rollout", "bench_train_step"]
    assert re.search(r"^SKIP  pytest_vllm \(vllm is not importable", res.stdout, re.M)
    tests = plan["pytest"][2].split()
    assert "tests/gpu/test_fsdp_cuda.py" in tests and "tests/e2e/test_sglang_engine_gpu.py" in tests
    assert VLLM_TEST not in tests
    assert "--hidden 896 --layers 24" in plan["bench_train_step"][2]  # the 0.5B layer shape's actor table
    assert "--vs-static" in plan["bench_vs_static"][2] and "--model smollm2" in plan["bench_vs_static"][2]
    assert plan["pytest"][1] == 60 + 60 + 60  # the three benchmarks keep their floor
    assert not (tmp_path / "out").exists()  # a dry run writes nothing


def test_dry_run_with_vllm_importable_gives_its_test_a_phase_of_its_own(tmp_path):
    fake = tmp_path / "fake_site" / "vllm"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    res = _dry_run(tmp_path, "--dry-run", extra_path=str(fake.parent))
    assert res.returncode == 0, res.stderr
    plan = _plan(res.stdout)
    assert list(plan) == ["install", "imports", "pytest", "pytest_vllm", "bench_vs_static", "bench_rollout",
                          "bench_train_step"]
    assert plan["pytest_vllm"][2].split()[-1] == VLLM_TEST and VLLM_TEST not in plan["pytest"][2].split()
    assert plan["pytest"][1] == 120 + 60 + 60 + 60 and plan["pytest_vllm"][1] == 60 + 60 + 60
    assert "SKIP  pytest_vllm" not in res.stdout


def test_an_unknown_argument_is_refused_with_the_usage(tmp_path):
    res = _dry_run(tmp_path, "--bogus")
    assert res.returncode == 2 and "usage: bash scripts/gpu_check.sh [--dry-run]" in res.stderr
