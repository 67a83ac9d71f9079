"""Model and optimizer builders with transformers and torch, offline-friendly: the one place the
actor/critic workers, SFT and generation build what they train or sample with.

Owns: loading a causal LM, a value model (token-classification head with one label), a reward
model (sequence-classification head with one label) and the tokenizer with errors that name the
path (`model.override_config` applied before the model is built, `attn_implementation` passed to
transformers), AdamW and its LR schedule, and the atomic HF-directory writer (tiny model, SFT
output, checkpoint export). Does not own choosing device and dtype (`verl.config.device`) or FSDP
wrapping (`verl.workers.fsdp_workers`).
"""
from __future__ import annotations

import json
import logging
import math
import os
import shutil
import tempfile
from typing import Any, Callable, Optional

import torch

from verl.config.schema import OptimConfig, as_section
from verl.utils import lora

__all__ = ["split_lm_head", "next_token_logits", "is_fsdp_module", "load_tokenizer", "load_causal_lm",
           "load_value_model", "load_reward_model", "build_optimizer", "build_lr_scheduler", "save_hf_dir"]

logger = logging.getLogger(__name__)


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


def _from_pretrained_kwargs(dtype: torch.dtype, trust_remote_code: bool, attn_implementation: str | None,
                            config) -> dict:
    kwargs = {"dtype": dtype, "trust_remote_code": trust_remote_code, "config": config}
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    return kwargs


def load_causal_lm(path: str, dtype: torch.dtype = torch.float32, trust_remote_code: bool = False,
                   attn_implementation: str | None = None, override_config: dict | None = None):
    """Load `AutoModelForCausalLM` from `path` in `dtype` (on CPU; the caller moves/wraps it).

    `attn_implementation` ("eager" | "sdpa" | "flash_attention_2"; None: transformers' choice) and
    `override_config` are `model.*` settings."""
    from transformers import AutoModelForCausalLM

    _check_path(path)
    config = _hf_config(path, trust_remote_code, override_config)
    return AutoModelForCausalLM.from_pretrained(
        path, **_from_pretrained_kwargs(dtype, trust_remote_code, attn_implementation, config))


def load_value_model(path: str, dtype: torch.dtype = torch.float32, trust_remote_code: bool = False,
                     attn_implementation: str | None = None, override_config: dict | None = None):
    """Load a value model: the backbone at `path` with a 1-output token-classification head.

    The head (`score`) is freshly initialised when `path` holds a causal LM; dropout on the head is
    disabled so values are deterministic in train mode. Other arguments as `load_causal_lm`.
    """
    from transformers import AutoModelForTokenClassification

    _check_path(path)
    config = _hf_config(path, trust_remote_code, override_config)
    config.num_labels = 1
    config.classifier_dropout = 0.0
    return AutoModelForTokenClassification.from_pretrained(
        path, **_from_pretrained_kwargs(dtype, trust_remote_code, attn_implementation, config))


def load_reward_model(path: str, dtype: torch.dtype = torch.float32, trust_remote_code: bool = False,
                      attn_implementation: str | None = None, override_config: dict | None = None):
    """Load a learned reward model: `AutoModelForSequenceClassification` from `path` with one output.

    Other arguments as `load_causal_lm`.

    Raises:
        ValueError: the checkpoint's config has `num_labels != 1` (e.g. a plain causal LM, whose
            config defaults to 2): a reward model outputs one scalar.
    """
    from transformers import AutoModelForSequenceClassification

    _check_path(path)
    config = _hf_config(path, trust_remote_code, override_config)
    if config.num_labels != 1:
        raise ValueError(f"reward_model.model.path={path!r} has num_labels={config.num_labels}; a reward model is a "
                         "sequence-classification checkpoint with num_labels=1 (one scalar score)")
    return AutoModelForSequenceClassification.from_pretrained(
        path, **_from_pretrained_kwargs(dtype, trust_remote_code, attn_implementation, config))


def split_lm_head(model: torch.nn.Module):
    """`(decoder, lm_head)` of a plain transformers causal LM (logits = lm_head(decoder(...).last_hidden_state)),
    so callers can run the vocabulary projection on the positions they need only; None when that would not
    equal the model's own logits (logit soft-capping or scaling) or the model is FSDP-sharded (its root-level
    parameters are only gathered inside the root's forward). A PEFT (LoRA) model is split as its base model,
    whose layers carry the adapter.
    """
    if is_fsdp_module(model):
        return None
    model = lora.base_model(model)
    head, decoder, config = model.get_output_embeddings(), getattr(model, "model", None), model.config
    if head is None or decoder is None:
        return None
    scaled = getattr(config, "logits_scaling", 1.0) not in (None, 1.0)
    if getattr(config, "final_logit_softcapping", None) is not None or scaled:
        return None
    return decoder, head


def next_token_logits(model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                      selected: torch.Tensor) -> torch.Tensor:
    """Logits predicting token t+1 at the positions t where `selected` ([batch, seq-1], bool) is true, as
    `[n_selected, vocab]`; the LM head runs on those positions only when `split_lm_head` allows it."""
    parts = split_lm_head(model)
    if parts is not None:
        decoder, head = parts
        hidden = decoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return head(hidden[:, :-1][selected])
    return model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1][selected]


def is_fsdp_module(module: torch.nn.Module) -> bool:
    """True for a module sharded with FSDP2 (`fully_shard`)."""
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:  # pragma: no cover - torch without FSDP2
        return False
    return isinstance(module, FSDPModule)


def build_optimizer(module: torch.nn.Module, optim_cfg) -> torch.optim.Optimizer:
    """AdamW over the trainable parameters with `optim.{lr, weight_decay, betas}` (an `OptimConfig`,
    or a mapping of its keys)."""
    optim = as_section(OptimConfig, optim_cfg, "optim")
    return torch.optim.AdamW(
        [p for p in module.parameters() if p.requires_grad],
        lr=optim.lr, weight_decay=optim.weight_decay, betas=(float(optim.betas[0]), float(optim.betas[1])),
    )


def build_lr_scheduler(optimizer: torch.optim.Optimizer, optim_cfg) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warmup then constant or cosine decay (to `min_lr_ratio`), stepped once per update.

    warmup_steps < 0 means warmup_steps_ratio x total_training_steps.
    """
    optim = as_section(OptimConfig, optim_cfg, "optim")  # validates lr_scheduler_type
    sched_type, total, warmup, min_ratio = (optim.lr_scheduler_type, optim.total_training_steps, optim.warmup_steps,
                                            optim.min_lr_ratio)
    if warmup < 0:
        warmup = int(optim.warmup_steps_ratio * max(total, 0))

    def factor(step: int) -> float:
        if warmup > 0 and step < warmup:
            return (step + 1) / warmup
        if sched_type == "constant" or total <= warmup:
            return 1.0
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def save_hf_dir(out_dir: str, model=None, tokenizer=None, *, state_dict: Optional[dict] = None, config=None,
                json_files: Optional[dict[str, Any]] = None,
                keep_existing: Optional[Callable[[str], bool]] = None) -> str:
    """Write an HF model directory atomically: everything goes to a sibling temp dir, which then
    replaces `out_dir` by a rename, so a reader (or a crash) never sees a half-written directory; on
    failure `out_dir` keeps its previous contents and no temp dir is left.

    Args:
        out_dir: the directory to (re)place.
        model: saved with `save_pretrained` (`state_dict` overrides its weights, e.g. gathered FSDP
            shards); None writes only the config / tokenizer / JSON files.
        tokenizer: saved alongside when given.
        config: an HF config saved after the model (e.g. the HF class's architectures, not FSDP's).
        json_files: extra `{file name: JSON-able object}` written into the directory.
        keep_existing: when the final swap fails because another writer put `out_dir` there first,
            `keep_existing(out_dir)` True accepts that directory instead of raising.

    Returns:
        The absolute path of `out_dir`.
    """
    out_dir = os.path.abspath(os.path.expanduser(out_dir))
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out_dir)}-", dir=parent)
    old = None
    try:
        if model is not None:
            model.save_pretrained(tmp, **({"state_dict": state_dict} if state_dict is not None else {}))
        if config is not None:
            config.save_pretrained(tmp)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        for name, obj in (json_files or {}).items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as fh:
                json.dump(obj, fh, indent=1, default=str)
        if os.path.exists(out_dir):  # moved aside, not deleted, until the new directory is in place
            old = f"{tmp}-old"
            os.replace(out_dir, old)
        try:
            os.replace(tmp, out_dir)
        except OSError:
            if old is not None and not os.path.exists(out_dir):
                os.replace(old, out_dir)  # the previous contents go back
            if keep_existing is None or not keep_existing(out_dir):
                raise
    finally:
        for path in (tmp, old):
            if path is not None and os.path.exists(path):
                shutil.rmtree(path, ignore_errors=True)
    return out_dir
