#!/usr/bin/env bash
# The WebShop SFT policy: `bash scripts/webshop_sft.sh [hydra.key=value ...]`.
#
# 1. Demonstrations: AgentTraj-style conversations (Thought:/Action: turns after the client's ReAct prompt) of
#    the expert policy (agentenv_webshop.expert) on the train item ids of AgentItemId/webshop_train.json (all of
#    them unless NUM_DEMOS is set), in process (no server); only successful episodes are kept. Products are
#    clicked by their id as the page shows it (CLICK_AS_SHOWN=1, the env accepts both cases). Skipped when
#    DEMOS exists.
# 2. The policy model (skipped when MODEL_PATH is given): a byte-level BPE tokenizer trained on the
#    demonstrations' text, with every catalog product id as one token (a small model garbles ids split into
#    pieces), and a randomly initialised Qwen2-style model of POLICY_SIZES (python -m verl.utils.tiny_model).
# 3. `python -m verl.agent_trainer.main_sft` (config verl/agent_trainer/config/sft_trainer.yaml) on the
#    demonstrations; the HF model goes to SFT_DIR, which `actor_rollout_ref.model.path` (training) or
#    `model.path` (evaluation) can point to. A killed run resumes from its last checkpoint (every 200 steps).
# The shipped policy (agentenv_webshop/sft_policy, see its README.md) is this command with its defaults, run on
# one GPU (auto-detected); on a 2-core CPU the same run takes hours (it resumes across sessions).
# Every extra argument is a Hydra override of main_sft and wins over the defaults below.
# Environment: PYTHON, MODEL_PATH, DEMOS (default saves/sft/webshop_demos.json), NUM_DEMOS (default: all),
#   CLICK_AS_SHOWN (default 1), SFT_DIR (default saves/sft/webshop_policy), SFT_STEPS (default 1000),
#   POLICY_DIR (default saves/sft/webshop_policy_init), POLICY_SIZES (tiny_model size flags), POLICY_VOCAB (4096).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source "$ROOT/scripts/lib/env_server.sh"
pick_python "$ROOT"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false HYDRA_FULL_ERROR=1

DEMOS="${DEMOS:-$ROOT/saves/sft/webshop_demos.json}"
NUM_DEMOS="${NUM_DEMOS:-0}"
CLICK_AS_SHOWN="${CLICK_AS_SHOWN:-1}"
SFT_DIR="${SFT_DIR:-$ROOT/saves/sft/webshop_policy}"
SFT_STEPS="${SFT_STEPS:-1000}"
POLICY_DIR="${POLICY_DIR:-$ROOT/saves/sft/webshop_policy_init}"
POLICY_VOCAB="${POLICY_VOCAB:-4096}"
POLICY_SIZES="${POLICY_SIZES:---hidden-size 384 --num-layers 6 --num-heads 6 --num-kv-heads 2 --intermediate-size 1024}"

if [[ ! -s "$DEMOS" ]]; then
  echo "[webshop_sft] writing expert demonstrations (NUM_DEMOS=$NUM_DEMOS, 0 = all train ids) to $DEMOS"
  mkdir -p "$(dirname "$DEMOS")"
  "$PYTHON" - "$DEMOS" "$NUM_DEMOS" "$CLICK_AS_SHOWN" <<'PY'
import json, os, sys
from agentenv_webshop.environment import WebshopSession, WebshopWorld
from agentenv_webshop.expert import ExpertPolicy, SessionEnv, to_conversation
from verl.utils.dataset import load_item_id_file

out, num, as_shown = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
world = WebshopWorld.load()
env, policy = SessionEnv(WebshopSession(world)), ExpertPolicy(click_as_shown=as_shown)
rows = [r for r in load_item_id_file("AgentItemId/webshop_train.json", "item_id") if r["task_name"] == "webshop"]
rows = rows[:num] if num > 0 else rows
episodes = [policy.play(env, int(r["index"]), world.goals[int(r["index"])]) for r in rows]
demos = [to_conversation(e) for e in episodes if e.success]
with open(out + ".tmp", "w", encoding="utf-8") as fh:
    json.dump(demos, fh)
os.replace(out + ".tmp", out)
print(f"[webshop_sft] {len(demos)}/{len(episodes)} successful expert episodes -> {out}")
PY
fi

if [[ -z "${MODEL_PATH:-}" ]]; then
  echo "[webshop_sft] policy model ($POLICY_SIZES, BPE $POLICY_VOCAB + product ids) -> $POLICY_DIR"
  mkdir -p "$POLICY_DIR.data"
  "$PYTHON" - "$DEMOS" "$POLICY_DIR.data" <<'PY'
import json, sys
from agentenv_webshop.environment import WebshopWorld

demos, out = sys.argv[1], sys.argv[2]
with open(demos, encoding="utf-8") as fh, open(f"{out}/corpus.txt", "w", encoding="utf-8") as corpus:
    for row in json.load(fh):
        for turn in row["conversations"]:
            corpus.write(turn["value"].replace("\n", "\\n") + "\n")
with open(f"{out}/product_ids.txt", "w", encoding="utf-8") as ids:
    ids.writelines(sorted(a + "\n" for a in WebshopWorld.load().by_asin))
PY
  # shellcheck disable=SC2086
  "$PYTHON" -m verl.utils.tiny_model --out "$POLICY_DIR" --vocab-size "$POLICY_VOCAB" $POLICY_SIZES \
    --corpus "$POLICY_DIR.data/corpus.txt" --whole-tokens "$POLICY_DIR.data/product_ids.txt" >/dev/null
  MODEL_PATH="$POLICY_DIR"
fi

echo "[webshop_sft] SFT of $MODEL_PATH on $DEMOS -> $SFT_DIR"
"$PYTHON" -m verl.agent_trainer.main_sft \
  data.train_file="$DEMOS" \
  data.micro_batch_size=16 \
  data.train_batch_size=32 \
  model.path="$MODEL_PATH" \
  model.dtype=float32 \
  optim.lr=1e-3 \
  optim.lr_scheduler_type=cosine \
  optim.warmup_steps_ratio=0.03 \
  optim.min_lr_ratio=0.1 \
  trainer.total_training_steps="$SFT_STEPS" \
  trainer.default_local_dir="$SFT_DIR" \
  trainer.save_freq=200 \
  trainer.log_freq=50 \
  "$@"
