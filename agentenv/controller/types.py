"""Plain data types shared by environment clients, tasks and adapters (AgentGym's names).

Owns the message, step-result and action-format types; it holds no behaviour.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Optional, TypedDict

__all__ = [
    "NEEDS_JUDGE",
    "SUCCESS_REWARD",
    "is_success",
    "needs_judge",
    "ConversationMessage",
    "ResetResult",
    "StepResult",
    "ActionFormat",
    "ActionWithThought",
    "ExperienceOutput",
]


# An episode succeeded when it earned the full reward (WebShop: bought the exact item, every attribute
# and option right; WebArena: the evaluator passed). The one definition used by rollouts, validation,
# evaluation, metrics and the experts.
SUCCESS_REWARD = 1.0


def is_success(reward: float) -> bool:
    """Whether an episode's reward counts as success (``reward >= SUCCESS_REWARD``)."""
    return float(reward) >= SUCCESS_REWARD


# The final step's `info["eval_status"]` when the env could not score the episode because its check
# needs an LLM judge that is not configured or gave no verdict (WebArena's fuzzy_match, N/A reasons).
# Its reward (0) is no outcome: training leaves the episode out of the update, evaluation out of the
# success rate, and both count it.
NEEDS_JUDGE = "needs_judge"


def needs_judge(info: Optional[dict[str, Any]]) -> bool:
    """Whether a final step's `info` says the episode awaits an LLM judge (``eval_status == NEEDS_JUDGE``)."""
    return isinstance(info, dict) and info.get("eval_status") == NEEDS_JUDGE


# One chat turn in AgentGym's format: `from` is "human" (user / environment) or "gpt" (the agent),
# `loss` says whether the turn is trained on (None for prompt turns), `value` is the text. The
# functional syntax is needed because `from` is a Python keyword.
ConversationMessage = TypedDict("ConversationMessage", {"from": str, "loss": Optional[bool], "value": str})


@dataclass
class ResetResult:
    """What `BaseEnvClient.reset` returns.

    Attributes:
        observation: the first observation text shown to the agent.
        info: extra data the server sent with it (WebArena: sites, objective, task id, timings).
    """

    observation: str
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepResult:
    """What `BaseEnvClient.step` returns (gymnasium's split of "done").

    Attributes:
        observation: the observation text shown to the agent next.
        reward: the step reward (WebShop: 0 until the purchase, then the score in [0, 1]; WebArena:
            the task score on the last step).
        terminated: the task ended (a purchase, a `stop` action, an early stop by the env).
        truncated: the env cut the episode (WebArena's step limit); a round limit imposed by the
            caller is not reported here.
        info: extra data the server sent (None when it sends none).

    ``state`` and ``done`` (= terminated or truncated) are AgentGym's names for the same fields.
    """

    observation: str
    reward: float
    terminated: bool
    truncated: bool = False
    info: Optional[dict[str, Any]] = None

    @property
    def state(self) -> str:
        """AgentGym's name for `observation`."""
        return self.observation

    @property
    def done(self) -> bool:
        """AgentGym's "episode over": terminated or truncated."""
        return self.terminated or self.truncated


class ActionFormat(str, enum.Enum):
    """How the agent writes its action (AgentGym's three formats)."""

    REACT = "react"
    FUNCTION_CALLING = "function_calling"
    CODE_AS_ACTION = "code_as_action"


@dataclass(frozen=True)
class ActionWithThought:
    """A parsed agent turn: the free-text reasoning and the environment action string."""

    thought: str
    action: str


@dataclass
class ExperienceOutput:
    """One finished episode produced by `BaseTask.generate_experience`.

    Attributes:
        item_idx: the data index passed to `reset(idx)`.
        conversation: all turns, starting with the client's `conversation_start`.
        reward: reward of the last step (AgentGym's convention for the episode score).
        done: True if the environment ended the task, False if `max_rounds` cut it short.
        num_rounds: number of agent actions taken.
    """

    item_idx: int
    conversation: list = field(default_factory=list)
    reward: float = 0.0
    done: bool = False
    num_rounds: int = 0
