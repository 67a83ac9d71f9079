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

Part 3 (`--vs-static`, instead of parts 1-2): the agent loop against the engine's own ceiling. The
agent loop runs `--trajectories` real WebShop episodes (`--rounds` turns, `--max-tokens` per turn,
temperature `--temperature`, every trajectory live at once) through an HF engine with a recorder in
front of it. Then the same engine (prefix store cleared) replays every recorded request as a static
batch, turn by turn: all trajectories' turn-k requests admitted together, with the same prompts, the
same seeds and max_tokens = the length the agent loop got (no stop tokens or rules), so each row
samples exactly the tokens it sampled in the agent loop (checked) and reuses the same prefixes. The
static figure is the engine's speed on that workload with no env waits and no staggered arrivals.
Prints a table and, as its last line, one JSON object: agent_tok_s, static_tok_s, ratio (agent/static),
rows_per_step (the agent loop's mean rows per decode step), live (trajectories allowed in flight),
fill (rows_per_step / live), prefix_reuse (share of context tokens not prefilled), model, device.
`--model`: `sft` (the shipped WebShop SFT policy, default), `tiny` (the tiny random Qwen2),
`smollm2` (a random-weight model of SmolLM2-135M's exact architecture, 30 layers, with the SFT
policy's tokenizer: no download), or an HF model folder.

Usage: python bench/rollout.py [--device cpu|cuda] [--batch 32] [--models tiny,small] [--new-tokens 64]
       [--no-agent-loop] [--url http://127.0.0.1:PORT] [--rounds 5] [--max-tokens 32]
       python bench/rollout.py --vs-static [--model sft|tiny|smollm2|DIR] [--trajectories 128] [--rounds 5]
(without --url a WebShop server is started on a free port and stopped afterwards).
"""
from __future__ import annotations

import argparse
import contextlib
import json
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


# SmolLM2-135M(-Instruct)'s architecture (its config.json): Llama, 30 layers, GQA 9/3 heads, tied embeddings
SMOLLM2_SHAPE = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                     num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=8192,
                     rms_norm_eps=1e-5, rope_theta=100000.0, tie_word_embeddings=True, hidden_act="silu")


def _vs_static_model(name: str):
    """(model folder or None, built model or None, tokenizer folder) for `--model`."""
    sft = os.path.join(ROOT, "agentenv_webshop", "sft_policy")
    if name == "sft":
        return sft, None, sft
    if name == "tiny":
        from verl.utils.tiny_model import build_tiny_model

        path = build_tiny_model()
        return path, None, path
    if name == "smollm2":
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM

        torch.manual_seed(0)
        cfg = LlamaConfig(**SMOLLM2_SHAPE, bos_token_id=0, eos_token_id=2, pad_token_id=0)
        return None, LlamaForCausalLM(cfg), sft
    return name, None, name


class _Recorder:
    """An engine in front of another that records every request (prompt, sampling, output) it passes on."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[tuple] = []
        for attr in ("bans_tokens", "bans_sequences", "stops_on_rules", "max_positions", "stats"):
            setattr(self, attr, getattr(inner, attr))

    async def generate(self, prompt_ids, sampling):
        out = await self.inner.generate(prompt_ids, sampling)
        self.calls.append((list(prompt_ids), sampling, list(out.token_ids)))
        return out


def _vs_static(args) -> dict:
    """Part 3: the agent loop, then the same requests as static turn-by-turn batches (see the docstring)."""
    import asyncio
    import dataclasses

    import torch
    from transformers import AutoTokenizer

    from verl.protocol import DataProto
    from verl.workers.rollout.agent_loop import AgentLoop
    from verl.workers.rollout.hf_rollout import HFEngine

    path, model, tok_path = _vs_static_model(args.model)
    tok = AutoTokenizer.from_pretrained(tok_path)
    hf = HFEngine(path, {"kv_cache_space_gb": args.kv_cache_gb}, model=model, device=args.device, dtype=args.dtype,
                  num_threads=args.engine_threads)
    rec = _Recorder(hf)
    n = args.trajectories
    rollout = {"max_tokens": args.max_tokens, "temperature": args.temperature, "max_model_len": 5120,
               "max_concurrency": args.concurrency, "stop_at_action_end": not args.no_stop_rule}
    if args.copy_only:
        rollout["copy_only_tokens"] = "[Bb]0[0-9A-Za-z]{8}"
    with _server(args.url) as url:
        loop = AgentLoop(rec, tok, rollout, {"task_name": "webshop", "env_addr": url, "max_retries": 20,
                                             "timeout": 120},
                         {"max_prompt_length": 1024, "max_response_length": 4096})
        goals = [f"webshop_{(i // args.samples) % 6000}" for i in range(n)]
        batch = DataProto.from_dict(non_tensors={"item_id": np.array(goals, dtype=object),
                                                 "uid": np.array(goals, dtype=object)},
                                    meta_info={"max_rounds": args.rounds, "global_step": 0})
        before = dict(hf.stats)
        t0 = time.perf_counter()
        out = loop.run(batch)
        agent_wall = time.perf_counter() - t0
        loop.close()
    after = dict(hf.stats)
    m = out.meta_info
    agent_tokens = after["generated_tokens"] - before["generated_tokens"]
    steps = after["decode_steps"] - before["decode_steps"]

    # the static replay: the same requests, turn by turn, each wave admitted at once
    waves: dict[int, list] = {}
    for call in rec.calls:  # the agent loop's seeds are base * 1000 + turn
        waves.setdefault(call[1].seed % 1000, []).append(call)
    hf._prefix.clear()
    static_before = dict(hf.stats)
    mismatched = 0

    async def wave(calls):
        return await asyncio.gather(*(hf.generate(p, dataclasses.replace(sp, max_tokens=len(o), stop_token_ids=(),
                                                                          stop_rule=None))
                                      for p, sp, o in calls))
    t0 = time.perf_counter()
    for k in sorted(waves):
        outs = asyncio.run(wave(waves[k]))
        mismatched += sum(got.token_ids != o for got, (_, _, o) in zip(outs, waves[k], strict=True))
    if torch.device(args.device).type == "cuda":
        torch.cuda.synchronize()
    static_wall = time.perf_counter() - t0
    static = {k: hf.stats[k] - static_before[k] for k in ("generated_tokens", "decode_steps", "prefill_tokens",
                                                           "reused_tokens")}
    hf.shutdown()
    live = args.concurrency or n
    rows_per_step = agent_tokens / max(steps, 1)
    result = {
        "agent_tok_s": agent_tokens / agent_wall, "static_tok_s": static["generated_tokens"] / static_wall,
        "rows_per_step": rows_per_step, "live": live, "fill": rows_per_step / live,
        "prefix_reuse": m.get("rollout/prefix_reuse", 0.0),
        "static_prefix_reuse": static["reused_tokens"] / max(static["reused_tokens"] + static["prefill_tokens"], 1),
        "agent_s": agent_wall, "static_s": static_wall, "tokens": agent_tokens, "requests": len(rec.calls),
        "agent_decode_steps": steps, "static_decode_steps": static["decode_steps"],
        "static_rows_per_step": static["generated_tokens"] / max(static["decode_steps"], 1),
        "mismatched_replays": mismatched, "turns_mean": m.get("rollout/num_turns_mean"),
        "reward_mean": m.get("rollout/reward_mean"), "env_wait_frac": m.get("rollout/env_wait_frac"),
        "trajectories": n, "model": args.model, "device": args.device, "engine_threads": hf.num_threads,
    }
    result["ratio"] = result["agent_tok_s"] / result["static_tok_s"]
    return result


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
    ap.add_argument("--max-tokens", type=int, default=None, help="tokens per turn (part 2: 32; part 3: 96, the CPU "
                    "profile's)")
    ap.add_argument("--steps", type=int, default=2, help="rollout steps per policy (the first one warms up)")
    ap.add_argument("--vs-static", action="store_true", help="part 3 only: the agent loop vs a static batch")
    ap.add_argument("--model", default="sft", help="part 3: sft | tiny | smollm2 | an HF model folder")
    ap.add_argument("--trajectories", type=int, default=128, help="part 3: trajectories (all live at once)")
    ap.add_argument("--samples", type=int, default=8, help="part 3: trajectories per goal (GRPO's n)")
    ap.add_argument("--temperature", type=float, default=0.5, help="part 3: sampling temperature")
    ap.add_argument("--concurrency", type=int, default=None, help="part 3: rollout.max_concurrency (default: all)")
    ap.add_argument("--engine-threads", type=int, default=None, help="part 3: the engine thread's torch threads "
                    "(default: the engine's, 1 on CPU for a model under 50M parameters)")
    ap.add_argument("--dtype", default=None, help="part 3: engine dtype (default: float32 on CPU, bfloat16 on CUDA)")
    ap.add_argument("--copy-only", action="store_true", help="part 3: the CPU profile's copy-only product ids")
    ap.add_argument("--no-stop-rule", action="store_true", help="part 3: turns end at EOS only")
    ap.add_argument("--kv-cache-gb", type=float, default=None, help="part 3: rollout.kv_cache_space_gb (the HF "
                    "engine's KV budget; default: a quarter of host memory on CPU)")
    args = ap.parse_args()
    if args.max_tokens is None:
        args.max_tokens = 96 if args.vs_static else 32

    import torch

    from verl.config.device import resolve_device

    args.device = resolve_device(args.device, key="--device")
    models = (args.models or ("tiny,small,qwen0.5b" if args.device.startswith("cuda") else "tiny,small")).split(",")
    unknown = [m for m in models if m not in MODEL_SPECS]
    if unknown:
        ap.error(f"--models: unknown {unknown}; choose from {list(MODEL_SPECS)}")
    where = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"CPU, {os.cpu_count()} cores"
    if args.vs_static:
        r = _vs_static(args)
        print(f"Agent loop vs a static batch of the same requests ({where}; model {r['model']}): {r['trajectories']} "
              f"trajectories x <= {args.rounds} turns, {r['requests']} requests, {r['tokens']} tokens, "
              f"load average {os.getloadavg()[0]:.1f}")
        head = ("run", "wall s", "tok/s", "decode steps", "rows/step", "prefix reuse")
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        print(f"| agent loop | {r['agent_s']:.1f} | {r['agent_tok_s']:,.0f} | {r['agent_decode_steps']} | "
              f"{r['rows_per_step']:.1f} | {r['prefix_reuse']:.1%} |")
        print(f"| static batch | {r['static_s']:.1f} | {r['static_tok_s']:,.0f} | {r['static_decode_steps']} | "
              f"{r['static_rows_per_step']:.1f} | {r['static_prefix_reuse']:.1%} |")
        print(f"ratio {r['ratio']:.2f}, fill {r['fill']:.2f} of {r['live']} live, env wait {r['env_wait_frac']:.1%}, "
              f"replays that sampled other tokens: {r['mismatched_replays']}")
        print(json.dumps(r))
        return
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
