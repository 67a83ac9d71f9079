# The runner behind scripts/multiturn/*.sh (verl's interaction recipe). Source it from those scripts.
#
#   run_recipe TASK MODE [hydra.key=value ...]    TASK: webshop | webarena, MODE: test | train
#
# Builds the parquet data in DATA_DIR when missing (scripts/data_preprocess), reuses or starts the TASK
# env server at ENV_ADDR, detects CPU/GPU like scripts/webshop_train.sh (CPU: the tiny policy, HF engine),
# and runs `python -m verl.trainer.main_ppo --config-path scripts/multiturn --config-name TASK_grpo` with
# scripts/profiles/multiturn_{PROFILE,MODE}.args, then the command line's overrides. Writes under OUTPUT_DIR:
#   logs/train_<YYYYmmdd_HHMMSS>.log   checkpoints/ (with HF exports)   metrics/training_metrics.json
# Environment: PYTHON, ENV_ADDR (webshop 36003, webarena 36005), OUTPUT_DIR (default outputs/TASK_grpo_MODE),
#   DATA_DIR (default OUTPUT_DIR/data), MODEL_PATH, TINY_MODEL_DIR, PROFILE, WEBSHOP_ARGS / WEBARENA_ARGS.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/job.sh"

run_recipe() {
  local task="$1" mode="$2" port log
  shift 2
  port=$([[ "$task" == webshop ]] && echo 36003 || echo 36005)
  job_profile "$task" "$port"
  export ENV_ADDR
  OUTPUT_DIR="${OUTPUT_DIR:-$ROOT/outputs/${task}_grpo_${mode}}"
  export DATA_DIR="${DATA_DIR:-$OUTPUT_DIR/data}"
  mkdir -p "$OUTPUT_DIR/logs" "$OUTPUT_DIR/checkpoints" "$OUTPUT_DIR/metrics"
  if [[ ! -f "$DATA_DIR/train.parquet" ]]; then
    "$PYTHON" "$ROOT/scripts/data_preprocess/${task}_multiturn_w_interaction.py" --local_save_dir "$DATA_DIR" \
      ${MODEL_PATH:+--model_path "$MODEL_PATH"}
  fi
  "ensure_${task}_server" "$ENV_ADDR" "${task}_grpo_${mode}"
  job_model
  OVERRIDES=()
  read_overrides "$ROOT/scripts/profiles/multiturn_${PROFILE}.args" "$ROOT/scripts/profiles/multiturn_${mode}.args"
  log="$OUTPUT_DIR/logs/train_$(date +%Y%m%d_%H%M%S).log"
  echo "[${task}_grpo_${mode}] profile=$PROFILE output=$OUTPUT_DIR log=$log"
  "$PYTHON" -m verl.trainer.main_ppo --config-path "$ROOT/scripts/multiturn" --config-name "${task}_grpo" \
    "${OVERRIDES[@]}" trainer.default_local_dir="$OUTPUT_DIR/checkpoints" trainer.log_dir="$OUTPUT_DIR/metrics" \
    "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  # per-step metrics as one JSON list (the trainer appends them to metrics.jsonl while it runs)
  "$PYTHON" - "$OUTPUT_DIR/metrics" <<'PY'
import json, os, sys
src = os.path.join(sys.argv[1], "metrics.jsonl")
rows = [json.loads(line) for line in open(src)] if os.path.exists(src) else []
with open(os.path.join(sys.argv[1], "training_metrics.json"), "w") as fh:
    json.dump(rows, fh, indent=1)
PY
  return "$rc"
}

# The env server alone, in the foreground: start_TASK_server.sh [server flags].
run_server() {
  local task="$1" port
  shift
  port=$([[ "$task" == webshop ]] && echo 36003 || echo 36005)
  pick_python "$ROOT"
  exec "$PYTHON" -m "agentenv_${task}.launch" --host 127.0.0.1 --port "${PORT:-$port}" "$@"
}
