"""`verl.config.device`: the one device rule and the one dtype rule, used by the config, workers and engines."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from verl.config import device as dev


def test_one_resolve_device_everywhere():
    from verl.config import generation_schema, schema, sft_schema
    from verl.utils import model_utils
    from verl.workers.rollout import hf_rollout

    # one function: the config modules and the engines use this one; no second definition is left
    for module in (schema, sft_schema, generation_schema, hf_rollout):
        assert module.resolve_device is dev.resolve_device
    assert not hasattr(model_utils, "resolve_device") and not hasattr(model_utils, "resolve_dtype")


@pytest.mark.parametrize("has_cuda", [False, True])
def test_resolve_device_one_behaviour(monkeypatch, has_cuda):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: has_cuda)
    auto = "cuda" if has_cuda else "cpu"
    assert dev.resolve_device("auto") == dev.resolve_device(None) == auto
    assert dev.resolve_device(torch.device("cpu")) == dev.resolve_device("cpu") == "cpu"
    if has_cuda:
        assert dev.resolve_device("cuda") == "cuda" and dev.resolve_device("cuda:1") == "cuda:1"
    else:  # CUDA asked for without one is an error naming the key, never a silent CPU run
        for name in ("cuda", "cuda:0"):
            with pytest.raises(ValueError, match=rf"trainer\.device={name} but no CUDA device is visible"):
                dev.resolve_device(name)
        with pytest.raises(ValueError, match=r"^x\.device=cuda "):
            dev.resolve_device("cuda", key="x.device")


def test_the_config_resolves_through_the_device_rule(monkeypatch):
    from omegaconf import OmegaConf

    from verl.config.schema import default_config_path, load_config

    def load(device):
        return load_config(OmegaConf.merge(OmegaConf.load(default_config_path()),
                                           OmegaConf.from_dotlist([f"trainer.device={device}"])))

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cfg = load("auto")
    assert cfg.trainer.device == "cpu" and cfg.actor_rollout_ref.model.dtype == "float32"
    with pytest.raises(ValueError, match="trainer.device=cuda but no CUDA device is visible"):
        load("cuda")


def test_resolve_dtype_names_aliases_and_auto():
    assert dev.resolve_dtype("auto", "cpu") == dev.resolve_dtype(None, torch.device("cpu")) == "float32"
    assert dev.resolve_dtype("auto", "cuda") == dev.resolve_dtype("", torch.device("cuda", 0)) == "bfloat16"
    assert dev.resolve_dtype("bf16", "cpu") == dev.resolve_dtype(torch.bfloat16, "cpu") == "bfloat16"
    assert dev.resolve_dtype("fp16", "cuda") == "float16" and dev.resolve_dtype("fp32", "cuda") == "float32"
    for name in dev.DTYPE_NAMES:
        assert isinstance(getattr(torch, dev.resolve_dtype(name, "cpu")), torch.dtype)
    with pytest.raises(ValueError, match=r"model dtype='float8' is unknown; choose one of .*'bf16'"):
        dev.resolve_dtype("float8", "cpu")


def test_engines_run_float32_on_cpu_and_rollout_dtype_on_gpu():
    from verl.config.schema import RolloutConfig
    from verl.workers.rollout.base import engine_dtype

    assert engine_dtype(None, "bfloat16", "cpu") == "float32"
    assert engine_dtype(None, "bfloat16", torch.device("cuda")) == "bfloat16"
    assert engine_dtype(None, "auto", "cuda") == "bfloat16"
    assert engine_dtype(torch.float16, "bfloat16", "cpu") == "float16"  # an explicit dtype wins
    from verl.workers.rollout.agent_vllm_rollout.vllm_rollout import engine_args  # vllm itself is imported lazily

    assert engine_args("m", RolloutConfig(), on_cpu=False)["dtype"] == "bfloat16"
    assert engine_args("m", RolloutConfig(), on_cpu=False, dtype=torch.float16)["dtype"] == "float16"
    with pytest.raises(ValueError, match=r"actor_rollout_ref\.rollout\.dtype='half'"):
        RolloutConfig(dtype="half")


def test_the_config_and_device_modules_do_not_import_torch():
    code = ("import sys, verl.config.device, verl.config.schema, verl.config.sft_schema, "
            "verl.config.generation_schema; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
