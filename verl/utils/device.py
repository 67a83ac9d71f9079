"""Which device and floating-point dtype a model runs in, for workers and engines.

The one rule lives with the config (`verl.agent_trainer.config.device`), which resolves `auto`
values through it while importing nothing of `verl.utils`; this module re-exports it so code that
holds tensors keeps one import path. Loading models is not here (`verl.utils.model_utils`).
"""
from __future__ import annotations

from verl.agent_trainer.config.device import DTYPE_NAMES, resolve_device, resolve_dtype

__all__ = ["DTYPE_NAMES", "resolve_device", "resolve_dtype"]
