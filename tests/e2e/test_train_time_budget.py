"""End to end: `trainer.time_budget_s` splits a training run over several invocations of the same command, as on
short GPU windows. With a budget no step fits, each invocation trains one step, checkpoints and stops; the one that
reaches the last step writes the learning report, whose "before" is the validation of the first invocation (kept
beside the checkpoints), not one at the resumed step."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(400)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_a_budgeted_run_resumes_across_invocations_and_reports_against_the_first(webshop_url, tmp_path):
    from verl.utils.tiny_model import build_tiny_model

    tiny = build_tiny_model(str(tmp_path / "tiny"))
    run = tmp_path / "run"
    env = {**os.environ, "PYTHON": sys.executable, "PROFILE": "cpu", "ENV_ADDR": webshop_url, "MODEL_PATH": tiny,
           "RAY_USAGE_STATS_ENABLED": "0", "EXPERT_PROBE_GOALS": "3"}
    command = ["bash", "scripts/webshop_train.sh", "trainer.total_training_steps=2", "trainer.time_budget_s=1",
               "data.val_max_items=3", "data.train_batch_size=2", f"trainer.default_local_dir={run}",
               "trainer.save_freq=-1", "data.trained_val_file=null", "data.control_val_file=null",
               f"actor_rollout_ref.rollout.rollout_log_dir={run / 'rollouts'}",
               "ray_init.object_store_memory=200000000"]

    first = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert first.returncode == 0, f"{first.stdout[-4000:]}\n{first.stderr[-8000:]}"
    assert "stopping after step 1 of 2" in first.stdout + first.stderr
    assert sorted(p.name for p in run.iterdir() if p.name.startswith("global_step")) == ["global_step_1"]
    assert not (run / "learning_report.json").exists()  # no report until the last step
    kept = json.loads((run / "learning_report_before.json").read_text())
    assert kept["step"] == 0 and kept["probe"]["before"] and kept["seconds"] > 0

    second = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert second.returncode == 0, f"{second.stdout[-4000:]}\n{second.stderr[-8000:]}"
    assert "resumed at step 1; 'before' is the validation at step 0" in second.stdout + second.stderr
    report = json.loads((run / "learning_report.json").read_text())
    assert report["train_steps"] == 2 and report["before"]["step"] == 0 and report["after"]["step"] == 2
    held_out = kept["held_out"]["greedy"]
    assert report["before"]["success_rate"] == held_out["success_rate"]
    assert report["per_goal"]["reward_before"] == held_out["per_item"]["reward"]
    assert report["expert_probe"]["per_goal"]["before"] == kept["probe"]["before"]
    assert "global_step_2" in {p.name for p in run.iterdir()}
