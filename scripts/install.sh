#!/usr/bin/env bash
# Install the project into ./.venv (or the active virtualenv).
#   bash scripts/install.sh            core install (CPU)
#   bash scripts/install.sh test       core + test tools
#   EXTRAS=test,wandb bash scripts/install.sh
# torch==2.13.0 goes in first: a bare `torch` requirement can otherwise pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${EXTRAS:-${1:-}}"
if [ -z "${VIRTUAL_ENV:-}" ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  PY=.venv/bin/python
else
  PY="$VIRTUAL_ENV/bin/python"
fi
"$PY" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
"$PY" -c 'import torch' 2>/dev/null || "$PY" -m pip install -q "torch==${TORCH_VERSION:-2.13.0}"
if [ -n "$extras" ]; then
  "$PY" -m pip install -q -e ".[${extras}]"
else
  "$PY" -m pip install -q -e .
fi
echo "installed into $("$PY" -c 'import sys; print(sys.prefix)')"
