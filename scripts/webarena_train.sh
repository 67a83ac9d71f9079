#!/usr/bin/env bash
# Train a WebArena agent with GRPO: `bash scripts/webarena_train.sh [hydra.key=value ...]`.
#
# Starts the WebArena server (python -m agentenv_webarena.launch; it starts the embedded sites and
# Chromium itself unless SHOPPING / SHOPPING_ADMIN / REDDIT / ... point at a real WebArena deployment)
# when nothing answers at ENV_ADDR, and stops it on exit; then runs `python -m verl.agent_trainer.main_ppo`:
#   * no GPU -> CPU profile: tiny model (python -m verl.utils.tiny_model), HF engine, 2 tasks x 2
#     samples, 3 steps, 2 rounds, observations capped at 1,500 characters;
#   * GPUs   -> GPU profile: AgentGym-RL's WebArena settings: MODEL_PATH (default
#     ~/models/Qwen2.5-7B-Instruct), vLLM, GRPO n=4, batch 32, 15 rounds (fixed), or the ScalingInter-RL
#     horizon schedule [8,12,15] every 80 steps with SCALING_INTER=1.
# Every extra argument is a Hydra override and wins over the profile (it comes last).
# Environment: PYTHON, ENV_ADDR (default http://127.0.0.1:36005), MODEL_PATH, TINY_MODEL_DIR, EXPERIMENT,
#   PROFILE=cpu|gpu (default: auto-detect), SCALING_INTER=1, WEBARENA_ARGS (extra server flags; the
#   CPU profile's default is "--max-obs-chars 1500"), SHOPPING/SHOPPING_ADMIN/REDDIT/... (real sites;
#   then also pass WEBARENA_ARGS="--task-file path/to/test.raw.json" and matching data.train_file ids).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source "$ROOT/scripts/lib/env_server.sh"
pick_python "$ROOT"
ENV_ADDR="${ENV_ADDR:-http://127.0.0.1:36005}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false HYDRA_FULL_ERROR=1 RAY_USAGE_STATS_ENABLED=0

NGPU=0
if command -v nvidia-smi >/dev/null 2>&1; then NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
PROFILE="${PROFILE:-$([[ "$NGPU" -gt 0 ]] && echo gpu || echo cpu)}"
EXPERIMENT="${EXPERIMENT:-webarena_grpo_${PROFILE}}"
if [[ "$PROFILE" == "cpu" ]]; then WEBARENA_ARGS="${WEBARENA_ARGS:---max-obs-chars 1500}"; fi

ensure_webarena_server "$ENV_ADDR" webarena_train

COMMON=(
  algorithm.adv_estimator=grpo
  data.train_file=AgentItemId/webarena_train.json
  data.val_file=AgentItemId/webarena_test.json
  actor_rollout_ref.agentgym.task_name=webarena
  actor_rollout_ref.agentgym.env_addr="$ENV_ADDR"
  actor_rollout_ref.agentgym.timeout=600
  actor_rollout_ref.actor.use_kl_loss=True
  actor_rollout_ref.actor.kl_loss_coef=0.001
  actor_rollout_ref.actor.kl_loss_type=low_var_kl
  algorithm.kl_ctrl.kl_coef=0.001
  trainer.project_name=webarena
  trainer.experiment_name="$EXPERIMENT"
  trainer.default_local_dir="saves/$EXPERIMENT"
  actor_rollout_ref.rollout.rollout_log_dir="saves/$EXPERIMENT/executer_logs"
)

if [[ "$PROFILE" == "gpu" ]]; then
  MODEL_PATH="${MODEL_PATH:-$HOME/models/Qwen2.5-7B-Instruct}"
  export VLLM_USE_MODELSCOPE=0 VLLM_WORKER_MULTIPROC_METHOD=spawn PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  if [[ "${SCALING_INTER:-0}" == "1" ]]; then
    ROUNDS=(algorithm.rounds_ctrl.type=scaling_inter_stepwise "algorithm.rounds_ctrl.rounds=[8,12,15]"
            algorithm.rounds_ctrl.steps_scaling_inter=80)
  else
    ROUNDS=(algorithm.rounds_ctrl.type=fixed algorithm.rounds_ctrl.rounds=15)
  fi
  PROFILE_ARGS=(
    "${ROUNDS[@]}"
    trainer.device=cuda trainer.n_gpus_per_node="$NGPU" trainer.nnodes=1
    actor_rollout_ref.model.path="$MODEL_PATH"
    actor_rollout_ref.model.enable_gradient_checkpointing=True
    actor_rollout_ref.rollout.name=vllm
    actor_rollout_ref.rollout.n=4
    actor_rollout_ref.rollout.gpu_memory_utilization=0.7
    actor_rollout_ref.rollout.tensor_model_parallel_size=1
    actor_rollout_ref.rollout.max_tokens=512
    actor_rollout_ref.rollout.max_model_len=32768
    data.train_batch_size=32 data.max_prompt_length=4096 data.max_response_length=14098
    actor_rollout_ref.actor.ppo_epochs=2
    actor_rollout_ref.actor.ppo_mini_batch_size=4
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.agentgym.max_rounds=15
    trainer.total_epochs=25 trainer.save_freq=25 trainer.test_freq=25
    data.val_max_items=100
    "trainer.logger=[console,file,tensorboard]"
  )
else
  TINY_MODEL_DIR="${TINY_MODEL_DIR:-$ROOT/saves/tiny_model}"
  "$PYTHON" -m verl.utils.tiny_model --out "$TINY_MODEL_DIR"
  PROFILE_ARGS=(
    algorithm.rounds_ctrl.type=fixed algorithm.rounds_ctrl.rounds=2
    trainer.device=cpu
    actor_rollout_ref.model.path="${MODEL_PATH:-$TINY_MODEL_DIR}"
    actor_rollout_ref.rollout.name=hf
    actor_rollout_ref.rollout.n=2
    actor_rollout_ref.rollout.max_tokens=32
    actor_rollout_ref.rollout.max_model_len=8192
    data.train_batch_size=2 data.max_prompt_length=4096 data.max_response_length=4096
    actor_rollout_ref.actor.ppo_epochs=1
    actor_rollout_ref.actor.ppo_mini_batch_size=2
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.actor.optim.lr=1e-5
    actor_rollout_ref.agentgym.max_rounds=2
    trainer.total_training_steps=3 trainer.save_freq=3 trainer.test_freq=3
    data.val_max_items=2
    ray_init.num_cpus=2
    "trainer.logger=[console,file]"
  )
fi

echo "[webarena_train] profile=$PROFILE experiment=$EXPERIMENT"
"$PYTHON" -m verl.agent_trainer.main_ppo "${COMMON[@]}" "${PROFILE_ARGS[@]}" "$@"
