"""One GRPO training step's time breakdown on CPU (the trainer's timing_s/* metrics).

Starts a WebShop server (embedded catalog) and builds the tiny model, then runs the real trainer
(`verl.agent_trainer.main_ppo.run_ppo`) for `--steps` steps and prints each step's stage timings.
The first step includes warm-up (engine/thread start, first env sessions); later steps are the
steady state.

    python bench/train_step.py [--steps 3] [--batch 4] [--n 2] [--max-tokens 32] [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=4, help="prompts per step (data.train_batch_size)")
    parser.add_argument("--n", type=int, default=2, help="samples per prompt (rollout.n)")
    parser.add_argument("--max-tokens", type=int, default=32, help="tokens per turn")
    parser.add_argument("--rounds", type=int, default=3, help="agent turns per trajectory")
    parser.add_argument("--kl", action="store_true", help="use_kl_loss (adds the ref stage)")
    args = parser.parse_args()

    from omegaconf import OmegaConf

    from helpers import launched_server
    from verl.agent_trainer.config.schema import default_config_path
    from verl.agent_trainer.main_ppo import run_ppo
    from verl.utils.tiny_model import build_tiny_model

    work = tempfile.mkdtemp(prefix="bench_train_step_")
    model = build_tiny_model(os.path.join(work, "model"))
    train = os.path.join(work, "webshop_train.json")
    with open(train, "w") as fh:
        json.dump([{"item_id": f"webshop_{i}"} for i in range(args.batch * args.steps)], fh)
    with launched_server("agentenv_webshop.launch") as (url, _):
        overrides = [
            "algorithm.adv_estimator=grpo", f"data.train_file={train}", "data.val_file=null",
            f"data.train_batch_size={args.batch}", "data.max_prompt_length=1024", "data.max_response_length=1024",
            f"actor_rollout_ref.model.path={model}", "actor_rollout_ref.rollout.name=hf",
            f"actor_rollout_ref.rollout.n={args.n}", f"actor_rollout_ref.rollout.max_tokens={args.max_tokens}",
            "actor_rollout_ref.rollout.max_model_len=4096", f"actor_rollout_ref.agentgym.env_addr={url}",
            f"actor_rollout_ref.actor.use_kl_loss={args.kl}", f"actor_rollout_ref.actor.ppo_mini_batch_size={args.batch}",
            f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={args.batch * args.n}",
            f"actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu={args.batch * args.n}",
            f"algorithm.rounds_ctrl.rounds={args.rounds}", "trainer.device=cpu", "trainer.save_freq=-1",
            "trainer.export_hf=false", f"trainer.total_training_steps={args.steps}", "trainer.logger=[file]",
            f"trainer.default_local_dir={work}/ckpt", f"trainer.log_dir={work}/logs", "ray_init.num_cpus=2",
        ]
        cfg = OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist(overrides))
        start = time.perf_counter()
        run_ppo(cfg)
        wall = time.perf_counter() - start
    rows = [json.loads(line) for line in open(os.path.join(work, "logs", "metrics.jsonl"))]
    keys = sorted({k for r in rows for k in r if k.startswith("timing_s/")})
    print(f"GRPO step on CPU: {args.batch} prompts x n={args.n}, max_tokens={args.max_tokens}, rounds={args.rounds}, "
          f"kl_loss={args.kl}; total run wall {wall:.1f} s (incl. Ray/worker start and final checkpoint)")
    print(f"{'stage':32s}" + "".join(f"{'step ' + str(r['step']):>10s}" for r in rows))
    for key in keys:
        print(f"{key:32s}" + "".join(f"{r.get(key, float('nan')):10.3f}" for r in rows))
    for key in ("env/success_rate", "rollout/num_turns/mean", "response_length/mean"):
        if any(key in r for r in rows):
            print(f"{key:32s}" + "".join(f"{r.get(key, float('nan')):10.3f}" for r in rows))


if __name__ == "__main__":
    main()
