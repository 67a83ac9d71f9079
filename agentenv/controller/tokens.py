"""Cutting an observation to a token budget, as WebArena's prompt does (`--max_obs_length`).

Owns what a cut needs from a tokenizer (`TokenCodec`: encode / decode), the codec of a transformers
tokenizer (`HFTokenCodec`), the codec used when no tokenizer of the model is known
(`ApproxTokenCodec`: a token is taken as 4 characters) and the cut itself (`cut_to_tokens`: encode,
keep the first N ids, decode, which is WebArena's `tokenizer.decode(tokenizer.encode(obs)[:N])`).
Which part of an observation is cut is the env client's call (`BaseEnvClient.cap_observation`).
"""
from __future__ import annotations

from typing import Any, Protocol

__all__ = ["TokenCodec", "HFTokenCodec", "ApproxTokenCodec", "APPROX_CHARS_PER_TOKEN", "cut_to_tokens"]

# Characters per token of a BPE tokenizer on English text and accessibility trees (~3.5-4.5 for
# Llama / Qwen / GPT tokenizers): what a token counts as when no tokenizer of the model is known.
APPROX_CHARS_PER_TOKEN = 4


class TokenCodec(Protocol):
    """What a token cut needs from a tokenizer."""

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...


class HFTokenCodec:
    """A transformers tokenizer as a `TokenCodec` (no special tokens added)."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer

    @classmethod
    def from_pretrained(cls, path: str) -> "HFTokenCodec":
        """The codec of the HF tokenizer at `path` (a local directory or a hub name)."""
        from transformers import AutoTokenizer

        return cls(AutoTokenizer.from_pretrained(path))

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids)


class ApproxTokenCodec:
    """Runs of `chars_per_token` characters as tokens: a cut of N tokens keeps N * chars_per_token
    characters. For when no tokenizer of the model is known (an API model served without one)."""

    def __init__(self, chars_per_token: int = APPROX_CHARS_PER_TOKEN):
        if chars_per_token < 1:
            raise ValueError(f"chars_per_token must be >= 1, got {chars_per_token}")
        self.chars_per_token = chars_per_token

    def encode(self, text: str) -> list[int]:
        # each id packs its characters' code points (21 bits each) behind a leading 1 bit
        n = self.chars_per_token
        ids = []
        for start in range(0, len(text), n):
            packed = 1
            for ch in text[start:start + n]:
                packed = (packed << 21) | ord(ch)
            ids.append(packed)
        return ids

    def decode(self, ids: list[int]) -> str:
        out = []
        for packed in ids:
            chars = []
            while packed > 1:
                chars.append(chr(packed & 0x1FFFFF))
                packed >>= 21
            out.extend(reversed(chars))
        return "".join(out)


def cut_to_tokens(text: str, codec: TokenCodec, max_tokens: int) -> str:
    """`text` cut to its first `max_tokens` tokens of `codec` (0 = no cap); a text within the cap
    comes back unchanged. A multi-byte character split by the cut is dropped, not shown as U+FFFD.

    Raises:
        ValueError: `max_tokens` is negative.
    """
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be >= 0 (0 = no cap), got {max_tokens}")
    if not max_tokens or not text:
        return text
    ids = codec.encode(text)
    if len(ids) <= max_tokens:
        return text
    cut = codec.decode(ids[:max_tokens])
    while cut.endswith("\ufffd") and not text.startswith(cut):
        cut = cut[:-1]
    return cut
