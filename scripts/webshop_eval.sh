#!/usr/bin/env bash
# Evaluate a WebShop agent: `bash scripts/webshop_eval.sh [hydra.key=value ...]`.
#
# Starts the WebShop server (python -m agentenv_webshop.launch) when nothing answers at ENV_ADDR and
# stops it on exit; then runs `python -m verl.agent_trainer.main_generation` on the test item ids and
# prints Avg@k, success rate and Pass@k (metrics.json + trajectories.jsonl in data.output_path):
#   * no GPU -> CPU profile: MODEL_PATH or the tiny model, HF engine, the first 20 test items, short turns;
#   * GPUs   -> GPU profile: MODEL_PATH (default ~/models/Qwen2.5-3B-Instruct; a trained checkpoint is
#     <trainer.default_local_dir>/global_step_N/actor/huggingface), vLLM, all 200 test items.
# Every extra argument is a Hydra override and wins over the profile (it comes last), e.g.
#   bash scripts/webshop_eval.sh model.path=saves/webshop_grpo_cpu/global_step_4/actor/huggingface data.n_samples=4
# Environment: PYTHON, ENV_ADDR (default http://127.0.0.1:36001), MODEL_PATH, TINY_MODEL_DIR,
#   PROFILE=cpu|gpu (default: auto-detect), WEBSHOP_ARGS (extra server flags).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source "$ROOT/scripts/lib/env_server.sh"
pick_python "$ROOT"
ENV_ADDR="${ENV_ADDR:-http://127.0.0.1:36001}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false HYDRA_FULL_ERROR=1

ensure_webshop_server "$ENV_ADDR" webshop_eval

NGPU=0
if command -v nvidia-smi >/dev/null 2>&1; then NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
PROFILE="${PROFILE:-$([[ "$NGPU" -gt 0 ]] && echo gpu || echo cpu)}"

COMMON=(
  data.path=AgentItemId/webshop_test.json
  agentgym.task_name=webshop
  agentgym.env_addr="$ENV_ADDR"
)

if [[ "$PROFILE" == "gpu" ]]; then
  export VLLM_USE_MODELSCOPE=0 VLLM_WORKER_MULTIPROC_METHOD=spawn
  PROFILE_ARGS=(
    trainer.device=cuda
    model.path="${MODEL_PATH:-$HOME/models/Qwen2.5-3B-Instruct}"
    rollout.name=vllm
    rollout.temperature=1.0 rollout.max_tokens=512 rollout.max_model_len=16384
    data.n_samples=1 data.batch_size=32
    data.max_prompt_length=1024 data.max_response_length=8192
    agentgym.max_rounds=10
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
    rollout.temperature=1.0 rollout.max_tokens=32 rollout.max_model_len=4096
    data.n_samples=2 data.batch_size=10 data.max_items=20
    data.max_prompt_length=1024 data.max_response_length=1024
    agentgym.max_rounds=3
  )
fi

echo "[webshop_eval] profile=$PROFILE"
"$PYTHON" -m verl.agent_trainer.main_generation "${COMMON[@]}" "${PROFILE_ARGS[@]}" "$@"
