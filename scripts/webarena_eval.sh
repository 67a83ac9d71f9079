#!/usr/bin/env bash
# Evaluate a WebArena agent: `bash scripts/webarena_eval.sh [hydra.key=value ...]`.
#
# Starts the WebArena server (embedded sites + Chromium, or a real deployment via SHOPPING/REDDIT/...)
# when nothing answers at ENV_ADDR (default http://127.0.0.1:36005) and stops it on exit; then runs
# `python -m verl.agent_trainer.main_generation` on the WebArena test ids and prints Avg@k, success rate
# and Pass@k (metrics.json + trajectories.jsonl), with scripts/profiles/webarena_eval{,_cpu,_gpu}.args:
#   * no GPU -> CPU profile: MODEL_PATH or the tiny model, HF engine, the first 10 test tasks, 3 rounds;
#   * GPUs   -> GPU profile: MODEL_PATH (default ~/models/Qwen2.5-7B-Instruct), vLLM, every test task,
#     15 rounds, temperature 1 (AgentGym-RL's eval settings).
# Every extra argument is a Hydra override and wins over the profile (it comes last).
# The accessibility tree is cut to 1,920 tokens of the policy's tokenizer (agentgym.max_obs_tokens; CPU
# profile: 3072 tokens of the tiny model's tokenizer, which keep every answer of the suite).
# Environment: see scripts/lib/job.sh (WEBARENA_ARGS: extra server flags).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" && cd "$ROOT"
source "$ROOT/scripts/lib/job.sh"
run_job webarena eval "$@"
