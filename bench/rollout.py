"""Rollout throughput: the HF engine against plain `model.generate`, then the agent loop on WebShop.

Part 1 (engine vs generate): the same randomly initialised Qwen2 module, the same B prompts (random
ids, lengths spread around `--prompt-len`), the same number of new tokens per row (no stop tokens)
and the same sampling (T = 1, top-p 1, no top-k) through `HFEngine.generate` (B concurrent requests:
per-request seeds, log-probs, prefix-cache bookkeeping) and through `model.generate` (one left-padded
batch). Wall time covers prefill + decode; median of `--repeats` after a warm-up, the device
synchronised before the clock is read; fresh prompts every repeat (no prefix-cache hits). On CPU both
run with the engine's thread count. Model sizes (`--models`): tiny (the default tiny policy's shape),
small (hidden 512, 4 layers, vocab 32k) and, by default on CUDA only, qwen0.5b (Qwen2.5-0.5B's shape).

Part 2 (agent loop, skipped with `--no-agent-loop`): the agent loop + HF engine (tiny Qwen2) against a
real WebShop server, two policies:
  * `tiny`     - the random tiny model's own text (almost never a valid action, so the WebShop
                 client answers most steps locally: env cost is mostly /create + /reset);
  * `tiny+act` - the tiny model still generates every turn (same compute and batching), but the
                 env receives a rule-based action (search -> first product -> buy), so every
                 turn is a real /step on the server.
Reports trajectories/s, generated tokens/s, and the share of rollout wall time spent waiting on the
env with the engine idle (`env_wait_frac`; target < 10%).

Usage: python bench/rollout.py [--device cpu|cuda] [--batch 32] [--models tiny,small] [--new-tokens 64]
       [--no-agent-loop] [--url http://127.0.0.1:PORT] [--rounds 5] [--max-tokens 32]
(without --url a WebShop server is started on a free port and stopped afterwards).
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
    from agentenv.health import wait_until_healthy

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentenv_webshop.launch", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base, timeout_s=120, proc=proc, interval_s=0.1, max_interval_s=0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=15)


# Qwen2 shapes for part 1 (random weights, built in memory: no tokenizer needed for random-id prompts).
MODEL_SPECS = {
    "tiny": dict(vocab_size=2048, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                 num_attention_heads=2, num_key_value_heads=2),  # verl.utils.tiny_model's defaults
    "small": dict(vocab_size=32768, hidden_size=512, intermediate_size=1536, num_hidden_layers=4,
                  num_attention_heads=8, num_key_value_heads=2),
    "qwen0.5b": dict(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                     num_attention_heads=14, num_key_value_heads=2),  # Qwen2.5-0.5B's shape
}


def _build_model(name: str):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(**MODEL_SPECS[name], max_position_embeddings=8192, tie_word_embeddings=True,
                      bos_token_id=None, eos_token_id=None, pad_token_id=0)
    return Qwen2ForCausalLM(cfg)


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _engine_vs_generate(name: str, args) -> tuple:
    """tokens/s of HFEngine and of model.generate on one model shape (median of args.repeats)."""
    import asyncio

    import torch
    from transformers import GenerationConfig

    from verl.workers.rollout.base import SamplingParams
    from verl.workers.rollout.hf_rollout import HFEngine

    engine = HFEngine(model=_build_model(name), device=args.device, max_batch_size=args.batch, seed=0)
    model, dev = engine.model, engine.device
    vocab = model.config.vocab_size
    gen_cfg = GenerationConfig(do_sample=True, temperature=1.0, top_p=1.0, top_k=0, max_new_tokens=args.new_tokens,
                               min_new_tokens=args.new_tokens, eos_token_id=None, pad_token_id=0)
    rng = np.random.default_rng(0)

    def prompts():
        lens = rng.integers(args.prompt_len * 3 // 4, args.prompt_len * 5 // 4 + 1, size=args.batch)
        return [rng.integers(3, vocab, size=int(n)).tolist() for n in lens]

    def run_engine(ps, rep):
        async def go():
            return await asyncio.gather(*(
                engine.generate(p, SamplingParams(max_tokens=args.new_tokens, seed=rep * 1000 + i))
                for i, p in enumerate(ps)
            ))
        outs = asyncio.run(go())
        return sum(len(o.token_ids) for o in outs)

    def run_generate(ps, rep):
        width = max(map(len, ps))
        ids = torch.tensor([[0] * (width - len(p)) + p for p in ps], device=dev)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in ps], device=dev)
        torch.manual_seed(rep)
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, generation_config=gen_cfg)
        return (out.shape[1] - width) * out.shape[0]

    threads = torch.get_num_threads()
    if engine.num_threads:  # same intra-op threads as the engine's worker thread
        torch.set_num_threads(engine.num_threads)
    rates = {"engine": [], "generate": []}
    try:
        for rep in range(args.repeats + 1):  # rep 0 warms up
            ps = prompts()
            for key, fn in (("engine", run_engine), ("generate", run_generate)):
                _sync(dev)
                t0 = time.perf_counter()
                n = fn(ps, rep)
                _sync(dev)
                assert n == args.batch * args.new_tokens, (key, n)
                if rep:
                    rates[key].append(n / (time.perf_counter() - t0))
    finally:
        torch.set_num_threads(threads)
        engine.shutdown()
    params = sum(p.numel() for p in model.parameters())
    ours, ref = float(np.median(rates["engine"])), float(np.median(rates["generate"]))
    return (name, f"{params / 1e6:.1f}M", str(model.dtype).removeprefix("torch."), ref, ours, ref / ours)


def _agent_loop(args) -> list[tuple]:
    """Rows of the agent-loop table (tiny model, real WebShop server)."""
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
            hf = HFEngine(path, device=args.device)
            engine = hf if policy == "tiny" else ScriptedWebshopEngine(tok, inner=hf)
            loop = AgentLoop(engine, tok,
                             {"max_tokens": args.max_tokens, "temperature": 1.0, "max_model_len": 8192,
                              "max_concurrency": 64},
                             {"task_name": "webshop", "env_addr": url, "max_retries": 20, "timeout": 60},
                             {"max_prompt_length": 1024, "max_response_length": 4096})
            for step in range(args.steps):
                ids = [f"webshop_{(step * args.batch + i) % 6000}" for i in range(args.batch)]
                batch = DataProto.from_dict(non_tensors={"item_id": np.array(ids, dtype=object),
                                                         "uid": np.array(ids, dtype=object)},
                                            meta_info={"max_rounds": args.rounds, "global_step": step})
                before = dict(hf.stats)
                out = loop.run(batch)
                m = out.meta_info
                gen_tokens = hf.stats["generated_tokens"] - before["generated_tokens"]
                steps = max(hf.stats["decode_steps"] - before["decode_steps"], 1)
                rows.append((policy, step, m["timing_s/rollout"], len(out) / m["timing_s/rollout"],
                             gen_tokens / m["timing_s/rollout"], m["timing_s/gen"], m["timing_s/env"],
                             m["rollout/env_wait_frac"], m["rollout/num_turns_mean"], m["rollout/reward_mean"],
                             m["rollout/env_errors"], hf.stats["requests"] / max(hf.stats["batches"], 1),
                             gen_tokens / steps, 1000 * (hf.stats["busy_s"] - before["busy_s"]) / steps))
            loop.close()
            engine.shutdown()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--batch", type=int, default=32, help="concurrent requests (part 1) / trajectories (part 2)")
    ap.add_argument("--models", default=None, help="part 1 model shapes, comma-separated from "
                    f"{','.join(MODEL_SPECS)} (default: tiny,small on CPU, all on CUDA)")
    ap.add_argument("--prompt-len", type=int, default=128, help="mean prompt length (part 1)")
    ap.add_argument("--new-tokens", type=int, default=64, help="new tokens per request (part 1)")
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats per engine (part 1)")
    ap.add_argument("--no-agent-loop", action="store_true", help="skip part 2")
    ap.add_argument("--url", default=None, help="WebShop server for part 2 (default: start one)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=32, help="tokens per turn (part 2)")
    ap.add_argument("--steps", type=int, default=2, help="rollout steps per policy (the first one warms up)")
    args = ap.parse_args()

    import torch

    from verl.utils.device import resolve_device

    args.device = resolve_device(args.device, key="--device")
    models = (args.models or ("tiny,small,qwen0.5b" if args.device.startswith("cuda") else "tiny,small")).split(",")
    unknown = [m for m in models if m not in MODEL_SPECS]
    if unknown:
        ap.error(f"--models: unknown {unknown}; choose from {list(MODEL_SPECS)}")
    where = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"CPU, {os.cpu_count()} cores"
    print(f"HF engine vs model.generate on {args.device} ({where}; torch {torch.__version__}): batch {args.batch}, "
          f"prompts ~{args.prompt_len} tokens, {args.new_tokens} new tokens, T=1, median of {args.repeats}")
    head = ("model", "params", "dtype", "generate tok/s", "engine tok/s", "generate/engine")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in models:
        r = _engine_vs_generate(name, args)
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:,.0f} | {r[4]:,.0f} | {r[5]:.2f}x |", flush=True)
    if args.no_agent_loop:
        return

    rows = _agent_loop(args)
    print(f"\nAgent loop + HF engine ({args.device}) against WebShop: {args.batch} trajectories, "
          f"{args.rounds} rounds, {args.max_tokens} tokens/turn")
    head = ("policy", "step", "wall s", "traj/s", "gen tok/s", "gen s", "env s", "env-wait", "turns", "reward",
            "errors", "req/batch", "rows/step", "ms/step")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.2f} | {r[3]:.2f} | {r[4]:.0f} | {r[5]:.2f} | {r[6]:.2f} | {r[7]:.1%} | "
              f"{r[8]:.1f} | {r[9]:.3f} | {r[10]} | {r[11]:.1f} | {r[12]:.1f} | {r[13]:.1f} |")
    print("rows/step: the engine's mean batch per decode step; ms/step: its busy time per step (prefills "
          "included)")


if __name__ == "__main__":
    main()
