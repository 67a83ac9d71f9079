#!/usr/bin/env bash
# Does what GRPO learns on some goals carry over to others? (a transfer diagnostic)
#
# Splits GOALS_FILE (default: the 200 held-out goals, AgentItemId/webshop_test.json, which the SFT policy never
# saw) into two seeded halves A and B, runs the README's main job (scripts/webshop_train.sh, CPU policy profile)
# with GRPO on A and its learning report on B, then evaluates the SFT policy and the final GRPO policy greedily on
# A with the learning report's settings, and prints success / mean reward on A (trained on) and B (not trained on)
# before and after. A gain on A without one on B means the policy learns goal-specific behaviour.
# Usage: `bash bench/webshop_rl_transfer.sh [hydra overrides for the training job]`; SEED (default 1: the split,
# data, rollout and trainer seed), GOALS_FILE, OUT_DIR (default saves/grpo/transfer_seed$SEED), POLICY_DIR /
# MODEL_PATH as for scripts/webshop_train.sh. ~30 min on 2 CPU cores (bench/RESULTS.md, section P7).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" && cd "$ROOT"
source "$ROOT/scripts/lib/env_server.sh"
pick_python "$ROOT"
SEED="${SEED:-1}"
GOALS_FILE="${GOALS_FILE:-AgentItemId/webshop_test.json}"
OUT_DIR="${OUT_DIR:-$ROOT/saves/grpo/transfer_seed$SEED}"
SPLIT_DIR="$OUT_DIR.goals" EVAL_DIR="$OUT_DIR.eval"
mkdir -p "$SPLIT_DIR" "$EVAL_DIR"

"$PYTHON" - "$GOALS_FILE" "$SEED" "$SPLIT_DIR" <<'PY'
import json, random, sys
path, seed, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
items = json.load(open(path, encoding="utf-8"))
order = list(range(len(items)))
random.Random(seed).shuffle(order)
half = len(items) // 2
for name, part in (("A", order[:half]), ("B", order[half:])):
    json.dump([items[i] for i in sorted(part)], open(f"{out}/{name}.json", "w", encoding="utf-8"))
print(f"[rl_transfer] {path}: {half} goals in A (GRPO), {len(items) - half} in B -> {out}")
PY
N_B="$("$PYTHON" -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$SPLIT_DIR/B.json")"

if [[ ! -f "$OUT_DIR/learning_report.json" ]]; then
  bash scripts/webshop_train.sh trainer.default_local_dir="$OUT_DIR" \
    data.train_file="$SPLIT_DIR/A.json" data.val_file="$SPLIT_DIR/B.json" data.val_max_items="$N_B" \
    data.seed="$SEED" actor_rollout_ref.rollout.seed="$SEED" trainer.seed="$SEED" "$@"
fi
STEP="$(cat "$OUT_DIR/latest_checkpointed_iteration.txt")"
SFT_MODEL="$("$PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))['model_path'])" "$OUT_DIR/learning_report.json")"

# greedy on A with the settings the learning report validated B with, read from the run's saved config (so
# training overrides that change decoding, e.g. copy_only_tokens=null or more turns, apply to A as well)
mapfile -t EVAL_ARGS < <("$PYTHON" - "$OUT_DIR/logs/config.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1], encoding="utf-8"))
rollout, data = config["actor_rollout_ref"]["rollout"], config["data"]
pattern = rollout["copy_only_tokens"]
print("\n".join([
    f"rollout.max_tokens={rollout['max_tokens']}", f"rollout.max_model_len={rollout['max_model_len']}",
    "rollout.max_concurrency=" + ("null" if rollout["max_concurrency"] is None else str(rollout["max_concurrency"])),
    f"rollout.stop_at_action_end={rollout.get('stop_at_action_end', True)}",
    f"agentgym.max_rounds={config['actor_rollout_ref']['agentgym']['max_rounds']}",
    f"data.max_prompt_length={data['max_prompt_length']}", f"data.max_response_length={data['max_response_length']}",
    "rollout.copy_only_tokens=" + ("null" if pattern is None else f"'{pattern}'")]))
PY
)
eval_on_a() {
  local model="$1" out="$2"
  [[ -f "$out/metrics.json" ]] && return 0
  MODEL_PATH="$model" bash scripts/webshop_eval.sh data.path="$SPLIT_DIR/A.json" data.max_items=100000 \
    data.batch_size=200 rollout.temperature=0 data.n_samples=1 "${EVAL_ARGS[@]}" data.output_path="$out"
}
eval_on_a "$SFT_MODEL" "$EVAL_DIR/sft_on_A"
eval_on_a "$OUT_DIR/global_step_$STEP/actor/huggingface" "$EVAL_DIR/grpo_on_A"

"$PYTHON" - "$OUT_DIR" "$EVAL_DIR" "$STEP" <<'PY'
import json, sys
out, ev, step = sys.argv[1:]
report = json.load(open(f"{out}/learning_report.json"))
def cell(m):
    lo, hi = m["success_ci95"]
    return f"{100 * m['success_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}], reward {m['mean_reward']:.3f}"
on_a = {k: json.load(open(f"{ev}/{k}_on_A/metrics.json"))["overall"] for k in ("sft", "grpo")}
print(f"| policy | A: GRPO goals ({on_a['sft']['num_items']}) | B: other goals ({report['n_goals']}) |")
print("|---|---|---|")
print(f"| SFT | {cell(on_a['sft'])} | {cell(report['before'])} |")
print(f"| GRPO step {step} | {cell(on_a['grpo'])} | {cell(report['after'])} |")
PY
