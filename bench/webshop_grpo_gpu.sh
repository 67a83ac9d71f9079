#!/usr/bin/env bash
# GRPO from the shipped WebShop SFT policy at a larger scale than the CPU profile, on one GPU (does more
# RL move held-out success?): the CPU policy profile's settings (HF engine, 5 turns x 96 tokens,
# temperature 0.5, lr 5e-5, no KL, engine log-probs as pi_old) with GOALS goals x 8 samples per step,
# STEPS steps and a greedy validation every TEST_FREQ steps; the learning report (200 held-out goals) as
# in the CPU profile. Usage: `bash bench/webshop_grpo_gpu.sh [hydra overrides]`; OUT_DIR (default
# saves/grpo/gpu_scale), GOALS (32), STEPS (30), TEST_FREQ (10), SEED (1).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" && cd "$ROOT"
GOALS="${GOALS:-32}" STEPS="${STEPS:-30}" TEST_FREQ="${TEST_FREQ:-10}" SEED="${SEED:-1}"
OUT_DIR="${OUT_DIR:-$ROOT/saves/grpo/gpu_scale}"
export JAX_PLATFORMS=cpu  # bm25s imports JAX when installed; keep it off the GPU
PROFILE=cpu bash scripts/webshop_train.sh \
  trainer.device=cuda trainer.n_gpus_per_node=1 ray_init.num_cpus="$(nproc)" \
  actor_rollout_ref.rollout.dtype=float32 \
  data.train_batch_size="$GOALS" actor_rollout_ref.actor.ppo_mini_batch_size="$((GOALS / 2))" \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=32 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=32 \
  actor_rollout_ref.rollout.max_concurrency=128 \
  trainer.total_training_steps="$STEPS" trainer.test_freq="$TEST_FREQ" trainer.save_freq=-1 \
  data.seed="$SEED" actor_rollout_ref.rollout.seed="$SEED" trainer.seed="$SEED" \
  trainer.default_local_dir="$OUT_DIR" "$@"
