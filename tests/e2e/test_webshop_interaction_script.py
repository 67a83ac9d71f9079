"""scripts/test_webshop_interaction.py against a real server (all pass) and a dead address (exit 1)."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "test_webshop_interaction.py")


def test_every_check_passes_on_a_running_server(webshop_url):
    res = subprocess.run([sys.executable, SCRIPT, "--env_server_base", webshop_url], capture_output=True, text=True,
                         timeout=180, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr[-2000:]
    lines = [line for line in res.stdout.splitlines() if line.startswith("[")]
    assert [line.split("]")[0] for line in lines] == ["[PASS"] * 5, res.stdout
    assert "create -> step -> reward: bought" in res.stdout and "5/5 checks passed" in res.stdout


def test_a_dead_server_fails_with_exit_code_1():
    res = subprocess.run([sys.executable, SCRIPT, "--env_server_base", "http://127.0.0.1:9"], capture_output=True,
                         text=True, timeout=180, cwd=ROOT)
    assert res.returncode == 1 and "[FAIL] connection" in res.stdout, res.stdout
