# Shared shell helpers for scripts/*.sh: pick the Python, and start the WebShop server when nothing
# answers at an address (stopping it again when the calling script exits).
#
# Usage (after `set -euo pipefail` and `cd "$ROOT"`):
#   source "$ROOT/scripts/lib/env_server.sh"
#   pick_python "$ROOT"                      # sets PYTHON (env PYTHON, else $ROOT/.venv/bin/python, else python)
#   ensure_webshop_server "$ENV_ADDR" tag    # reuse or start `python -m agentenv_webshop.launch`
# Environment: WEBSHOP_ARGS (extra server flags). Installs an EXIT/INT/TERM trap that stops the
# server it started.

pick_python() {
  if [[ -z "${PYTHON:-}" && -x "$1/.venv/bin/python" ]]; then PYTHON="$1/.venv/bin/python"; fi
  PYTHON="${PYTHON:-python}"
}

# Exit status 0 when `GET <url>/` answers below HTTP 500.
env_server_answers() { "$PYTHON" - "$1" <<'PY'
import sys, requests
try:
    sys.exit(0 if requests.get(sys.argv[1].rstrip("/") + "/", timeout=2).status_code < 500 else 1)
except requests.RequestException:
    sys.exit(1)
PY
}

ENV_SERVER_PID=""
ENV_SERVER_TAG="env_server"
stop_env_server() {
  if [[ -n "$ENV_SERVER_PID" ]] && kill -0 "$ENV_SERVER_PID" 2>/dev/null; then
    echo "[$ENV_SERVER_TAG] stopping WebShop server (pid $ENV_SERVER_PID)"
    kill "$ENV_SERVER_PID" 2>/dev/null || true
    wait "$ENV_SERVER_PID" 2>/dev/null || true
  fi
}

# ensure_webshop_server ADDR [TAG]: use the server at ADDR, or start one there (waits up to 120 s).
ensure_webshop_server() {
  local addr="$1"
  ENV_SERVER_TAG="${2:-env_server}"
  if env_server_answers "$addr"; then
    echo "[$ENV_SERVER_TAG] using the WebShop server at $addr"
    return 0
  fi
  local hostport host port
  hostport="${addr#*://}"; hostport="${hostport%%/*}"
  host="${hostport%%:*}"; port="${hostport##*:}"
  echo "[$ENV_SERVER_TAG] starting WebShop server on $host:$port"
  trap stop_env_server EXIT INT TERM
  # shellcheck disable=SC2086  # WEBSHOP_ARGS is a list of flags
  "$PYTHON" -m agentenv_webshop.launch --host "$host" --port "$port" ${WEBSHOP_ARGS:-} &
  ENV_SERVER_PID=$!
  for _ in $(seq 1 240); do
    env_server_answers "$addr" && return 0
    kill -0 "$ENV_SERVER_PID" 2>/dev/null || { echo "[$ENV_SERVER_TAG] WebShop server exited early" >&2; exit 1; }
    sleep 0.5
  done
  echo "[$ENV_SERVER_TAG] WebShop server did not answer at $addr within 120 s" >&2
  exit 1
}
