"""What this machine runs a config on: the device, the model dtype, the attention kernel, the rollout engine.

Owns `resolve_device` (`auto` -> cuda when a GPU is visible, else cpu; `cuda` without one is an
error, never a silent CPU run), `resolve_dtype` (`auto` -> bfloat16 on GPU, float32 on CPU; aliases
such as `bf16` and torch dtypes map to one canonical name), `check_attn_implementation` and
`resolve_model_and_rollout`. All return names, so the config resolves through them without
importing torch at import time (torch is imported inside `resolve_device`, when it is called);
code holding tensors turns the names into objects with `torch.device(name)` / `getattr(torch, name)`.
`verl.config.device` re-exports the first two for workers and engines. Loading models is not here.
"""
from __future__ import annotations

import dataclasses
import importlib.util
from typing import Any

__all__ = ["DTYPE_NAMES", "resolve_device", "resolve_dtype", "check_attn_implementation",
           "resolve_model_and_rollout"]

# Accepted spellings -> the canonical torch attribute name.
DTYPE_NAMES = {"float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16",
               "float16": "float16", "fp16": "float16"}


def resolve_device(device: Any = "auto", key: str = "trainer.device") -> str:
    """The device name to run on: `auto` (or None) becomes `cuda` when a GPU is visible, else `cpu`.

    Args:
        device: "auto" | "cpu" | "cuda" (or "cuda:N"), a `torch.device`, or None (= auto).
        key: the config key the value came from, named in the error.

    Raises:
        ValueError: CUDA was asked for but no CUDA device is visible.
    """
    import torch

    name = "auto" if device is None else str(device)
    has_cuda = torch.cuda.is_available()
    if name == "auto":
        return "cuda" if has_cuda else "cpu"
    if name.startswith("cuda") and not has_cuda:
        raise ValueError(f"{key}={name} but no CUDA device is visible; use {key}=cpu (or auto)")
    return name


def resolve_dtype(dtype: Any, device: Any) -> str:
    """The model dtype's canonical name: the configured one, else bfloat16 on GPU and float32 on CPU.

    Args:
        dtype: a name from `DTYPE_NAMES`, a `torch.dtype`, or None / "" / "auto".
        device: the resolved device (a name such as "cpu" / "cuda:0", or a `torch.device`).

    Raises:
        ValueError: an unknown dtype name (the message lists the accepted ones).
    """
    name = str(dtype).removeprefix("torch.") if dtype not in (None, "") else "auto"
    if name == "auto":
        return "float32" if str(getattr(device, "type", device)) == "cpu" else "bfloat16"
    if name not in DTYPE_NAMES:
        raise ValueError(f"model dtype={dtype!r} is unknown; choose one of {sorted(DTYPE_NAMES)} or auto")
    return DTYPE_NAMES[name]


def check_attn_implementation(key: str, attn_implementation: str, device: str) -> None:
    """Fail at start-up when `key` (an `attn_implementation`) cannot run here: flash_attention_2 needs
    CUDA and the flash-attn package; eager and sdpa run anywhere."""
    if attn_implementation != "flash_attention_2":
        return
    if device != "cuda":
        raise ValueError(f"{key}=flash_attention_2 needs a CUDA device (trainer.device resolved to {device}); "
                         "use sdpa (the default) or eager")
    if importlib.util.find_spec("flash_attn") is None:
        raise ValueError(f"{key}=flash_attention_2 needs the flash-attn package (pip install '.[gpu]'); "
                         "use sdpa (the default) or eager")


def resolve_model_and_rollout(model: Any, rollout: Any, device: str) -> tuple[Any, Any]:
    """Concrete `model.dtype` (`resolve_dtype`: bf16 on GPU, fp32 on CPU) and `rollout.name` (vllm on GPU
    when installed, else hf); checks `model.attn_implementation` can run on `device`.

    Args:
        model: a `ModelConfig`; rollout: a `RolloutConfig` or None; device: the resolved device name.

    Returns:
        The two sections with their `auto` values replaced.
    """
    model = dataclasses.replace(model, dtype=resolve_dtype(model.dtype, device))
    check_attn_implementation("actor_rollout_ref.model.attn_implementation", model.attn_implementation, device)
    if rollout is not None and rollout.name == "auto":
        use_vllm = device == "cuda" and importlib.util.find_spec("vllm") is not None
        rollout = dataclasses.replace(rollout, name="vllm" if use_vllm else "hf")
    return model, rollout
