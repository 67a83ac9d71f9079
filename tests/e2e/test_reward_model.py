"""End to end: one GRPO step on CPU against a real WebShop server, with a learned reward model (a tiny
Qwen2ForSequenceClassification built here, sharing the tiny policy's tokenizer) joined to the env
reward by `reward_model.combine=sum`, through the real Hydra entry point and Ray workers.

The step's metrics must show the reward model's scores (reward/rm_score/*) and the batch's
`token_level_scores` (critic/score/*) must be env reward + rm_coef * rm score, while `reward`
(env/reward/*) stays the environment's outcome.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
from helpers import build_tiny_reward_model

pytestmark = pytest.mark.timeout(300)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN_IDS = ["webshop_3", "webshop_11"]
RM_COEF = 3.0


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from verl.utils.tiny_model import build_tiny_model

    root = tmp_path_factory.mktemp("tiny")
    policy = build_tiny_model(str(root / "policy"))
    return policy, build_tiny_reward_model(policy, str(root / "rm"), seed=1)


def test_grpo_step_with_a_reward_model(webshop_url, models, tmp_path):
    policy, rm = models
    train = tmp_path / "webshop_train.json"
    train.write_text(json.dumps([{"item_id": i} for i in TRAIN_IDS]))
    logs = tmp_path / "logs"
    args = [
        "algorithm.adv_estimator=grpo", f"data.train_file={train}", "data.val_file=null",
        "data.train_batch_size=1", "data.max_prompt_length=1024", "data.max_response_length=128",
        f"actor_rollout_ref.model.path={policy}", "actor_rollout_ref.rollout.name=hf",
        "actor_rollout_ref.rollout.n=2", "actor_rollout_ref.rollout.max_tokens=8",
        "actor_rollout_ref.rollout.max_model_len=2048", "actor_rollout_ref.agentgym.task_name=webshop",
        f"actor_rollout_ref.agentgym.env_addr={webshop_url}", "actor_rollout_ref.agentgym.timeout=30",
        "actor_rollout_ref.agentgym.max_rounds=2", "algorithm.rounds_ctrl.rounds=2",
        "actor_rollout_ref.actor.ppo_mini_batch_size=1", "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "reward_model.enable=true", f"reward_model.model.path={rm}", "reward_model.reward_manager=prime",
        "reward_model.combine=sum", f"reward_model.rm_coef={RM_COEF}", "reward_model.micro_batch_size_per_gpu=2",
        "trainer.device=cpu", "trainer.total_training_steps=1", "trainer.export_hf=false",
        "trainer.logger=[console,file]", f"trainer.default_local_dir={tmp_path / 'ckpt'}", f"trainer.log_dir={logs}",
        "trainer.project_name=e2e", "trainer.experiment_name=reward_model", "ray_init.num_cpus=2",
        "ray_init.object_store_memory=200000000",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0", "TOKENIZERS_PARALLELISM": "false",
           "HYDRA_FULL_ERROR": "1",  # this checkout's code, also when another one is installed
           "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "verl.agent_trainer.main_ppo", *args], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, (
        f"main_ppo failed (rc {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    )

    (row,) = [json.loads(line) for line in (logs / "metrics.jsonl").read_text().splitlines()]
    rm_mean, rm_min, rm_max = (row[f"reward/rm_score/{k}"] for k in ("mean", "min", "max"))
    assert all(math.isfinite(v) for v in (rm_mean, rm_min, rm_max))
    assert rm_mean != 0.0 and rm_min <= rm_mean <= rm_max  # a random head scores trajectories, never exactly 0
    # token_level_scores (critic/score) = env reward + rm_coef * rm score, row by row, so also on the means
    assert row["critic/score/mean"] == pytest.approx(row["env/reward/mean"] + RM_COEF * rm_mean, abs=1e-4)
    assert 0.0 <= row["env/reward/mean"] <= 1.0  # the env outcome is untouched by the reward model
    assert row["reward/timeouts"] == 0.0 and row["reward/errors"] == 0.0
    assert math.isfinite(row["actor/pg_loss"]) and row["timing_s/reward"] > 0
