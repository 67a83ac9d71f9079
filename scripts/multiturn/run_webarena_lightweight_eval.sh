#!/usr/bin/env bash
# Quick evaluation of a checkpoint on the first MAX_SAMPLES webarena test tasks (default 20):
#   MODEL_PATH=outputs/webarena_grpo_test/checkpoints/global_step_1/actor/huggingface MAX_SAMPLES=20 \
#     bash scripts/multiturn/run_webarena_lightweight_eval.sh [key=value ...]
# Runs scripts/webarena_eval.sh (main_generation: success rate, Avg@k, Pass@k; CPU/GPU detected, the server
# started at ENV_ADDR when none answers); without MODEL_PATH the CPU profile evaluates the tiny model.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)" && cd "$ROOT"
exec bash "$ROOT/scripts/webarena_eval.sh" data.max_items="${MAX_SAMPLES:-20}" data.n_samples=1 "$@"
