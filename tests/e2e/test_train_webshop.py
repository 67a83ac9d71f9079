"""End to end: GRPO on a real WebShop server with a tiny model, through the real Hydra entry point.

Run 1 trains 2 steps (checkpoint + HF export at step 2); run 2 is the same command with 3 steps
and `trainer.resume_mode=auto`: it must continue from global_step_2 and consume the next batch of
the same seeded data order.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(400)

TRAIN_IDS = [f"webshop_{i}" for i in (3, 11, 25, 40, 58, 77, 91, 102)]
TEST_IDS = ["webshop_5", "webshop_9"]


def run_main_ppo(args: list[str], cwd: str) -> subprocess.CompletedProcess:
    """`python -m verl.agent_trainer.main_ppo *args` in `cwd`; raises with its output tails on failure."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0", "TOKENIZERS_PARALLELISM": "false",
           "HYDRA_FULL_ERROR": "1"}
    proc = subprocess.run([sys.executable, "-m", "verl.agent_trainer.main_ppo", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"main_ppo failed (rc {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
    return proc


def read_metrics(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def grpo_args(tmp_path, model: str, env_addr: str, device: str = "cpu") -> list[str]:
    """Writes the train/test item-id files under `tmp_path`; returns the Hydra overrides of a small GRPO run
    (KL loss, validation and a checkpoint with HF export at step 2, rollouts dumped under tmp_path/rollouts)."""
    train, test = tmp_path / "webshop_train.json", tmp_path / "webshop_test.json"
    train.write_text(json.dumps([{"item_id": i} for i in TRAIN_IDS]))
    test.write_text(json.dumps([{"item_id": i} for i in TEST_IDS]))
    return [
        "algorithm.adv_estimator=grpo", f"data.train_file={train}", f"data.val_file={test}",
        "data.train_batch_size=2", "data.max_prompt_length=1024", "data.max_response_length=256", "data.seed=3",
        f"actor_rollout_ref.model.path={model}", "actor_rollout_ref.rollout.name=hf",
        "actor_rollout_ref.rollout.n=2", "actor_rollout_ref.rollout.max_tokens=12",
        "actor_rollout_ref.rollout.max_model_len=2048", "actor_rollout_ref.rollout.max_concurrency=8",
        f"actor_rollout_ref.rollout.rollout_log_dir={tmp_path / 'rollouts'}",
        "actor_rollout_ref.agentgym.task_name=webshop", f"actor_rollout_ref.agentgym.env_addr={env_addr}",
        "actor_rollout_ref.rollout.val_kwargs.do_sample=True", "actor_rollout_ref.agentgym.timeout=30",
        "actor_rollout_ref.agentgym.max_rounds=2",
        "actor_rollout_ref.actor.ppo_mini_batch_size=1", "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.actor.use_kl_loss=True", "actor_rollout_ref.actor.optim.lr=1e-4",
        "algorithm.rounds_ctrl.rounds=2", f"trainer.device={device}", "trainer.save_freq=2", "trainer.test_freq=2",
        *(["trainer.n_gpus_per_node=1"] if device == "cuda" else []),
        "trainer.logger=[console,file]", f"trainer.default_local_dir={tmp_path / 'ckpt'}",
        f"trainer.log_dir={tmp_path / 'logs'}",
        "trainer.project_name=e2e", "trainer.experiment_name=webshop", "ray_init.num_cpus=2",
        "ray_init.object_store_memory=200000000",
    ]


def check_two_steps(tmp_path) -> list[dict]:
    """The run of `grpo_args` with total_training_steps=2 trained, validated, checkpointed and exported
    what it trained; returns its metrics rows."""
    ckpt, logs = tmp_path / "ckpt", tmp_path / "logs"
    rows = read_metrics(str(logs / "metrics.jsonl"))
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        for key in ("actor/pg_loss", "actor/kl_loss"):
            assert isinstance(row[key], float) and math.isfinite(row[key]), (key, row.get(key))
        assert row["timing_s/gen"] > 0 and row["timing_s/update_actor"] > 0 and row["timing_s/sync_weights"] > 0
        # trainer.rollout_overlap off (default): every batch is generated with the weights being updated
        assert row["training/weight_staleness"] == 0 and "timing_s/overlap" not in row
    for mode in ("greedy", "sampled"):
        assert 0.0 <= rows[1][f"val/{mode}/success_rate"] <= 1.0 and rows[1][f"val/{mode}/num_turns"] >= 1
    assert (ckpt / "latest_checkpointed_iteration.txt").read_text().strip() == "2"
    step2 = ckpt / "global_step_2"
    assert (step2 / "trainer_state.pt").exists() and any((step2 / "actor").glob("model_*.pt"))

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    hf_dir = step2 / "actor" / "huggingface"
    model = AutoModelForCausalLM.from_pretrained(str(hf_dir))
    tok = AutoTokenizer.from_pretrained(str(hf_dir))
    saved = torch.load(next((step2 / "actor").glob("model_*.pt")), map_location="cpu", weights_only=False)
    assert {v.device.type for v in saved.values() if torch.is_tensor(v)} == {"cpu"}  # written as CPU tensors
    name, tensor = next((k, v) for k, v in saved.items() if k.endswith("q_proj.weight"))
    assert torch.equal(model.state_dict()[name], tensor)  # the export holds the trained weights
    assert tok("Search").input_ids
    return rows


def test_grpo_two_steps_checkpoint_resume_export(webshop_url, tiny_model, tmp_path):
    args = grpo_args(tmp_path, tiny_model, webshop_url)
    ckpt, logs, train = tmp_path / "ckpt", tmp_path / "logs", tmp_path / "webshop_train.json"

    run_main_ppo(args + ["trainer.total_training_steps=2"], cwd=str(tmp_path))
    check_two_steps(tmp_path)

    import torch

    state = torch.load(ckpt / "global_step_2" / "trainer_state.pt", weights_only=False)
    assert state["global_step"] == 2 and state["dataloader"]["sampler"]["position"] == 4

    run_main_ppo(args + ["trainer.total_training_steps=3"], cwd=str(tmp_path))
    rows = read_metrics(str(logs / "metrics.jsonl"))
    assert [r["step"] for r in rows] == [1, 2, 3]  # resumed at step 3, not from scratch
    assert math.isfinite(rows[2]["actor/pg_loss"])
    state3 = torch.load(ckpt / "global_step_3" / "trainer_state.pt", weights_only=False)
    assert state3["dataloader"]["sampler"] == {**state["dataloader"]["sampler"], "position": 6}

    # Step 3 used the third batch of the seeded order, as an uninterrupted run would have.
    from verl.utils.dataset import AgentDataset, StatefulDataLoader

    order = [[r["item_id"] for r in b] for b in StatefulDataLoader(AgentDataset(str(train)), 2, seed=3)]
    assert _rollout_item_ids(tmp_path / "rollouts", step=3) == sorted(order[2] * 2)


def check_one_gae_step(model: str, env_addr: str, tmp_path, hidden_size: int) -> None:
    """main_ppo, 1 PPO step with `algorithm.adv_estimator=gae` on a real WebShop server, actor and critic both
    `model` on CPU (short turns): the critic computes values and updates (finite vf_loss, a gradient), and its
    checkpoint is the model's backbone with a 1-output value head (`hidden_size` wide), moved by one small
    optimizer step from the pretrained weights."""
    import time

    import torch
    from safetensors.torch import load_file

    args = grpo_args(tmp_path, model, env_addr) + [
        "algorithm.adv_estimator=gae", f"critic.model.path={model}", "critic.ppo_mini_batch_size=2",
        "critic.ppo_micro_batch_size_per_gpu=2", "actor_rollout_ref.rollout.n=1",
        "trainer.total_training_steps=1", "trainer.test_freq=-1", "trainer.save_freq=-1", "trainer.export_hf=false",
        "actor_rollout_ref.rollout.max_tokens=8", "actor_rollout_ref.agentgym.max_rounds=1",
        "algorithm.rounds_ctrl.rounds=1", "actor_rollout_ref.actor.use_kl_loss=False",
        "actor_rollout_ref.actor.use_rollout_log_probs=True", "actor_rollout_ref.actor.ppo_mini_batch_size=2"]
    t0 = time.perf_counter()
    run_main_ppo(args, cwd=str(tmp_path))
    print(f"\nGAE step with actor and critic {os.path.basename(model)} on CPU: {time.perf_counter() - t0:.0f} s")
    (row,) = read_metrics(str(tmp_path / "logs" / "metrics.jsonl"))
    assert row["step"] == 1
    for key in ("critic/vf_loss", "critic/vf_clipfrac", "critic/vpred_mean", "critic/grad_norm", "critic/lr",
                "critic/values/mean", "critic/returns/mean", "critic/advantages/mean", "actor/pg_loss"):
        assert isinstance(row[key], float) and math.isfinite(row[key]), (key, row.get(key))
    assert row["critic/vf_loss"] > 0 and row["critic/grad_norm"] > 0 and row["critic/lr"] > 0
    # one mini-batch: the update's first forward sees the weights compute_values used (no dropout in the head)
    assert row["critic/vpred_mean"] == pytest.approx(row["critic/values/mean"], abs=1e-4)
    assert row["timing_s/values"] > 0 and row["timing_s/update_critic"] > 0

    critic_dir = tmp_path / "ckpt" / "global_step_1" / "critic"
    saved = torch.load(next(critic_dir.glob("model_*.pt")), map_location="cpu", weights_only=False)
    pretrained = load_file(os.path.join(model, "model.safetensors"))
    assert tuple(saved["score.weight"].shape) == (1, hidden_size) and "lm_head.weight" not in saved
    name = "model.layers.0.mlp.down_proj.weight"
    moved = (saved[name].float() - pretrained[name].float()).abs().max().item()
    assert 0 < moved < 1e-3, moved  # the pretrained weights, one step of the critic's default lr away


def test_one_gae_step_with_a_critic(webshop_url, tiny_model, tmp_path):
    """The only default-run main_ppo run with `adv_estimator=gae` (the SmolLM2 twin is marked slow)."""
    check_one_gae_step(tiny_model, webshop_url, tmp_path, hidden_size=128)


def _rollout_item_ids(root, step: int) -> list[str]:
    """Item ids of the trajectories dumped for `step` (any JSON-lines file under a step-named folder/file)."""
    ids = []
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_file() and (f"step{step}" in rel or f"step_{step}" in rel) and "val" not in rel:
            for line in path.read_text().splitlines():
                if line.strip():
                    ids.append(json.loads(line)["item_id"])
    return sorted(ids)
