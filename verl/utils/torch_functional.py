"""Tensor helpers shared by the trainer: masked statistics, log-probs/entropy from logits, masks.

Owns pure tensor functions with no model, config or device assumptions. Masks are 0/1 (or bool)
tensors broadcastable to the values; 1 = keep. Values outside a mask never reach a statistic, so
NaN/inf there is harmless.
"""
from __future__ import annotations

from typing import Optional, Sequence, Union

import torch
import torch.nn.functional as F

__all__ = [
    "masked_sum",
    "masked_mean",
    "masked_var",
    "masked_whiten",
    "logprobs_from_logits",
    "entropy_from_logits",
    "get_response_mask",
    "compute_position_id_with_mask",
    "clip_by_value",
    "pad_sequence_to_length",
    "pad_2d_list_to_length",
]

# Elements per chunk for the logits helpers: bounds the full-vocab temporaries to ~256 MB fp32.
_CHUNK_ELEMENTS = 1 << 26


def masked_sum(
    values: torch.Tensor, mask: torch.Tensor, axis: Optional[Union[int, Sequence[int]]] = None
) -> torch.Tensor:
    """Sum of ``values`` where ``mask`` is 1 (values outside the mask, NaN included, count as 0)."""
    valid = torch.where(mask.bool(), values, torch.zeros((), dtype=values.dtype, device=values.device))
    return valid.sum() if axis is None else valid.sum(dim=axis)


def masked_mean(
    values: torch.Tensor, mask: torch.Tensor, axis: Optional[Union[int, Sequence[int]]] = None
) -> torch.Tensor:
    """Mean over the mask: ``sum(v*m) / (sum(m) + 1e-8)``; an empty mask gives 0."""
    count = mask.to(values.dtype).sum() if axis is None else mask.to(values.dtype).sum(dim=axis)
    return masked_sum(values, mask, axis) / (count + 1e-8)


def masked_var(values: torch.Tensor, mask: torch.Tensor, unbiased: bool = True) -> torch.Tensor:
    """Variance over all masked entries (global, not per row).

    With ``unbiased`` the Bessel factor n/(n-1) is applied when n >= 2. An empty mask gives 0,
    and so does a single-element mask (no spread to measure).
    """
    return _masked_var_mean(values, mask, unbiased)[0]


def _masked_var_mean(values: torch.Tensor, mask: torch.Tensor, unbiased: bool = True):
    # Gathering the masked entries once is fewer full-size passes than where/sum/where/sum.
    selected = values[mask.bool().expand_as(values)]
    n = selected.numel()
    if n == 0:
        zero = torch.zeros((), dtype=values.dtype, device=values.device)
        return zero, zero
    var, mean = torch.var_mean(selected, correction=1 if (unbiased and n >= 2) else 0)
    return var, mean


def masked_whiten(values: torch.Tensor, mask: torch.Tensor, shift_mean: bool = True) -> torch.Tensor:
    """``(v - mean) / sqrt(var + 1e-8)`` with mean/var over the masked entries of the whole tensor.

    Masked entries end with mean 0 and (unbiased) variance ~1. With ``shift_mean=False`` the mean
    is added back. Entries outside the mask are transformed the same way (callers multiply by the
    mask). An empty mask returns zeros: there is nothing to normalise against.
    """
    if not bool(mask.any()):
        return torch.zeros_like(values)
    var, mean = _masked_var_mean(values, mask)
    whitened = (values - mean) * torch.rsqrt(var + 1e-8)
    if not shift_mean:
        whitened = whitened + mean
    return whitened


def _rows_per_chunk(vocab: int, chunk_elements: Optional[int]) -> int:
    return max(1, (chunk_elements or _CHUNK_ELEMENTS) // max(vocab, 1))


def _logprobs_rows(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    # log_softmax(z)[y] = -cross_entropy(z, y): one fused kernel each way; gather - logsumexp took about
    # twice as long forward + backward on CPU (bench/RESULTS.md, actor update).
    return -F.cross_entropy(logits.float(), labels, reduction="none")


def logprobs_from_logits(
    logits: torch.Tensor, labels: torch.Tensor, chunk_elements: Optional[int] = None
) -> torch.Tensor:
    """log softmax(logits)[label] = logits[label] - logsumexp(logits), computed in fp32.

    Never builds a full log-softmax copy; rows are processed in chunks of about
    ``chunk_elements`` logits so the fp32 temporaries stay bounded for large vocabularies.

    Args:
        logits: (..., vocab) any float dtype.
        labels: (...) int64 token ids.

    Returns:
        (...) float32 log-probabilities.
    """
    vocab = logits.shape[-1]
    flat_logits = logits.reshape(-1, vocab)
    flat_labels = labels.reshape(-1)
    rows = _rows_per_chunk(vocab, chunk_elements)
    if flat_logits.shape[0] <= rows:
        out = _logprobs_rows(flat_logits, flat_labels)
    else:
        out = torch.cat([
            _logprobs_rows(flat_logits[i:i + rows], flat_labels[i:i + rows])
            for i in range(0, flat_logits.shape[0], rows)
        ])
    return out.view(labels.shape)


def _entropy_rows(logits: torch.Tensor) -> torch.Tensor:
    logits = logits.float()
    probs = torch.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - (probs * logits).sum(dim=-1)


def entropy_from_logits(logits: torch.Tensor, chunk_elements: Optional[int] = None) -> torch.Tensor:
    """Entropy of softmax(logits): ``H = logsumexp(z) - sum_v softmax(z)_v * z_v`` in fp32, row-chunked.

    Args:
        logits: (..., vocab).

    Returns:
        (...) float32 entropies.
    """
    vocab = logits.shape[-1]
    flat = logits.reshape(-1, vocab)
    rows = _rows_per_chunk(vocab, chunk_elements)
    if flat.shape[0] <= rows:
        out = _entropy_rows(flat)
    else:
        out = torch.cat([_entropy_rows(flat[i:i + rows]) for i in range(0, flat.shape[0], rows)])
    return out.view(logits.shape[:-1])


def get_response_mask(response_id: torch.Tensor, eos_token: Union[int, Sequence[int]] = 2,
                      dtype: torch.dtype = torch.int64) -> torch.Tensor:
    """1 up to and including the first EOS in each row, 0 after it.

    Args:
        response_id: (bs, response_length) token ids.
        eos_token: one id or a list of ids that end a response.

    Returns:
        (bs, response_length) mask of ``dtype``.
    """
    eos = torch.as_tensor(eos_token if isinstance(eos_token, (list, tuple)) else [eos_token], device=response_id.device)
    is_eos = torch.isin(response_id, eos).to(torch.int64)
    eos_before = torch.cumsum(is_eos, dim=-1) - is_eos  # EOS tokens strictly before each position
    return (eos_before == 0).to(dtype)


def compute_position_id_with_mask(mask: torch.Tensor) -> torch.Tensor:
    """Position ids ``clamp(cumsum(mask) - 1, min=0)`` for a (bs, seq) attention mask."""
    return torch.clamp(torch.cumsum(mask, dim=-1) - 1, min=0)


def clip_by_value(x: torch.Tensor, tensor_min, tensor_max) -> torch.Tensor:
    """Element-wise clip of ``x`` to ``[tensor_min, tensor_max]`` (tensors or scalars, broadcast)."""
    tensor_min = torch.as_tensor(tensor_min, dtype=x.dtype, device=x.device)
    tensor_max = torch.as_tensor(tensor_max, dtype=x.dtype, device=x.device)
    return torch.maximum(torch.minimum(x, tensor_max), tensor_min)


def pad_sequence_to_length(
    tensors: torch.Tensor, max_seq_len: int, pad_token_id, left_pad: bool = False
) -> torch.Tensor:
    """Pad the last dim of (bs, seq) ``tensors`` to ``max_seq_len`` (no-op when already that long)."""
    if tensors.shape[-1] >= max_seq_len:
        return tensors
    pad = (max_seq_len - tensors.shape[-1], 0) if left_pad else (0, max_seq_len - tensors.shape[-1])
    return F.pad(tensors, pad, "constant", pad_token_id)


def pad_2d_list_to_length(response: Sequence[Sequence[int]], pad_token_id: int, max_length: Optional[int] = None,
                          left_pad: bool = False) -> torch.Tensor:
    """Turn a ragged list of id lists into a (bs, L) int64 tensor, L = max(len, max_length or 0)."""
    width = max((len(r) for r in response), default=0)
    if max_length is not None:
        width = max(width, max_length)
    out = torch.full((len(response), width), pad_token_id, dtype=torch.int64)
    for i, row in enumerate(response):
        if len(row):
            if left_pad:
                out[i, width - len(row):] = torch.as_tensor(row, dtype=torch.int64)
            else:
                out[i, :len(row)] = torch.as_tensor(row, dtype=torch.int64)
    return out
