"""Benchmark: advantage estimators and policy loss + backward on a 256 x 8,192-token batch (CPU).

Usage: python bench/core_algos.py [--bs 256] [--T 8192] [--repeats 5]

The batch is multi-turn shaped: each row alternates model turns (response_mask 1) and
environment observations (mask 0), 10 turns per trajectory, rollout.n = 8 samples per uid; the
final reward sits on the last model token. One warm-up call, then the median of --repeats calls.
"""
from __future__ import annotations

import argparse
import functools
import statistics
import time
from types import SimpleNamespace

import numpy as np
import torch

from verl.agent_trainer.ppo import core_algos as ca
from verl.config.schema import ActorConfig


def make_batch(bs: int, T: int, turns: int = 10, n: int = 8, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    seg = T // (2 * turns)
    pos = torch.arange(T)
    mask = (((pos // seg) % 2) == 0).float().expand(bs, T).clone()          # model, obs, model, obs, ...
    lengths = torch.randint(T // 2, T + 1, (bs,), generator=g)
    mask = mask * (pos.unsqueeze(0) < lengths.unsqueeze(1))
    last = (mask * pos).argmax(dim=-1)
    rewards = torch.zeros(bs, T)
    scores = torch.randint(0, 2, (bs,), generator=g).float()
    rewards[torch.arange(bs), last] = scores
    values = torch.randn(bs, T, generator=g)
    index = np.array([f"uid{i // n}" for i in range(bs)], dtype=object)
    n_turns = [int(((mask[i, 1:] - mask[i, :-1]) == 1).sum()) + int(mask[i, 0] == 1) for i in range(bs)]
    anchor = np.empty(bs, dtype=object)
    turn_rewards = np.empty(bs, dtype=object)
    for i in range(bs):
        anchor[i] = [f"page{(k + i) % 3}" for k in range(n_turns[i])]
        turn_rewards[i] = [0.0] * (n_turns[i] - 1) + [float(scores[i])]
    return dict(token_level_rewards=rewards, response_mask=mask, values=values, index=index,
                reward_baselines=torch.rand(bs, generator=g), anchor_obs=anchor, turn_rewards=turn_rewards)


def timed(fn, repeats: int) -> tuple[float, float]:
    """Median wall seconds and median process CPU seconds (all threads) per call."""
    fn()  # warm-up
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bs", type=int, default=256)
    ap.add_argument("--T", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    batch = make_batch(args.bs, args.T)
    algo = SimpleNamespace(gamma=0.99, lam=0.95, norm_adv_by_std_in_grpo=True,
                           gigpo=SimpleNamespace(step_advantage_w=1.0, mode="mean_norm"))
    print(f"batch {args.bs} x {args.T} tokens, torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"model tokens {int(batch['response_mask'].sum())}")
    print(f"{'component':<42}{'wall s':>10}{'cpu s':>10}")
    for name in sorted(ca.ADV_ESTIMATOR_REGISTRY):
        fn = ca.get_adv_estimator_fn(name)
        t = timed(functools.partial(fn, config=algo, **batch), args.repeats)
        print(f"{'adv/' + name:<42}{t[0]:>10.3f}{t[1]:>10.3f}")

    g = torch.Generator().manual_seed(1)
    mask = batch["response_mask"]
    old = -torch.rand(args.bs, args.T, generator=g) * 3
    adv, _ = ca.compute_grpo_outcome_advantage(batch["token_level_rewards"], mask, index=batch["index"], config=algo)
    cfg = ActorConfig(clip_ratio_high=0.28)
    for name in sorted(ca.POLICY_LOSS_REGISTRY):
        loss_fn = ca.get_policy_loss_fn(name)

        def step(loss_fn=loss_fn):
            logp = (old + 0.05 * torch.randn(args.bs, args.T, generator=g)).requires_grad_(True)
            loss, _ = loss_fn(old, logp, adv, mask, "token-mean", cfg)
            loss.backward()

        t = timed(step, args.repeats)
        print(f"{'loss+backward/' + name:<42}{t[0]:>10.3f}{t[1]:>10.3f}")
    ref = old + 0.1
    for kind in ("kl", "low_var_kl"):
        t = timed(functools.partial(ca.kl_penalty, old, ref, kind), args.repeats)
        print(f"{'kl_penalty/' + kind:<42}{t[0]:>10.3f}{t[1]:>10.3f}")


if __name__ == "__main__":
    main()
