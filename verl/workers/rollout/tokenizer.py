"""Chat tokenisation shared by the rollout and SFT, so both see the exact same ids for a conversation.

The first prompt is the system line (if any), the env client's `conversation_start` turns and the
first observation, rendered with the tokenizer's chat template. The system line, when the config leaves it
null, follows the model family (`default_system_prompt`): AgentGym-RL's Qwen line for Qwen-family models only;
any other model gets none, so its own chat template decides (SmolLM2's adds its own default system turn).
After each model turn the agent loop appends `observation_token_ids`: the rest of the turn's closing,
the user (observation) turn and the next assistant header, read off the chat template by
`chat_template_pieces` (the template must be append-only, as ChatML is). Model output is never re-encoded.
"""
from __future__ import annotations

import json
import os

__all__ = ["DEFAULT_SYSTEM_PROMPT", "default_system_prompt", "resolve_system_prompt", "initial_messages",
           "render_chat", "encode_text", "chat_template_pieces", "observation_token_ids"]

# AgentGym-RL's hard-coded system line (Qwen2.5's default): the default for Qwen-family models only.
DEFAULT_SYSTEM_PROMPT = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
_ROLE = {"human": "user", "gpt": "assistant", "user": "user", "assistant": "assistant", "system": "system"}


def _model_type(tokenizer) -> str:
    """`model_type` from the `config.json` beside the tokenizer ("" when there is none)."""
    path = os.path.join(str(getattr(tokenizer, "name_or_path", "") or ""), "config.json")
    try:
        with open(path, encoding="utf-8") as fh:
            return str(json.load(fh).get("model_type", ""))
    except (OSError, ValueError):
        return ""


def default_system_prompt(tokenizer) -> str | None:
    """The system line a null `system_prompt` means for this model: Qwen's line for a Qwen-family model (its
    `config.json` model_type, else its chat template or tokenizer class, names Qwen), None (no system turn: the
    chat template's own default, if any, applies) for every other model."""
    model_type = _model_type(tokenizer)
    if model_type:
        is_qwen = model_type.lower().startswith("qwen")
    else:
        template = getattr(tokenizer, "chat_template", None) or ""
        is_qwen = "qwen" in str(template).lower() or "qwen" in type(tokenizer).__name__.lower()
    return DEFAULT_SYSTEM_PROMPT if is_qwen else None


def resolve_system_prompt(system_prompt: str | None, tokenizer) -> str | None:
    """A config's `system_prompt`: null -> `default_system_prompt(tokenizer)`; "" -> none; else the text."""
    return default_system_prompt(tokenizer) if system_prompt is None else system_prompt


def initial_messages(system_prompt: str | None, conversation_start, observation: str) -> list[dict]:
    """The first prompt's chat: system line (if any), the client's `conversation_start` turns, the first observation."""
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    for turn in conversation_start or ():
        messages.append({"role": _ROLE[turn["from"]], "content": turn["value"]})
    messages.append({"role": "user", "content": observation})
    return messages


def render_chat(tokenizer, messages: list[dict], add_generation_prompt: bool) -> str:
    """`messages` rendered with the tokenizer's chat template (text, not ids)."""
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt)


def encode_text(tokenizer, text: str) -> list[int]:
    """Ids of already-templated text (no BOS/EOS added)."""
    return list(tokenizer.encode(text, add_special_tokens=False))


def chat_template_pieces(tokenizer) -> tuple[str, tuple[str, str]]:
    """Find, from the chat template itself, what closes an assistant turn and how a user turn
    plus the next assistant header are written (the template must be append-only).

    Returns:
        `(closing, (before, after))`: an assistant turn ends with `closing`; an observation turn is
        written as `before + observation + after` (`after` ends with the next assistant header).
    """
    content, obs = "\x00ASSISTANT\x00", "\x00OBSERVATION\x00"
    head = [{"role": "user", "content": "u"}, {"role": "assistant", "content": content}]
    prev = render_chat(tokenizer, head, add_generation_prompt=False)
    full = render_chat(tokenizer, head + [{"role": "user", "content": obs}], add_generation_prompt=True)
    if not full.startswith(prev) or content not in prev or obs not in full:
        raise ValueError("the tokenizer's chat template is not append-only (rendering one more user turn changes "
                         "earlier text); multi-turn token bookkeeping needs a ChatML-like template")
    closing = prev[prev.rindex(content) + len(content):]
    delta = full[len(prev):]
    before, _, after = delta.partition(obs)
    return closing, (before, after)


def observation_token_ids(tokenizer, pieces: tuple[str, tuple[str, str]], observation: str,
                          stop_token: int | None) -> list[int]:
    """Ids appended after a model turn: rest of the turn closing, the user turn, the assistant header.

    `pieces` is `chat_template_pieces(tokenizer)`; `stop_token` is the stop id the model produced
    (None when the turn hit max_tokens); when it is the template's end-of-turn text, only the rest of
    the closing is appended (mask 0)."""
    closing, (before, after) = pieces
    stop_text = tokenizer.decode([stop_token]) if stop_token is not None else None
    if stop_text and closing.startswith(stop_text):
        closing = closing[len(stop_text):]  # the model produced the end-of-turn token itself
    return encode_text(tokenizer, closing + before + observation + after)
