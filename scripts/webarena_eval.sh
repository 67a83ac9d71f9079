#!/usr/bin/env bash
# Evaluate a WebArena agent: `bash scripts/webarena_eval.sh [hydra.key=value ...]`.
#
# Starts the WebArena server (embedded sites + Chromium, or a real deployment via SHOPPING/REDDIT/...)
# when nothing answers at ENV_ADDR and stops it on exit; then runs `python -m verl.agent_trainer.main_generation`
# on the WebArena test ids and prints Avg@k, success rate and Pass@k (metrics.json + trajectories.jsonl):
#   * no GPU -> CPU profile: MODEL_PATH or the tiny model, HF engine, the first 10 test tasks, 3 rounds;
#   * GPUs   -> GPU profile: MODEL_PATH (default ~/models/Qwen2.5-7B-Instruct), vLLM, every test task,
#     15 rounds, temperature 1 (AgentGym-RL's eval settings).
# Every extra argument is a Hydra override and wins over the profile (it comes last).
# Environment: PYTHON, ENV_ADDR (default http://127.0.0.1:36005), MODEL_PATH, TINY_MODEL_DIR,
#   PROFILE=cpu|gpu, WEBARENA_ARGS (extra server flags; CPU default "--max-obs-chars 1500").
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source "$ROOT/scripts/lib/env_server.sh"
pick_python "$ROOT"
ENV_ADDR="${ENV_ADDR:-http://127.0.0.1:36005}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false HYDRA_FULL_ERROR=1

NGPU=0
if command -v nvidia-smi >/dev/null 2>&1; then NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
PROFILE="${PROFILE:-$([[ "$NGPU" -gt 0 ]] && echo gpu || echo cpu)}"
if [[ "$PROFILE" == "cpu" ]]; then WEBARENA_ARGS="${WEBARENA_ARGS:---max-obs-chars 1500}"; fi

ensure_webarena_server "$ENV_ADDR" webarena_eval

COMMON=(
  data.path=AgentItemId/webarena_test.json
  agentgym.task_name=webarena
  agentgym.env_addr="$ENV_ADDR"
  agentgym.timeout=600
)

if [[ "$PROFILE" == "gpu" ]]; then
  export VLLM_USE_MODELSCOPE=0 VLLM_WORKER_MULTIPROC_METHOD=spawn
  PROFILE_ARGS=(
    trainer.device=cuda
    model.path="${MODEL_PATH:-$HOME/models/Qwen2.5-7B-Instruct}"
    rollout.name=vllm
    rollout.temperature=1.0 rollout.max_tokens=512 rollout.max_model_len=32768
    data.n_samples=1 data.batch_size=32
    data.max_prompt_length=4096 data.max_response_length=14098
    agentgym.max_rounds=15
  )
else
  if [[ -z "${MODEL_PATH:-}" ]]; then
    MODEL_PATH="${TINY_MODEL_DIR:-$ROOT/saves/tiny_model}"
    "$PYTHON" -m verl.utils.tiny_model --out "$MODEL_PATH"
  fi
  PROFILE_ARGS=(
    trainer.device=cpu
    model.path="$MODEL_PATH"
    rollout.name=hf
    rollout.temperature=1.0 rollout.max_tokens=32 rollout.max_model_len=8192
    data.n_samples=1 data.batch_size=5 data.max_items=10
    data.max_prompt_length=4096 data.max_response_length=4096
    agentgym.max_rounds=3
  )
fi

echo "[webarena_eval] profile=$PROFILE"
"$PYTHON" -m verl.agent_trainer.main_generation "${COMMON[@]}" "${PROFILE_ARGS[@]}" "$@"
