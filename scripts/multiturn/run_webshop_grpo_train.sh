#!/usr/bin/env bash
# verl interaction recipe on webshop, batch 128, n 4, 15 epochs: `bash scripts/multiturn/run_webshop_grpo_train.sh [key=value ...]`
# (see scripts/multiturn/lib.sh for the environment variables and the output layout).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)" && cd "$ROOT"
source "$ROOT/scripts/multiturn/lib.sh"
run_recipe webshop train "$@"
