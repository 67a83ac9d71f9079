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

When no vocabulary token is a whole id (a real tokenizer splits `B078GWRC1J` into ~9 pieces, the first of
which differs with what precedes it: `ĠB` on the page, `B` after `click[`), the rule runs over token
sequences and their text instead (`SequenceCopyOnlyRule`): an id is a word (a run of word characters) that
fully matches the pattern, and the ids the context before the turn shows are the allowed ones. Within a turn:
 - a word that could still become an id (a prefix of a pattern match) must be a prefix of a shown id;
 - once such a word is open, the next token continues a shown id or ends the word (a whole id only if shown);
 - any other word is free.
So a multi-token id is written only as a continuation of one the context shows, with the same case. The ban
changes token by token, so the engine applies it per step (`SamplingParams.token_rule`, per turn from
`SequenceCopyOnlyRule.turn_rule`) and the actor per position (`SequenceCopyOnlyRule.for_batch`): the same
function of (context before the turn, the turn's tokens so far), so engine and actor log-probs agree.
`copy_only_rule` picks the mode from the tokenizer.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

import regex
import torch

__all__ = ["copy_only_token_ids", "banned_in_context", "CopyOnlyRule", "SequenceCopyOnlyRule", "TurnRule",
           "copy_only_rule", "BANNED_LOGIT"]

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
        self.id_set = frozenset(int(i) for i in copy_only_ids)
        self.ids = torch.tensor(sorted(self.id_set), dtype=torch.long)
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
        begins = _turn_starts(response_mask)
        col = torch.arange(model.shape[1], device=input_ids.device).expand_as(model)
        turn_start = prompt_len + torch.where(begins, col, torch.zeros_like(col)).cummax(dim=1).values

        def apply(logits: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
            ban = first[rows] >= turn_start[rows, cols].unsqueeze(-1)  # (N, n_ids): not seen before the turn
            sub = logits.index_select(-1, ids).masked_fill(ban, BANNED_LOGIT)
            return logits.index_copy(-1, ids, sub)

        return apply


def _turn_starts(response_mask: torch.Tensor) -> torch.Tensor:
    """(bs, R) bool: True at the first column of each run of response_mask 1s (a model turn)."""
    model = response_mask.bool()
    return model & ~torch.nn.functional.pad(model, (1, 0))[:, :-1]


class TurnRule:
    """The sequence rule for one turn: which ids are banned at the next position, given the turn's tokens so far.

    Made by `SequenceCopyOnlyRule.turn_rule(context_ids)`; masks are cached per state (word start, free word,
    each open id prefix)."""

    def __init__(self, owner: "SequenceCopyOnlyRule", shown: frozenset[str]):
        self.owner, self.shown = owner, shown
        self.prefixes = frozenset(i[:k] for i in shown for k in range(1, len(i) + 1))
        self._masks: dict[tuple, torch.Tensor] = {}

    def state(self, turn_ids: Sequence[int]) -> str | None:
        """The open word at the end of the turn so far: "" at a word start, the word when it is a shown-id prefix,
        None when it is a free word."""
        word = self.owner.trailing_word(turn_ids)
        return word if (not word or word in self.prefixes) else None

    def ban_mask(self, turn_ids: Sequence[int], vocab_size: int) -> torch.Tensor:
        """(vocab_size,) bool: True on the ids the next token may not be after `turn_ids` (this turn's tokens)."""
        return self.mask_for(self.state(turn_ids), vocab_size)

    def mask_for(self, state: str | None, vocab_size: int) -> torch.Tensor:
        """The ban mask of a `state` (see `state`)."""
        key = (state, vocab_size)
        if key not in self._masks:
            self._masks[key] = self.owner.mask(state, self.shown, self.prefixes, vocab_size)
        return self._masks[key]


class SequenceCopyOnlyRule:
    """Copy-only ids over token sequences (see the module docstring): for tokenizers that split ids.

    Per tokenizer it precomputes each token's text split into word runs; per turn, the shown ids; per
    position, the state of the open word. Special tokens count as non-word text."""

    _WORD = re.compile(r"\w+")

    def __init__(self, tokenizer, pattern: str):
        self.pattern = regex.compile(pattern)
        vocab = tokenizer.get_vocab()
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        texts = [""] * (max(vocab.values()) + 1)
        for tok, i in vocab.items():
            texts[i] = "\x00" if i in special else tokenizer.convert_tokens_to_string([tok])
        self.texts = texts
        self.by_lead: dict[str, list[tuple[int, bool]]] = {}   # leading word run -> [(id, word ends in token)]
        nonword_lead, self.lead_cands, self.inner_cands = [], [], []
        for i, text in enumerate(texts):
            runs = [(m.group(), m.start(), m.end() < len(text)) for m in self._WORD.finditer(text)]
            lead = runs[0] if runs and runs[0][1] == 0 else None
            inner = [(w, done) for w, start, done in runs if start > 0 and self._partial(w)]
            if lead is None:
                nonword_lead.append(i)
            else:
                self.by_lead.setdefault(lead[0], []).append((i, lead[2]))
                if self._partial(lead[0]):
                    self.lead_cands.append((i, lead[0], lead[2]))
            if inner:
                self.inner_cands.append((i, inner))
        self.nonword_lead = torch.tensor(nonword_lead, dtype=torch.long)
        if not self.lead_cands:
            raise ValueError(f"actor_rollout_ref.rollout.copy_only_tokens={pattern!r}: no token starts an id "
                             f"(no token text begins a match of the pattern)")

    def _partial(self, word: str) -> bool:
        return self.pattern.fullmatch(word, partial=True) is not None

    def _full(self, word: str) -> bool:
        return self.pattern.fullmatch(word) is not None

    def trailing_word(self, ids: Sequence[int]) -> str:
        """The run of word characters at the end of the text of `ids`."""
        parts = []
        for t in reversed(ids):
            text = self.texts[t] if 0 <= t < len(self.texts) else "\x00"
            m = re.search(r"\w*$", text)
            parts.append(m.group())
            if m.start() > 0 or not text:
                break
        return "".join(reversed(parts))

    def shown(self, context_ids: Sequence[int]) -> frozenset[str]:
        """The ids (whole words matching the pattern) in the text of `context_ids`."""
        text = "".join(self.texts[t] if 0 <= t < len(self.texts) else "\x00" for t in context_ids)
        return frozenset(w for w in self._WORD.findall(text) if self._full(w))

    def turn_rule(self, context_ids: Sequence[int]) -> TurnRule:
        """The rule of a turn whose context (everything before the turn) is `context_ids`."""
        return TurnRule(self, self.shown(context_ids))

    def _word_ok(self, word: str, done: bool, shown: frozenset[str], prefixes: frozenset[str]) -> bool:
        """A word run of a token (already known to be a prefix of a match): ended -> not an unshown id;
        still open -> a prefix of a shown id."""
        return (word in shown or not self._full(word)) if done else word in prefixes

    def mask(self, state: str | None, shown: frozenset[str], prefixes: frozenset[str], vocab_size: int
             ) -> torch.Tensor:
        """(vocab_size,) bool ban mask of a state: "" word start, None free word, else the open id prefix."""
        inner_bad = [i for i, runs in self.inner_cands
                     if not all(self._word_ok(w, done, shown, prefixes) for w, done in runs)]
        if state is None or state == "":
            ban = torch.zeros(vocab_size, dtype=torch.bool)
            bad = inner_bad
            if state == "":
                bad = bad + [i for i, w, done in self.lead_cands if not self._word_ok(w, done, shown, prefixes)]
            ids = torch.tensor([i for i in bad if i < vocab_size], dtype=torch.long)
            return ban.index_fill_(0, ids, True) if ids.numel() else ban
        # an open id prefix: continue a shown id, or end the word (a whole id only if shown)
        ban = torch.ones(vocab_size, dtype=torch.bool)
        if state in shown or not self._full(state):
            ban[self.nonword_lead[self.nonword_lead < vocab_size]] = False
        rests = {i[len(state):] for i in shown if i.startswith(state) and len(i) > len(state)}
        for piece in {r[:k] for r in rests for k in range(1, len(r) + 1)}:
            word = state + piece
            for i, done in self.by_lead.get(piece, ()):
                if i < vocab_size and self._word_ok(word, done, shown, prefixes):
                    ban[i] = False
        if inner_bad:
            ids = torch.tensor([i for i in inner_bad if i < vocab_size], dtype=torch.long)
            ban[ids] = True
        return ban

    def for_batch(self, input_ids: torch.Tensor, response_mask: torch.Tensor
                  ) -> Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]:
        """As `CopyOnlyRule.for_batch`: each response position's logits get its turn's ban mask for the turn's
        tokens before it (the engine's `TurnRule.ban_mask` at that step)."""
        bs, length = input_ids.shape
        resp_len = response_mask.shape[1]
        prompt_len = length - resp_len
        starts, model = _turn_starts(response_mask).cpu().tolist(), response_mask.bool().cpu().tolist()
        ids_host = input_ids.cpu().tolist()
        index = torch.full((bs, resp_len), -1, dtype=torch.long)
        states: list[tuple[TurnRule, str | None]] = []
        slot: dict[tuple[int, str | None], int] = {}
        for b in range(bs):
            rule, turn_begin = None, 0
            for c in range(resp_len):
                if not model[b][c]:
                    continue
                if starts[b][c]:
                    rule, turn_begin = self.turn_rule(ids_host[b][:prompt_len + c]), c
                state = rule.state(ids_host[b][prompt_len + turn_begin:prompt_len + c])
                key = (id(rule), state)
                if key not in slot:
                    slot[key] = len(states)
                    states.append((rule, state))
                index[b, c] = slot[key]
        index = index.to(input_ids.device)
        cache: dict[int, torch.Tensor] = {}

        def apply(logits: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
            vocab = logits.shape[-1]
            if vocab not in cache:
                cache[vocab] = (torch.stack([r.mask_for(st, vocab) for r, st in states]).to(logits.device)
                                if states else torch.zeros((0, vocab), dtype=torch.bool, device=logits.device))
            which = index[rows, cols]
            ban = torch.zeros_like(logits, dtype=torch.bool)
            on = which >= 0
            if on.any():
                ban[on] = cache[vocab][which[on]]
            return logits.masked_fill(ban, BANNED_LOGIT)

        return apply


def copy_only_rule(tokenizer, pattern: str) -> CopyOnlyRule | SequenceCopyOnlyRule:
    """The rule of `rollout.copy_only_tokens` for this tokenizer: over whole tokens when some vocabulary tokens
    are ids (`CopyOnlyRule`), else over token sequences (`SequenceCopyOnlyRule`)."""
    try:
        return CopyOnlyRule(copy_only_token_ids(tokenizer, pattern))
    except ValueError:
        return SequenceCopyOnlyRule(tokenizer, pattern)
