"""What a busy HF engine costs an actor update in the same process (the GIL, the cores), and what the update costs it.

The main thread runs the shipped SFT policy's forward and backward on 8 x 1,024 random tokens (`--threads` torch
threads, like the trainer's update under `trainer.rollout_overlap`); an HF engine on the same policy decodes
batches of 64 requests (800-token prompts, 60 new tokens) in its own thread meanwhile. Prints the update's
seconds per step with the engine idle and busy, and the engine's tokens/s while the update runs, for each
`sys.setswitchinterval` value given.

Usage: python bench/engine_beside_update.py [--threads 1] [--intervals 0.005,0.0005]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the update (main) thread")
    ap.add_argument("--intervals", default="0.005,0.0005", help="sys.setswitchinterval values to try")
    args = ap.parse_args()

    import torch
    from transformers import AutoModelForCausalLM

    from verl.workers.rollout.base import SamplingParams
    from verl.workers.rollout.hf_rollout import HFEngine

    torch.set_num_threads(args.threads)
    path = os.path.join(ROOT, "agentenv_webshop", "sft_policy")
    actor = AutoModelForCausalLM.from_pretrained(path)
    x = torch.randint(3, 8000, (8, 1024))

    def update_step(n: int = 3) -> float:
        t = time.perf_counter()
        for _ in range(n):
            actor(input_ids=x).logits.float().logsumexp(-1).mean().backward()
        return (time.perf_counter() - t) / n

    def engine_load(engine, stop: threading.Event) -> None:
        async def go():
            i = 0
            while not stop.is_set():
                ps = [torch.randint(3, 8000, (800,)).tolist() for _ in range(64)]
                await asyncio.gather(*(engine.generate(p, SamplingParams(max_tokens=60, seed=i * 100 + j))
                                       for j, p in enumerate(ps)))
                i += 1
        asyncio.run(go())

    engine = HFEngine(path)
    print(f"update threads {args.threads}, load average {os.getloadavg()[0]:.1f}")
    print("| engine | switch interval | update s/step | engine tok/s meanwhile |")
    print("|---|---:|---:|---:|")
    print(f"| idle | {sys.getswitchinterval():.4f} | {update_step():.2f} | - |", flush=True)
    for interval in (float(v) for v in args.intervals.split(",")):
        sys.setswitchinterval(interval)
        stop = threading.Event()
        th = threading.Thread(target=engine_load, args=(engine, stop))
        th.start()
        time.sleep(3)
        before = engine.stats["generated_tokens"]
        t0 = time.perf_counter()
        s = update_step()
        rate = (engine.stats["generated_tokens"] - before) / (time.perf_counter() - t0)
        stop.set()
        th.join()
        print(f"| decoding | {interval:.4f} | {s:.2f} | {rate:.0f} |", flush=True)
    engine.shutdown()


if __name__ == "__main__":
    main()
