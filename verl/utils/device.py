"""Which device and floating-point dtype a model runs in: the one rule for configs, workers and engines.

Owns `resolve_device` (`auto` -> cuda when a GPU is visible, else cpu; `cuda` without one is an
error, never a silent CPU run) and `resolve_dtype` (`auto` -> bfloat16 on GPU, float32 on CPU;
aliases such as `bf16` and torch dtypes map to one canonical name). Both return names, so the config
resolves through them without importing torch at import time; code holding tensors turns the names
into objects with `torch.device(name)` / `getattr(torch, name)`. Loading models is not here
(`verl.utils.model_utils`).
"""
from __future__ import annotations

from typing import Any

__all__ = ["DTYPE_NAMES", "resolve_device", "resolve_dtype"]

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
