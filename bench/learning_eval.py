"""How long the learning report's greedy evaluation takes on CPU: N held-out WebShop goals through the
agent loop + HF engine (`main_generation.run_generation`, the loop and engine the trainer's validation
uses), per model size.

Policies (random weights: timing the work needs no policy that earns reward):
  * `tiny`          - the CPU profile's fallback tiny model writing its own text (almost never a valid
                      action, so the env answers locally and observations stay short), with the CPU
                      profile's turn settings (32 tokens, 3 rounds): what `webshop_train.sh` costs today;
  * `<size>+expert` - a random Qwen2 of that size generates every turn (greedy, up to max_tokens: it
                      seldom writes EOS, so decode is an upper bound; a trained policy stops after
                      ~40-90 tokens), and the env client plays the expert's next action instead of the
                      model's text. Observations, turn count (expert: 3-7 actions, mostly 5) and prompt
                      growth are those of a policy that shops like the expert, and the model's own ids stay
                      in the prompt, so the engine's prefix KV reuse works as it would for a trained policy.

Usage: python bench/learning_eval.py [--goals 64] [--sizes tiny,10m,30m] [--max-tokens 96] [--rounds 8]
       [--url URL]   (without --url a WebShop server is started on a free port)
Prints a table; times for 200 goals are extrapolated linearly from --goals when it is smaller.
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

# name -> build_tiny_model sizes (head dim 64)
SIZES = {
    "tiny": {},
    "10m": dict(hidden_size=256, num_layers=8, num_heads=4, num_kv_heads=2, intermediate_size=1024),
    "30m": dict(hidden_size=512, num_layers=8, num_heads=8, num_kv_heads=2, intermediate_size=2048),
}


def _expert_plans(url: str, goal_ids: list[int]) -> dict[int, list[str]]:
    """The expert's actions for each goal, played on the server."""
    from agentenv_webshop.engine.catalog import load_catalog
    from agentenv_webshop.engine.goal import build_goals
    from agentenv_webshop.expert import ClientEnv, ExpertPolicy

    goals = build_goals(load_catalog().products)
    env = ClientEnv(url)
    try:
        return {idx: ExpertPolicy().play(env, idx, goals[idx]).actions for idx in goal_ids}
    finally:
        env.close()


def _expert_client_factory(url: str, plans: dict[int, list[str]]):
    """Env clients that step the expert's next action whatever the model wrote."""
    from agentenv.envs.webshop import WebshopEnvClient

    class ExpertActingClient(WebshopEnvClient):
        def reset(self, idx: int):
            self._plan = iter(plans[idx])
            return super().reset(idx)

        def step(self, action: str):
            return super().step(f"Thought:\nexpert\n\nAction:\n{next(self._plan, 'click[buy now]')}")

    return lambda: ExpertActingClient(url, data_len=0, timeout=60)


def _evaluate(model_path: str, url: str, goal_ids: list[int], max_tokens: int, rounds: int, concurrency: int,
              plans: dict | None, work: str) -> dict:
    import torch
    from transformers import AutoModelForCausalLM

    from verl.agent_trainer.main_generation import run_generation
    from verl.config.generation_schema import load_generation_config
    from verl.workers.rollout.base import build_rollout_engine

    os.makedirs(work, exist_ok=True)
    data_path = os.path.join(work, "webshop_test.json")
    with open(data_path, "w") as fh:
        json.dump([{"item_id": f"webshop_{i}"} for i in goal_ids], fh)
    cfg = load_generation_config({
        "model": {"path": model_path}, "trainer": {"device": "cpu"},
        "data": {"path": data_path, "n_samples": 1, "batch_size": len(goal_ids),
                 "output_path": os.path.join(work, "out"), "max_prompt_length": 1024, "max_response_length": 6144},
        "rollout": {"name": "hf", "max_tokens": max_tokens, "max_model_len": 7168, "temperature": 0.0,
                    "max_concurrency": concurrency},
        "agentgym": {"env_addr": url, "max_rounds": rounds, "timeout": 60}})
    engine = build_rollout_engine(model_path, cfg.rollout, torch.device("cpu"), cfg.model)
    t0 = time.perf_counter()
    try:
        result = run_generation(cfg, engine=engine,
                                env_client_factory=_expert_client_factory(url, plans) if plans else None)
    finally:
        engine.shutdown()
    wall = time.perf_counter() - t0
    params = sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(model_path).parameters())
    stats = getattr(engine, "stats", {})
    return {"params_m": params / 1e6, "wall_s": wall, "turns": result["overall"]["mean_turns"],
            "gen_tokens": result["timing_s"]["generated_tokens"], "success": result["overall"]["success_rate"],
            "prefill": stats.get("prefill_tokens", 0), "reused": stats.get("reused_tokens", 0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=None)
    ap.add_argument("--goals", type=int, default=64)
    ap.add_argument("--sizes", default="tiny,10m,30m")
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--concurrency", type=int, default=64, help="rollout.max_concurrency (trajectories in flight)")
    args = ap.parse_args()

    from verl.utils.tiny_model import build_tiny_model

    ids = json.load(open(os.path.join(ROOT, "AgentItemId", "webshop_test.json")))[:args.goals]
    goal_ids = [int(row["item_id"].rsplit("_", 1)[1]) for row in ids]
    rows = []
    with _server(args.url) as url, tempfile.TemporaryDirectory() as work:
        plans = _expert_plans(url, goal_ids)
        for size in args.sizes.split(","):
            path = build_tiny_model(os.path.join(work, f"model_{size}"), **SIZES[size])
            expert = size != "tiny"
            # the tiny fallback runs with the CPU profile's own turn settings (32 tokens, 3 rounds)
            max_tokens, rounds = (args.max_tokens, args.rounds) if expert else (32, 3)
            r = _evaluate(path, url, goal_ids, max_tokens, rounds, args.concurrency, plans if expert else None,
                          os.path.join(work, size))
            r.update(policy=size + ("+expert" if expert else ""), max_tokens=max_tokens, rounds=rounds)
            rows.append(r)
            print(f"{r['policy']}: {r['wall_s']:.1f} s for {args.goals} goals", flush=True)

    print(f"\ngreedy evaluation of {args.goals} goals, {args.concurrency} in flight, HF engine on CPU "
          f"({os.cpu_count()} cores), load average {os.getloadavg()[0]:.1f}")
    print(f"{'policy':<12} {'params':>7} {'max_tok':>7} {'rounds':>6} {'turns':>5} {'success':>7} {'gen tok':>8} "
          f"{'prefill':>8} {'reused':>8} {'wall s':>7} {'s/goal':>6} {'200 goals s':>11}")
    for r in rows:
        per = r["wall_s"] / args.goals
        print(f"{r['policy']:<12} {r['params_m']:>6.1f}M {r['max_tokens']:>7} {r['rounds']:>6} {r['turns']:>5.2f} "
              f"{r['success']:>7.3f} {r['gen_tokens']:>8} {r['prefill']:>8} {r['reused']:>8} {r['wall_s']:>7.1f} "
              f"{per:>6.2f} {per * 200:>11.0f}")


if __name__ == "__main__":
    main()
