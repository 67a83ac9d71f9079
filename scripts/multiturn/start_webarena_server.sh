#!/usr/bin/env bash
# Start the webarena env server for the interaction recipe (port PORT, default 36005); extra args are server flags.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)" && cd "$ROOT"
source "$ROOT/scripts/multiturn/lib.sh"
run_server webarena "$@"
