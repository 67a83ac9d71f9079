#!/usr/bin/env bash
# Train a WebShop agent with GRPO: `bash scripts/webshop_train.sh [hydra.key=value ...]`.
#
# Starts the WebShop server (python -m agentenv_webshop.launch) when nothing answers at ENV_ADDR and
# stops it on exit; then runs `python -m verl.agent_trainer.main_ppo` with a profile:
#   * no GPU -> CPU profile: tiny model (python -m verl.utils.tiny_model), HF engine, 4 prompts x 2
#     samples, a few steps, short turns;
#   * GPUs   -> GPU profile: MODEL_PATH (default ~/models/Qwen2.5-3B-Instruct), vLLM, GRPO n=8.
# Every extra argument is a Hydra override and wins over the profile (it comes last).
# Environment: PYTHON, ENV_ADDR (default http://127.0.0.1:36001), MODEL_PATH, TINY_MODEL_DIR,
#   EXPERIMENT (experiment name), PROFILE=cpu|gpu (default: auto-detect), WEBSHOP_ARGS (extra server flags),
#   WARM_START=1 (CPU profile, opt-in): start GRPO from a supervised warm start on expert demonstrations
#   (scripts/webshop_sft.sh, cached in SFT_DIR, default saves/sft/webshop_tiny) with longer turns.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source "$ROOT/scripts/lib/env_server.sh"
pick_python "$ROOT"
ENV_ADDR="${ENV_ADDR:-http://127.0.0.1:36001}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false HYDRA_FULL_ERROR=1 RAY_USAGE_STATS_ENABLED=0

ensure_webshop_server "$ENV_ADDR" webshop_train

NGPU=0
if command -v nvidia-smi >/dev/null 2>&1; then NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
PROFILE="${PROFILE:-$([[ "$NGPU" -gt 0 ]] && echo gpu || echo cpu)}"
EXPERIMENT="${EXPERIMENT:-webshop_grpo_${PROFILE}}"

COMMON=(
  algorithm.adv_estimator=grpo
  data.train_file=AgentItemId/webshop_train.json
  data.val_file=AgentItemId/webshop_test.json
  actor_rollout_ref.agentgym.task_name=webshop
  actor_rollout_ref.agentgym.env_addr="$ENV_ADDR"
  actor_rollout_ref.actor.use_kl_loss=True
  actor_rollout_ref.actor.kl_loss_coef=0.001
  actor_rollout_ref.actor.kl_loss_type=low_var_kl
  algorithm.kl_ctrl.kl_coef=0.001
  algorithm.rounds_ctrl.type=fixed
  trainer.project_name=webshop
  trainer.experiment_name="$EXPERIMENT"
  trainer.default_local_dir="saves/$EXPERIMENT"
  actor_rollout_ref.rollout.rollout_log_dir="saves/$EXPERIMENT/executer_logs"
)

if [[ "$PROFILE" == "gpu" ]]; then
  MODEL_PATH="${MODEL_PATH:-$HOME/models/Qwen2.5-3B-Instruct}"
  export VLLM_USE_MODELSCOPE=0 VLLM_WORKER_MULTIPROC_METHOD=spawn PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  PROFILE_ARGS=(
    trainer.device=cuda trainer.n_gpus_per_node="$NGPU" trainer.nnodes=1
    actor_rollout_ref.model.path="$MODEL_PATH"
    actor_rollout_ref.model.enable_gradient_checkpointing=True
    actor_rollout_ref.rollout.name=vllm
    actor_rollout_ref.rollout.n=8
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6
    actor_rollout_ref.rollout.tensor_model_parallel_size=1
    actor_rollout_ref.rollout.max_tokens=512
    actor_rollout_ref.rollout.max_model_len=16384
    data.train_batch_size=16 data.max_prompt_length=1024 data.max_response_length=8192
    actor_rollout_ref.actor.ppo_epochs=1
    actor_rollout_ref.actor.ppo_mini_batch_size=4
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.actor.optim.lr=1e-6
    algorithm.rounds_ctrl.rounds=10
    actor_rollout_ref.agentgym.max_rounds=10
    trainer.total_epochs=25 trainer.save_freq=25 trainer.test_freq=25
    data.val_max_items=200
    "trainer.logger=[console,file,tensorboard]"
  )
else
  TINY_MODEL_DIR="${TINY_MODEL_DIR:-$ROOT/saves/tiny_model}"
  "$PYTHON" -m verl.utils.tiny_model --out "$TINY_MODEL_DIR"
  PROFILE_ARGS=(
    trainer.device=cpu
    actor_rollout_ref.model.path="${MODEL_PATH:-$TINY_MODEL_DIR}"
    actor_rollout_ref.rollout.name=hf
    actor_rollout_ref.rollout.n=2
    actor_rollout_ref.rollout.max_tokens=32
    actor_rollout_ref.rollout.max_model_len=4096
    data.train_batch_size=4 data.max_prompt_length=1024 data.max_response_length=1024
    actor_rollout_ref.actor.ppo_epochs=1
    actor_rollout_ref.actor.ppo_mini_batch_size=2
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.actor.optim.lr=1e-5
    algorithm.rounds_ctrl.rounds=3
    actor_rollout_ref.agentgym.max_rounds=3
    trainer.total_training_steps=4 trainer.save_freq=2 trainer.test_freq=2
    data.val_max_items=4
    ray_init.num_cpus=2
    "trainer.logger=[console,file]"
  )
  if [[ "${WARM_START:-0}" == "1" ]]; then
    SFT_DIR="${SFT_DIR:-$ROOT/saves/sft/webshop_tiny}"
    if [[ ! -f "$SFT_DIR/sft_metrics.json" ]]; then
      PYTHON="$PYTHON" MODEL_PATH="${MODEL_PATH:-$TINY_MODEL_DIR}" SFT_DIR="$SFT_DIR" bash "$ROOT/scripts/webshop_sft.sh"
    fi
    # expert turns are ~40-90 tiny-tokenizer tokens and a results page ~850: longer turns and trajectories
    PROFILE_ARGS+=(actor_rollout_ref.model.path="$SFT_DIR" actor_rollout_ref.rollout.max_tokens=96
      actor_rollout_ref.rollout.max_model_len=5120 data.max_response_length=4096
      algorithm.rounds_ctrl.rounds=5 actor_rollout_ref.agentgym.max_rounds=5)
  fi
fi

echo "[webshop_train] profile=$PROFILE experiment=$EXPERIMENT"
"$PYTHON" -m verl.agent_trainer.main_ppo "${COMMON[@]}" "${PROFILE_ARGS[@]}" "$@"
