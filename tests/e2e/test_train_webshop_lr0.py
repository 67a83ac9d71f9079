"""End to end, the learning report's null control: `bash scripts/webshop_train.sh` with the shipped SFT policy and
a learning rate of 0 trains a GRPO step that changes no weight, so every section of the report (held-out, trained,
control, the expert probe) must show exactly no change: the same reward on every goal, nothing gained or lost,
zero-width change intervals, trained minus control 0. A report that moved here would be measuring something other
than learning (sampling noise in the greedy validation, state kept between validations, a weight sync that changes
weights)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(600)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _first(name: str, n: int, path) -> str:
    rows = json.loads(open(os.path.join(ROOT, "AgentItemId", name)).read())[:n]
    path.write_text(json.dumps(rows))
    return str(path)


def test_a_step_at_lr_0_reports_exactly_no_change(webshop_url, tmp_path):
    policy = os.path.join(ROOT, "agentenv_webshop", "sft_policy")
    run = tmp_path / "run"
    env = {**os.environ, "PYTHON": sys.executable, "PROFILE": "cpu", "ENV_ADDR": webshop_url, "POLICY_DIR": policy,
           "RAY_USAGE_STATS_ENABLED": "0", "EXPERT_PROBE_GOALS": "10"}
    env.pop("MODEL_PATH", None)
    trained = _first("webshop_train_learnable32_max50.json", 3, tmp_path / "trained.json")
    control = _first("webshop_control25_max50.json", 3, tmp_path / "control.json")
    proc = subprocess.run(
        ["bash", "scripts/webshop_train.sh", "trainer.total_training_steps=1", "data.val_max_items=4",
         "data.train_batch_size=2", "actor_rollout_ref.rollout.n=2", "actor_rollout_ref.actor.ppo_mini_batch_size=2",
         "actor_rollout_ref.actor.optim.lr=0", f"data.train_file={trained}", f"data.trained_val_file={trained}",
         f"data.control_val_file={control}", f"trainer.default_local_dir={run}", "trainer.save_freq=-1",
         f"actor_rollout_ref.rollout.rollout_log_dir={run / 'rollouts'}", "ray_init.object_store_memory=200000000"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, f"{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    report = json.loads((run / "learning_report.json").read_text())
    assert report["train_steps"] == 1 and report["model_path"] == policy
    sections = {"held-out": report, "trained": report["trained"], "control": report["control"]}
    assert [sec["n_goals"] for sec in sections.values()] == [4, 3, 3]
    rewards = []
    for name, sec in sections.items():
        per_goal = sec["per_goal"]
        assert per_goal["reward_after"] == per_goal["reward_before"], name
        assert per_goal["success_after"] == per_goal["success_before"], name
        assert (sec["gained"], sec["lost"], sec["mcnemar_p"]) == (0, 0, 1.0), name
        assert sec["change_ci95"] == [0.0, 0.0] and sec["mean_reward_change_ci95"] == [0.0, 0.0], name
        assert sec["after"]["success_rate"] == sec["before"]["success_rate"], name
        rewards += per_goal["reward_before"]
    assert report["trained_minus_control"] == {"success_change": 0.0, "success_change_ci95": [0.0, 0.0],
                                               "mean_reward_change": 0.0, "mean_reward_change_ci95": [0.0, 0.0]}
    probe = report["expert_probe"]  # the expert's actions are exactly as likely as before
    assert probe["n_goals"] == 10 and probe["per_goal"]["after"] == probe["per_goal"]["before"]
    assert probe["change"] == 0.0 and probe["change_ci95"] == [0.0, 0.0] and probe["before"] < 0
    # not vacuous: the policy earns reward, so an unchanged report is a measurement, not all zeros
    assert sum(rewards) > 1.0 and max(rewards) == 1.0
