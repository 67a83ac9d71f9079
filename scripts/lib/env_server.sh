# Shared shell helpers for scripts/*.sh: pick the Python, and start an env server (WebShop or
# WebArena) when nothing answers at an address (stopping it again when the calling script exits).
#
# Usage (after `set -euo pipefail` and `cd "$ROOT"`):
#   source "$ROOT/scripts/lib/env_server.sh"
#   pick_python "$ROOT"                      # sets PYTHON (env PYTHON, else $ROOT/.venv/bin/python, else python)
#   ensure_webshop_server "$ENV_ADDR" tag    # reuse or start `python -m agentenv_webshop.launch`
#   ensure_webarena_server "$ENV_ADDR" tag   # reuse or start `python -m agentenv_webarena.launch`
# Environment: WEBSHOP_ARGS / WEBARENA_ARGS (extra server flags). Installs an EXIT/INT/TERM trap that
# stops the server it started.

pick_python() {
  if [[ -z "${PYTHON:-}" && -x "$1/.venv/bin/python" ]]; then PYTHON="$1/.venv/bin/python"; fi
  PYTHON="${PYTHON:-python}"
}

# Exit status 0 when `GET <url>/` answers 200 (`agentenv.health`, the probe every caller uses).
env_server_answers() { "$PYTHON" -m agentenv.health "$1"; }

ENV_SERVER_PID=""
ENV_SERVER_TAG="env_server"
ENV_SERVER_NAME="env"
stop_env_server() {
  if [[ -n "$ENV_SERVER_PID" ]] && kill -0 "$ENV_SERVER_PID" 2>/dev/null; then
    echo "[$ENV_SERVER_TAG] stopping $ENV_SERVER_NAME server (pid $ENV_SERVER_PID)"
    kill "$ENV_SERVER_PID" 2>/dev/null || true
    wait "$ENV_SERVER_PID" 2>/dev/null || true
  fi
}

# ensure_env_server NAME MODULE ADDR TAG [FLAGS...]: use the server at ADDR, or start
# `python -m MODULE --host H --port P FLAGS...` there (waits up to 180 s).
ensure_env_server() {
  local name="$1" module="$2" addr="$3"
  ENV_SERVER_NAME="$name"
  ENV_SERVER_TAG="${4:-env_server}"
  shift 4
  if env_server_answers "$addr"; then
    echo "[$ENV_SERVER_TAG] using the $name server at $addr"
    return 0
  fi
  local hostport host port
  hostport="${addr#*://}"; hostport="${hostport%%/*}"
  host="${hostport%%:*}"; port="${hostport##*:}"
  echo "[$ENV_SERVER_TAG] starting $name server on $host:$port"
  trap stop_env_server EXIT INT TERM
  "$PYTHON" -m "$module" --host "$host" --port "$port" "$@" &
  ENV_SERVER_PID=$!
  for _ in $(seq 1 90); do  # 90 x 2 s of waiting
    "$PYTHON" -m agentenv.health "$addr" --wait 2 2>/dev/null && return 0
    kill -0 "$ENV_SERVER_PID" 2>/dev/null || { echo "[$ENV_SERVER_TAG] $name server exited early" >&2; exit 1; }
  done
  echo "[$ENV_SERVER_TAG] $name server did not answer at $addr within 180 s" >&2
  exit 1
}

# ensure_webshop_server ADDR [TAG]: the WebShop server (flags from WEBSHOP_ARGS).
ensure_webshop_server() {
  # shellcheck disable=SC2086  # WEBSHOP_ARGS is a list of flags
  ensure_env_server WebShop agentenv_webshop.launch "$1" "${2:-env_server}" ${WEBSHOP_ARGS:-}
}

# ensure_webarena_server ADDR [TAG]: the WebArena server, which starts the embedded sites itself
# unless SHOPPING / REDDIT / ... are exported (flags from WEBARENA_ARGS). Before starting one it checks
# that Playwright and Chromium are installed (`launch --check-browser`: one line and exit 1 if not).
ensure_webarena_server() {
  if ! env_server_answers "$1"; then
    # shellcheck disable=SC2086  # WEBARENA_ARGS is a list of flags
    "$PYTHON" -m agentenv_webarena.launch --check-browser ${WEBARENA_ARGS:-} >/dev/null || exit 1
  fi
  # shellcheck disable=SC2086  # WEBARENA_ARGS is a list of flags
  ensure_env_server WebArena agentenv_webarena.launch "$1" "${2:-env_server}" ${WEBARENA_ARGS:-}
}
