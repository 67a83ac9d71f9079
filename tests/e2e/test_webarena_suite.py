"""The whole embedded WebArena suite: every task's reference sequence earns 1.0 and a wrong episode 0.

Marked slow (2,359 tasks: about 21 minutes per mode on 2 cores): `RUN_SLOW=1 bash scripts/run_tests.sh` or
`pytest -m slow tests/e2e/test_webarena_suite.py`. CI runs a per-template sample instead
(tests/e2e/test_webarena_api.py).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import launched_server, require_chromium

from agentenv_webarena.tasks.config import SITE_ENV_VARS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

require_chromium()


@pytest.mark.parametrize("mode", ["reference", "wrong"])
def test_every_embedded_task(mode):
    env = {k: v for k, v in os.environ.items() if k not in SITE_ENV_VARS.values()}  # none set: the embedded sites
    with launched_server("agentenv_webarena.launch", env=env) as (base, _proc):
        cmd = [sys.executable, "-m", "agentenv_webarena.expert", "--env-addr", base, "--num-workers", "2"]
        out = subprocess.run(cmd + (["--wrong"] if mode == "wrong" else []), capture_output=True, text=True,
                             timeout=3000)
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["tasks"] >= 1500
    if mode == "reference":
        assert summary["success"] == summary["tasks"], out.stderr[-6000:]
    else:
        assert summary["zero_reward"] == summary["tasks"], out.stderr[-6000:]
    assert out.returncode == 0
