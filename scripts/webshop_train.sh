#!/usr/bin/env bash
# Train a WebShop agent with GRPO: `bash scripts/webshop_train.sh [hydra.key=value ...]`.
#
# Starts the WebShop server (python -m agentenv_webshop.launch) when nothing answers at ENV_ADDR
# (default http://127.0.0.1:36001) and stops it on exit; then runs `python -m verl.agent_trainer.main_ppo`
# with the overrides of scripts/profiles/webshop_train{,_cpu,_gpu}.args:
#   * no GPU -> CPU profile: tiny model (python -m verl.utils.tiny_model), HF engine, 4 prompts x 2
#     samples, 4 steps, short turns;
#   * GPUs   -> GPU profile: MODEL_PATH (default ~/models/Qwen2.5-3B-Instruct), vLLM, GRPO n=8.
# Every extra argument is a Hydra override and wins over the profile (it comes last).
# Environment: see scripts/lib/job.sh; WARM_START=1 (CPU profile, opt-in): start GRPO from a supervised
#   warm start on expert demonstrations (scripts/webshop_sft.sh, cached in SFT_DIR, default
#   saves/sft/webshop_tiny) with longer turns.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" && cd "$ROOT"
source "$ROOT/scripts/lib/job.sh"

job_overrides() {
  [[ "$PROFILE" == cpu && "${WARM_START:-0}" == 1 ]] || return 0
  SFT_DIR="${SFT_DIR:-$ROOT/saves/sft/webshop_tiny}"
  if [[ ! -f "$SFT_DIR/sft_metrics.json" ]]; then
    PYTHON="$PYTHON" MODEL_PATH="$MODEL_PATH" SFT_DIR="$SFT_DIR" bash "$ROOT/scripts/webshop_sft.sh"
  fi
  # expert turns are ~40-90 tiny-tokenizer tokens and a results page ~850: longer turns and trajectories
  OVERRIDES+=(actor_rollout_ref.model.path="$SFT_DIR" actor_rollout_ref.rollout.max_tokens=96
    actor_rollout_ref.rollout.max_model_len=5120 data.max_response_length=4096
    algorithm.rounds_ctrl.rounds=5 actor_rollout_ref.agentgym.max_rounds=5)
}

run_job webshop train "$@"
