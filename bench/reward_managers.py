"""Benchmark: rule-scoring a batch with the naive and the prime reward managers (CPU).

Usage: python bench/reward_managers.py [--rows 48] [--processes 2 4] [--repeats 3]

The batch mixes verifiable-answer rows: a third gsm8k, a third prime math (numina: symbolic
equality with sympy), a third prime code (apps: a program run on 2 test cases in the sandbox, one
process per case). Naive scores them one by one in this process; prime in worker processes. The
prime pool is started by a first, untimed call (its wall time, start-up included, is reported
separately; it includes the forkserver importing this script's imports once, and sympy's import in
every worker).
A last line times prime on the same batch plus one row whose scorer hangs, with
reward_model.prime.timeout_s=2: the step costs about the timeout, not forever.
Reports the median wall time of --repeats calls and rows per second.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import torch

from verl.config.schema import PrimeRewardConfig, RewardModelConfig
from verl.protocol import DataProto
from verl.utils.reward_score import FileScoreFn
from verl.workers.reward_manager import NaiveRewardManager, PrimeRewardManager

R = 256


class CharTokenizer:
    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i) for i in ids)


def make_rows(n: int) -> list[tuple[str, str, object]]:
    cases = json.dumps({"inputs": ["2 3\n", "10 20\n"], "outputs": ["5\n", "30\n"]})
    kinds = [
        ("openai/gsm8k", "she has 3 + 4 = 7 apples\n#### 7", "7"),
        ("numina_olympiads", "so x = \\boxed{\\frac{\\sqrt{2}}{2}}", "\\frac{1}{\\sqrt{2}}"),
        ("apps", "```python\na, b = map(int, input().split())\nprint(a + b)\n```", cases),
    ]
    return [kinds[i % 3] for i in range(n)]


def make_batch(rows) -> DataProto:
    responses = torch.zeros(len(rows), R, dtype=torch.long)
    for i, (_, text, _) in enumerate(rows):
        responses[i, :len(text)] = torch.tensor([ord(c) for c in text])
    return DataProto.from_dict(
        tensors={"responses": responses, "response_mask": (responses != 0).long()},
        non_tensors={"data_source": np.array([r[0] for r in rows], dtype=object),
                     "reward_model": np.array([{"ground_truth": r[2]} for r in rows], dtype=object)})


def timed(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def hanging_scorer(path: str) -> FileScoreFn:
    with open(path, "w") as fh:
        fh.write(textwrap.dedent("""
            import time
            from verl.utils.reward_score import default_compute_score

            def compute_score(data_source, solution_str, ground_truth, extra_info=None):
                if data_source == "hang":
                    time.sleep(3600)
                return default_compute_score(data_source, solution_str, ground_truth, extra_info)
        """))
    return FileScoreFn(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=48)
    ap.add_argument("--processes", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows = make_rows(args.rows)
    data = make_batch(rows)
    tok = CharTokenizer()
    naive = NaiveRewardManager(tokenizer=tok)
    reference = naive(data)
    results = [("naive (in process)", "-", timed(lambda: naive(data), args.repeats))]
    for n in args.processes:
        prime = PrimeRewardManager(tokenizer=tok, config=RewardModelConfig(prime=PrimeRewardConfig(num_processes=n)))
        t0 = time.perf_counter()
        out = prime(data)  # starts and warms the pool
        start_s = time.perf_counter() - t0
        assert torch.equal(out, reference), "prime and naive disagree"
        results.append((f"prime, {n} processes", f"{start_s:.2f}", timed(functools.partial(prime, data), args.repeats)))
        prime.close()
    with tempfile.TemporaryDirectory() as tmp:
        hung_rows = rows + [("hang", "x", "x")]
        hung = make_batch(hung_rows)
        cfg = RewardModelConfig(prime=PrimeRewardConfig(num_processes=args.processes[-1], timeout_s=2.0))
        prime = PrimeRewardManager(tokenizer=tok, compute_score=hanging_scorer(os.path.join(tmp, "s.py")), config=cfg)
        prime(make_batch(rows[:2]))
        t0 = time.perf_counter()
        out = prime(hung, return_dict=True)
        hung_s = time.perf_counter() - t0
        prime.close()
    assert out["reward_metrics"]["reward/timeouts"] == 1.0

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"# reward managers: {args.rows} rows (gsm8k / numina / apps, 1/3 each), median of {args.repeats}; "
          f"{os.cpu_count()} cores, {platform.python_version()}, commit {commit}, load {os.getloadavg()[0]:.1f}")
    print("| manager | first call s (pool start + batch) | batch s | rows/s |\n|---|---:|---:|---:|")
    for name, start, secs in results:
        print(f"| {name} | {start} | {secs:.2f} | {args.rows / secs:.1f} |")
    print(f"| prime, {args.processes[-1]} processes, + 1 hung row (timeout_s=2) | - | {hung_s:.2f} | "
          f"{(args.rows + 1) / hung_s:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
