"""Copy-only tokens (`actor_rollout_ref.rollout.copy_only_tokens`): vocabulary tokens the policy may emit
only when they are already in its context.

A web agent names things it sees: WebShop's product ids (`click[B0...]`) are on the results page it
is reading. A small policy also recalls ids it memorised from training goals and clicks them on pages
that do not show them (the env ignores the click; the episode loops). With the rule on, a token
matching the pattern is banned in a turn unless it occurs in the context before that turn (the prompt,
the earlier turns and observations), so every id the policy writes is one the page gave it.

The rule is part of the policy: the rollout engine samples under it (`SamplingParams.banned_token_ids`,
computed per turn by the agent loop) and the actor's log-probs are computed under the same rule
(`CopyOnlyRule`), so pi_old, pi and the reference agree on what the policy could have written.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

import torch

__all__ = ["copy_only_token_ids", "banned_in_context", "CopyOnlyRule", "BANNED_LOGIT"]

# A banned token's logit in the actor (finite: entropy terms multiply p * logit, and -inf would give nan).
BANNED_LOGIT = -1e4


def copy_only_token_ids(tokenizer, pattern: str) -> frozenset[int]:
    """Ids of the vocabulary tokens whose text (surrounding spaces stripped) fully matches `pattern`.

    Raises ValueError when no token matches (a pattern that silently constrains nothing is a bug)."""
    regex = re.compile(pattern)
    ids = frozenset(i for tok, i in tokenizer.get_vocab().items()
                    if regex.fullmatch(tokenizer.convert_tokens_to_string([tok]).strip()))
    if not ids:
        raise ValueError(f"actor_rollout_ref.rollout.copy_only_tokens={pattern!r} matches no token of the "
                         f"tokenizer ({len(tokenizer)} tokens)")
    return ids


def banned_in_context(copy_only_ids: frozenset[int], context: Iterable[int]) -> tuple[int, ...]:
    """The copy-only ids absent from `context` (the ids before the turn), sorted: the turn may not emit them."""
    return tuple(sorted(copy_only_ids.difference(context)))


class CopyOnlyRule:
    """The rule on the actor's side: bans, in each response position's logits, the copy-only ids that were
    not in the sequence before the start of that position's turn (a run of `response_mask` 1s)."""

    def __init__(self, copy_only_ids: Iterable[int]):
        self.ids = torch.tensor(sorted(set(int(i) for i in copy_only_ids)), dtype=torch.long)
        if self.ids.numel() == 0:
            raise ValueError("CopyOnlyRule needs at least one copy-only token id")

    def for_batch(self, input_ids: torch.Tensor, response_mask: torch.Tensor
                  ) -> Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]:
        """A function `(logits (N, vocab), rows (N,), cols (N,)) -> logits` for this batch.

        Args:
            input_ids: (bs, P + R) prompt + response ids, as the actor forwards them.
            response_mask: (bs, R) 1 on the model's own tokens.
        `rows` / `cols` name each logits vector's batch row and response column."""
        ids = self.ids.to(input_ids.device)
        bs, length = input_ids.shape
        prompt_len = length - response_mask.shape[1]
        # first position of each copy-only id in each row (length when absent)
        first = torch.full((bs, ids.numel()), length, dtype=torch.long, device=input_ids.device)
        r, c = torch.isin(input_ids, ids).nonzero(as_tuple=True)
        if r.numel():
            slot = r * ids.numel() + torch.searchsorted(ids, input_ids[r, c])
            first.view(-1).scatter_reduce_(0, slot, c, reduce="amin")
        # absolute position where each response column's turn began
        model = response_mask.bool()
        begins = model & ~torch.nn.functional.pad(model, (1, 0))[:, :-1]
        col = torch.arange(model.shape[1], device=input_ids.device).expand_as(model)
        turn_start = prompt_len + torch.where(begins, col, torch.zeros_like(col)).cummax(dim=1).values

        def apply(logits: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
            ban = first[rows] >= turn_start[rows, cols].unsqueeze(-1)  # (N, n_ids): not seen before the turn
            sub = logits.index_select(-1, ids).masked_fill(ban, BANNED_LOGIT)
            return logits.index_copy(-1, ids, sub)

        return apply
