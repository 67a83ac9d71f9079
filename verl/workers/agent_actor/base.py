"""The actor interface (`BasePPOActor`, as in AgentGym-RL's verl) and the pieces the PPO actor and
critic share: batch slicing into mini/micro batches, gradient-accumulation weights, the clipped
optimizer step and the response forward pass (with all-padding columns trimmed per micro-batch).

Owns nothing model-specific; `dp_actor.py` and `agent_critic/dp_critic.py` build on it.
"""
from __future__ import annotations

import abc
import logging
import math
from collections import defaultdict
from typing import Callable, Iterator

import numpy as np
import torch
import torch.nn.functional as F

from verl.agent_trainer.ppo import core_algos

__all__ = ["BasePPOActor", "iter_slices", "micro_weight", "clip_grad_and_step", "run_ppo_epochs", "forward_response_logits",
           "padding_trim_bounds", "response_forward"]

logger = logging.getLogger(__name__)

class BasePPOActor(abc.ABC):
    """What a PPO actor does on one data-parallel rank."""

    @abc.abstractmethod
    def compute_log_prob(self, data, calculate_entropy: bool = True):
        """Log-probs (and entropies) of `data`'s response tokens under the current policy."""

    @abc.abstractmethod
    def update_policy(self, data) -> dict[str, float]:
        """PPO epochs of policy updates on `data`; returns the update's metrics."""


# Losses that aggregate per sequence whatever loss_agg_mode says (see core_algos).
_SEQ_MEAN_LOSS_MODES = {"gspo", "sapo", "geo_mean"}


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


def run_ppo_epochs(module: torch.nn.Module, optimizer: torch.optim.Optimizer, batch, micro_loss: Callable, *,
                   ppo_epochs: int, mini_batch_size: int, micro_batch_size: int, loss_agg_mode: str,
                   grad_clip: float | None, prefix: str) -> dict[str, float]:
    """`ppo_epochs` x mini-batches x micro-batches of gradient accumulation, one optimizer step per mini-batch.

    Args:
        module, optimizer: what is trained.
        batch: TensorDict holding `response_mask` and whatever `micro_loss` reads.
        micro_loss: `(micro, mask, metrics) -> loss`; the micro-batch's aggregated loss (it may append
            to `metrics`, a defaultdict(list)). Its share of the mini-batch loss is set by `micro_weight`.
        loss_agg_mode: the aggregation the loss uses (for the accumulation weights).
        grad_clip: max gradient norm (None/0: no clipping).
        prefix: metric namespace ("actor", "critic").

    Returns:
        Every metric averaged over the update, plus `<prefix>/grad_norm` and `<prefix>/lr`.
    """
    metrics: dict[str, list[float]] = defaultdict(list)
    module.train()
    optimizer.zero_grad(set_to_none=True)
    for _ in range(ppo_epochs):
        for mini_sl in iter_slices(len(batch), mini_batch_size):
            mini = batch[mini_sl]
            for micro_sl in iter_slices(len(mini), micro_batch_size):
                micro = mini[micro_sl]
                mask = micro["response_mask"].float()
                weight = micro_weight(mask, mini["response_mask"], micro_sl.start, loss_agg_mode)
                loss = micro_loss(micro, mask, metrics)
                # Backward runs for every micro-batch, weight 0 included (all of it masked, e.g. an env
                # that failed): under FSDP each backward issues the gradient collectives, and a rank
                # that skipped one would wait forever on (or abort) its peers.
                if weight == 0.0:
                    loss = torch.where(torch.isfinite(loss), loss, torch.zeros_like(loss))
                (loss * weight).backward()
            metrics[f"{prefix}/grad_norm"].append(clip_grad_and_step(module, optimizer, grad_clip))
    metrics[f"{prefix}/lr"].append(float(optimizer.param_groups[0]["lr"]))
    return {k: float(np.mean(v)) for k, v in metrics.items()}


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


def padding_trim_bounds(attention_mask: torch.Tensor, response_length: int) -> tuple[int, int]:
    """Columns of a (bs, P+R) micro-batch that hold a real token in at least one row.

    Prompts are left-padded and responses right-padded, so the columns that are padding in every
    row are a block at the start of the prompt and a block at the end of the response.

    Returns:
        (start, response_keep): keep columns [start, P + response_keep). At least one prompt column
        (its output predicts the first response token) and one response column are always kept.
    """
    prompt_length = attention_mask.shape[1] - response_length
    real = attention_mask.bool().any(dim=0)
    prompt_real = real[:prompt_length].nonzero()
    start = int(prompt_real[0, 0]) if prompt_real.numel() else prompt_length - 1
    response_real = real[prompt_length:].nonzero()
    keep = int(response_real[-1, 0]) + 1 if response_real.numel() else 1
    return max(min(start, prompt_length - 1), 0), keep


def response_forward(module: torch.nn.Module, micro, head_fn: Callable, lm_head_tail: bool = False,
                     trim: bool = True):
    """Forward one micro-batch and turn the outputs over its response positions into (bs, R) tensors.

    With `trim`, the columns that are padding in every row (common left padding of the prompts,
    common right padding of the responses) are dropped before the model runs; `position_ids` are
    sliced, not recomputed, so real tokens see the same positions and the same keys as on the full
    padded length. The results are zero-padded back to R on the right, so positions past the
    micro-batch's longest response are 0 (every loss masks them with `response_mask`).

    Args:
        module: model called as `module(input_ids=, attention_mask=, position_ids=, use_cache=False)`.
        micro: mapping with `input_ids`, `attention_mask`, `position_ids` (bs, P+R) and `responses` (bs, R).
        head_fn: `(outputs (bs, R', out_dim), responses (bs, R'))` -> a tensor or a tuple of tensors
            (None allowed) of shape (bs, R', ...), computed on the kept response columns R' <= R.
        lm_head_tail: see `forward_response_logits`.
        trim: False forwards the full padded length (the reference path).

    Returns:
        `head_fn`'s result with every tensor right-padded with zeros to (bs, R, ...).
    """
    responses = micro["responses"]
    response_length = responses.shape[-1]
    tensors = (micro["input_ids"], micro["attention_mask"], micro["position_ids"])
    keep = response_length
    if trim:
        start, keep = padding_trim_bounds(micro["attention_mask"], response_length)
        end = tensors[0].shape[1] - response_length + keep
        if start > 0 or keep < response_length:
            tensors = tuple(t[:, start:end].contiguous() for t in tensors)
    outputs = forward_response_logits(module, *tensors, keep, lm_head_tail=lm_head_tail)
    result = head_fn(outputs, responses[:, :keep])

    def pad(t):
        if t is None or keep == response_length:
            return t
        return F.pad(t, (0, 0) * (t.dim() - 2) + (0, response_length - keep))

    return tuple(pad(t) for t in result) if isinstance(result, tuple) else pad(result)
