"""The HF engine on CUDA: its decode loop queues step t+1 before reading step t there (`_lookahead`), and
reads each step through pinned memory behind an event. Greedy ids equal `model.generate`'s, log-probs
equal a forward pass, and a request's sampled ids do not depend on its batch-mates or on the lookahead.
Skipped without CUDA (conftest: `gpu` marker)."""
from __future__ import annotations

import asyncio

import pytest
import torch
from helpers import mixed_sampling_params

from verl.workers.rollout.base import SamplingParams
from verl.workers.rollout.hf_rollout import HFEngine

pytestmark = pytest.mark.gpu


def _gather(engine, reqs):
    async def main():
        return await asyncio.gather(*(engine.generate(p, s) for p, s in reqs))
    return asyncio.run(main())


@pytest.fixture(scope="module")
def tiny_model_dir():
    from verl.utils.tiny_model import build_tiny_model

    return build_tiny_model()


@pytest.fixture(scope="module")
def prompts(tiny_model_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    return [tok.encode(f"Instruction: [SEP] i need a blue lamp number {i} " * (1 + i % 3), add_special_tokens=False)
            for i in range(6)]


def test_greedy_matches_generate_and_log_probs_match_forward(tiny_model_dir, prompts):
    from transformers import AutoModelForCausalLM

    eng = HFEngine(tiny_model_dir, {"dtype": "float32", "free_cache_engine": False}, device="cuda")
    try:
        assert eng._lookahead
        outs = _gather(eng, [(p, SamplingParams(max_tokens=16, temperature=0)) for p in prompts])
        model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).cuda().eval()
        for p, o in zip(prompts, outs, strict=True):
            with torch.no_grad():
                want = model.generate(torch.tensor([p], device="cuda"), max_new_tokens=16, do_sample=False,
                                      eos_token_id=None, pad_token_id=0)[0, len(p):].tolist()
                logits = model(torch.tensor([p + o.token_ids], device="cuda")).logits[0, len(p) - 1:-1].float()
            assert o.token_ids == want
            ref = torch.log_softmax(logits, -1).gather(1, torch.tensor(o.token_ids, device="cuda")[:, None]).squeeze(1)
            torch.testing.assert_close(torch.tensor(o.log_probs), ref.cpu(), atol=1e-4, rtol=0)
    finally:
        eng.shutdown()


@pytest.mark.parametrize("lookahead", [True, False])
def test_sampled_rows_do_not_depend_on_batch_or_lookahead(tiny_model_dir, prompts, lookahead):
    cfg = {"dtype": "float32", "free_cache_engine": False}
    eng = HFEngine(tiny_model_dir, cfg, device="cuda")
    alone = HFEngine(tiny_model_dir, cfg, device="cuda", prefix_cache_tokens=0)
    eng._lookahead = lookahead
    sps = mixed_sampling_params()
    try:
        batched = _gather(eng, list(zip(prompts, sps, strict=True)))
        for p, s, got in zip(prompts, sps, batched, strict=True):
            want = _gather(alone, [(p, s)])[0]
            assert got.token_ids == want.token_ids and got.finish_reason == want.finish_reason
            torch.testing.assert_close(torch.tensor(got.log_probs), torch.tensor(want.log_probs), atol=1e-4, rtol=0)
        # the same seeds reproduce (prefix KV reused this time)
        again = _gather(eng, list(zip(prompts, sps, strict=True)))
        assert [o.token_ids for o in again] == [o.token_ids for o in batched]
    finally:
        eng.shutdown()
        alone.shutdown()
