#!/usr/bin/env bash
# One command for a GPU machine without a package registry (the lent H100/H200: Python 3.12 with torch
# and transformers preinstalled): install the project's missing pure deps from .whl/, run the tests that
# need CUDA, then the GPU benchmarks. Logs go to $OUT (default ./gpu_check_out); stdout gets a short summary
# and the benchmark tables. Every phase has a time limit, cut further so that the whole run ends within
# GPU_CHECK_BUDGET_S (default 520 s, under 9 minutes) with time kept for the phases after it.
#   bash scripts/fetch_gpu_wheels.sh     # first, on a machine with a registry: fills .whl/ (~52 MiB)
#   bash scripts/gpu_check.sh            # on the GPU machine, from the repository root (or anywhere)
# Exit status: 0 when every phase passed, 1 otherwise (a phase that collected no tests counts as failed).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu_check_out}"
SITE="${GPU_CHECK_SITE:-/tmp/site}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 WANDB_MODE=offline RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
export JAX_PLATFORMS=cpu  # bm25s imports JAX when it is installed; JAX would otherwise take most of the GPU
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
start=$(date +%s)
deadline=$(( start + ${GPU_CHECK_BUDGET_S:-520} ))
status=0
summary() { echo "$1" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"

phase() {  # phase NAME LIMIT_S RESERVE_S LOG CMD...: run CMD for at most LIMIT_S, and so that RESERVE_S stay
  local name=$1 limit=$2 reserve=$3 log=$4; shift 4   # before the deadline; log to $OUT/LOG; record the outcome
  local t0=$(date +%s)
  local left=$(( deadline - t0 - reserve ))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 10 ]; then summary "FAIL  $name (no time left in the budget)"; status=1; return 1; fi
  timeout --kill-after=5 "$limit" "$@" > "$OUT/$log" 2>&1
  local rc=$?
  local how="rc $rc"
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && how="TIMED OUT after ${limit} s"
  [ "$name" = pytest ] && [ "$rc" -eq 5 ] && how="rc 5: no tests collected"
  if [ "$rc" -eq 0 ]; then summary "PASS  $name ($(( $(date +%s) - t0 )) s, $log)"
  else summary "FAIL  $name ($how, $(( $(date +%s) - t0 )) s, $log)"; status=1; fi
  return "$rc"
}

{
  echo "date: $(date -u +%FT%TZ)  commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  "$PY" -c 'import sys, torch, transformers; print("python", sys.version.split()[0], "torch", torch.__version__,
"transformers", transformers.__version__, "cuda", torch.cuda.is_available(),
torch.cuda.get_device_name() if torch.cuda.is_available() else "")'
  nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader 2>/dev/null
  nproc
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

# 1. the project's missing deps, as wheels carried in .whl/
if ! ls .whl/*.whl > /dev/null 2>&1; then
  summary "FAIL  install (no .whl/*.whl here: run bash scripts/fetch_gpu_wheels.sh first and carry .whl)"
  exit 1
fi
rm -rf "$SITE"
phase install 60 270 pip_install.log "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl
phase imports 60 270 imports.log "$PY" -c 'import ray, hydra, omegaconf, fastapi, uvicorn, pydantic, tensordict, orjson, bm25s, Stemmer, rapidfuzz
import verl.protocol, verl.agent_trainer.main_ppo, agentenv_webshop.launch, torch
assert torch.cuda.is_available(), "torch sees no CUDA device"
print("imports ok")' || { cat "$OUT/imports.log"; exit 1; }

# 2. the tests that need CUDA (selected by marker, from the files that use it: collecting the whole suite
#    would import test modules whose deps, e.g. Playwright, this machine does not have)
mapfile -t files < <(grep -rl --include='*.py' 'mark\.gpu' tests | sort)
echo "gpu test files: ${files[*]}" > "$OUT/pytest_gpu_files.txt"
phase pytest 300 150 pytest_gpu.log "$PY" -m pytest -m gpu -p no:cacheprovider -q -ra --junitxml="$OUT/pytest_gpu.xml" "${files[@]}"
tail -n 25 "$OUT/pytest_gpu.log"

# 3. GPU benchmarks: the HF engine vs model.generate, the agent loop on WebShop; the actor update
phase bench_rollout 150 45 bench_rollout.txt "$PY" bench/rollout.py --device cuda
grep '^|\|^HF engine\|^Agent loop' "$OUT/bench_rollout.txt"
if "$PY" bench/train_step.py --help 2>/dev/null | grep -q -- '--mode'; then
  phase bench_train_step 90 5 bench_train_step.txt "$PY" bench/train_step.py --mode actor --device cuda
  tail -n 15 "$OUT/bench_train_step.txt"
else
  summary "SKIP  bench_train_step (bench/train_step.py has no CUDA mode in this commit)"
fi

summary "total $(( $(date +%s) - start )) s; logs in $OUT"
exit "$status"
