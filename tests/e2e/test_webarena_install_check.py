"""A missing browser (or Playwright) stops the WebArena server and `webarena_train.sh` with one line that
names the command installing it, and no traceback; the check passes where Chromium is installed."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
from helpers import embedded_sites_env, free_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
MISSING = "/nonexistent/chromium-for-the-test"


def _env(**extra: str) -> dict:
    env = {k: v for k, v in embedded_sites_env().items() if k != "ENV_ADDR"}
    return {**env, "PYTHON": sys.executable, **extra}


def _one_line(proc: subprocess.CompletedProcess, command: str) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode != 0, proc
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert command in lines[0]
    return lines[0]


@pytest.mark.parametrize("flags", [[], ["--check-browser"]])
def test_launch_without_chromium_exits_with_one_line(flags):
    proc = subprocess.run([sys.executable, "-m", "agentenv_webarena.launch", "--port", str(free_port()), *flags],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=_env(WEBARENA_CHROMIUM=MISSING))
    line = _one_line(proc, "bash scripts/install_chromium.sh")
    assert MISSING in line and "WEBARENA_CHROMIUM" in line
    proc = subprocess.run([sys.executable, "-m", "agentenv_webarena.launch", "--chromium", MISSING, *flags],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=_env())
    assert "--chromium" in _one_line(proc, "bash scripts/install_chromium.sh")


def test_launch_without_playwright_exits_with_one_line():
    code = "import sys; sys.modules['playwright'] = None; from agentenv_webarena.launch import main; main([])"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=_env())
    assert "playwright" in _one_line(proc, "bash scripts/install.sh")


def test_webarena_train_checks_the_browser_before_starting_the_job():
    proc = subprocess.run(["bash", "scripts/webarena_train.sh"], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=_env(WEBARENA_CHROMIUM=MISSING, ENV_ADDR=f"http://127.0.0.1:{free_port()}"))
    assert MISSING in _one_line(proc, "bash scripts/install_chromium.sh")
    assert "profile=" not in proc.stdout and "starting" not in proc.stdout  # neither the server nor the job ran


def test_check_browser_passes_where_chromium_is_installed():
    from helpers import require_chromium

    chromium = require_chromium()
    proc = subprocess.run([sys.executable, "-m", "agentenv_webarena.launch", "--check-browser"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=_env(WEBARENA_CHROMIUM=chromium))
    assert proc.returncode == 0 and proc.stdout.strip() == f"chromium: {chromium}", proc
