"""The SGLang adapter (`sglang_rollout.SGLangEngine`) in isolation.

SGLang runs only on CUDA and cannot be installed on the CPU machines (nor on the lent GPU machine),
so these tests ISOLATE THE ADAPTER: `_FakeSGLang` below stands in for exactly the `sglang.Engine`
surface the adapter uses (constructor kwargs, `loop`, `async_generate`, the tokenizer manager's
`update_weights_from_tensor` / `release_memory_occupation` / `resume_memory_occupation` /
`flush_cache`, `shutdown`, the io_struct request types and the serializer). The fake decodes with a
real tiny transformers model under SGLang's documented rules (temperature 0 -> top_k 1; the length
limit is checked before stop tokens; log-probs are log softmax(logits / T)), so what is checked is
the adapter's translation: sampling params, output parsing, finish reasons, buckets, memory tags,
threading. The real engine is exercised by tests/gpu/test_sglang_engine_gpu.py where SGLang exists.
"""
from __future__ import annotations

import asyncio
import importlib.util
import pickle
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
import torch
from helpers import hf_greedy

from verl.config.schema import RolloutConfig
from verl.workers.rollout.base import SamplingParams
from verl.workers.rollout.sglang_rollout import sglang_rollout


# ----------------------------------------------------------------------------- the fake SGLang surface
@dataclass
class _UpdateReq:  # sglang.srt.managers.io_struct.UpdateWeightsFromTensorReqInput
    serialized_named_tensors: list
    load_format: str | None = None
    flush_cache: bool = True


@dataclass
class _ReleaseReq:  # io_struct.ReleaseMemoryOccupationReqInput
    tags: list | None = None


@dataclass
class _ResumeReq:  # io_struct.ResumeMemoryOccupationReqInput
    tags: list | None = None


class _Serializer:  # sglang.srt.utils.MultiprocessingSerializer (bytes across the process boundary)
    @staticmethod
    def serialize(obj):
        return pickle.dumps(obj)


class _TokenizerManager:
    def __init__(self, engine):
        self.engine = engine

    async def update_weights_from_tensor(self, obj, request):
        assert request is None
        (payload,) = obj.serialized_named_tensors  # tp_size=1: one payload
        named = pickle.loads(payload)
        params = dict(self.engine.model.named_parameters())
        unknown = [n for n, _ in named if n not in params]
        if unknown:
            return False, f"unknown parameter {unknown[0]}"
        with torch.no_grad():
            for name, t in named:
                params[name].copy_(t)
        self.engine.calls.append(("update", [(n, t.dtype, t.numel() * t.element_size()) for n, t in named],
                                  obj.flush_cache))
        return True, "Succeeded to update model weights."

    async def release_memory_occupation(self, obj, request):
        self.engine.released = True
        self.engine.calls.append(("release", obj.tags))

    async def resume_memory_occupation(self, obj, request):
        self.engine.released = False
        self.engine.calls.append(("resume", obj.tags))

    async def flush_cache(self):
        self.engine.calls.append(("flush",))


class _FakeEngine:
    """`sglang.Engine` stand-in: a tiny HF model decoding one request at a time."""

    instances: list = []

    def __init__(self, **kwargs):
        from transformers import AutoModelForCausalLM

        self.kwargs = kwargs
        self.model = AutoModelForCausalLM.from_pretrained(kwargs["model_path"],
                                                          dtype=getattr(torch, kwargs["dtype"])).eval()
        self.eos = {int(self.model.config.eos_token_id)} if self.model.config.eos_token_id is not None else set()
        self.loop = asyncio.new_event_loop()
        self.tokenizer_manager = _TokenizerManager(self)
        self.calls, self.released, self.closed = [], False, False
        _FakeEngine.instances.append(self)

    async def async_generate(self, input_ids=None, sampling_params=None, return_logprob=False):
        assert asyncio.get_running_loop() is self.loop, "SGLang coroutines must run on engine.loop"
        assert return_logprob and isinstance(input_ids[0], int)
        sp = dict(sampling_params)
        self.calls.append(("generate", sp))
        if self.released:
            return {"output_ids": [], "meta_info": {"id": "r", "output_token_logprobs": [],
                                                    "finish_reason": {"type": "abort", "message": "memory released"}}}
        temperature, top_k = sp["temperature"], sp["top_k"]
        if temperature < 1e-6:
            temperature, top_k = 1.0, 1
        gen = torch.Generator().manual_seed(sp.get("sampling_seed", 0))
        stops = set(sp["stop_token_ids"]) | (set() if sp.get("ignore_eos") else self.eos)
        ids, out, finish = list(input_ids), [], None
        while finish is None:
            with torch.no_grad():
                logits = self.model(torch.tensor([ids])).logits[0, -1].float() / temperature
            logprobs = torch.log_softmax(logits, -1)
            tok = int(logits.argmax()) if top_k == 1 else int(torch.multinomial(logprobs.exp(), 1, generator=gen))
            out.append((float(logprobs[tok]), tok, None))
            ids.append(tok)
            if len(out) >= sp["max_new_tokens"]:
                finish = {"type": "length", "length": sp["max_new_tokens"]}
            elif tok in stops:
                finish = {"type": "stop", "matched": tok}
            await asyncio.sleep(0)  # let concurrent requests interleave
        return {"output_ids": [t for _, t, _ in out],
                "meta_info": {"id": "r", "output_token_logprobs": out, "finish_reason": finish}}

    def shutdown(self):
        self.closed = True


@pytest.fixture
def fake_sglang(monkeypatch):
    """Route the adapter's SGLang imports to the fake (isolating the adapter)."""
    io = SimpleNamespace(UpdateWeightsFromTensorReqInput=_UpdateReq, ReleaseMemoryOccupationReqInput=_ReleaseReq,
                         ResumeMemoryOccupationReqInput=_ResumeReq)
    monkeypatch.setattr(sglang_rollout, "_import_sglang",
                        lambda: SimpleNamespace(Engine=_FakeEngine, io_struct=io, serializer=_Serializer))
    _FakeEngine.instances.clear()
    yield
    _FakeEngine.instances.clear()


@pytest.fixture
def make_engine(fake_sglang, tiny_model_dir):
    built = []

    def make(**cfg):
        dtype = cfg.pop("dtype", None)
        eng = sglang_rollout.SGLangEngine(tiny_model_dir, RolloutConfig(name="sglang", max_model_len=2048, **cfg),
                                          dtype=dtype)
        built.append(eng)
        return eng, _FakeEngine.instances[-1]

    yield make
    for eng in built:
        eng.shutdown()


@pytest.fixture(scope="module")
def hf_model(tiny_model_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).eval()


# ----------------------------------------------------------------------------- pure translation
def test_sampling_params_translation():
    sp = sglang_rollout.sampling_params(SamplingParams(max_tokens=7, temperature=0.7, top_p=0.9, top_k=5,
                                                       stop_token_ids=(3, 9), seed=11))
    assert sp == {"max_new_tokens": 7, "temperature": 0.7, "top_p": 0.9, "top_k": 5, "stop_token_ids": [3, 9],
                  "no_stop_trim": True, "skip_special_tokens": False, "sampling_seed": 11}
    off = sglang_rollout.sampling_params(SamplingParams(max_tokens=2, temperature=0))
    assert off["top_k"] == -1 and off["temperature"] == 0.0 and "sampling_seed" not in off


def test_engine_args_translate_the_rollout_section():
    cfg = RolloutConfig(name="sglang", tensor_model_parallel_size=2, gpu_memory_utilization=0.4, max_model_len=4096,
                        max_num_seqs=64, enable_prefix_caching=False, enforce_eager=False, seed=5)
    args = sglang_rollout.sglang_engine_args("/m", cfg, dtype="bfloat16", seed=cfg.seed, trust_remote_code=True,
                                             enable_memory_saver=True)
    assert args == {"model_path": "/m", "dtype": "bfloat16", "random_seed": 5, "tp_size": 2, "mem_fraction_static": 0.4,
                    "context_length": 4096, "max_running_requests": 64, "disable_radix_cache": True,
                    "disable_cuda_graph": False, "enable_memory_saver": True, "enable_weights_cpu_backup": True,
                    "skip_tokenizer_init": True, "trust_remote_code": True, "log_level": "error"}
    # not colocated (no memory release): nothing to back up
    resident = sglang_rollout.sglang_engine_args("/m", cfg, dtype="bfloat16", seed=0, trust_remote_code=False,
                                                 enable_memory_saver=False)
    assert resident["enable_memory_saver"] is False and resident["enable_weights_cpu_backup"] is False


def _answer(ids, kind, lps=None):
    lps = lps or [-0.5] * len(ids)
    logprobs = [(lp, t, None) for lp, t in zip(lps, ids, strict=True)]
    return {"output_ids": list(ids), "meta_info": {"id": "x", "finish_reason": {"type": kind},
                                                   "output_token_logprobs": logprobs}}


def test_parse_output_finish_reasons_and_checks():
    sp = SamplingParams(max_tokens=3, stop_token_ids=(7,))
    out = sglang_rollout.parse_output(_answer([4, 5, 7], "stop", [-0.1, -0.2, -0.3]), sp)
    assert (out.token_ids, out.log_probs, out.finish_reason) == ([4, 5, 7], [-0.1, -0.2, -0.3], "stop")
    assert sglang_rollout.parse_output(_answer([4, 5, 6], "length"), sp).finish_reason == "length"
    # SGLang checks the length limit first: a stop token sampled as the last allowed token ends the turn
    assert sglang_rollout.parse_output(_answer([4, 5, 7], "length"), sp).finish_reason == "stop"
    with pytest.raises(RuntimeError, match="abort"):
        sglang_rollout.parse_output(_answer([], "abort"), sp)
    bad = _answer([4, 5], "length")
    bad["output_ids"] = [4, 6]
    with pytest.raises(RuntimeError, match="differ"):
        sglang_rollout.parse_output(bad, sp)


# ----------------------------------------------------------------------------- the adapter around the fake
def test_generate_greedy_matches_hf_from_any_event_loop(make_engine, hf_model):
    eng, fake = make_engine()
    assert fake.kwargs["skip_tokenizer_init"] and fake.kwargs["dtype"] == "float32"
    prompts = [[5, 17, 42, 99, 7], [300, 301, 302, 303], [11, 900, 23]]

    async def many():
        return await asyncio.gather(*[eng.generate(p, SamplingParams(max_tokens=6, temperature=0)) for p in prompts])

    outs = asyncio.run(many())  # a caller loop that is not the engine's
    for p, o in zip(prompts, outs, strict=True):
        ref_ids, ref_lps = hf_greedy(hf_model, p, 6)
        assert o.token_ids == ref_ids and o.finish_reason == "length"
        torch.testing.assert_close(torch.tensor(o.log_probs), torch.tensor(ref_lps), atol=1e-5, rtol=0)
    again = asyncio.run(eng.generate(prompts[0], SamplingParams(max_tokens=6, temperature=0)))  # a fresh loop
    assert again.token_ids == outs[0].token_ids
    assert eng.stats["requests"] == 4 and eng.stats["generated_tokens"] == 24


def test_stop_token_ends_and_is_kept(make_engine, hf_model):
    eng, _ = make_engine()
    prompt = [300, 301, 302, 303]
    ref, _ = hf_greedy(hf_model, prompt, 6)
    out = asyncio.run(eng.generate(prompt, SamplingParams(max_tokens=6, temperature=0, stop_token_ids=(ref[2],))))
    cut = ref.index(ref[2]) + 1
    assert out.token_ids == ref[:cut] and out.finish_reason == "stop"


def test_bucketed_weight_update_equals_one_bucket_and_respects_the_size(make_engine, hf_model):
    original = {k: v.detach().clone() for k, v in hf_model.named_parameters()}
    gen = torch.Generator().manual_seed(0)
    perturbed = {k: v + 0.5 * v.std() * torch.randn(v.shape, generator=gen) for k, v in original.items()}
    prompt = [11, 900, 23, 1500]
    greedy = SamplingParams(max_tokens=8, temperature=0)
    results = {}
    for mb in (1, 512):  # 1 MiB: many buckets; 512 MiB: the whole tiny model in one
        eng, fake = make_engine(update_weights_bucket_megabytes=mb)
        eng.update_weights(iter(perturbed.items()))  # one-shot generator, as the trainer passes
        updates = [c for c in fake.calls if c[0] == "update"]
        for _, items, _ in updates:
            assert len(items) == 1 or sum(size for _, _, size in items) <= mb << 20
        assert [c[2] for c in updates] == [False] * (len(updates) - 1) + [True]  # the last one flushes
        assert sorted(n for _, items, _ in updates for n, _, _ in items) == sorted(perturbed)
        assert eng.stats["last_sync_buckets"] == len(updates)
        results[mb] = (len(updates), asyncio.run(eng.generate(prompt, greedy)))
    assert results[1][0] > 1 and results[512][0] == 1
    assert results[1][1].token_ids == results[512][1].token_ids
    assert results[1][1].log_probs == results[512][1].log_probs
    hf_model.load_state_dict(perturbed, strict=False)
    try:
        ref_ids, _ = hf_greedy(hf_model, prompt, 8)
    finally:
        hf_model.load_state_dict(original, strict=False)
    assert results[1][1].token_ids == ref_ids


def test_weight_update_casts_to_the_engine_dtype_and_reports_refusals(make_engine, hf_model):
    eng, fake = make_engine(dtype="bfloat16")
    eng.update_weights(list(hf_model.named_parameters())[:3])
    (_, items, _), = [c for c in fake.calls if c[0] == "update"]
    assert {dtype for _, dtype, _ in items} == {torch.bfloat16}
    with pytest.raises(RuntimeError, match="refused.*no_such"):
        eng.update_weights([("model.no_such.weight", torch.zeros(2))])


def test_free_cache_engine_needs_cuda(make_engine):
    with pytest.raises(ValueError, match=r"free_cache_engine=true.*needs CUDA"):
        make_engine(free_cache_engine=True)
    eng, fake = make_engine()  # null: off without CUDA
    assert not eng.free_cache and fake.kwargs["enable_memory_saver"] is False
    with pytest.raises(RuntimeError, match="free_cache_engine=true"):
        eng.sleep()


def test_sleep_and_wake_translate_to_memory_occupation_calls(make_engine, hf_model, monkeypatch):
    # isolate the release/resume translation from the device check (SGLang's memory saver needs CUDA)
    monkeypatch.setattr(sglang_rollout, "_memory_saver_support", lambda: (True, ""))
    eng, fake = make_engine(free_cache_engine=True, enforce_eager=False)
    assert eng.free_cache and fake.kwargs["enable_memory_saver"] is True
    eng.sleep()
    assert eng.is_sleeping and fake.calls[-1] == ("release", None)
    with pytest.raises(RuntimeError, match="asleep"):
        asyncio.run(eng.generate([5, 6], SamplingParams(max_tokens=2)))
    with pytest.raises(RuntimeError, match="wake_up"):
        eng.update_weights(hf_model.named_parameters())
    eng.wake_up(["weights"])
    assert fake.calls[-1] == ("resume", ["weights"])
    eng.update_weights(hf_model.named_parameters())
    assert fake.calls[-1][0] == "update" and fake.calls[-1][2] is False  # KV cache asleep: flushed on wake
    eng.wake_up(["kv_cache"])
    assert fake.calls[-2:] == [("resume", ["kv_cache", "cuda_graph"]), ("flush",)]
    assert not eng.is_sleeping
    out = asyncio.run(eng.generate([5, 6, 7], SamplingParams(max_tokens=3, temperature=0)))
    assert out.token_ids == hf_greedy(hf_model, [5, 6, 7], 3)[0]


def test_shutdown_is_idempotent(make_engine):
    eng, fake = make_engine()
    eng.shutdown()
    eng.shutdown()
    assert fake.closed
    with pytest.raises(RuntimeError, match="shutdown"):
        asyncio.run(eng.generate([5], SamplingParams(max_tokens=1)))


@pytest.mark.skipif(importlib.util.find_spec("sglang") is not None, reason="SGLang is installed here")
def test_sglang_not_installed_fails_at_start_up_naming_installed_engines(tiny_model_dir):
    """No fake: on this machine SGLang is really missing."""
    from verl.workers.rollout.base import build_rollout_engine, installed_engines

    with pytest.raises(ImportError) as info:
        build_rollout_engine(tiny_model_dir, RolloutConfig(name="sglang"), torch.device("cpu"))
    msg = str(info.value)
    assert "rollout.name=sglang" in msg and ".[gpu]" in msg and str(installed_engines()) in msg
    assert "'hf'" in msg
