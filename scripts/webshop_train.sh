#!/usr/bin/env bash
# Train a WebShop agent with GRPO: `bash scripts/webshop_train.sh [hydra.key=value ...]`.
#
# Starts the WebShop server (python -m agentenv_webshop.launch) when nothing answers at ENV_ADDR
# (default http://127.0.0.1:36001) and stops it on exit; then runs `python -m verl.agent_trainer.main_ppo`
# with the overrides of scripts/profiles/webshop_train{,_cpu,_gpu}.args:
#   * no GPU -> CPU profile: the shipped SFT policy (POLICY_DIR, default agentenv_webshop/sft_policy; its
#     longer turns: webshop_train_cpu_policy.args), or the tiny random model (python -m verl.utils.tiny_model)
#     while none is there; HF engine, 4 prompts x 2 samples, 4 steps;
#   * GPUs   -> GPU profile: MODEL_PATH (default ~/models/Qwen2.5-3B-Instruct), vLLM, GRPO n=8.
# Both profiles write a learning report (trainer.learning_report): greedy success and mean reward with 95%
# CIs on the held-out goals of AgentItemId/webshop_test.json (data.val_max_items) before the first and after
# the last GRPO step, printed as a table and saved as <trainer.default_local_dir>/learning_report.json;
# plots of the run's metrics go to <trainer.default_local_dir>/logs/plots.
# Every extra argument is a Hydra override and wins over the profile (it comes last).
# Environment: see scripts/lib/job.sh; MODEL_PATH (any HF dir, wins over POLICY_DIR); WARM_START=1 (CPU
#   profile, opt-in): start GRPO from a supervised warm start on expert demonstrations
#   (scripts/webshop_sft.sh, cached in SFT_DIR, default saves/sft/webshop_tiny) instead.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" && cd "$ROOT"
source "$ROOT/scripts/lib/job.sh"
DEFAULT_POLICY="${POLICY_DIR:-$ROOT/agentenv_webshop/sft_policy}"

job_overrides() {
  [[ "$PROFILE" == cpu ]] || return 0
  if [[ "${WARM_START:-0}" == 1 ]]; then
    SFT_DIR="${SFT_DIR:-$ROOT/saves/sft/webshop_tiny}"
    if [[ ! -f "$SFT_DIR/sft_metrics.json" ]]; then
      PYTHON="$PYTHON" MODEL_PATH="$MODEL_PATH" SFT_DIR="$SFT_DIR" EVAL=0 bash "$ROOT/scripts/webshop_sft.sh"
    fi
    OVERRIDES+=(actor_rollout_ref.model.path="$SFT_DIR")
  elif [[ "$USING_DEFAULT_POLICY" != 1 ]]; then
    return 0
  fi
  # a policy that writes real actions: longer turns and trajectories
  read_overrides "$ROOT/scripts/profiles/webshop_train_cpu_policy.args"
}

run_job webshop train "$@"
