"""The vLLM engine's start-up checks and error handling, on CPU without vLLM (a fake `vllm` module)."""
from __future__ import annotations

import sys
import types

import pytest

from verl.config.schema import RolloutConfig
from verl.workers.rollout.agent_vllm_rollout import vllm_rollout as vr


def test_only_vllm_032_is_accepted_with_one_line_naming_it():
    for ok in ("0.32.0", "0.32.3", "0.32.1+cu130"):
        vr.check_vllm_version(ok)
    for bad in ("0.31.2", "0.33.0", "0.8.5", "1.32.0"):
        with pytest.raises(RuntimeError, match=r"vLLM 0\.32\.x") as err:
            vr.check_vllm_version(bad)
        assert "\n" not in str(err.value) and bad in str(err.value)


def test_setup_gpu_extra_pins_the_supported_release():
    import pathlib
    import re

    setup = (pathlib.Path(__file__).parents[5] / "setup.py").read_text()
    gpu = re.search(r'"gpu": \[([^\]]*)\]', setup).group(1)
    assert f'"vllm=={vr.SUPPORTED_VLLM}.*"' in gpu, gpu


def test_tensor_parallel_above_one_is_refused_at_start_up():
    with pytest.raises(ValueError, match=r"tensor_model_parallel_size=2 is not supported"):
        vr.engine_args("m", RolloutConfig(tensor_model_parallel_size=2), on_cpu=False)
    with pytest.raises(ValueError, match="tensor_model_parallel_size=4"):
        vr.engine_args("m", RolloutConfig(), on_cpu=False, tensor_parallel_size=4)


def test_gpu_memory_utilization_is_used_as_given():
    for util in (0.3, 0.5, 0.85):
        assert vr.engine_args("m", RolloutConfig(gpu_memory_utilization=util), on_cpu=False)[
            "gpu_memory_utilization"] == util
    gib = 2**30
    vr.check_free_gpu_memory(0.5, free_bytes=41 * gib, total_bytes=80 * gib)  # fits: no error
    with pytest.raises(ValueError, match=r"gpu_memory_utilization=0\.5 .* at most 0\.31"):
        vr.check_free_gpu_memory(0.5, free_bytes=25 * gib, total_bytes=80 * gib)


def test_enforce_eager_auto_and_explicit():
    assert vr.engine_args("m", RolloutConfig(), on_cpu=False)["enforce_eager"] is False
    assert vr.engine_args("m", RolloutConfig(enforce_eager=True), on_cpu=False)["enforce_eager"] is True
    assert vr.engine_args("m", RolloutConfig(), on_cpu=True)["enforce_eager"] is True


class _FakeLLM:
    """Records AsyncLLM calls; `update_weights` fails with the real error, `finish_weight_update` with its own."""

    def __init__(self):
        self.calls = []

    def _rec(name, exc=None):
        async def method(self, *a, **kw):
            self.calls.append(name)
            if exc is not None:
                raise exc(f"{name} failed")
        return method

    pause_generation = _rec("pause_generation")
    reset_prefix_cache = _rec("reset_prefix_cache")
    resume_generation = _rec("resume_generation")
    init_weight_transfer_engine = _rec("init_weight_transfer_engine")
    start_weight_update = _rec("start_weight_update")
    update_weights = _rec("update_weights", ValueError)
    finish_weight_update = _rec("finish_weight_update", RuntimeError)


def _fake_vllm_modules(monkeypatch):
    """vllm.distributed.weight_transfer.{base,packed_tensor} with one chunk per call."""
    base = types.ModuleType("vllm.distributed.weight_transfer.base")
    base.WeightTransferInitRequest = lambda init_info: ("init", init_info)
    base.WeightTransferUpdateRequest = lambda update_info: ("update", update_info)
    packed = types.ModuleType("vllm.distributed.weight_transfer.packed_tensor")

    def producer(iterator, gpu_uuid, post_iter_func, buffer_size_bytes):
        items = list(iterator)
        yield types.SimpleNamespace(names=[n for n, _ in items], dtype_names=["float32"] * len(items),
                                    shapes=[list(t.shape) for _, t in items], tensor_sizes=[4] * len(items),
                                    ipc_handle={"h": (1,)})
    packed.packed_ipc_producer = producer
    for name in ("vllm", "vllm.distributed", "vllm.distributed.weight_transfer"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, base.__name__, base)
    monkeypatch.setitem(sys.modules, packed.__name__, packed)


def test_a_failed_weight_update_raises_the_real_error(monkeypatch):
    import asyncio
    import threading

    import torch

    _fake_vllm_modules(monkeypatch)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d: types.SimpleNamespace(uuid="gpu-0"))
    monkeypatch.setattr(torch.cuda, "ipc_collect", lambda: None)
    monkeypatch.setattr(torch.Tensor, "to", lambda self, *a, **kw: self)  # no CUDA here: stay on CPU
    eng = vr.VLLMEngine.__new__(vr.VLLMEngine)
    eng._closed, eng._released, eng.on_cpu, eng._ipc_ready = False, set(), False, False
    eng._checkpoint_shapes, eng._groups, eng._tied = None, {}, False
    eng.weights_dtype, eng.bucket_bytes = torch.float32, 1 << 20
    eng.stats = {"weight_updates": 0, "last_sync_bytes": 0, "last_sync_buckets": 0}
    eng._llm = llm = _FakeLLM()
    eng._loop = asyncio.new_event_loop()
    eng._thread = threading.Thread(target=eng._loop.run_forever, daemon=True)
    eng._thread.start()
    try:
        with pytest.raises(ValueError, match="update_weights failed"):  # not finish_weight_update's RuntimeError
            eng.update_weights([("model.norm.weight", torch.ones(2))])
    finally:
        eng._loop.call_soon_threadsafe(eng._loop.stop)
        eng._thread.join(timeout=10)
    # the cleanup still ran: the update was finished and generation resumed
    assert llm.calls[-3:] == ["finish_weight_update", "reset_prefix_cache", "resume_generation"]
    assert eng.stats["weight_updates"] == 0


@pytest.mark.parametrize("per_request_seed, expected", [(False, None), (True, 123)])
def test_per_request_seed_only_when_set(monkeypatch, per_request_seed, expected):
    """`_generate` passes SamplingParams.seed to vLLM only with per_request_seed (null: on CPU only)."""
    import asyncio

    from verl.workers.rollout.base import SamplingParams

    assert RolloutConfig().per_request_seed is None
    seen = {}
    fake = types.SimpleNamespace(SamplingParams=lambda **kw: seen.update(kw) or kw, TokensPrompt=dict)
    sp = types.ModuleType("vllm.sampling_params")
    sp.RequestOutputKind = types.SimpleNamespace(FINAL_ONLY="final")
    monkeypatch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sp)

    class LLM:
        async def generate(self, prompt, params, request_id):
            comp = types.SimpleNamespace(token_ids=[5], logprobs=[{5: types.SimpleNamespace(logprob=-0.1)}],
                                         finish_reason="length", stop_reason=None)
            yield types.SimpleNamespace(outputs=[comp])

    eng = vr.VLLMEngine.__new__(vr.VLLMEngine)
    eng._vllm, eng._llm, eng.per_request_seed = fake, LLM(), per_request_seed
    eng._counter, eng.stats = iter(range(9)), {"requests": 0, "generated_tokens": 0}
    out = asyncio.run(eng._generate([1, 2], SamplingParams(max_tokens=1, seed=123)))
    assert out.token_ids == [5] and seen["seed"] == expected
