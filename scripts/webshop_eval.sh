#!/usr/bin/env bash
# Evaluate a WebShop agent: `bash scripts/webshop_eval.sh [hydra.key=value ...]`.
#
# Starts the WebShop server when nothing answers at ENV_ADDR (default http://127.0.0.1:36001) and stops
# it on exit; then runs `python -m verl.agent_trainer.main_generation` on the test item ids and prints
# Avg@k, success rate and Pass@k (metrics.json + trajectories.jsonl in data.output_path), with
# scripts/profiles/webshop_eval{,_cpu,_gpu}.args:
#   * no GPU -> CPU profile: MODEL_PATH or the tiny model, HF engine, the first 20 test items, short turns;
#   * GPUs   -> GPU profile: MODEL_PATH (default ~/models/Qwen2.5-3B-Instruct; a trained checkpoint is
#     <trainer.default_local_dir>/global_step_N/actor/huggingface), vLLM, all 200 test items.
# Every extra argument is a Hydra override and wins over the profile (it comes last), e.g.
#   bash scripts/webshop_eval.sh model.path=saves/webshop_grpo_cpu/global_step_4/actor/huggingface data.n_samples=4
# Environment: see scripts/lib/job.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" && cd "$ROOT"
source "$ROOT/scripts/lib/job.sh"
run_job webshop eval "$@"
