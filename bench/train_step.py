"""One GRPO training step's time breakdown (`--mode step`), or the actor update alone (`--mode actor`).

`--mode step` (default, CPU): starts a WebShop server (embedded catalog) and builds the tiny model,
then runs the real trainer (`verl.agent_trainer.main_ppo.run_ppo`) for `--steps` steps and prints
each step's stage timings. The first step includes warm-up (engine/thread start, first env
sessions); later steps are the steady state. `--overlap both` runs it with `trainer.rollout_overlap`
off and on (one-step off-policy: the next rollout runs beside the update) and compares step times.

`--mode actor`: actor-update tokens/s of `DataParallelPPOActor.update_policy` on one synthetic
multi-turn batch (varied prompt/response lengths, observation tokens masked), with fixed
micro-batches and with `use_dynamic_bsz` token budgets, against a plain PyTorch loop on the same
model copy, batch and micro-batch index sets (trimmed forward with `logits_to_keep`, log-softmax
gather, clipped PPO loss over the mini-batch's tokens, backward, grad clip, AdamW). Also reports
peak memory with and without `enable_activation_offloading` (torch.cuda.max_memory_allocated on
GPU; peak RSS growth sampled every 2 ms on CPU, where offloading is a no-op).

    python bench/train_step.py [--steps 3] [--batch 4] [--n 2] [--max-tokens 32] [--rounds 3] [--overlap both]
    python bench/train_step.py --mode actor [--device cpu|cuda] [--rows 16] [--micro 4] [--steps 5]
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
    parser.add_argument("--mode", choices=("step", "actor"), default="step")
    parser.add_argument("--steps", type=int, default=3, help="training steps (step) / timed updates per policy (actor)")
    parser.add_argument("--batch", type=int, default=4, help="prompts per step (data.train_batch_size)")
    parser.add_argument("--n", type=int, default=2, help="samples per prompt (rollout.n)")
    parser.add_argument("--max-tokens", type=int, default=32, help="tokens per turn")
    parser.add_argument("--rounds", type=int, default=3, help="agent turns per trajectory")
    parser.add_argument("--kl", action="store_true", help="use_kl_loss (adds the ref stage)")
    parser.add_argument("--overlap", choices=("off", "on", "both"), default="off",
                        help="trainer.rollout_overlap; both: one run each and a comparison table")
    actor = parser.add_argument_group("--mode actor")
    actor.add_argument("--device", default="cpu", help="cpu | cuda")
    actor.add_argument("--rows", type=int, default=16, help="sequences in the batch (one mini-batch)")
    actor.add_argument("--mini-batches", type=int, default=1, help="optimizer steps per update")
    actor.add_argument("--prompt-len", type=int, default=128, help="P: longest prompt")
    actor.add_argument("--response-len", type=int, default=512, help="R: longest response")
    actor.add_argument("--micro", type=int, default=4, help="ppo_micro_batch_size_per_gpu (fixed policy)")
    actor.add_argument("--max-token-len", type=int, default=None,
                       help="ppo_max_token_len_per_gpu (dynamic policy); default: micro x the mean row length")
    actor.add_argument("--threads", type=int, default=1, help="torch CPU threads (1: steadiest on a shared host)")
    actor.add_argument("--hidden", type=int, default=128)
    actor.add_argument("--layers", type=int, default=2)
    actor.add_argument("--heads", type=int, default=2)
    actor.add_argument("--intermediate", type=int, default=256)
    args = parser.parse_args()
    if args.mode == "actor":
        run_actor_bench(args)
        return

    from helpers import launched_server

    work = tempfile.mkdtemp(prefix="bench_train_step_")
    with launched_server("agentenv_webshop.launch") as (url, _):
        runs = {flag: _run_steps(args, url, os.path.join(work, flag), overlap=flag == "on")
                for flag in (("off", "on") if args.overlap == "both" else (args.overlap,))}
    for flag, (rows, wall) in runs.items():
        _print_step_table(args, rows, wall, flag)
    if len(runs) == 2:
        _print_overlap_comparison(args, runs)


def _run_steps(args, url: str, work: str, overlap: bool) -> tuple[list[dict], float]:
    """The real trainer for `args.steps` GRPO steps against the WebShop server at `url`; returns the
    metrics rows (file logger) and the run's wall time."""
    from omegaconf import OmegaConf

    from verl.agent_trainer.main_ppo import run_ppo
    from verl.config.schema import default_config_path
    from verl.utils.tiny_model import build_tiny_model

    model = build_tiny_model(os.path.join(work, "model"))
    train = os.path.join(work, "webshop_train.json")
    with open(train, "w") as fh:
        json.dump([{"item_id": f"webshop_{i}"} for i in range(args.batch * args.steps)], fh)
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
        f"trainer.rollout_overlap={overlap}",
    ]
    cfg = OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist(overrides))
    start = time.perf_counter()
    run_ppo(cfg)
    wall = time.perf_counter() - start
    with open(os.path.join(work, "logs", "metrics.jsonl")) as fh:
        return [json.loads(line) for line in fh], wall


def _print_step_table(args, rows: list[dict], wall: float, overlap: str) -> None:
    keys = sorted({k for r in rows for k in r if k.startswith("timing_s/")})
    print(f"GRPO step on CPU: {args.batch} prompts x n={args.n}, max_tokens={args.max_tokens}, rounds={args.rounds}, "
          f"kl_loss={args.kl}, rollout_overlap={overlap}; total run wall {wall:.1f} s "
          f"(incl. Ray/worker start and final checkpoint)")
    print(f"{'stage':32s}" + "".join(f"{'step ' + str(r['step']):>10s}" for r in rows))
    for key in keys:
        print(f"{key:32s}" + "".join(f"{r.get(key, float('nan')):10.3f}" for r in rows))
    for key in ("training/weight_staleness", "env/success_rate", "rollout/num_turns/mean", "response_length/mean"):
        if any(key in r for r in rows):
            print(f"{key:32s}" + "".join(f"{r.get(key, float('nan')):10.3f}" for r in rows))
    print()


def _print_overlap_comparison(args, runs: dict) -> None:
    """Mean step time over steps 2.. (step 1 has the warm-up and, with overlap, the unoverlapped first
    rollout) and the training loop's time (sum of timing_s/step), off vs on. Run walls are not compared:
    only the first run starts Ray."""
    def summary(rows, _wall):
        steady = [r["timing_s/step"] for r in rows[1:]] or [rows[0]["timing_s/step"]]
        return (sum(steady) / len(steady), sum(r["timing_s/step"] for r in rows),
                sum(r.get("timing_s/overlap", 0.0) for r in rows))

    off, on = summary(*runs["off"]), summary(*runs["on"])
    print(f"rollout_overlap off vs on ({args.steps} steps)")
    print(f"{'':28s}{'off':>10s}{'on':>10s}{'on/off':>10s}")
    for i, name in enumerate(("mean step s (steps 2..)", "loop s (sum of steps)")):
        print(f"{name:28s}{off[i]:10.2f}{on[i]:10.2f}{on[i] / off[i]:10.2f}")
    print(f"{'overlapped rollout s (sum)':28s}{off[2]:10.2f}{on[2]:10.2f}")


# ------------------------------------------------------------------------------------ --mode actor
def _synthetic_batch(vocab: int, rows: int, prompt_len: int, response_len: int, device, seed: int = 0):
    """A multi-turn-like batch: real prompt lengths in [P/4, P] (left-padded), real response lengths
    in [R/8, R] (right-padded), model turns of 24 tokens between observations of 16 (mask 0), one
    GRPO-like advantage per row."""
    import torch

    from verl.protocol import DataProto

    g = torch.Generator().manual_seed(seed)
    P, R = prompt_len, response_len
    p_len = torch.randint(P // 4, P + 1, (rows,), generator=g)
    r_len = torch.randint(R // 8, R + 1, (rows,), generator=g)
    cols_p, cols_r = torch.arange(P)[None, :], torch.arange(R)[None, :]
    p_mask = (cols_p >= P - p_len[:, None]).long()
    r_mask = (cols_r < r_len[:, None]).long()
    response_mask = r_mask * ((cols_r % 40) < 24).long()
    attention_mask = torch.cat([p_mask, r_mask], 1)
    input_ids = torch.randint(3, vocab, (rows, P + R), generator=g) * attention_mask
    adv = torch.randn(rows, 1, generator=g) * response_mask
    batch = DataProto.from_dict(tensors={
        "input_ids": input_ids, "attention_mask": attention_mask, "responses": input_ids[:, P:],
        "position_ids": (attention_mask.cumsum(-1) - 1).clamp(min=0), "response_mask": response_mask,
        "advantages": adv}, meta_info={"temperature": 1.0, "global_step": 1})
    return batch.to(device) if str(device) != "cpu" else batch


def _plain_update(model, optimizer, batch, plan, clip: float = 0.2, grad_clip: float = 1.0) -> None:
    """The reference loop: per mini-batch, per micro-batch index set: trimmed forward, log-probs of the
    response tokens, clipped PPO loss / the mini-batch's token count, backward; then clip + AdamW."""
    import torch

    td = batch.batch
    R = td["responses"].shape[1]
    P = td["input_ids"].shape[1] - R
    for mini_rows, micro_sets in plan:
        n_tok = td["response_mask"][mini_rows].sum().clamp(min=1)
        for idx in micro_sets:
            am = td["attention_mask"][idx]
            real = am.any(0).nonzero()
            start, end = min(int(real[0]), P - 1), max(int(real[-1]) + 1, P + 1)
            keep = end - P
            logits = model(input_ids=td["input_ids"][idx, start:end], attention_mask=am[:, start:end],
                           position_ids=td["position_ids"][idx, start:end], use_cache=False,
                           logits_to_keep=keep + 1).logits[:, :-1]
            lp = torch.log_softmax(logits.float(), -1).gather(-1, td["responses"][idx, :keep, None]).squeeze(-1)
            ratio = torch.exp(lp - td["old_log_probs"][idx, :keep])
            adv, mask = td["advantages"][idx, :keep], td["response_mask"][idx, :keep]
            loss_mat = torch.maximum(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip))
            ((loss_mat * mask).sum() / n_tok).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


class _PeakMemory:
    """Peak memory over a block: CUDA's max_memory_allocated, or on CPU the peak RSS growth above the
    RSS at entry, sampled every 2 ms by a thread (torch kernels release the GIL)."""

    def __init__(self, device):
        self.device, self.peak_mib = device, 0.0

    def __enter__(self):
        import threading

        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            return self
        self._base = self._rss()
        self._peak = self._base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _sample(self):
        while not self._stop.wait(0.002):
            self._peak = max(self._peak, self._rss())

    def __exit__(self, *exc):
        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize()
            self.peak_mib = torch.cuda.max_memory_allocated() / 2**20
        else:
            self._stop.set()
            self._thread.join()
            self.peak_mib = (max(self._peak, self._rss()) - self._base) / 2**20
        return False


def run_actor_bench(args) -> None:
    """Print the actor-update table (see the module docstring)."""
    import contextlib
    import copy
    import functools

    import torch

    from verl.config.schema import ActorConfig
    from verl.utils import model_utils
    from verl.utils.tiny_model import build_tiny_model
    from verl.workers.agent_actor.base import MicroBatching
    from verl.workers.agent_actor.dp_actor import DataParallelPPOActor

    device = torch.device(args.device)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    work = tempfile.mkdtemp(prefix="bench_actor_update_")
    path = build_tiny_model(os.path.join(work, "model"), hidden_size=args.hidden, num_layers=args.layers,
                            num_heads=args.heads, num_kv_heads=args.heads, intermediate_size=args.intermediate)
    model0 = model_utils.load_causal_lm(path, dtype=torch.float32, attn_implementation="sdpa").to(device)
    model0.config.use_cache = False
    batch = _synthetic_batch(model0.config.vocab_size, args.rows, args.prompt_len, args.response_len, device)
    lens = batch.batch["attention_mask"].sum(-1)
    real_tokens = int(lens.sum())
    max_token_len = args.max_token_len or int(args.micro * float(lens.float().mean()))
    mini = args.rows // args.mini_batches
    # GPU: fp32 master weights, bf16 compute (as the workers); CPU: fp32
    autocast = ((lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if device.type == "cuda"
                else contextlib.nullcontext)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    def actor_for(model, dynamic: bool, offload: bool = False):
        cfg = ActorConfig(ppo_mini_batch_size=mini, ppo_micro_batch_size_per_gpu=args.micro,
                          use_dynamic_bsz=dynamic, ppo_max_token_len_per_gpu=max_token_len, entropy_coeff=0.0,
                          use_kl_loss=False, grad_clip=1.0, loss_agg_mode="token-mean")
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)
        return DataParallelPPOActor(cfg, model, optimizer, activation_offload=offload)

    with torch.no_grad(), autocast():
        batch.batch["old_log_probs"] = actor_for(model0, False).compute_log_prob(batch, calculate_entropy=False)[0]

    def timed(fn) -> tuple[float, float]:
        """(wall s, CPU s of this process): on a shared host the CPU time is the steadier measure of work."""
        sync()
        start, cpu = time.perf_counter(), time.process_time()
        with autocast():
            fn()
        sync()
        return time.perf_counter() - start, time.process_time() - cpu

    rows = []
    for name, dynamic in (("fixed micro-batches", False), ("use_dynamic_bsz", True)):
        batching = MicroBatching(args.micro, max_token_len if dynamic else None)
        plan = []
        for sl in range(0, args.rows, mini):
            mini_rows = torch.arange(sl, min(sl + mini, args.rows), device=device)
            micro_sets = batching.split(batch.batch["attention_mask"][mini_rows])
            plan.append((mini_rows, [mini_rows[i.to(device)] for i in micro_sets]))
        ours = actor_for(copy.deepcopy(model0), dynamic)
        plain_model = copy.deepcopy(model0)
        plain_opt = torch.optim.AdamW(plain_model.parameters(), lr=1e-6)
        plain_model.train()
        run_ours = functools.partial(ours.update_policy, batch)
        run_plain = functools.partial(_plain_update, plain_model, plain_opt, batch, plan)
        timed(run_ours), timed(run_plain)  # warm-up
        torch.manual_seed(0)
        t_ours, t_plain = [], []
        for _ in range(args.steps):  # interleaved, so a load change on the host hits both alike
            t_ours.append(timed(run_ours))
            t_plain.append(timed(run_plain))
        mem = {}
        for offload in (False, True):
            ours.activation_offload = offload
            with _PeakMemory(device) as peak:
                timed(run_ours)
            mem[offload] = peak.peak_mib
        # best of N: the run least disturbed by other load on the host
        ours_s, plain_s = min(t[0] for t in t_ours), min(t[0] for t in t_plain)
        cpu_ratio = min(t[1] for t in t_ours) / min(t[1] for t in t_plain)
        padded = sum(len(i) * int(batch.batch["attention_mask"][i].any(0).sum()) for _, sets in plan for i in sets)
        rows.append((name, sum(len(s) for _, s in plan), padded / real_tokens, real_tokens / ours_s,
                     real_tokens / plain_s, ours_s / plain_s, cpu_ratio, mem[False], mem[True]))

    print(f"actor update on {device.type}: {args.rows} rows ({args.mini_batches} mini-batch(es)), P={args.prompt_len} "
          f"R={args.response_len}, {real_tokens} real tokens; model hidden={args.hidden} layers={args.layers} "
          f"vocab={model0.config.vocab_size}; micro={args.micro}, max_token_len={max_token_len}; "
          f"{args.threads} CPU thread(s); "
          f"best of {args.steps} updates after 1 warm-up")
    mem_name = "peak MiB (CUDA alloc)" if device.type == "cuda" else "peak RSS growth MiB"
    print(f"| policy | micro-batches | forwarded / real tokens | ours tok/s | plain tok/s | ours/plain wall "
          f"| ours/plain CPU | {mem_name}, offload off | on |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, n_micro, pad, ours_tps, plain_tps, ratio, cpu_ratio, m_off, m_on in rows:
        print(f"| {name} | {n_micro} | {pad:.2f} | {ours_tps:,.0f} | {plain_tps:,.0f} | {ratio:.2f}x "
              f"| {cpu_ratio:.2f}x | {m_off:,.1f} | {m_on:,.1f} |")


if __name__ == "__main__":
    main()
