"""How long the learning report's greedy evaluation takes on CPU: N held-out WebShop goals through the
agent loop + HF engine (the path the trainer's validation and main_generation share), per model size.

Policies (random weights: no policy that earns reward is needed to time the work):
  * `tiny`        - the CPU profile's fallback tiny model writing its own text (almost never a valid
                    action, so the env answers locally and observations stay short): what the CPU
                    profile costs today;
  * `<size>+act`  - a random Qwen2 of that size generates every turn up to max_tokens (a trained policy
                    stops at EOS after ~40-90 tokens, so this is an upper bound on decode), while the env
                    receives a rule-based action (search -> first product -> buy: 3 turns, real result
                    and item pages). The rule action replaces the model's ids in the next prompt, so the
                    engine's prefix KV reuse misses and every turn re-prefills the whole context: an upper
                    bound on prefill as well. A trained policy takes ~5 turns (expert: 4-5), not 3.

Usage: python bench/learning_eval.py [--goals 64] [--sizes tiny,10m,30m] [--max-tokens 96] [--url URL]
(without --url a WebShop server is started on a free port). Prints a table; 200-goal times are
extrapolated linearly from --goals when it is smaller.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]  # the repo, and tests/ for the scripted shopper

from rollout import _server  # noqa: E402  (bench/rollout.py: start a server unless --url)
from scripted_engine import ScriptedWebshopEngine  # noqa: E402  (a test helper, not trainer code)

# name -> build_tiny_model sizes (head dim 64)
SIZES = {
    "tiny": {},
    "10m": dict(hidden_size=256, num_layers=8, num_heads=4, num_kv_heads=2, intermediate_size=1024),
    "30m": dict(hidden_size=512, num_layers=8, num_heads=8, num_kv_heads=2, intermediate_size=2048),
}


def _evaluate(model_path: str, url: str, goals: int, max_tokens: int, rounds: int, scripted: bool, work: str) -> dict:
    import torch
    from transformers import AutoTokenizer

    from verl.agent_trainer.config.generation_schema import load_generation_config
    from verl.agent_trainer.main_generation import run_generation
    from verl.workers.rollout.base import build_rollout_engine

    ids = json.load(open(os.path.join(ROOT, "AgentItemId", "webshop_test.json")))[:goals]
    os.makedirs(work, exist_ok=True)
    data_path = os.path.join(work, "webshop_test.json")
    json.dump(ids, open(data_path, "w"))
    cfg = load_generation_config({
        "model": {"path": model_path}, "trainer": {"device": "cpu"},
        "data": {"path": data_path, "n_samples": 1, "batch_size": goals, "output_path": os.path.join(work, "out"),
                 "max_prompt_length": 1024, "max_response_length": 6144},
        "rollout": {"name": "hf", "max_tokens": max_tokens, "max_model_len": 7168, "temperature": 0.0},
        "agentgym": {"env_addr": url, "max_rounds": rounds, "timeout": 60}})
    engine = build_rollout_engine(model_path, cfg.rollout, torch.device("cpu"), cfg.model)
    if scripted:
        engine = ScriptedWebshopEngine(AutoTokenizer.from_pretrained(model_path), inner=engine)
    t0 = time.perf_counter()
    try:
        result = run_generation(cfg, engine=engine)
    finally:
        engine.shutdown()
    wall = time.perf_counter() - t0
    params = sum(p.numel() for p in __import__("transformers").AutoModelForCausalLM.from_pretrained(model_path).parameters())
    return {"params_m": params / 1e6, "wall_s": wall, "turns": result["overall"]["mean_turns"],
            "gen_tokens": result["timing_s"]["generated_tokens"], "reward": result["overall"]["mean_reward"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=None)
    ap.add_argument("--goals", type=int, default=64)
    ap.add_argument("--sizes", default="tiny,10m,30m")
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    from verl.utils.tiny_model import build_tiny_model

    rows = []
    with _server(args.url) as url, tempfile.TemporaryDirectory() as work:
        for size in args.sizes.split(","):
            path = build_tiny_model(os.path.join(work, f"model_{size}"), **SIZES[size])
            scripted = size != "tiny"
            # the tiny fallback runs with the CPU profile's own turn settings (32 tokens, 3 rounds)
            max_tokens, rounds = (args.max_tokens, args.rounds) if scripted else (32, 3)
            r = _evaluate(path, url, args.goals, max_tokens, rounds, scripted, os.path.join(work, size))
            r.update(policy=size + ("+act" if scripted else ""), max_tokens=max_tokens, rounds=rounds)
            rows.append(r)
            print(f"{r['policy']}: {r['wall_s']:.1f} s for {args.goals} goals", flush=True)

    print(f"\ngreedy evaluation of {args.goals} goals, HF engine on CPU ({os.cpu_count()} cores)")
    print(f"{'policy':<10} {'params':>7} {'max_tok':>7} {'turns':>5} {'gen tok':>8} {'wall s':>7} {'s/goal':>6} "
          f"{'200 goals s':>11}")
    for r in rows:
        per = r["wall_s"] / args.goals
        print(f"{r['policy']:<10} {r['params_m']:>6.1f}M {r['max_tokens']:>7} {r['turns']:>5.2f} {r['gen_tokens']:>8} "
              f"{r['wall_s']:>7.1f} {per:>6.2f} {per * 200:>11.0f}")


if __name__ == "__main__":
    main()
