#!/usr/bin/env bash
# Supervised warm start on WebShop expert demonstrations: `bash scripts/webshop_sft.sh [hydra.key=value ...]`.
#
# 1. Writes AgentTraj-style demonstrations (Thought:/Action: turns after the client's ReAct prompt) of the
#    expert policy (agentenv_webshop.expert) on the first NUM_DEMOS train item ids of
#    AgentItemId/webshop_train.json, in process (no server needed); only successful episodes are kept.
#    Skipped when DEMOS already exists.
# 2. Runs `python -m verl.agent_trainer.main_sft` (config verl/agent_trainer/config/sft_trainer.yaml) from
#    MODEL_PATH (default: the tiny model, python -m verl.utils.tiny_model) and saves the HF model to SFT_DIR,
#    which `actor_rollout_ref.model.path` (training) or `model.path` (evaluation) can point to.
# Every extra argument is a Hydra override of main_sft and wins over the defaults below.
# Environment: PYTHON, MODEL_PATH, TINY_MODEL_DIR, DEMOS (default saves/sft/webshop_demos.json),
#   NUM_DEMOS (default 2000), SFT_DIR (default saves/sft/webshop_tiny), SFT_STEPS (default 1200).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source "$ROOT/scripts/lib/env_server.sh"
pick_python "$ROOT"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false HYDRA_FULL_ERROR=1

DEMOS="${DEMOS:-$ROOT/saves/sft/webshop_demos.json}"
NUM_DEMOS="${NUM_DEMOS:-2000}"
SFT_DIR="${SFT_DIR:-$ROOT/saves/sft/webshop_tiny}"
SFT_STEPS="${SFT_STEPS:-1200}"
if [[ -z "${MODEL_PATH:-}" ]]; then
  TINY_MODEL_DIR="${TINY_MODEL_DIR:-$ROOT/saves/tiny_model}"
  "$PYTHON" -m verl.utils.tiny_model --out "$TINY_MODEL_DIR" >/dev/null
  MODEL_PATH="$TINY_MODEL_DIR"
fi

if [[ ! -s "$DEMOS" ]]; then
  echo "[webshop_sft] writing expert demonstrations for $NUM_DEMOS train items to $DEMOS"
  mkdir -p "$(dirname "$DEMOS")"
  "$PYTHON" - "$DEMOS" "$NUM_DEMOS" <<'PY'
import json, os, sys
from agentenv_webshop.environment import WebshopSession, WebshopWorld
from agentenv_webshop.expert import ExpertPolicy, SessionEnv, to_conversation
from verl.utils.dataset import load_item_id_file

out, num = sys.argv[1], int(sys.argv[2])
world = WebshopWorld.load()
env, policy = SessionEnv(WebshopSession(world)), ExpertPolicy()
rows = [r for r in load_item_id_file("AgentItemId/webshop_train.json", "item_id") if r["task_name"] == "webshop"][:num]
episodes = [policy.play(env, int(r["index"]), world.goals[int(r["index"])]) for r in rows]
demos = [to_conversation(e) for e in episodes if e.success]
with open(out + ".tmp", "w", encoding="utf-8") as fh:
    json.dump(demos, fh)
os.replace(out + ".tmp", out)
print(f"[webshop_sft] {len(demos)}/{len(episodes)} successful expert episodes -> {out}")
PY
fi

echo "[webshop_sft] SFT of $MODEL_PATH on $DEMOS -> $SFT_DIR"
"$PYTHON" -m verl.agent_trainer.main_sft \
  data.train_file="$DEMOS" \
  model.path="$MODEL_PATH" \
  trainer.total_training_steps="$SFT_STEPS" \
  trainer.default_local_dir="$SFT_DIR" \
  trainer.log_freq=50 \
  "$@"
