"""Pieces shared by the PPO actor and critic: config access, batch slicing into mini/micro
batches, gradient-accumulation weights and the clipped optimizer step.

Owns nothing model-specific; `dp_actor.py` and `critic/dp_critic.py` build on it.
"""
from __future__ import annotations

import logging
import math
from typing import Any, Iterator

import torch

from verl.agent_trainer.ppo import core_algos

__all__ = ["cfg_get", "iter_slices", "micro_weight", "clip_grad_and_step", "forward_response_logits"]

logger = logging.getLogger(__name__)

# Losses that aggregate per sequence whatever loss_agg_mode says (see core_algos).
_SEQ_MEAN_LOSS_MODES = {"gspo", "sapo", "geo_mean"}


def cfg_get(cfg: Any, key: str, default: Any = None) -> Any:
    """Read `key` from an OmegaConf DictConfig, a dataclass or a dict; `default` when absent.

    Dotted keys walk nested sections ("policy_loss.loss_mode").
    """
    node = cfg
    for part in key.split("."):
        if node is None:
            return default
        if isinstance(node, dict):
            node = node.get(part, default)
        else:
            try:
                node = getattr(node, part)
            except (AttributeError, KeyError):
                try:
                    node = node[part]
                except Exception:
                    return default
    return default if node is None else node


def iter_slices(total: int, size: int) -> Iterator[slice]:
    """Consecutive slices of `size` rows covering `total` rows (the last may be shorter)."""
    if size < 1:
        raise ValueError(f"batch slice size must be >= 1, got {size}")
    for start in range(0, total, size):
        yield slice(start, min(start + size, total))


def effective_agg_mode(loss_agg_mode: str, loss_mode: str | None = None) -> str:
    """The aggregation a policy loss really uses (some losses force seq-mean-token-mean)."""
    return "seq-mean-token-mean" if loss_mode in _SEQ_MEAN_LOSS_MODES else loss_agg_mode


def micro_weight(micro_mask: torch.Tensor, mini_mask: torch.Tensor, offset: int, loss_agg_mode: str) -> float:
    """Weight that turns a micro-batch's aggregated loss into its share of the mini-batch loss.

    Every aggregation in `core_algos.agg_loss` is linear in the loss matrix with a per-token
    coefficient whose ratio between the mini-batch and the micro-batch is the same for all tokens of
    the micro-batch (1/N_tok for token-mean, 1/N_seq for the seq-mean modes). The weight is that
    ratio, read off `agg_loss` itself with a one-hot loss on one valid token, so summing
    `weight * agg_loss(micro)` over micro-batches equals `agg_loss(mini-batch)` exactly.

    Args:
        micro_mask: (micro_bs, T) mask of the micro-batch.
        mini_mask: (mini_bs, T) mask of the mini-batch that contains it.
        offset: row of the micro-batch's first sample inside the mini-batch.
        loss_agg_mode: the aggregation used for the loss.
    """
    valid = micro_mask.nonzero()
    if valid.numel() == 0:
        return 0.0
    i, t = int(valid[0, 0]), int(valid[0, 1])
    one_micro = torch.zeros(micro_mask.shape, dtype=torch.float32)
    one_micro[i, t] = 1.0
    one_mini = torch.zeros(mini_mask.shape, dtype=torch.float32)
    one_mini[offset + i, t] = 1.0
    mini_coef = core_algos.agg_loss(one_mini, mini_mask.float().cpu(), loss_agg_mode)
    micro_coef = core_algos.agg_loss(one_micro, micro_mask.float().cpu(), loss_agg_mode)
    return float(mini_coef / micro_coef)


def clip_grad_and_step(module: torch.nn.Module, optimizer: torch.optim.Optimizer, grad_clip: float | None) -> float:
    """Clip gradients to `grad_clip` (if set) and step; skip the step when the norm is not finite.

    Returns:
        The total gradient norm before clipping.
    """
    max_norm = float(grad_clip) if grad_clip else math.inf
    grad_norm = torch.nn.utils.clip_grad_norm_(module.parameters(), max_norm)
    if hasattr(grad_norm, "full_tensor"):  # FSDP2: a DTensor reduced across the shards
        grad_norm = grad_norm.full_tensor()
    grad_norm = float(grad_norm)
    if math.isfinite(grad_norm):
        optimizer.step()
    else:
        logger.warning("gradient norm is %s; skipping this optimizer step", grad_norm)
    optimizer.zero_grad(set_to_none=True)
    return grad_norm


def forward_response_logits(module: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                            position_ids: torch.Tensor, response_length: int, lm_head_tail: bool = False) -> torch.Tensor:
    """Model outputs at the positions that predict (or score) the last `response_length` tokens.

    Position t of the output predicts input token t+1, so the response tokens at
    [-R, end) are predicted by outputs at [-R-1, -1).

    Args:
        lm_head_tail: the module is a transformers causal LM; ask it for the last R+1 positions
            only (`logits_to_keep`), so the (bs, P+R, vocab) logits of the prompt are never built.

    Returns:
        (bs, response_length, out_dim) logits of the model's head.
    """
    kwargs = {"logits_to_keep": response_length + 1} if lm_head_tail else {}
    out = module(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False,
                 **kwargs)
    return out.logits[:, -response_length - 1 : -1, :]
