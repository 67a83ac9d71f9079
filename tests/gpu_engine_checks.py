"""Checks shared by the GPU rollout-engine tests (vLLM: tests/gpu/test_vllm_engine_gpu.py, SGLang:
tests/e2e/test_sglang_engine_gpu.py), so both engines are held to the same contract against HF
transformers. Not a test module: import it as `gpu_engine_checks` with tests/ on the path.

The model (`varied_tiny_model`) is the tiny Qwen2 with untied weights drawn with std 0.2, so greedy
continuations vary and top-1/top-2 logit gaps are far above bfloat16 noise: greedy ids must agree with
the float32 HF reference token for token.
"""
from __future__ import annotations

import asyncio

import torch
from helpers import hf_greedy

__all__ = ["PROMPTS", "GEN_LEN", "varied_tiny_model", "hf_reference", "colocated_engine",
           "check_greedy_matches_hf", "check_release_then_wake_up",
           "check_sleep_wake_update_round_trip", "check_stop_token_and_seeded_sampling"]

PROMPTS = [[5, 17, 42, 99, 7], [300, 301, 302, 303, 304, 305, 306, 307], [11, 900, 23, 1500, 8, 64, 1000]]
GEN_LEN = 12
DEVICE = "cuda"  # where the HF reference runs (a CPU dry run of the checks sets "cpu")


def varied_tiny_model(base_dir: str, out_dir: str) -> str:
    """Build the shared tiny model in `base_dir`, then save its varied-logit twin (float32) in `out_dir`."""
    from transformers import AutoConfig, AutoTokenizer, Qwen2ForCausalLM

    from verl.utils.tiny_model import build_tiny_model

    base = build_tiny_model(base_dir)
    config = AutoConfig.from_pretrained(base)
    config.tie_word_embeddings = False
    config.initializer_range = 0.2
    torch.manual_seed(0)
    Qwen2ForCausalLM(config).to(torch.float32).save_pretrained(out_dir)
    AutoTokenizer.from_pretrained(base).save_pretrained(out_dir)
    return out_dir


def hf_reference(model_dir: str):
    """The float32 HF transformers model the engines are checked against, on `DEVICE`, in eval mode."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(DEVICE).eval()


def colocated_engine(name: str, model_dir: str):
    """Rollout engine `name` (vllm | sglang) on CUDA as a colocated run builds it: sleep mode
    (`free_cache_engine`), CUDA graphs, 1 MiB weight buckets, 30% of the GPU's memory."""
    from verl.config.schema import RolloutConfig
    from verl.workers.rollout.base import build_rollout_engine

    cfg = RolloutConfig(name=name, max_model_len=2048, max_num_seqs=16, gpu_memory_utilization=0.3,
                        free_cache_engine=True, update_weights_bucket_megabytes=1)
    return build_rollout_engine(model_dir, cfg, torch.device("cuda"))


def _gen(engine, prompt, **kw):
    from verl.workers.rollout.base import SamplingParams

    return asyncio.run(engine.generate(prompt, SamplingParams(**kw)))


def _eos(model) -> set[int]:
    eos = model.config.eos_token_id
    return set(eos if isinstance(eos, list) else [] if eos is None else [eos])


def _greedy_all(engine) -> list:
    return [_gen(engine, p, max_tokens=GEN_LEN, temperature=0) for p in PROMPTS]


def check_greedy_matches_hf(engine, hf_model) -> None:
    """Greedy ids equal the HF reference's; log-probs within 0.05 (the engine computes in bfloat16)."""
    for prompt in PROMPTS:
        out = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=0)
        ref_ids, ref_lps = hf_greedy(hf_model, prompt, GEN_LEN, eos=_eos(hf_model), device=DEVICE)
        assert out.token_ids == ref_ids
        assert len(out.log_probs) == len(out.token_ids)
        torch.testing.assert_close(torch.tensor(out.log_probs), torch.tensor(ref_lps), atol=0.05, rtol=0)


def check_release_then_wake_up(engine) -> None:
    """A released engine (`sleep`: weights offloaded or backed up, KV cache freed) woken with no weight
    upload generates what it generated before: every weight, RoPE caches included, came back."""
    before = _greedy_all(engine)
    engine.sleep()
    assert engine.is_sleeping
    engine.wake_up()  # weights, then KV cache; no update_weights in between
    after = _greedy_all(engine)
    for b, a in zip(before, after, strict=True):
        assert a.token_ids == b.token_ids
        torch.testing.assert_close(torch.tensor(a.log_probs), torch.tensor(b.log_probs), atol=1e-3, rtol=0)


def check_sleep_wake_update_round_trip(engine, hf_model) -> None:
    """The worker's order after an update: sleep -> wake weights -> update (in > 1 buckets) -> wake KV
    cache; the engine then decodes greedily as HF with the new weights, and the original weights restore
    the original tokens."""
    prompt = PROMPTS[2]
    before = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=0)
    original = {k: v.detach().clone() for k, v in hf_model.named_parameters()}
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    perturbed = {k: v + 0.5 * v.std() * torch.randn(v.shape, generator=gen, device=DEVICE) for k, v in original.items()}

    engine.sleep()  # as the worker does after a rollout
    engine.wake_up(["weights"])
    engine.update_weights(iter(perturbed.items()))
    assert engine.stats["last_sync_buckets"] > 1  # 1 MiB buckets
    engine.wake_up(["kv_cache"])
    after = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=0)
    hf_model.load_state_dict(perturbed, strict=False)
    try:
        ref_ids, _ = hf_greedy(hf_model, prompt, GEN_LEN, eos=_eos(hf_model), device=DEVICE)
    finally:
        hf_model.load_state_dict(original, strict=False)
    assert after.token_ids == ref_ids and after.token_ids != before.token_ids

    engine.update_weights(original.items())
    restored = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=0)
    assert restored.token_ids == before.token_ids
    torch.testing.assert_close(torch.tensor(restored.log_probs), torch.tensor(before.log_probs), atol=1e-3, rtol=0)


def check_stop_token_and_seeded_sampling(engine, hf_model) -> None:
    """A stop token ends the request with finish_reason "stop" (the token kept); sampling respects max_tokens."""
    prompt = PROMPTS[1]
    ref, _ = hf_greedy(hf_model, prompt, GEN_LEN, eos=_eos(hf_model), device=DEVICE)
    stop_at = next(i for i in range(1, len(ref)) if ref[i] not in ref[:i])  # first occurrence at i
    out = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=0, stop_token_ids=(ref[stop_at],))
    assert out.finish_reason == "stop" and out.token_ids[-1] == ref[stop_at]
    short = _gen(engine, prompt, max_tokens=3, temperature=1.0, seed=5)
    assert len(short.token_ids) <= 3 and short.finish_reason in ("stop", "length")
