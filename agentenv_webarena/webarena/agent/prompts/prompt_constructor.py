"""Prompt constructors: a template (`jsons/<name>.json`) plus the current step become the LLM's
input, and the LLM's reply becomes an action string.

Owns the prompt layout for both API styles (`chat`: a system message with the intro, one
user/assistant pair per example, then the current step as a user message; `completion`: the same
text as one string ending with a reply cue), the observation cut to `max_obs_length` tokens, and
reading the action out of a reply (`extract_action`). It does not call the LLM (`agent.llm`) or
check the action against the page (the env).

A template is a dict: `intro` (str), `examples` ([[step block, reply], ...]), `template` (the step
block with `{observation}`, `{url}`, `{objective}`, `{previous_action}`) and `meta_data`
(`prompt_constructor`, `answer_phrase`, `action_splitter`, `force_prefix`, ...).
"""
from __future__ import annotations

import abc
import json
import logging
import os
import re
from dataclasses import dataclass
from typing import Union

from agentenv.controller.tokens import ApproxTokenCodec, HFTokenCodec, TokenCodec, cut_to_tokens
from agentenv.envs.webarena import OBSERVATION_LAYOUT
from agentenv_webarena.webarena.browser_env.actions import ActionParsingError

__all__ = [
    "MODES",
    "PromptState",
    "TokenCodec",
    "CharCodec",
    "HFTokenCodec",
    "ApproxTokenCodec",
    "PromptConstructor",
    "CoTPromptConstructor",
    "DirectPromptConstructor",
    "PROMPT_CONSTRUCTORS",
    "load_instruction",
    "build_prompt_constructor",
    "split_prompt_text",
]

logger = logging.getLogger(__name__)

MODES = ("chat", "completion")
_COMPLETION_CUE = "REPLY:"


@dataclass(frozen=True)
class PromptState:
    """What the agent knows at one step (the fields of the prompt's step block)."""

    observation: str
    url: str
    objective: str
    previous_action: str = "None"


def split_prompt_text(text: str) -> PromptState:
    """Read the env's observation text (`OBSERVATION:` / `URL:` / `OBJECTIVE:` / `PREVIOUS ACTION:`).

    Raises:
        ValueError: the text is not in that layout.
    """
    match = OBSERVATION_LAYOUT.match(text)  # the client's layout, read from the end
    if match is None:
        raise ValueError("the observation is not in the WebArena prompt layout "
                         f"(OBSERVATION / URL / OBJECTIVE / PREVIOUS ACTION): {text[:200]!r}")
    return PromptState(**match.groupdict())


class CharCodec:
    """Characters as tokens (a cut of N keeps N characters)."""

    def encode(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, ids: list[int]) -> str:
        return "".join(map(chr, ids))


def load_instruction(instruction: Union[str, os.PathLike, dict]) -> dict:
    """A template from a JSON path (or the dict itself), checked for the keys the constructors read.

    Raises:
        FileNotFoundError: the path does not exist.
        ValueError: a key is missing or has the wrong type.
    """
    if isinstance(instruction, dict):
        data = instruction
    else:
        path = os.fspath(instruction)
        if not os.path.exists(path):
            raise FileNotFoundError(f"instruction file {path} does not exist; the shipped templates are in "
                                    f"{os.path.join(os.path.dirname(os.path.abspath(__file__)), 'jsons')}")
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    for key, kind in (("intro", str), ("examples", list), ("template", str), ("meta_data", dict)):
        if not isinstance(data.get(key), kind):
            raise ValueError(f"instruction {instruction if not isinstance(instruction, dict) else '<dict>'}: "
                             f"{key!r} must be a {kind.__name__}, got {type(data.get(key)).__name__}")
    for key in ("prompt_constructor", "answer_phrase", "action_splitter"):
        if not isinstance(data["meta_data"].get(key), str):
            raise ValueError(f"instruction meta_data.{key} must be a string")
    return data


class PromptConstructor(abc.ABC):
    """Base constructor: renders prompts; subclasses say how the action is read from a reply.

    Args:
        instruction: a template path or dict (see `load_instruction`).
        max_obs_length: cap on the observation in tokens of `codec` (0 = no cap), as WebArena's
            `--max_obs_length`.
        codec: the tokenizer the cap counts in (default: `ApproxTokenCodec`, 4 characters a token).
    """

    def __init__(self, instruction: Union[str, os.PathLike, dict], max_obs_length: int = 0,
                 codec: TokenCodec | None = None):
        if max_obs_length < 0:
            raise ValueError(f"max_obs_length must be >= 0 (0 = no cap), got {max_obs_length}")
        self.instruction = load_instruction(instruction)
        self.meta = self.instruction["meta_data"]
        self.max_obs_length = max_obs_length
        self.codec = codec or ApproxTokenCodec()

    @property
    def force_prefix(self) -> str:
        """Text the reply is taken to start with (the completion prompt ends with it)."""
        return self.meta.get("force_prefix", "") or ""

    def step_block(self, state: PromptState) -> str:
        """The current step in the template's layout, the observation cut to `max_obs_length`."""
        observation = cut_to_tokens(state.observation, self.codec, self.max_obs_length)
        return self.instruction["template"].format(observation=observation, url=state.url,
                                                   objective=state.objective, previous_action=state.previous_action)

    def construct(self, state: PromptState, mode: str = "chat") -> Union[list[dict], str]:
        """The LLM input: chat messages (`mode="chat"`) or one prompt string (`mode="completion"`).

        Raises:
            ValueError: an unknown mode.
        """
        current = self.step_block(state)
        examples = self.instruction["examples"]
        if mode == "chat":
            messages = [{"role": "system", "content": self.instruction["intro"]}]
            for block, reply in examples:
                messages += [{"role": "user", "content": block}, {"role": "assistant", "content": reply}]
            messages.append({"role": "user", "content": current})
            return messages
        if mode == "completion":
            parts = [self.instruction["intro"]]
            for i, (block, reply) in enumerate(examples, 1):
                parts.append(f"Example {i}:\n{block}\n{_COMPLETION_CUE} {reply}")
            parts.append(f"Your turn:\n{current}\n{_COMPLETION_CUE} {self.force_prefix}")
            return "\n\n".join(parts)
        raise ValueError(f"mode={mode!r} is not supported; choose one of {list(MODES)}")

    def extract_action(self, response: str) -> str:
        """The action string in a reply (`force_prefix` is put in front first).

        Raises:
            ActionParsingError: the reply holds no action in the expected place.
        """
        return self._extract(self.force_prefix + response)

    @abc.abstractmethod
    def _extract(self, response: str) -> str:
        """The action string in `response` (force_prefix already in front)."""

    def _fenced(self, text: str, response: str) -> str:
        splitter = re.escape(self.meta["action_splitter"])
        match = re.search(f"{splitter}(.*?){splitter}", text, re.S)
        if match is None:
            raise ActionParsingError(
                f"cannot find an action in the reply {response[:200]!r}: end the reply with the action "
                f"between a pair of {self.meta['action_splitter']}, e.g. {self.meta['action_splitter']}click [12]"
                f"{self.meta['action_splitter']}")
        return match.group(1).strip()


class DirectPromptConstructor(PromptConstructor):
    """The reply is the action: the first fenced block."""

    def _extract(self, response: str) -> str:
        return self._fenced(response, response)


class CoTPromptConstructor(PromptConstructor):
    """The reply reasons, then gives the action after the answer phrase: the first fenced block after
    the last answer phrase, else (a reply without the phrase) the first fenced block anywhere."""

    def _extract(self, response: str) -> str:
        phrase = self.meta["answer_phrase"]
        at = response.rfind(phrase) if phrase else -1
        if at >= 0:
            tail = response[at + len(phrase):]
            try:
                return self._fenced(tail, response)
            except ActionParsingError:
                pass
        return self._fenced(response, response)


PROMPT_CONSTRUCTORS: dict[str, type[PromptConstructor]] = {
    "CoTPromptConstructor": CoTPromptConstructor,
    "DirectPromptConstructor": DirectPromptConstructor,
}


def build_prompt_constructor(instruction: Union[str, os.PathLike, dict], max_obs_length: int = 0,
                             codec: TokenCodec | None = None) -> PromptConstructor:
    """The constructor the template's `meta_data.prompt_constructor` names.

    Raises:
        ValueError: the name is not one of `PROMPT_CONSTRUCTORS`.
    """
    data = load_instruction(instruction)
    name = data["meta_data"]["prompt_constructor"]
    if name not in PROMPT_CONSTRUCTORS:
        raise ValueError(f"meta_data.prompt_constructor={name!r} is not known; "
                         f"choose one of {sorted(PROMPT_CONSTRUCTORS)}")
    return PROMPT_CONSTRUCTORS[name](data, max_obs_length=max_obs_length, codec=codec)
