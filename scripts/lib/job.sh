# The one runner behind scripts/{webshop,webarena}_{train,eval}.sh (it sources env_server.sh).
#
#   run_job TASK KIND [hydra.key=value ...]     TASK: webshop | webarena, KIND: train | eval
#
# Picks the Python, detects the profile (PROFILE=cpu|gpu; gpu when nvidia-smi lists GPUs), reuses or
# starts the TASK env server at ENV_ADDR (stopped on exit), builds the tiny model for the CPU profile
# when MODEL_PATH is unset, then runs main_ppo (train) or main_generation (eval) with the overrides in
# scripts/profiles/TASK_KIND.args and TASK_KIND_PROFILE.args (one per line, $VARS expanded), then
# those the calling script adds in a `job_overrides` function (called once PROFILE is known; it
# appends to OVERRIDES), then the command line's (last, so they win). The layers are merged before the
# run (`merge_overrides`): each key once, with the value that wins, and the merged list is printed, one
# override a line.
# Environment: PYTHON, ENV_ADDR, MODEL_PATH, TINY_MODEL_DIR, EXPERIMENT (train), PROFILE,
#   WEBSHOP_ARGS / WEBARENA_ARGS (extra server flags; WebArena observations are capped by the agent loop in
#   tokens of the policy's tokenizer, agentgym.max_obs_tokens, not by the server); DEFAULT_POLICY (set by a
#   calling script: the CPU profile's model when MODEL_PATH is unset and the dir holds one).

source "$(dirname "${BASH_SOURCE[0]}")/env_server.sh"

# OVERRIDES += the Hydra overrides in each file (blank lines and '#' comments skipped; $VARS expanded).
read_overrides() {
  local file line
  for file in "$@"; do
    while IFS= read -r line || [[ -n "$line" ]]; do
      line="${line%%#*}"
      line="${line#"${line%%[![:space:]]*}"}"
      line="${line%"${line##*[![:space:]]}"}"
      [[ -z "$line" ]] && continue
      eval "line=\"$line\""
      OVERRIDES+=("$line")
    done < "$file"
  done
}

# OVERRIDES merged as Hydra would apply them: each plain `key=value` once, at its first place, with its last value
# (the last one wins); other arguments (`+key=`, `~key`, flags) stay where they are.
merge_overrides() {
  local arg key
  local -A last=() seen=()
  local merged=()
  for arg in "${OVERRIDES[@]}"; do
    [[ "$arg" =~ ^[A-Za-z_][A-Za-z0-9_.]*= ]] && last["${arg%%=*}"]="$arg"
  done
  for arg in "${OVERRIDES[@]}"; do
    if [[ "$arg" =~ ^[A-Za-z_][A-Za-z0-9_.]*= ]]; then
      key="${arg%%=*}"
      [[ -n "${seen[$key]:-}" ]] && continue
      seen[$key]=1
      merged+=("${last[$key]}")
    else
      merged+=("$arg")
    fi
  done
  OVERRIDES=("${merged[@]}")
}

# PYTHON, the job's environment, ENV_ADDR (default port $2), NGPU and PROFILE (cpu|gpu).
job_profile() {
  pick_python "$ROOT"
  export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false HYDRA_FULL_ERROR=1 RAY_USAGE_STATS_ENABLED=0
  ENV_ADDR="${ENV_ADDR:-http://127.0.0.1:$2}"
  NGPU=0
  if command -v nvidia-smi >/dev/null 2>&1; then NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
  PROFILE="${PROFILE:-$([[ "$NGPU" -gt 0 ]] && echo gpu || echo cpu)}"
}

# GPU: vLLM's environment. CPU without MODEL_PATH: the calling script's DEFAULT_POLICY (an HF dir) when
# it holds a model (sets USING_DEFAULT_POLICY=1), else build the tiny model and use it.
job_model() {
  USING_DEFAULT_POLICY=0
  if [[ "$PROFILE" == gpu ]]; then
    export VLLM_USE_MODELSCOPE=0 VLLM_WORKER_MULTIPROC_METHOD=spawn PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  elif [[ -z "${MODEL_PATH:-}" && -n "${DEFAULT_POLICY:-}" && -f "$DEFAULT_POLICY/config.json" ]]; then
    echo "[$1] policy: $DEFAULT_POLICY"
    MODEL_PATH="$DEFAULT_POLICY"
    USING_DEFAULT_POLICY=1
  elif [[ -z "${MODEL_PATH:-}" ]]; then
    if [[ -n "${DEFAULT_POLICY:-}" ]]; then
      echo "[$1] no policy at $DEFAULT_POLICY (no config.json): falling back to the tiny random model"
    fi
    TINY_MODEL_DIR="${TINY_MODEL_DIR:-$ROOT/saves/tiny_model}"
    "$PYTHON" -m verl.utils.tiny_model --out "$TINY_MODEL_DIR"
    MODEL_PATH="$TINY_MODEL_DIR"
  fi
}

run_job() {
  local task="$1" kind="$2" port module
  shift 2
  case "$task" in
    webshop) port=36001 ;;
    webarena) port=36005 ;;
    *) echo "run_job: unknown task $task" >&2; return 2 ;;
  esac
  case "$kind" in
    train) module=verl.agent_trainer.main_ppo ;;
    eval) module=verl.agent_trainer.main_generation ;;
    *) echo "run_job: unknown kind $kind" >&2; return 2 ;;
  esac
  job_profile "$task" "$port"
  if [[ "$kind" == train ]]; then EXPERIMENT="${EXPERIMENT:-${task}_grpo_${PROFILE}}"; fi
  "ensure_${task}_server" "$ENV_ADDR" "${task}_${kind}"
  job_model "${task}_${kind}"
  OVERRIDES=()
  read_overrides "$ROOT/scripts/profiles/${task}_${kind}.args" "$ROOT/scripts/profiles/${task}_${kind}_${PROFILE}.args"
  if declare -F job_overrides >/dev/null; then job_overrides; fi
  OVERRIDES+=("$@")
  merge_overrides
  echo "[${task}_${kind}] profile=$PROFILE${EXPERIMENT:+ experiment=$EXPERIMENT}; $module with (profile and command line" \
       "merged, each key once):"
  printf '    %s\n' "${OVERRIDES[@]}"
  "$PYTHON" -m "$module" "${OVERRIDES[@]}"
}
