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
#    demonstrations, forward in bfloat16 autocast, in two stages: SFT_STEPS at lr 1e-3 (cosine) into
#    SFT_DIR.stage1, then SFT_STAGE2_STEPS more from there at SFT_STAGE2_LR (a warm restart, fresh optimizer) into
#    SFT_DIR (SFT_STAGE2_STEPS=0: one stage, straight into SFT_DIR). The second stage is where a 5M model learns to
#    copy the instruction's words; product ids it recalls by heart rather than copies from the page
#    (bench/webshop_copy_probe.py, bench/RESULTS.md, sections P and P4). `actor_rollout_ref.model.path`
#    (training) or `model.path` (evaluation) can point to SFT_DIR. A killed run resumes from its last checkpoint
#    (every 100 steps); a finished stage is skipped, and stages 2-3 when SFT_DIR holds a finished run.
# 4. (EVAL=1) held-out evaluation on the first EVAL_ITEMS goals of AgentItemId/webshop_test.json with the
#    settings of the CPU training profile's learning report (5 turns, 96 tokens per turn): greedy, and
#    EVAL_SAMPLES samples per goal at temperature 1 (pass@k: GRPO needs reward variance within a group);
#    results in SFT_DIR.eval/{greedy,sampled}.
# 5. The model card SFT_DIR/README.md (python -m verl.utils.model_card): command, data, steps, time, held-out
#    numbers. SHIP_DIR (e.g. agentenv_webshop/sft_policy) also gets a copy of the model and its card.
# The shipped policy (agentenv_webshop/sft_policy) is this command with its defaults and
# SHIP_DIR=agentenv_webshop/sft_policy: on a 2-core CPU the two stages take 99 + 77 min of training and reach 47%
# greedy success on the 200 held-out goals (0.5% after the first stage alone; bench/RESULTS.md, section P).
# With MODEL_PATH (a pretrained model, e.g. SmolLM2-135M-Instruct from `bash scripts/fetch_smollm2.sh`) step 2 is
# skipped and step 3 is one fine-tuning stage: SFT_STEPS=400 (about one pass over the ~6k demos at 16 a step) at
# SFT_LR=2e-5, SFT_STAGE2_STEPS=0; on a GPU (device auto) that is ~2 min (H100, this model shape). Checkpoints
# every 100 steps:
# a run cut short (a short GPU session) resumes when the same command runs again.
# Every extra argument is a Hydra override of main_sft and wins over the defaults below.
# Environment: PYTHON, MODEL_PATH, DEMOS (default saves/sft/webshop_demos.json), NUM_DEMOS (default: all),
#   CLICK_AS_SHOWN (default 1), SFT_DIR (default saves/sft/webshop_policy), SFT_STEPS (default 800; 400 with
#   MODEL_PATH), SFT_LR (first stage; default 1e-3, 2e-5 with MODEL_PATH),
#   SFT_STAGE2_STEPS (default 800; 0 with MODEL_PATH), SFT_STAGE2_LR (default 5e-4),
#   POLICY_DIR (default saves/sft/webshop_policy_init), POLICY_SIZES (tiny_model size flags), POLICY_VOCAB (4096),
#   EVAL (default 1), EVAL_ITEMS (200), EVAL_SAMPLES (4), SHIP_DIR (default: none),
#   PERMUTED_COPIES (default 0): train on the demos plus that many product-id-permuted copies of each
#   (python -m agentenv_webshop.demo_augment; ids can then only be copied from the page, not recalled);
#   PERMUTED_ONLY=1 drops the originals (only permuted copies: recalling an id never pays); CHOICE_ROWS=1 cuts
#   every row after its first product click (demo_augment --until-product-click: the results-page choice, the
#   curriculum that teaches a 5M policy to copy ids from the page, bench/RESULTS.md, section P5).
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
if [[ -n "${MODEL_PATH:-}" ]]; then  # a pretrained model: one fine-tuning stage at a fine-tuning lr
  SFT_STEPS="${SFT_STEPS:-400}" SFT_STAGE2_STEPS="${SFT_STAGE2_STEPS:-0}" SFT_LR="${SFT_LR:-2e-5}"
else  # the 5M policy built from scratch (step 2): two stages at a from-scratch lr
  SFT_STEPS="${SFT_STEPS:-800}" SFT_STAGE2_STEPS="${SFT_STAGE2_STEPS:-800}" SFT_LR="${SFT_LR:-1e-3}"
fi
SFT_STAGE2_LR="${SFT_STAGE2_LR:-5e-4}"
POLICY_DIR="${POLICY_DIR:-$ROOT/saves/sft/webshop_policy_init}"
POLICY_VOCAB="${POLICY_VOCAB:-4096}"
EVAL="${EVAL:-1}"
EVAL_ITEMS="${EVAL_ITEMS:-200}"
EVAL_SAMPLES="${EVAL_SAMPLES:-4}"
SHIP_DIR="${SHIP_DIR:-}"
PERMUTED_COPIES="${PERMUTED_COPIES:-0}"
PERMUTED_ONLY="${PERMUTED_ONLY:-0}"
CHOICE_ROWS="${CHOICE_ROWS:-0}"
POLICY_SIZES="${POLICY_SIZES:---hidden-size 256 --num-layers 4 --num-heads 4 --num-kv-heads 2 --intermediate-size 768}"
if [[ ( "$PERMUTED_ONLY" == 1 || "$CHOICE_ROWS" == 1 ) && "$PERMUTED_COPIES" -lt 1 ]]; then
  echo "[webshop_sft] PERMUTED_ONLY=1 and CHOICE_ROWS=1 need PERMUTED_COPIES >= 1 (the permuted copies to train on)" >&2
  exit 2
fi

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

if [[ -f "$SFT_DIR/sft_metrics.json" ]]; then
  echo "[webshop_sft] $SFT_DIR holds a finished SFT run (remove it to train again)"
elif [[ -z "${MODEL_PATH:-}" && ! -f "$SFT_DIR.stage1/sft_metrics.json" ]]; then
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
fi

TRAIN_DEMOS="$DEMOS"
if [[ "$PERMUTED_COPIES" -gt 0 ]]; then
  AUGMENT_ARGS=(--copies "$PERMUTED_COPIES")
  TRAIN_DEMOS="${DEMOS%.json}.perm$PERMUTED_COPIES.json"
  if [[ "$PERMUTED_ONLY" == 1 ]]; then
    AUGMENT_ARGS+=(--no-originals)
    TRAIN_DEMOS="${DEMOS%.json}.permonly$PERMUTED_COPIES.json"
  fi
  if [[ "$CHOICE_ROWS" == 1 ]]; then
    AUGMENT_ARGS+=(--until-product-click)
    TRAIN_DEMOS="${TRAIN_DEMOS%.json}.choices.json"
  fi
  if [[ ! -s "$TRAIN_DEMOS" ]]; then
    "$PYTHON" -m agentenv_webshop.demo_augment "$DEMOS" "$TRAIN_DEMOS" "${AUGMENT_ARGS[@]}"
  fi
fi

# one main_sft run: sft_stage INIT_DIR OUT_DIR STEPS LR [hydra overrides...] (skipped when OUT_DIR is finished)
sft_stage() {
  local init="$1" out="$2" steps="$3" lr="$4"
  shift 4
  if [[ -f "$out/sft_metrics.json" ]]; then
    return 0
  fi
  echo "[webshop_sft] SFT of $init on $TRAIN_DEMOS: $steps steps, lr $lr -> $out"
  "$PYTHON" -m verl.agent_trainer.main_sft \
    data.train_file="$TRAIN_DEMOS" \
    data.micro_batch_size=8 \
    data.train_batch_size=16 \
    model.path="$init" \
    model.dtype=float32 \
    trainer.autocast_dtype=bfloat16 \
    optim.lr="$lr" \
    optim.lr_scheduler_type=cosine \
    optim.warmup_steps_ratio=0.03 \
    optim.min_lr_ratio=0.1 \
    trainer.total_training_steps="$steps" \
    trainer.default_local_dir="$out" \
    trainer.save_freq=100 \
    trainer.log_freq=50 \
    "$@"
}

if [[ ! -f "$SFT_DIR/sft_metrics.json" ]]; then
  MODEL_PATH="${MODEL_PATH:-$POLICY_DIR}"
  if [[ "$SFT_STAGE2_STEPS" -gt 0 ]]; then
    sft_stage "$MODEL_PATH" "$SFT_DIR.stage1" "$SFT_STEPS" "$SFT_LR" "$@"
    sft_stage "$SFT_DIR.stage1" "$SFT_DIR" "$SFT_STAGE2_STEPS" "$SFT_STAGE2_LR" "$@"
  else
    sft_stage "$MODEL_PATH" "$SFT_DIR" "$SFT_STEPS" "$SFT_LR" "$@"
  fi
fi

CARD_ARGS=(--command "bash scripts/webshop_sft.sh")
if [[ "$EVAL" == 1 ]]; then
  # the CPU training profile's learning-report settings (scripts/profiles/webshop_train_cpu_policy.args)
  EVAL_OVERRIDES=(data.max_items="$EVAL_ITEMS" rollout.max_tokens=96 rollout.max_model_len=5120
                  data.max_response_length=4096 agentgym.max_rounds=5 data.batch_size=200)
  echo "[webshop_sft] greedy evaluation on $EVAL_ITEMS held-out goals -> $SFT_DIR.eval/greedy"
  PYTHON="$PYTHON" MODEL_PATH="$SFT_DIR" bash "$ROOT/scripts/webshop_eval.sh" "${EVAL_OVERRIDES[@]}" \
    rollout.temperature=0 data.n_samples=1 data.output_path="$SFT_DIR.eval/greedy"
  echo "[webshop_sft] sampled evaluation (temperature 1, $EVAL_SAMPLES per goal) -> $SFT_DIR.eval/sampled"
  PYTHON="$PYTHON" MODEL_PATH="$SFT_DIR" bash "$ROOT/scripts/webshop_eval.sh" "${EVAL_OVERRIDES[@]}" \
    rollout.temperature=1.0 data.n_samples="$EVAL_SAMPLES" data.output_path="$SFT_DIR.eval/sampled"
  CARD_ARGS+=(--greedy-eval "$SFT_DIR.eval/greedy/metrics.json" --sampled-eval "$SFT_DIR.eval/sampled/metrics.json")
fi
"$PYTHON" -m verl.utils.model_card "$SFT_DIR" "${CARD_ARGS[@]}"
if [[ -n "$SHIP_DIR" ]]; then
  "$PYTHON" -m verl.utils.model_card "$SFT_DIR" "${CARD_ARGS[@]}" --copy-to "$SHIP_DIR"
fi
