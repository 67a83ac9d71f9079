"""The engine contract's shared parts: weight buckets, the sleep/wake state, free_cache_engine resolution."""
from __future__ import annotations

import pytest
import torch

from verl.workers.rollout.base import RolloutEngine, iter_weight_buckets, resolve_free_cache_engine


def _nbytes(bucket):
    return sum(t.numel() * t.element_size() for _, t in bucket)


def _layers(n_layers=4, sizes=(100, 300, 50)):
    g = torch.Generator().manual_seed(0)
    return [(f"model.layers.{i}.w{j}", torch.randn(s, generator=g))
            for i in range(n_layers) for j, s in enumerate(sizes)]


@pytest.mark.parametrize("bucket_bytes", [1, 400, 1000, 1800, 10**9])
def test_buckets_respect_the_size_keep_order_and_lose_nothing(bucket_bytes):
    tensors = _layers()
    buckets = list(iter_weight_buckets(iter(tensors), bucket_bytes))
    assert [n for b in buckets for n, _ in b] == [n for n, _ in tensors]
    for b in buckets:
        assert len(b) == 1 or _nbytes(b) <= bucket_bytes
    for (_, a), (_, b) in zip(tensors, [x for bk in buckets for x in bk], strict=True):
        assert torch.equal(a, b)
    if bucket_bytes >= _nbytes(tensors):
        assert len(buckets) == 1
    # greedy packing: no two neighbouring buckets would have fitted in one
    for a, b in zip(buckets, buckets[1:], strict=False):
        assert _nbytes(a) + b[0][1].numel() * 4 > bucket_bytes


def test_groups_are_never_split_and_oversized_groups_go_alone():
    tensors = _layers(sizes=(100, 300, 50))  # 1800 bytes per layer in fp32
    group = lambda n: n.rsplit(".", 1)[0]  # noqa: E731
    buckets = list(iter_weight_buckets(iter(tensors), 4000, group_of=group))
    assert [len(b) for b in buckets] == [6, 6]  # two whole layers per bucket
    for b in buckets:
        assert _nbytes(b) <= 4000
    small = list(iter_weight_buckets(iter(tensors), 1000, group_of=group))
    assert [sorted({group(n) for n, _ in b}) for b in small] == [[f"model.layers.{i}"] for i in range(4)]


def test_tensors_are_cast_to_the_engine_dtype_and_consumed_lazily():
    pulled = []

    def source():
        for name, t in _layers():
            pulled.append(name)
            yield name, t.requires_grad_()

    it = iter_weight_buckets(source(), 800, dtype=torch.bfloat16)
    first = next(it)
    assert {t.dtype for _, t in first} == {torch.bfloat16} and not any(t.requires_grad for _, t in first)
    assert _nbytes(first) <= 800
    # a bucket closes when the group after its last one starts: look-ahead of one group + one tensor
    assert len(pulled) == len(first) + 2 < len(_layers())


class _Engine(RolloutEngine):
    free_cache = True

    def __init__(self):
        self.calls = []

    async def _generate_ids(self, prompt_ids, sampling):
        return prompt_ids

    def update_weights(self, named_tensors):
        pass

    def _release_memory(self):
        self.calls.append("release")

    def _resume_memory(self, tags):
        self.calls.append(tuple(tags))


def test_sleep_wake_state_and_tag_order():
    eng = _Engine()
    eng.wake_up()  # awake: nothing to do
    eng.sleep()
    eng.sleep()  # second call is a no-op
    assert eng.is_sleeping and eng.calls == ["release"]
    with pytest.raises(ValueError, match=r"\['cuda_graph'\] are unknown"):
        eng.wake_up(["cuda_graph"])
    eng.wake_up(["kv_cache", "weights"])  # restored weights first whatever the order asked
    assert eng.calls[-1] == ("weights", "kv_cache") and not eng.is_sleeping
    eng.sleep()
    eng.wake_up(["weights"])
    eng.wake_up()
    assert eng.calls[-2:] == [("weights",), ("kv_cache",)]


def test_sleep_needs_free_cache_engine():
    eng = _Engine()
    eng.free_cache = False
    with pytest.raises(RuntimeError, match="free_cache_engine=true"):
        eng.sleep()


def test_free_cache_engine_resolution():
    assert resolve_free_cache_engine(None, True, "") is True
    assert resolve_free_cache_engine(None, False, "no GPU") is False
    assert resolve_free_cache_engine(False, True, "") is False
    assert resolve_free_cache_engine(True, True, "") is True
    with pytest.raises(ValueError, match=r"free_cache_engine=true cannot be honoured: no GPU\. Set it to false"):
        resolve_free_cache_engine(True, False, "no GPU")


def test_generate_checks_once_for_every_engine():
    """RolloutEngine.generate refuses a shut-down engine, a sleeping one and an empty prompt, then hands the engine
    the ids as ints (`_generate_ids`)."""
    import asyncio

    import numpy as np

    from verl.workers.rollout.base import SamplingParams

    eng, sampling = _Engine(), SamplingParams(max_tokens=2)
    got = asyncio.run(eng.generate(np.array([3, 4]), sampling))
    assert got == [3, 4] and all(type(t) is int for t in got)
    with pytest.raises(ValueError, match="_Engine.generate needs a non-empty prompt_ids list"):
        asyncio.run(eng.generate([], sampling))
    eng.sleep()
    with pytest.raises(RuntimeError, match="asleep"):
        asyncio.run(eng.generate([1], sampling))
    eng.wake_up()
    eng._closed = True
    with pytest.raises(RuntimeError, match="_Engine.generate called after shutdown"):
        asyncio.run(eng.generate([1], sampling))
