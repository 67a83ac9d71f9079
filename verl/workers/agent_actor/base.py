"""The actor interface (`BasePPOActor`, as in AgentGym-RL's verl) and the pieces the PPO actor and
critic share: micro-batching (fixed size or token budgets), the per-epoch mini-batch shuffle,
gradient-accumulation weights with data-parallel global denominators, activation offloading, the
clipped optimizer step and the response forward pass (with all-padding columns trimmed per micro-batch).

Owns nothing model-specific; `dp_actor.py` and `agent_critic/dp_critic.py` build on it.
"""
from __future__ import annotations

import abc
import contextlib
import logging
import math
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Callable, Iterator

import numpy as np
import torch
import torch.nn.functional as F

from verl.agent_trainer.ppo import core_algos
from verl.utils.model_utils import split_lm_head

__all__ = ["BasePPOActor", "iter_slices", "MicroBatching", "BatchTotals", "batch_totals", "micro_weight",
           "token_budget_bins", "micro_batching_from_meta", "map_micro_batches", "activation_offload_context",
           "clip_grad_and_step", "run_ppo_epochs", "forward_response_logits", "padding_trim_bounds",
           "left_aligned_rows", "response_forward"]

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


# ------------------------------------------------------------------------ data parallelism
def _dp_world() -> int:
    """Data-parallel world size: the default process group's size when one is initialised (the
    workers start one exactly when they shard with FSDP, which averages gradients over it), else 1."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_world_size()
    return 1


def _dp_all_reduce(values: list[int], device: torch.device, op: str = "sum") -> list[int]:
    """`values` reduced (sum or max) over the data-parallel ranks; unchanged on one process."""
    if _dp_world() == 1:
        return list(values)
    t = torch.tensor(values, dtype=torch.int64, device=device)
    reduce_op = torch.distributed.ReduceOp.MAX if op == "max" else torch.distributed.ReduceOp.SUM
    torch.distributed.all_reduce(t, op=reduce_op)
    return [int(v) for v in t.tolist()]


# ------------------------------------------------------------------------ micro-batching
def token_budget_bins(seq_lens: list[int], max_token_len: int, min_bins: int = 1) -> list[list[int]]:
    """Rows packed into micro-batches of at most `max_token_len` tokens (first-fit decreasing).

    Rows are taken longest first and each goes into the first bin it fits in, else a new bin, so
    rows of similar length share a bin (little padding). A row longer than the budget gets a bin of
    its own. While there are fewer than `min_bins` bins (data-parallel ranks must run the same
    number of forward/backward passes, see `MicroBatching.split`), the bin with the most rows is
    split in two, which keeps every bin within the budget.

    Args:
        seq_lens: real (unpadded) token count of each row.
        max_token_len: token budget per micro-batch.
        min_bins: at least this many bins (at most len(seq_lens)).

    Returns:
        Bins of row indices (ascending within a bin), every row in exactly one bin.
    """
    if max_token_len < 1:
        raise ValueError(f"max_token_len must be >= 1, got {max_token_len}")
    order = sorted(range(len(seq_lens)), key=lambda i: (-seq_lens[i], i))
    bins: list[list[int]] = []
    loads: list[int] = []
    for i in order:
        for b, load in enumerate(loads):
            if load + seq_lens[i] <= max_token_len:
                bins[b].append(i)
                loads[b] += seq_lens[i]
                break
        else:
            bins.append([i])
            loads.append(seq_lens[i])
    while len(bins) < min(min_bins, len(seq_lens)):
        b = max(range(len(bins)), key=lambda k: (len(bins[k]), loads[k]))
        rows = bins.pop(b)
        loads.pop(b)
        for half in (rows[0::2], rows[1::2]):  # rows are longest first: alternate for two even halves
            bins.append(half)
            loads.append(sum(seq_lens[i] for i in half))
    return [sorted(rows) for rows in bins]


@dataclass(frozen=True)
class MicroBatching:
    """How a batch is cut into micro-batches: `size` consecutive rows each, or, with `max_token_len`
    (verl's use_dynamic_bsz), token budgets over the rows' real token counts.

    Attributes:
        size: rows per micro-batch (`*_micro_batch_size_per_gpu`).
        max_token_len: token budget per micro-batch (`*_max_token_len_per_gpu`); None: fixed size.
        by_length: fixed size over the rows sorted by real length (longest first), so rows of similar length
            share a micro-batch and little padding is computed; the workers use it. Exact: the loss weights
            (`micro_weight`) make any partition of a mini-batch give the same gradient, and results go back
            in the rows' order (`map_micro_batches`).
    """

    size: int
    max_token_len: int | None = None
    by_length: bool = False

    def split(self, attention_mask: torch.Tensor) -> list[torch.Tensor]:
        """Row-index sets of the micro-batches of a (bs, T) batch, covering every row once.

        With a token budget the number of micro-batches is the largest over the data-parallel ranks
        (an all-reduce): under FSDP every forward and backward is a collective, so all ranks must
        run as many.
        """
        n = attention_mask.shape[0]
        if self.max_token_len is None:
            if not self.by_length:
                return [torch.arange(sl.start, sl.stop) for sl in iter_slices(n, self.size)]
            order = torch.argsort(attention_mask.sum(-1).cpu(), descending=True, stable=True)
            return [order[sl].sort().values for sl in iter_slices(n, self.size)]
        seq_lens = attention_mask.sum(-1).tolist()
        bins = token_budget_bins(seq_lens, self.max_token_len)
        (num_bins,) = _dp_all_reduce([len(bins)], attention_mask.device, op="max")
        if num_bins > len(bins):
            bins = token_budget_bins(seq_lens, self.max_token_len, min_bins=num_bins)
        return [torch.tensor(rows, dtype=torch.long) for rows in bins]


def micro_batching_from_meta(meta_info: dict, default: MicroBatching) -> MicroBatching:
    """The micro-batching a log-prob / value pass asks for in `meta_info` (verl's keys
    `micro_batch_size`, `use_dynamic_bsz`, `max_token_len`); `default` where it says nothing."""
    size = int(meta_info.get("micro_batch_size") or default.size)
    if "use_dynamic_bsz" not in meta_info:
        return replace(default, size=size)
    max_token_len = int(meta_info["max_token_len"]) if meta_info["use_dynamic_bsz"] else None
    return replace(default, size=size, max_token_len=max_token_len)


def map_micro_batches(batch, batching: MicroBatching, fn: Callable):
    """Run `fn` on each micro-batch of `batch` and put the results back in the batch's row order.

    Args:
        batch: TensorDict with `attention_mask`.
        fn: `micro -> tensor` or a tuple of tensors (None allowed), each (micro_bs, ...).

    Returns:
        Like `fn`'s result, each tensor (bs, ...) in the original row order.
    """
    mask = batch["attention_mask"]
    parts = []
    for idx in batching.split(mask):
        idx = idx.to(mask.device)
        parts.append((idx, fn(batch[idx])))
    single = not isinstance(parts[0][1], tuple)
    merged = []
    for k in range(1 if single else len(parts[0][1])):
        outs = [(idx, out if single else out[k]) for idx, out in parts]
        if outs[0][1] is None:
            merged.append(None)
            continue
        first = outs[0][1]
        full = first.new_empty((len(mask), *first.shape[1:]))
        for idx, out in outs:
            full[idx.to(full.device)] = out
        merged.append(full)
    return merged[0] if single else tuple(merged)


# ------------------------------------------------------------------------ loss weights
@dataclass(frozen=True)
class BatchTotals:
    """Denominators of a mini-batch's aggregated loss, counted over all data-parallel ranks.

    Attributes:
        num_tokens: response tokens with mask 1 (token-mean's N_tok).
        num_seqs: rows with at least one such token (the seq-mean modes' N_seq).
        dp_size: data-parallel ranks; FSDP averages their gradients, so each rank's share is scaled up by it.
    """

    num_tokens: int
    num_seqs: int
    dp_size: int = 1


def batch_totals(mask: torch.Tensor) -> BatchTotals:
    """The `BatchTotals` of a (bs, R) response mask, summed over the data-parallel ranks (an all-reduce
    when a process group is initialised), as verl's global batch info."""
    local = [int(mask.sum()), int((mask.sum(-1) > 0).sum())]
    num_tokens, num_seqs = _dp_all_reduce(local, mask.device)
    return BatchTotals(num_tokens, num_seqs, _dp_world())


def micro_weight(micro_mask: torch.Tensor, totals: BatchTotals, loss_agg_mode: str) -> float:
    """Weight that turns a micro-batch's aggregated loss into its share of the global mini-batch loss.

    Every aggregation in `core_algos.agg_loss` is linear in the loss matrix with a per-token
    coefficient whose ratio between the whole mini-batch (global denominators `totals`, times
    dp_size) and the micro-batch alone is the same for all of the micro-batch's tokens (N_tok_micro /
    N_tok for token-mean, N_seq_micro / N_seq for the seq-mean modes). The weight is that ratio,
    read off `agg_loss` itself with a one-hot loss on one valid token. So summing
    `weight * agg_loss(micro)` over micro-batches (any partition of the rows into index sets) and
    averaging over ranks gives `agg_loss` of the global mini-batch exactly.

    Args:
        micro_mask: (micro_bs, T) mask of the micro-batch.
        totals: the global denominators of the mini-batch that contains it (`batch_totals`).
        loss_agg_mode: the aggregation used for the loss.
    """
    valid = micro_mask.nonzero()
    if valid.numel() == 0:
        return 0.0
    mask = micro_mask.float().cpu()
    one_hot = torch.zeros(mask.shape, dtype=torch.float32)
    one_hot[int(valid[0, 0]), int(valid[0, 1])] = 1.0
    global_coef = core_algos.agg_loss(one_hot, mask, loss_agg_mode, dp_size=totals.dp_size,
                                      batch_num_tokens=max(totals.num_tokens, 1),
                                      global_batch_size=max(totals.num_seqs, 1))
    micro_coef = core_algos.agg_loss(one_hot, mask, loss_agg_mode)
    return float(global_coef / micro_coef)


# ------------------------------------------------------------------------ the update loop
def activation_offload_context(enabled: bool, device: torch.device):
    """Context under which the tensors autograd saves for backward go to (pinned) CPU memory and come
    back for the backward pass (`torch.autograd.graph.save_on_cpu`): GPU activation memory traded for
    host-device copies. On a CPU device the activations already live in host memory, so this is a
    no-op there (the update runs unchanged)."""
    if enabled and torch.device(device).type == "cuda":
        return torch.autograd.graph.save_on_cpu(pin_memory=True)
    return contextlib.nullcontext()


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


def _epoch_orders(n: int, ppo_epochs: int, shuffle_seed: tuple[int, ...] | None) -> list[torch.Tensor]:
    """Row order of each PPO epoch: as given, or a fresh seeded permutation per epoch (verl's shuffle)."""
    if shuffle_seed is None:
        return [torch.arange(n)] * ppo_epochs
    rng = np.random.default_rng(list(shuffle_seed))
    return [torch.from_numpy(rng.permutation(n)) for _ in range(ppo_epochs)]


def run_ppo_epochs(module: torch.nn.Module, optimizer: torch.optim.Optimizer, batch, micro_loss: Callable, *,
                   ppo_epochs: int, mini_batch_size: int, micro_batching: MicroBatching, loss_agg_mode: str,
                   grad_clip: float | None, prefix: str, shuffle_seed: tuple[int, ...] | None = None,
                   activation_offload: bool = False) -> dict[str, float]:
    """`ppo_epochs` x mini-batches x micro-batches of gradient accumulation, one optimizer step per mini-batch.

    Args:
        module, optimizer: what is trained.
        batch: TensorDict holding `attention_mask`, `response_mask` and whatever `micro_loss` reads.
        micro_loss: `(micro, mask, metrics) -> loss`; the micro-batch's aggregated loss (it may append
            to `metrics`, a defaultdict(list)). Its share of the mini-batch loss is set by `micro_weight`.
        micro_batching: how a mini-batch is cut into micro-batches (fixed rows or token budgets).
        loss_agg_mode: the aggregation the loss uses (for the accumulation weights).
        grad_clip: max gradient norm (None/0: no clipping).
        prefix: metric namespace ("actor", "critic").
        shuffle_seed: None keeps the row order; else the rows are permuted before the mini-batches are
            cut, anew each epoch, by a generator seeded with these integers (e.g. (trainer.seed, step)).
        activation_offload: keep saved activations in CPU memory (`activation_offload_context`).

    Returns:
        Every metric averaged over the update, plus `<prefix>/grad_norm` and `<prefix>/lr`.
    """
    metrics: dict[str, list[float]] = defaultdict(list)
    module.train()
    optimizer.zero_grad(set_to_none=True)
    device = batch["response_mask"].device
    for order in _epoch_orders(len(batch), ppo_epochs, shuffle_seed):
        for mini_sl in iter_slices(len(batch), mini_batch_size):
            mini = batch[order[mini_sl].to(device)]
            totals = batch_totals(mini["response_mask"])
            for idx in micro_batching.split(mini["attention_mask"]):
                micro = mini[idx.to(device)]
                mask = micro["response_mask"].float()
                weight = micro_weight(mask, totals, loss_agg_mode)
                with activation_offload_context(activation_offload, device):
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


def forward_response_logits(
    module: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    position_ids: torch.Tensor,
    response_length: int,
    lm_head_tail: bool = False,
) -> torch.Tensor:
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


def left_aligned_rows(input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor):
    """The rows of a padded (bs, T) micro-batch moved left so each row's real tokens start at column 0.

    A row whose real tokens are one run (left-padded prompt, right-padded response) with consecutive
    positions then needs no attention mask: every real token sees exactly the real tokens before it under
    a plain causal mask, as it does under the padding mask, and padding follows the last real token, where
    no real token can see it. Attention kernels skip the masked half of a causal product (the flash
    kernels' `is_causal`), while a padding mask makes them compute all of it. The padding columns get the
    positions that continue each row's, so a transformers model does not read the rows as packed sequences.

    Returns:
        (input_ids, position_ids, shift): the moved rows and each row's shift (bs,) in columns; None when a
        row is empty, not one run of real tokens, or its real positions are not consecutive (or the
        positions are not one (bs, T) tensor).
    """
    if position_ids is None or position_ids.dim() != 2 or position_ids.shape != attention_mask.shape:
        return None
    real = attention_mask.bool()
    bs, width = real.shape
    lengths = real.sum(-1)
    if bool((lengths == 0).any()):
        return None
    shift = real.int().argmax(-1)
    cols = torch.arange(width, device=real.device)
    run = (cols[None] >= shift[:, None]) & (cols[None] < (shift + lengths)[:, None])
    if not bool(torch.equal(run, real)):
        return None
    src = (cols[None] + shift[:, None]).clamp(max=width - 1)
    moved_positions = position_ids.gather(1, src)
    positions = moved_positions[:, :1] + cols[None]
    moved_real = cols[None] < lengths[:, None]
    if not bool(torch.equal(positions[moved_real], moved_positions[moved_real])):
        return None
    return input_ids.gather(1, src), positions, shift


def _masked_head_forward(parts, tensors, responses: torch.Tensor, mask: torch.Tensor, head_fn: Callable,
                         logits_rule: Callable | None = None):
    """`head_fn` on the LM head's logits at the `mask` positions only, scattered back into zeros (bs, R').

    The decoder runs on `left_aligned_rows` (no attention mask) where the micro-batch allows it."""
    decoder, head = parts
    input_ids, attention_mask, position_ids = tensors
    keep = responses.shape[1]
    rows, cols = mask.nonzero(as_tuple=True)  # the N positions, row-major (the order of `tensor[mask]`)
    aligned = left_aligned_rows(input_ids, attention_mask, position_ids)
    if aligned is None:
        hidden = decoder(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         use_cache=False).last_hidden_state[:, -keep - 1:-1][mask]
    else:
        ids, positions, shift = aligned
        out = decoder(input_ids=ids, attention_mask=None, position_ids=positions, use_cache=False).last_hidden_state
        # response column c of row r is predicted by the output at (T - keep) + c - 1, moved left by shift[r]
        hidden = out[rows, input_ids.shape[1] - keep + cols - 1 - shift[rows]]
    logits = head(hidden)  # (N, vocab)
    if logits_rule is not None:
        logits = logits_rule(logits, rows, cols)
    logits = logits[None]  # (1, N, vocab)
    result = head_fn(logits, responses[mask][None])

    def scatter(t):
        return None if t is None else t.new_zeros(mask.shape).masked_scatter(mask, t[0])

    return tuple(scatter(t) for t in result) if isinstance(result, tuple) else scatter(result)


def response_forward(module: torch.nn.Module, micro, head_fn: Callable, lm_head_tail: bool = False,
                     trim: bool = True, head_mask: torch.Tensor | None = None, logits_rule: Callable | None = None):
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
        head_mask: (bs, R) positions whose outputs are needed (e.g. `response_mask`: the model's own tokens of
            an agent trajectory, ~10% of it); with `lm_head_tail` and a plain causal LM
            (`model_utils.split_lm_head`) the LM head and `head_fn` run on those positions only and the
            results are 0 elsewhere. Exact where the mask is 1.
        logits_rule: `(logits (N, vocab), rows (N,), cols (N,)) -> logits` applied to the LM head's logits
            before `head_fn` (rows / cols: each vector's batch row and response column), e.g.
            `copy_only.CopyOnlyRule`; needs `lm_head_tail`.

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
    if logits_rule is not None and not lm_head_tail:
        raise ValueError("response_forward: logits_rule needs lm_head_tail=True (outputs that are logits)")
    parts = split_lm_head(module) if (head_mask is not None and lm_head_tail) else None
    if parts is not None:
        result = _masked_head_forward(parts, tensors, responses[:, :keep], head_mask[:, :keep].bool(), head_fn,
                                      logits_rule)
    else:
        outputs = forward_response_logits(module, *tensors, keep, lm_head_tail=lm_head_tail)
        if logits_rule is not None:
            bs, vocab = outputs.shape[0], outputs.shape[-1]
            rows = torch.arange(bs, device=outputs.device).repeat_interleave(keep)
            cols = torch.arange(keep, device=outputs.device).repeat(bs)
            outputs = logits_rule(outputs.reshape(bs * keep, vocab), rows, cols).view(bs, keep, vocab)
        result = head_fn(outputs, responses[:, :keep])

    def pad(t):
        if t is None or keep == response_length:
            return t
        return F.pad(t, (0, 0) * (t.dim() - 2) + (0, response_length - keep))

    return tuple(pad(t) for t in result) if isinstance(result, tuple) else pad(result)
