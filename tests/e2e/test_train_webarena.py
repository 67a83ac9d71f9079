"""End to end: `bash scripts/webarena_train.sh` (CPU profile) trains GRPO on the embedded WebArena suite:
the script starts the WebArena server (embedded sites + Chromium), the trainer's one agent loop drives
real browser contexts through `WebarenaEnvClient`, and the env scores every trajectory."""
from __future__ import annotations

import json
import math
import os
import subprocess

import pytest
from helpers import embedded_sites_env, free_port, require_chromium

pytestmark = pytest.mark.timeout(600)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

require_chromium()


def test_webarena_train_script_cpu_profile(tmp_path):
    import sys

    ckpt, logs, rollouts = tmp_path / "ckpt", tmp_path / "logs", tmp_path / "rollouts"
    env = embedded_sites_env()
    env.update(PYTHON=sys.executable, PROFILE="cpu", ENV_ADDR=f"http://127.0.0.1:{free_port()}",
               TINY_MODEL_DIR=str(tmp_path / "tiny"), RAY_USAGE_STATS_ENABLED="0")
    proc = subprocess.run(
        ["bash", "scripts/webarena_train.sh", "trainer.total_training_steps=1", "trainer.save_freq=1",
         "trainer.test_freq=1", f"trainer.default_local_dir={ckpt}", f"trainer.log_dir={logs}",
         f"actor_rollout_ref.rollout.rollout_log_dir={rollouts}", "ray_init.object_store_memory=200000000"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, f"{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    assert "stopping WebArena server" in proc.stdout  # the script cleans up the server it started

    rows = [json.loads(line) for line in open(logs / "metrics.jsonl")]
    assert [r["step"] for r in rows] == [1]
    assert math.isfinite(rows[0]["actor/pg_loss"]) and rows[0]["timing_s/gen"] > 0
    assert 0.0 <= rows[0]["val/greedy/success_rate"] <= 1.0

    trajectories = [json.loads(line) for path in rollouts.rglob("*.jsonl") for line in open(path)]
    assert trajectories, "no rollout trajectories were logged"
    text = json.dumps(trajectories)
    assert "OBSERVATION:" in text and "OBJECTIVE:" in text and "Tab 0 (current)" in text
    failed = [t.get("env_error") for t in trajectories if t.get("env_error")]
    assert failed == [], failed[:3]
    assert (ckpt / "latest_checkpointed_iteration.txt").read_text().strip() == "1"
