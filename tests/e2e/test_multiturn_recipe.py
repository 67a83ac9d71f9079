"""verl's interaction recipe on CPU: scripts/multiturn/run_webshop_grpo_test.sh runs one GRPO step through
`python -m verl.trainer.main_ppo --config-path scripts/multiturn --config-name webshop_grpo` and writes the
output layout users of the recipe expect."""
from __future__ import annotations

import json
import os
import subprocess

import pytest
from helpers import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.timeout(600)


def test_run_webshop_grpo_test_writes_the_recipe_layout(tmp_path):
    env = {**os.environ, "OUTPUT_DIR": str(tmp_path / "out"), "ENV_ADDR": f"http://127.0.0.1:{free_port()}",
           "PROFILE": "cpu", "HF_HUB_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    res = subprocess.run(["bash", "scripts/multiturn/run_webshop_grpo_test.sh", "trainer.total_training_steps=1",
                          "data.val_max_items=2", "trainer.test_freq=1"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=540)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    out = tmp_path / "out"
    logs = list((out / "logs").glob("train_*.log"))
    assert len(logs) == 1 and len(logs[0].name) == len("train_20261124_012543.log")
    assert "step:1" in logs[0].read_text()
    steps = json.loads((out / "metrics" / "training_metrics.json").read_text())
    assert [row["step"] for row in steps if "actor/pg_loss" in row] == [1]
    assert any("val/greedy/success_rate" in row for row in steps)
    assert (out / "checkpoints" / "latest_checkpointed_iteration.txt").read_text().strip() == "1"
    assert (out / "checkpoints" / "global_step_1" / "actor" / "huggingface" / "config.json").exists()
    assert (out / "data" / "train.parquet").exists()
