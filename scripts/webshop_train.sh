#!/usr/bin/env bash
# Train a WebShop agent with GRPO: `bash scripts/webshop_train.sh [hydra.key=value ...]`.
#
# Starts the WebShop server (python -m agentenv_webshop.launch) when nothing answers at ENV_ADDR
# (default http://127.0.0.1:36001) and stops it on exit; then runs `python -m verl.agent_trainer.main_ppo`
# with the overrides of scripts/profiles/webshop_train{,_cpu,_gpu}.args:
#   * no GPU -> CPU profile: the shipped SFT policy (POLICY_DIR, default agentenv_webshop/sft_policy; its
#     longer turns: webshop_train_cpu_policy.args), or the tiny random model (python -m verl.utils.tiny_model)
#     while none is there; HF engine, 4 prompts x 2 samples, 4 steps (the SFT policy: 8 goals x 8 samples, 12
#     steps, a KL term to the SFT policy, one step off-policy); it trains on a fixed set of 32 training goals the
#     SFT policy solves sometimes but at most half the time (AgentItemId/webshop_train_learnable32_max50.json),
#     each visited 3 times by the SFT policy's 12 steps;
#   * GPUs   -> GPU profile: MODEL_PATH (default ~/models/Qwen2.5-3B-Instruct), vLLM, GRPO n=8.
# Both profiles write a learning report (trainer.learning_report): greedy success and mean reward with 95%
# CIs on the held-out goals of AgentItemId/webshop_test.json (data.val_max_items) before the first and after
# the last GRPO step, and (CPU) on the trained goals (data.trained_val_file) and control goals of the same rule
# that training never visits (data.control_val_file), each with the paired 95% CI of the change, trained minus
# control, and the log-likelihood of the expert's actions on 100 held-out goals (EXPERT_PROBE_GOALS; written to
# saves/expert_probe/ by python -m agentenv_webshop.expert), printed as a table and saved as
# <trainer.default_local_dir>/learning_report.json; plots of the run's metrics (per-step curves with a moving
# average, GRPO's health) and of the report go to <trainer.default_local_dir>/logs/plots.
# Every extra argument is a Hydra override and wins over the profile (it comes last); the job prints the merged
# overrides, each key once with the value it runs with (scripts/lib/job.sh). The profile's data.trained_val_file
# follows data.train_file; the report's files are not read with trainer.learning_report=False.
# Environment: see scripts/lib/job.sh; MODEL_PATH (any HF dir, wins over POLICY_DIR); WARM_START=1 (opt-in):
#   start GRPO from a supervised warm start of MODEL_PATH on expert demonstrations (scripts/webshop_sft.sh, cached
#   in SFT_DIR, default saves/sft/webshop_tiny on CPU, saves/sft/webshop_gpu on GPU; a finished SFT is reused, a
#   killed one resumes) instead; GPU_LEARNING=1 (GPU profile): the learning profile for a small pretrained policy
#   (scripts/profiles/webshop_train_gpu_learning.args: 32 goals x 8 samples, 5 turns, 20 steps, a checkpoint every
#   5 steps). SmolLM2-135M-Instruct end to end, resumable across short GPU sessions (rerun the same line):
#     bash scripts/fetch_smollm2.sh saves/models/smollm2-135m-instruct
#     MODEL_PATH=saves/models/smollm2-135m-instruct WARM_START=1 GPU_LEARNING=1 bash scripts/webshop_train.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" && cd "$ROOT"
source "$ROOT/scripts/lib/job.sh"
DEFAULT_POLICY="${POLICY_DIR:-$ROOT/agentenv_webshop/sft_policy}"

job_overrides() {
  # the learning report's expert probe: the expert's demonstrations of the first EXPERT_PROBE_GOALS held-out goals
  # (in process, ~2 s), whose log-likelihood under the policy the report measures before and after
  local probe="$ROOT/saves/expert_probe/webshop_test${EXPERT_PROBE_GOALS:-100}.json"
  mkdir -p "$(dirname "$probe")"
  "$PYTHON" -m agentenv_webshop.expert --item-ids "$ROOT/AgentItemId/webshop_test.json" \
    --num-goals "${EXPERT_PROBE_GOALS:-100}" --demos-out "$probe" >/dev/null 2>&1 ||
    { echo "[webshop_train] writing the expert probe's demonstrations failed: rerun" \
        "python -m agentenv_webshop.expert --item-ids AgentItemId/webshop_test.json --demos-out $probe" >&2; exit 1; }
  OVERRIDES+=(data.expert_probe_file="$probe")
  if [[ "${GPU_LEARNING:-0}" == 1 ]]; then
    if [[ "$PROFILE" != gpu ]]; then
      echo "[webshop_train] GPU_LEARNING=1 is the GPU profile's learning setup, but PROFILE=$PROFILE" >&2
      exit 2
    fi
    read_overrides "$ROOT/scripts/profiles/webshop_train_gpu_learning.args"
  fi
  if [[ "${WARM_START:-0}" == 1 ]]; then
    if [[ "$PROFILE" == gpu && -z "${MODEL_PATH:-}" ]]; then
      echo "[webshop_train] WARM_START=1 on the GPU profile needs MODEL_PATH=<pretrained HF folder> to fine-tune" \
           "(e.g. bash scripts/fetch_smollm2.sh)" >&2
      exit 2
    fi
    SFT_DIR="${SFT_DIR:-$ROOT/saves/sft/webshop_$([[ "$PROFILE" == gpu ]] && echo gpu || echo tiny)}"
    if [[ ! -f "$SFT_DIR/sft_metrics.json" ]]; then
      PYTHON="$PYTHON" MODEL_PATH="$MODEL_PATH" SFT_DIR="$SFT_DIR" EVAL=0 PROFILE="$PROFILE" \
        bash "$ROOT/scripts/webshop_sft.sh"
    fi
    OVERRIDES+=(actor_rollout_ref.model.path="$SFT_DIR")
  elif [[ "$PROFILE" != cpu || "$USING_DEFAULT_POLICY" != 1 ]]; then
    return 0
  fi
  [[ "$PROFILE" == cpu ]] || return 0
  # a policy that writes real actions: longer turns and trajectories
  read_overrides "$ROOT/scripts/profiles/webshop_train_cpu_policy.args"
}

run_job webshop train "$@"
