"""End to end: LoRA GRPO (`actor_rollout_ref.model.lora_rank=8`) on a real WebShop server with the tiny model,
through the real Hydra entry point (the runs of `test_train_webshop.grpo_args`).

Run A trains 2 steps with a checkpoint after each; run B resumes from A's step-1 checkpoint in another
directory and trains step 2: its adapter must equal A's (resume equals uninterrupted). Along the way: the
engine, synced with merged weights, scores the sampled tokens as the actor does (`rollout/log_prob_diff`),
the reference (the base, adapter disabled) drifts from the actor, the checkpoints hold only the adapter and
its optimizer state, and `python -m verl.model_merger` turns one into a loadable HF model.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
import torch
from test_train_webshop import grpo_args, read_metrics, run_main_ppo

pytestmark = pytest.mark.timeout(400)

LORA = ["actor_rollout_ref.model.lora_rank=8", "actor_rollout_ref.model.lora_alpha=16",
        "actor_rollout_ref.actor.optim.lr=1e-3", "trainer.test_freq=-1", "trainer.save_freq=1"]


def check_lora_checkpoint(actor_dir, max_bytes: int) -> dict[str, int]:
    """Every file of the actor checkpoint `actor_dir` is at most `max_bytes`; it holds the adapter and the
    optimizer state, no base weights. Returns {relative path: size}."""
    sizes = {os.path.relpath(os.path.join(d, f), actor_dir): os.path.getsize(os.path.join(d, f))
             for d, _, files in os.walk(actor_dir) for f in files}
    assert {"lora_adapter/adapter_model.safetensors", "lora_adapter/adapter_config.json",
            "optim_world_size_1_rank_0.pt"} <= set(sizes), sorted(sizes)
    assert not [f for f in sizes if f.startswith("model_") or f.startswith("huggingface/model")], sorted(sizes)
    assert max(sizes.values()) <= max_bytes, sizes
    return sizes


def adapter(actor_dir) -> dict[str, torch.Tensor]:
    from verl.utils.lora import read_adapter

    return read_adapter(str(actor_dir / "lora_adapter"))


def test_lora_grpo_steps_resume_and_merge(webshop_url, tiny_model, tmp_path):
    from transformers import AutoModelForCausalLM

    from verl.utils.checkpoint import MAX_SHARD_BYTES

    run_a, run_b = tmp_path / "a", tmp_path / "b"
    run_a.mkdir()
    run_b.mkdir()
    args = grpo_args(run_a, tiny_model, webshop_url) + LORA
    run_main_ppo(args + ["trainer.total_training_steps=2"], cwd=str(run_a))
    rows = read_metrics(str(run_a / "logs" / "metrics.jsonl"))
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        for key in ("actor/pg_loss", "actor/kl_loss", "actor/grad_norm"):
            assert math.isfinite(row[key]), (key, row)
        # the engine samples with the merged weights the actor scores with (fp32 on CPU)
        assert row["rollout/log_prob_diff/max"] < 1e-3, row["rollout/log_prob_diff/max"]
    assert rows[1]["actor/kl_loss"] > 0  # step 2: the adapter moved the actor away from the base (the ref)
    step1, step2 = run_a / "ckpt" / "global_step_1" / "actor", run_a / "ckpt" / "global_step_2" / "actor"
    for actor_dir in (step1, step2):
        check_lora_checkpoint(actor_dir, MAX_SHARD_BYTES)
    assert any(not torch.equal(v, adapter(step1)[k]) for k, v in adapter(step2).items() if ".lora_B." in k)

    # 1 step + resume + 1 step == 2 uninterrupted steps
    args_b = grpo_args(run_b, tiny_model, webshop_url) + LORA
    run_main_ppo(args_b + ["trainer.total_training_steps=2", "trainer.resume_mode=resume_path",
                           f"trainer.resume_from_path={run_a / 'ckpt' / 'global_step_1'}"], cwd=str(run_b))
    assert [r["step"] for r in read_metrics(str(run_b / "logs" / "metrics.jsonl"))] == [2]
    resumed, uninterrupted = adapter(run_b / "ckpt" / "global_step_2" / "actor"), adapter(step2)
    assert sorted(resumed) == sorted(uninterrupted)
    for name, tensor in uninterrupted.items():
        torch.testing.assert_close(resumed[name], tensor, rtol=1e-5, atol=1e-6)

    # the merger writes the merged model
    out = tmp_path / "merged"
    proc = subprocess.run([sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp",
                           "--local_dir", str(step2), "--target_dir", str(out)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    merged = AutoModelForCausalLM.from_pretrained(str(out)).state_dict()
    base = AutoModelForCausalLM.from_pretrained(tiny_model).state_dict()
    assert sorted(merged) == sorted(base)
    assert not torch.equal(merged["model.layers.0.self_attn.q_proj.weight"],
                           base["model.layers.0.self_attn.q_proj.weight"])
