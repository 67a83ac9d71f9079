"""Batches and loss of supervised fine-tuning on agent conversations (`main_sft`, and the bench scripts that
time or probe it).

Owns turning tokenised conversations (`main_sft.tokenize_conversation`: ids and a loss mask, 1 on the
assistant tokens) into a padded batch, and the summed negative log-likelihood of that batch. It does not
own tokenisation, the optimizer step or how the sum is normalised (`main_sft.run_sft` divides by the
step's assistant tokens).
"""
from __future__ import annotations

from typing import Sequence

import torch

__all__ = ["collate_sft_examples", "sft_nll_sum"]


def collate_sft_examples(examples: Sequence[tuple[list[int], list[int]]], pad_id: int,
                         pad_multiple: int = 64) -> dict[str, torch.Tensor]:
    """Right-padded batch of `(input_ids, loss_mask)` examples.

    The width is rounded up to `pad_multiple` so few distinct shapes recur (on CPU every new shape grows the
    allocator's cache: unrounded widths took memory to ~10 GiB).

    Args:
        examples: `(input_ids, loss_mask)` pairs of equal-length lists.
        pad_id: the id right padding is filled with (attention and loss mask 0 there).
        pad_multiple: the width is a multiple of this.

    Returns:
        `input_ids`, `attention_mask`, `loss_mask`, each (bs, width) long tensors.
    """
    width = max(len(ids) for ids, _ in examples)
    width = -(-width // pad_multiple) * pad_multiple
    input_ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(examples), width), dtype=torch.long)
    loss_mask = torch.zeros((len(examples), width), dtype=torch.long)
    for i, (ids, mask) in enumerate(examples):
        input_ids[i, :len(ids)] = torch.tensor(ids)
        attention[i, :len(ids)] = 1
        loss_mask[i, :len(ids)] = torch.tensor(mask)
    return {"input_ids": input_ids, "attention_mask": attention, "loss_mask": loss_mask}


def sft_nll_sum(model, batch: dict[str, torch.Tensor], observation_weight: float = 0.0) -> torch.Tensor:
    """Summed negative log-likelihood of the loss-mask tokens (each predicted from its prefix), plus
    `observation_weight` x that of the other real tokens (prompt and observations) when it is > 0.

    The LM head runs only on the positions whose loss is used (an agent conversation is ~90% observation, so
    without the observation term this skips most of the vocabulary projection; `model_utils.next_token_logits`).

    Args:
        model: a causal LM.
        batch: `collate_sft_examples` output (on the model's device).
        observation_weight: weight of the non-assistant real tokens' NLL (0: assistant tokens only).

    Returns:
        A scalar tensor (not normalised).
    """
    from verl.utils.model_utils import next_token_logits

    targets = batch["input_ids"][:, 1:]
    assistant = batch["loss_mask"][:, 1:].bool()
    selected = assistant | batch["attention_mask"][:, 1:].bool() if observation_weight > 0 else assistant
    logits = next_token_logits(model, batch["input_ids"], batch["attention_mask"], selected)
    nll = torch.nn.functional.cross_entropy(logits.float(), targets[selected], reduction="none")
    if observation_weight <= 0:
        return nll.sum()
    weight = torch.where(assistant[selected], 1.0, observation_weight)
    return (nll * weight).sum()
