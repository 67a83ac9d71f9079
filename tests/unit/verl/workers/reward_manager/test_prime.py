"""The prime reward manager: same scores as the naive one on normal input; a hung, raising or crashing
scorer gives 0, is counted, and never stalls the step."""
from __future__ import annotations

import json
import os
import textwrap
import time

import numpy as np
import pytest
import torch

from verl.config.schema import CodeSandboxConfig, PrimeRewardConfig, RewardModelConfig
from verl.protocol import DataProto
from verl.utils.reward_score import load_custom_score_fn
from verl.workers.reward_manager import NaiveRewardManager, PrimeRewardManager, get_reward_manager_cls

R = 160


class CharTokenizer:
    """Decodes ids as characters (chr(id)); enough to isolate the manager from a real tokenizer."""

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i) for i in ids)


def batch(rows: list[tuple[str, str, object]]) -> DataProto:
    """rows: (data_source, response text, ground truth or None for an env row)."""
    responses = torch.zeros(len(rows), R, dtype=torch.long)
    for i, (_, text, _) in enumerate(rows):
        responses[i, :len(text)] = torch.tensor([ord(c) for c in text])
    env = torch.zeros(len(rows), R)
    env[-1, 2] = 0.5  # the env row keeps its rollout score
    return DataProto.from_dict(
        tensors={"responses": responses, "response_mask": (responses != 0).long(), "token_level_scores": env},
        non_tensors={"data_source": np.array([r[0] for r in rows], dtype=object),
                     "reward_model": np.array([{"ground_truth": r[2]} if r[2] is not None else {"style": "env"}
                                               for r in rows], dtype=object)})


def config(**prime) -> RewardModelConfig:
    return RewardModelConfig(reward_manager="prime", prime=PrimeRewardConfig(**prime),
                             code_sandbox=CodeSandboxConfig(timeout_s=2.0))


def test_registered_as_prime():
    assert get_reward_manager_cls("prime") is PrimeRewardManager


def test_same_scores_as_naive_on_normal_input():
    cases = json.dumps({"inputs": ["2 3\n"], "outputs": ["5\n"]})
    rows = [("openai/gsm8k", "so #### 42", "42"), ("openai/gsm8k", "so #### 41", "42"),
            ("lighteval/MATH", "\\boxed{\\frac{1}{2}}", "0.5"), ("numina_olympiads", "\\boxed{\\frac{\\sqrt2}{2}}",
                                                                   "\\frac{1}{\\sqrt{2}}"),
            ("numina_synthetic_math", "\\boxed{3}", "4"),
            ("apps", "```python\na, b = map(int, input().split())\nprint(a + b)\n```", cases),
            ("taco", "```python\nprint(6)\n```", cases), ("webshop", "click[buy now]", None)]
    data = batch(rows)
    naive = NaiveRewardManager(tokenizer=CharTokenizer(), config=config())(data, return_dict=True)
    prime = PrimeRewardManager(tokenizer=CharTokenizer(), config=config(num_processes=3))
    try:
        out = prime(data, return_dict=True)
    finally:
        prime.close()
    assert torch.equal(out["reward_tensor"], naive["reward_tensor"])
    assert out["reward_tensor"].sum(-1).tolist() == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.5]
    assert out["reward_metrics"] == {"reward/timeouts": 0.0, "reward/errors": 0.0}


@pytest.fixture
def misbehaving_scorer(tmp_path):
    path = tmp_path / "scorer.py"
    path.write_text(textwrap.dedent("""
        import os, time

        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            if data_source == "hang":
                time.sleep(600)
            if data_source == "crash":
                os._exit(3)
            if data_source == "raise":
                raise RuntimeError("scorer bug")
            return {"score": 1.0, "pid": os.getpid()}
    """))
    return load_custom_score_fn(str(path))


def test_hung_raising_and_crashing_scorers_score_zero_and_are_counted(misbehaving_scorer):
    rows = [("ok", "a", "x"), ("hang", "b", "x"), ("ok", "c", "x"), ("crash", "d", "x"), ("raise", "e", "x"),
            ("hang", "f", "x"), ("ok", "g", "x"), ("webshop", "h", None)]
    manager = PrimeRewardManager(tokenizer=CharTokenizer(), compute_score=misbehaving_scorer,
                                 config=config(num_processes=2, timeout_s=2.0))
    try:
        manager(batch([("ok", "warm", "x")]))  # worker start-up is not part of the timed call
        start = time.perf_counter()
        out = manager(batch(rows), return_dict=True)
        elapsed = time.perf_counter() - start
        # the pool is whole again: the killed and crashed workers were replaced
        pids = [p.proc.pid for p in manager._pool._workers]
        assert len(pids) == 2 and all(p.proc.is_alive() for p in manager._pool._workers)
        again = manager(batch([("ok", "i", "x")]), return_dict=True)
    finally:
        manager.close()
    assert out["reward_tensor"].sum(-1).tolist() == [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.5]
    assert out["reward_metrics"] == {"reward/timeouts": 2.0, "reward/errors": 2.0}
    # two 2 s timeouts on two workers run side by side: far from 600 s, and from 2 x 2 s in series + the rest
    assert elapsed < 20, elapsed
    assert out["reward_extra_info"]["pid"] and set(out["reward_extra_info"]["pid"]) != {os.getpid()}
    assert again["reward_tensor"].sum().item() == 1.0
    for p in pids:  # close() stopped the workers
        with pytest.raises(ProcessLookupError):
            os.kill(p, 0)


def test_scorer_must_be_picklable():
    manager = PrimeRewardManager(tokenizer=CharTokenizer(), compute_score=lambda *a: 1.0, config=config())
    with pytest.raises(TypeError, match="picklable"):
        manager(batch([("ok", "a", "x")]))


def test_a_killed_scorer_takes_its_sandboxed_program_with_it(tmp_path):
    psutil = pytest.importorskip("psutil")
    from verl.utils.reward_score import sandbox

    path = tmp_path / "scorer.py"
    path.write_text(textwrap.dedent("""
        from verl.config.schema import CodeSandboxConfig
        from verl.utils.reward_score.sandbox import run_python

        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            run_python("import time\\ntime.sleep(600)", config=CodeSandboxConfig(timeout_s=600))
            return 1.0
    """))
    manager = PrimeRewardManager(tokenizer=CharTokenizer(), compute_score=load_custom_score_fn(str(path)),
                                 config=config(num_processes=1, timeout_s=3.0))
    try:
        out = manager(batch([("code", "x", "x"), ("webshop", "y", None)]), return_dict=True)
    finally:
        manager.close()
    assert out["reward_metrics"]["reward/timeouts"] == 1.0
    time.sleep(0.5)  # the kernel delivers the parent-death signal asynchronously
    left = [p for p in psutil.process_iter(["cmdline"]) if sandbox._CHILD in " ".join(p.info["cmdline"] or [])]
    assert left == []
