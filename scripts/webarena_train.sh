#!/usr/bin/env bash
# Train a WebArena agent with GRPO: `bash scripts/webarena_train.sh [hydra.key=value ...]`.
#
# Starts the WebArena server (python -m agentenv_webarena.launch; it starts the embedded sites and
# Chromium itself unless SHOPPING / SHOPPING_ADMIN / REDDIT / ... point at a real WebArena deployment)
# when nothing answers at ENV_ADDR (default http://127.0.0.1:36005), and stops it on exit; then runs
# `python -m verl.agent_trainer.main_ppo` with scripts/profiles/webarena_train{,_cpu,_gpu}.args:
#   * no GPU -> CPU profile: tiny model, HF engine, 2 tasks x 2 samples, 3 steps, 2 rounds;
#   * GPUs   -> GPU profile: AgentGym-RL's WebArena settings: MODEL_PATH (default
#     ~/models/Qwen2.5-7B-Instruct), vLLM, GRPO n=4, batch 32, 15 rounds (fixed), or the ScalingInter-RL
#     horizon schedule [8,12,15] every 80 steps with SCALING_INTER=1.
# The accessibility tree is cut to 1,920 tokens of the policy's tokenizer, as WebArena does
# (actor_rollout_ref.agentgym.max_obs_tokens; the CPU profile: 3072 tokens of the tiny model's tokenizer,
# which keep every answer of the suite, see webarena_train_cpu.args). Before starting a server it checks
# that Playwright and Chromium are installed (one line naming `bash scripts/install_chromium.sh` if not).
# Every extra argument is a Hydra override and wins over the profile (it comes last).
# Environment: see scripts/lib/job.sh; SCALING_INTER=1; SHOPPING/SHOPPING_ADMIN/REDDIT/... (real sites;
#   then also pass WEBARENA_ARGS="--task-file path/to/test.raw.json" and matching data.train_file ids).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" && cd "$ROOT"
source "$ROOT/scripts/lib/job.sh"

job_overrides() {
  if [[ "$PROFILE" == gpu && "${SCALING_INTER:-0}" == 1 ]]; then
    OVERRIDES+=(algorithm.rounds_ctrl.type=scaling_inter_stepwise "algorithm.rounds_ctrl.rounds=[8,12,15]"
      algorithm.rounds_ctrl.steps_scaling_inter=80)
  fi
}

run_job webarena train "$@"
