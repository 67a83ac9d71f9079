#!/usr/bin/env bash
# One command for a GPU machine without a package registry (the lent H100/H200: Python 3.12 with torch
# and transformers preinstalled): install the project's missing pure deps from .whl/, run the tests that
# need CUDA, the vLLM GPU test where vLLM is importable, then the GPU benchmarks and their tables (the agent
# loop vs a static batch on SmolLM2's shape, E1; the HF engine vs model.generate, bench/RESULTS.md D4; the actor update vs a plain PyTorch loop on Qwen2.5-0.5B's
# layer shape, fixed / dynamic micro-batches and activation offloading, D2d). Logs go to $OUT (default
# ./gpu_check_out); stdout gets a short summary and the tables. Every phase has a time limit, cut so that the
# whole run ends within GPU_CHECK_BUDGET_S (default 520 s, under 9 minutes) while each later phase keeps its
# floor (FLOOR below).
#   bash scripts/fetch_gpu_wheels.sh     # first, on a machine with a registry: fills .whl/ (~52 MiB)
#   bash scripts/gpu_check.sh            # on the GPU machine, from the repository root (or anywhere)
#   bash scripts/gpu_check.sh --dry-run  # anywhere: print the plan (phases, limits, commands), run nothing
# Exit status: 0 when every phase passed, 1 otherwise (a phase that collected no tests counts as failed).
set -uo pipefail
cd "$(dirname "$0")/.."
DRY_RUN=0
case "${1:-}" in
  --dry-run) DRY_RUN=1 ;;
  "") ;;
  *) echo "usage: bash scripts/gpu_check.sh [--dry-run]" >&2; exit 2 ;;
esac
OUT="${OUT:-$PWD/gpu_check_out}"
SITE="${GPU_CHECK_SITE:-/tmp/site}"
PY="${PYTHON:-python3}"
BUDGET_S="${GPU_CHECK_BUDGET_S:-520}"
VLLM_TEST=tests/gpu/test_vllm_engine_gpu.py
export HF_HUB_OFFLINE=1 WANDB_MODE=offline RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
export JAX_PLATFORMS=cpu  # bm25s imports JAX when it is installed; JAX would otherwise take most of the GPU
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
start=$(date +%s)
deadline=$(( start + BUDGET_S ))
status=0

# The least time a phase must keep to be worth starting: an earlier phase is cut so that every later
# enabled phase keeps its floor (the vLLM phase only where vLLM is importable).
declare -A FLOOR=([pytest_vllm]=120 [bench_vs_static]=60 [bench_rollout]=60 [bench_train_step]=60)
if "$PY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("vllm") is None)' 2> /dev/null; then
  HAS_VLLM=1
else
  HAS_VLLM=0
fi
LATER=(pytest_vllm bench_vs_static bench_rollout bench_train_step)
reserve_after() {  # reserve_after NAME: the floors of the enabled phases after NAME
  local name=$1 sum=0 seen=0 p
  [ "$name" = install ] || [ "$name" = imports ] || [ "$name" = pytest ] && seen=1
  for p in "${LATER[@]}"; do
    if [ "$seen" -eq 1 ] && { [ "$p" != pytest_vllm ] || [ "$HAS_VLLM" -eq 1 ]; }; then sum=$(( sum + ${FLOOR[$p]} )); fi
    [ "$p" = "$name" ] && seen=1
  done
  echo "$sum"
}

if [ "$DRY_RUN" -eq 0 ]; then mkdir -p "$OUT" && : > "$OUT/summary.txt"; fi
summary() { if [ "$DRY_RUN" -eq 1 ]; then echo "$1"; else echo "$1" | tee -a "$OUT/summary.txt"; fi; }

phase() {  # phase NAME LIMIT_S LOG CMD...: run CMD for at most LIMIT_S, keeping the later phases' floors
  local name=$1 limit=$2 log=$3; shift 3   # before the deadline; log to $OUT/LOG; record the outcome
  local reserve
  reserve=$(reserve_after "$name")
  if [ "$DRY_RUN" -eq 1 ]; then
    echo "PLAN  $name (<= $limit s, keeps $reserve s for later phases, log $log): $*"
    return 0
  fi
  local t0=$(date +%s)
  local left=$(( deadline - t0 - reserve ))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 10 ]; then summary "FAIL  $name (no time left in the budget)"; status=1; return 1; fi
  timeout --kill-after=5 "$limit" "$@" > "$OUT/$log" 2>&1
  local rc=$?
  local how="rc $rc"
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && how="TIMED OUT after ${limit} s"
  [[ "$name" = pytest* ]] && [ "$rc" -eq 5 ] && how="rc 5: no tests collected"
  if [ "$rc" -eq 0 ]; then summary "PASS  $name ($(( $(date +%s) - t0 )) s, $log)"
  else summary "FAIL  $name ($how, $(( $(date +%s) - t0 )) s, $log)"; status=1; fi
  return "$rc"
}
show() {  # show LOG FILTER...: print what a phase logged (nothing in a dry run)
  local log=$1; shift
  [ "$DRY_RUN" -eq 1 ] || [ ! -f "$OUT/$log" ] || "$@" "$OUT/$log"
}

if [ "$DRY_RUN" -eq 0 ]; then
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
else
  echo "dry run: budget $BUDGET_S s, python $PY, vllm importable: $HAS_VLLM"
fi
phase install 60 pip_install.log "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl
phase imports 60 imports.log "$PY" -c 'import ray, hydra, omegaconf, fastapi, uvicorn, pydantic, tensordict, orjson, bm25s, Stemmer, rapidfuzz
import verl.protocol, verl.agent_trainer.main_ppo, agentenv_webshop.launch, torch
assert torch.cuda.is_available(), "torch sees no CUDA device"
print("imports ok")' || { show imports.log cat; exit 1; }

# 2. the tests that need CUDA (selected by marker, from the files that use it: collecting the whole suite
#    would import test modules whose deps, e.g. Playwright, this machine does not have); the vLLM test in a
#    phase of its own, so that its engine start-up cannot eat the other tests' time
mapfile -t files < <(grep -rl --include='*.py' 'mark\.gpu' tests | grep -vx "$VLLM_TEST" | sort)
[ "$DRY_RUN" -eq 1 ] || echo "gpu test files: ${files[*]}" > "$OUT/pytest_gpu_files.txt"
phase pytest 300 pytest_gpu.log "$PY" -m pytest -m gpu -p no:cacheprovider -q -ra --junitxml="$OUT/pytest_gpu.xml" "${files[@]}"
show pytest_gpu.log tail -n 25
if [ "$HAS_VLLM" -eq 1 ]; then
  phase pytest_vllm 180 pytest_vllm.log "$PY" -m pytest -m gpu -p no:cacheprovider -q -ra \
    --junitxml="$OUT/pytest_vllm.xml" "$VLLM_TEST"
  show pytest_vllm.log tail -n 15
else
  summary "SKIP  pytest_vllm (vllm is not importable with $PY: pip install -e .[gpu] brings vllm 0.32.x)"
fi

# 3. GPU benchmarks and their tables: the agent loop against a static batch of its own requests on SmolLM2-135M's
#    architecture (random weights, 128 trajectories x 5 turns: bench/RESULTS.md E1; targets >= 5,000 tok/s and
#    ratio >= 0.7); the HF engine vs model.generate and the agent loop on WebShop (D4); the
#    actor update on Qwen2.5-0.5B's layer shape (hidden 896, 24 layers, 14 heads; 32 rows, P=256, R=1,024: D2d)
phase bench_vs_static 150 bench_vs_static.txt "$PY" bench/rollout.py --vs-static --device cuda --model smollm2 \
  --trajectories 128 --rounds 5
show bench_vs_static.txt tail -n 8
phase bench_rollout 150 bench_rollout.txt "$PY" bench/rollout.py --device cuda
show bench_rollout.txt grep '^|\|^HF engine\|^Agent loop'
if [ "$DRY_RUN" -eq 1 ] || "$PY" bench/train_step.py --help 2>/dev/null | grep -q -- '--mode'; then
  phase bench_train_step 120 bench_train_step.txt "$PY" bench/train_step.py --mode actor --device cuda \
    --hidden 896 --layers 24 --heads 14 --intermediate 4864 --rows 32 --prompt-len 256 --response-len 1024
  show bench_train_step.txt grep '^|\|^actor update'
else
  summary "SKIP  bench_train_step (bench/train_step.py has no CUDA mode in this commit)"
fi

[ "$DRY_RUN" -eq 1 ] || summary "total $(( $(date +%s) - start )) s; logs in $OUT"
exit "$status"
