"""Rollout throughput on CPU: the agent loop + HF engine (tiny Qwen2) against a real WebShop server.

Two policies:
  * `tiny`     - the random tiny model's own text (almost never a valid action, so the WebShop
                 client answers most steps locally: env cost is mostly /create + /reset);
  * `tiny+act` - the tiny model still generates every turn (same compute and batching), but the
                 env receives a rule-based action (search -> first product -> buy), so every
                 turn is a real /step on the server.
Reports trajectories/s, generated tokens/s, and the share of rollout wall time spent waiting on the
env with the engine idle (`env_wait_frac`; target < 10%).

Usage: python bench/rollout.py [--url http://127.0.0.1:PORT] [--batch 32] [--rounds 5] [--max-tokens 32]
(without --url a server is started on a free port and stopped afterwards).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]  # the repo, and tests/ for the scripted shopper

from scripted_engine import ScriptedWebshopEngine  # noqa: E402  (a test helper, not trainer code)


@contextlib.contextmanager
def _server(url: str | None):
    if url:
        yield url
        return
    import requests

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "agentenv_webshop.launch", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if requests.get(base + "/", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=None)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--steps", type=int, default=2, help="rollout steps per policy (the first one warms up)")
    args = ap.parse_args()

    from transformers import AutoTokenizer

    from verl.protocol import DataProto
    from verl.utils.tiny_model import build_tiny_model
    from verl.workers.rollout.agent_loop import AgentLoop
    from verl.workers.rollout.hf_rollout import HFEngine

    path = build_tiny_model()
    tok = AutoTokenizer.from_pretrained(path)
    rows = []
    with _server(args.url) as url:
        for policy in ("tiny", "tiny+act"):
            hf = HFEngine(path)
            engine = hf if policy == "tiny" else ScriptedWebshopEngine(tok, inner=hf)
            loop = AgentLoop(engine, tok,
                             {"max_tokens": args.max_tokens, "temperature": 1.0, "max_model_len": 8192, "max_concurrency": 64},
                             {"task_name": "webshop", "env_addr": url, "max_retries": 20, "timeout": 60},
                             {"max_prompt_length": 1024, "max_response_length": 4096})
            for step in range(args.steps):
                ids = [f"webshop_{(step * args.batch + i) % 6000}" for i in range(args.batch)]
                batch = DataProto.from_dict(non_tensors={"item_id": np.array(ids, dtype=object),
                                                         "uid": np.array(ids, dtype=object)},
                                            meta_info={"max_rounds": args.rounds, "global_step": step})
                tokens_before = hf.stats["generated_tokens"]
                out = loop.run(batch)
                m = out.meta_info
                gen_tokens = hf.stats["generated_tokens"] - tokens_before
                rows.append((policy, step, m["timing_s/rollout"], len(out) / m["timing_s/rollout"],
                             gen_tokens / m["timing_s/rollout"], m["timing_s/gen"], m["timing_s/env"],
                             m["rollout/env_wait_frac"], m["rollout/num_turns_mean"], m["rollout/reward_mean"],
                             m["rollout/env_errors"], hf.stats["requests"] / max(hf.stats["batches"], 1)))
            loop.close()
            engine.shutdown()

    head = ("policy", "step", "wall s", "traj/s", "gen tok/s", "gen s", "env s", "env-wait", "turns", "reward", "errors", "req/batch")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.2f} | {r[3]:.2f} | {r[4]:.0f} | {r[5]:.2f} | {r[6]:.2f} | {r[7]:.1%} | "
              f"{r[8]:.1f} | {r[9]:.3f} | {r[10]} | {r[11]:.1f} |")


if __name__ == "__main__":
    main()
