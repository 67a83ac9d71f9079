"""Loading policy / value models and tokenizers with transformers, offline-friendly.

Owns: choosing device and dtype (fp32 on CPU, bf16 on GPU unless configured), loading a causal
LM, a value model (token-classification head with one label), and the tokenizer, with errors that
name the path. Does not own FSDP wrapping or optimizers (see `verl.workers.fsdp_workers`).
"""
from __future__ import annotations

import logging
import os

import torch

__all__ = ["resolve_device", "resolve_dtype", "load_tokenizer", "load_causal_lm", "load_value_model"]

logger = logging.getLogger(__name__)

_DTYPES = {"fp32": torch.float32, "float32": torch.float32, "bf16": torch.bfloat16, "bfloat16": torch.bfloat16,
           "fp16": torch.float16, "float16": torch.float16}


def resolve_device(device: str | None = None) -> torch.device:
    """`device` ("cpu", "cuda", "auto"/None) -> torch.device; "auto" picks CUDA when available."""
    if device in (None, "", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        logger.warning("device=%s requested but CUDA is not available; using CPU", device)
        return torch.device("cpu")
    return torch.device(device)


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """Model dtype: the configured one, else fp32 on CPU and bf16 on GPU."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype in (None, "", "auto"):
        return torch.float32 if device.type == "cpu" else torch.bfloat16
    if dtype not in _DTYPES:
        raise ValueError(f"model dtype={dtype!r} is unknown; choose one of {sorted(_DTYPES)}")
    return _DTYPES[dtype]


def _check_path(path: str) -> None:
    if not path:
        raise ValueError("actor_rollout_ref.model.path is empty; set it to a local HuggingFace model directory")
    if not os.path.isdir(path) and os.environ.get("HF_HUB_OFFLINE") == "1":
        raise FileNotFoundError(
            f"model path {path!r} is not a local directory and HF_HUB_OFFLINE=1; "
            "point model.path at a saved model (e.g. `python -m verl.utils.tiny_model --out DIR`)"
        )


def load_tokenizer(path: str, trust_remote_code: bool = False):
    """Load the tokenizer at `path`; sets pad_token to eos_token when missing."""
    from transformers import AutoTokenizer

    _check_path(path)
    tok = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def _hf_config(path: str, trust_remote_code: bool, override_config: dict | None):
    """The HF config at `path` with `override_config` (`model.override_config`) applied before the
    model is built, so init-time fields (layer count, dropout, rope) take effect."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(path, trust_remote_code=trust_remote_code)
    for key, value in (override_config or {}).items():
        setattr(config, key, value)
    return config


def load_causal_lm(path: str, dtype: torch.dtype = torch.float32, trust_remote_code: bool = False,
                   attn_implementation: str | None = None, override_config: dict | None = None):
    """Load `AutoModelForCausalLM` from `path` in `dtype` (on CPU; the caller moves/wraps it)."""
    from transformers import AutoModelForCausalLM

    _check_path(path)
    kwargs = {"dtype": dtype, "trust_remote_code": trust_remote_code,
              "config": _hf_config(path, trust_remote_code, override_config)}
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    return AutoModelForCausalLM.from_pretrained(path, **kwargs)


def load_value_model(path: str, dtype: torch.dtype = torch.float32, trust_remote_code: bool = False,
                     override_config: dict | None = None):
    """Load a value model: the backbone at `path` with a 1-output token-classification head.

    The head (`score`) is freshly initialised when `path` holds a causal LM; dropout on the head is
    disabled so values are deterministic in train mode.
    """
    from transformers import AutoModelForTokenClassification

    _check_path(path)
    config = _hf_config(path, trust_remote_code, override_config)
    config.num_labels = 1
    config.classifier_dropout = 0.0
    return AutoModelForTokenClassification.from_pretrained(
        path, config=config, dtype=dtype, trust_remote_code=trust_remote_code
    )
