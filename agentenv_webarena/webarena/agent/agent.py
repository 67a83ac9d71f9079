"""Benchmark agents: what decides the next action from the current step.

- `TeacherForcingAgent` replays the task's `reference_action_sequence` (element ids resolved
  against the current observation, as the expert replay does): a check that the pipeline can score 1.0.
- `PromptAgent` asks an LLM: prompt constructor -> LLM -> `extract_action`, calling the LLM again
  (up to `max_retry` calls in all, WebArena's meaning) while the reply holds no valid action.

An agent returns an `AgentOutput`; `env_text` is what goes to the env's `/step` (the action in a
fenced block, or the last unparseable reply, which the env counts towards its parse-failure stop).
Early stops, step limits and scoring stay with the env.
"""
from __future__ import annotations

import abc
import logging
from dataclasses import dataclass, field
from typing import Any, Optional

from agentenv_webarena.webarena.agent.prompts.prompt_constructor import PromptConstructor, PromptState
from agentenv_webarena.webarena.browser_env.actions import ActionParsingError, create_id_based_action

__all__ = ["AGENT_TYPES", "Agent", "AgentOutput", "TeacherForcingAgent", "PromptAgent", "construct_agent"]

logger = logging.getLogger(__name__)

AGENT_TYPES = ("prompt", "teacher_forcing")
_SPLITTER = "```"
_MAX_RAW_CHARS = 4000  # an unparseable reply sent to the env is cut to this (the env only shows it back)


@dataclass
class AgentOutput:
    """One decision.

    Attributes:
        action: the action string (e.g. "click [12]"); "" when no reply held a valid action.
        response: the model's full last reply (or the replayed step, for teacher forcing).
        attempts: every reply of this step, retries included, in order.
        parse_error: why the last reply was refused ("" when `action` is set).
    """

    action: str
    response: str
    attempts: list[str] = field(default_factory=list)
    parse_error: str = ""

    @property
    def env_text(self) -> str:
        """What the env's step receives."""
        if self.action:
            return f"{_SPLITTER}{self.action}{_SPLITTER}"
        return self.response[:_MAX_RAW_CHARS]


class Agent(abc.ABC):
    """Decides one action per step. One instance per worker (agents keep per-episode state)."""

    #: the runner passes the observation's element metadata (`obs_nodes_info`, ...) to `next_action`
    needs_metadata: bool = False

    def reset(self, task: dict, site_urls: dict[str, str]) -> None:
        """Start an episode of `task` (its config, placeholders unsubstituted); optional, a no-op by default."""
        return None

    @abc.abstractmethod
    def next_action(self, state: PromptState, metadata: Optional[dict] = None) -> AgentOutput:
        """The action for the current step."""

    def close(self) -> None:
        """Free what the agent holds (nothing by default)."""
        return None


class TeacherForcingAgent(Agent):
    """Plays the task's `reference_action_sequence`, one step per call; while a step's element is not in
    the (viewport-only) observation it scrolls towards it instead, as the expert replay does."""

    needs_metadata = True
    max_seek_down = 8  # scrolls per step at most, down then back up (`tasks.reference.seek_actions`)
    max_seek_up = 8

    def __init__(self) -> None:
        self._sequence: list[dict] = []
        self._position = 0
        self._site_urls: dict[str, str] = {}
        self._seeks: Optional[list[str]] = None

    def reset(self, task: dict, site_urls: dict[str, str]) -> None:
        """Load the task's reference sequence.

        Raises:
            ValueError: the task has no `reference_action_sequence` ending in `stop`.
        """
        sequence = list(task.get("reference_action_sequence") or [])
        if not sequence or sequence[-1].get("action") != "stop":
            raise ValueError(f"task {task.get('task_id')} has no reference_action_sequence ending in stop; "
                             "teacher forcing needs one (the embedded suite has them)")
        self._sequence, self._position, self._site_urls = sequence, 0, dict(site_urls)
        self._seeks = None

    def next_action(self, state: PromptState, metadata: Optional[dict] = None) -> AgentOutput:
        """The next reference step, its element resolved in `metadata["obs_nodes_info"]`, or a scroll
        towards that element while the observation does not list it.

        Raises:
            ValueError: the sequence is used up.
            agentenv_webarena.tasks.reference.ReplayError: the step's element is not on the page, scrolled
                through.
        """
        from agentenv_webarena.tasks.reference import (
            PAUSE,
            ReplayError,
            pause_action,
            reference_actions,
            seek_actions,
        )

        if self._position >= len(self._sequence):
            raise ValueError(f"the reference sequence has only {len(self._sequence)} steps")
        step = self._sequence[self._position]
        nodes_info = (metadata or {}).get("obs_nodes_info", {})
        try:
            action = reference_actions(step, nodes_info, self._site_urls)
            self._position += 1
            self._seeks = None
        except ReplayError as missing:
            if self._seeks is None:
                self._seeks = seek_actions(self.max_seek_down, self.max_seek_up)
            if not self._seeks:
                raise
            move = self._seeks.pop(0)
            try:
                action = pause_action(nodes_info) if move == PAUSE else move
            except ReplayError:
                raise missing from None
        response = f"In summary, the next action I will perform is {_SPLITTER}{action}{_SPLITTER}"
        return AgentOutput(action=action, response=response, attempts=[response])


class PromptAgent(Agent):
    """An LLM agent: prompt constructor + LLM + action extraction.

    Args:
        prompt_constructor: renders prompts and reads actions out of replies.
        llm: the backend (`agent.llm`); its `mode` picks chat messages or one prompt string.
        max_retry: LLM calls per step at most while replies hold no valid action (>= 1).
    """

    def __init__(self, prompt_constructor: PromptConstructor, llm: Any, max_retry: int = 1):
        if max_retry < 1:
            raise ValueError(f"--max_retry must be >= 1 (LLM calls per step), got {max_retry}")
        self.prompt_constructor = prompt_constructor
        self.llm = llm
        self.max_retry = max_retry

    def next_action(self, state: PromptState, metadata: Optional[dict] = None) -> AgentOutput:
        """Ask the LLM; retry on replies without a valid action; the last reply goes on as is."""
        prompt = self.prompt_constructor.construct(state, mode=self.llm.mode)
        attempts: list[str] = []
        error = ""
        for _ in range(self.max_retry):
            response = self.llm(prompt)
            attempts.append(response)
            try:
                action = self.prompt_constructor.extract_action(response)
                create_id_based_action(action)  # the env would refuse it the same way
                return AgentOutput(action=action, response=response, attempts=attempts)
            except ActionParsingError as exc:
                error = str(exc)
                logger.debug("reply %d has no valid action: %s", len(attempts), exc)
        return AgentOutput(action="", response=self.prompt_constructor.force_prefix + attempts[-1],
                           attempts=attempts, parse_error=error)


def construct_agent(args: Any, llm: Any = None) -> Agent:
    """The agent `args.agent_type` names, built from the run settings (`RunConfig`).

    Args:
        args: run settings (`agent_type`, `instruction_path`, `max_obs_length`, `max_retry`, and
            for `build_llm` the provider and sampling settings).
        llm: a backend to share between agents; built from `args` when None.

    Raises:
        ValueError: an unknown agent type (the message lists the choices).
    """
    if args.agent_type == "teacher_forcing":
        return TeacherForcingAgent()
    if args.agent_type == "prompt":
        from agentenv_webarena.webarena.agent.llm import build_llm
        from agentenv_webarena.webarena.agent.prompts.prompt_constructor import build_prompt_constructor

        llm = llm if llm is not None else build_llm(args)
        constructor = build_prompt_constructor(args.instruction_path, max_obs_length=args.max_obs_length,
                                               codec=llm.codec)
        return PromptAgent(constructor, llm, max_retry=args.max_retry)
    raise ValueError(f"--agent_type={args.agent_type!r} is not supported; choose one of {list(AGENT_TYPES)}")
