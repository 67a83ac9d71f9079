"""verl's interaction recipe with the real SmolLM2-135M-Instruct (`real_model` marker): one GRPO step of
scripts/multiturn/run_webshop_grpo_test.sh with MODEL_PATH = the converted folder, on CPU (short turns). The
parquet's prompts carry SmolLM2's system line (none of AgentGym-RL's Qwen line), the step trains and the
checkpoint's HF export is a Llama model."""
from __future__ import annotations

import json
import math
import os
import subprocess

import pandas as pd
import pytest
from helpers import free_port
from test_smollm2_real_model import smollm2_dir  # noqa: F401  (fixture: the converted SmolLM2 folder)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# slow (~47 s): tests/e2e/test_multiturn_recipe.py runs the same recipe script on the tiny model, and
# test_smollm2_real_model.py trains SmolLM2 one GRPO step on WebShop
pytestmark = [pytest.mark.real_model, pytest.mark.slow, pytest.mark.timeout(900)]


def test_interaction_recipe_trains_smollm2_one_step(smollm2_dir, tmp_path):  # noqa: F811 (the fixture)
    out = tmp_path / "out"
    env = {**os.environ, "OUTPUT_DIR": str(out), "ENV_ADDR": f"http://127.0.0.1:{free_port()}", "PROFILE": "cpu",
           "MODEL_PATH": smollm2_dir, "HF_HUB_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    res = subprocess.run(
        ["bash", "scripts/multiturn/run_webshop_grpo_test.sh", "trainer.total_training_steps=1", "trainer.test_freq=-1",
         "data.train_batch_size=2", "actor_rollout_ref.actor.ppo_mini_batch_size=2",
         "actor_rollout_ref.rollout.max_tokens=16", "actor_rollout_ref.rollout.multi_turn.max_assistant_turns=2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=840)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]

    prompts = pd.read_parquet(out / "data" / "train.parquet")["prompt"]
    systems = [m["content"] for m in prompts.iloc[0] if m["role"] == "system"]
    assert not any("Qwen" in s for s in systems), systems  # SmolLM2's own default, not the Qwen line
    steps = json.loads((out / "metrics" / "training_metrics.json").read_text())
    losses = [row["actor/pg_loss"] for row in steps if "actor/pg_loss" in row]
    assert len(losses) == 1 and math.isfinite(losses[0])
    config = json.loads((out / "checkpoints" / "global_step_1" / "actor" / "huggingface" / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"] and config["vocab_size"] == 49152
