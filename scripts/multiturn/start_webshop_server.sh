#!/usr/bin/env bash
# Start the webshop env server for the interaction recipe (port PORT, default 36003); extra args are server flags.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)" && cd "$ROOT"
source "$ROOT/scripts/multiturn/lib.sh"
run_server webshop "$@"
