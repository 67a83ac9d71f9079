"""`BaseEnvClient`: the abstract client for one environment session on an env server.

Owns the client contract shared by every environment (AgentGym's method names, typed results): a
`conversation_start` prompt, `__len__` (number of data items), `reset(idx) -> ResetResult`,
`step(action) -> StepResult`, `observe() -> str` and `close()`, and the observation cap hook
(`cap_observation`, `default_max_obs_tokens`: what part of an observation a token cap cuts, and the cap
the mirrored benchmark applies). Concrete clients (agentenv.envs.*) map these onto their server's HTTP
API; callers never guess a result's shape.
"""
from __future__ import annotations

import abc
from typing import Any, Sequence

from agentenv.controller.tokens import TokenCodec, cut_to_tokens
from agentenv.controller.types import ActionFormat, ConversationMessage, ResetResult, StepResult

__all__ = ["BaseEnvClient"]


class BaseEnvClient(abc.ABC):
    """One live environment session.

    Args:
        action_format: how the agent writes actions ("react", ...).

    Clients are context managers: `with Client(...) as env:` closes the session on exit.
    `close()` must be safe to call more than once.
    """

    conversation_start: Sequence[ConversationMessage] = ()
    # the observation cap (tokens of the policy's tokenizer) of the benchmark this env mirrors; 0: none
    default_max_obs_tokens: int = 0
    # where the env's parser ends an action: (trigger, end) = the first `end` after the first `trigger`; a
    # trainer may stop generating there (verl's rollout.stop_at_action_end). None: the reply ends at EOS
    action_end: tuple[str, str] | None = None

    def __init__(self, *args: Any, action_format: str | ActionFormat = ActionFormat.REACT, **kwargs: Any):
        try:
            self.action_format = ActionFormat(action_format)
        except ValueError as exc:
            raise ValueError(
                f"action_format={action_format!r} is unknown; choose one of {[f.value for f in ActionFormat]}"
            ) from exc

    @abc.abstractmethod
    def __len__(self) -> int:
        """Number of data items (task indices) this environment serves."""

    @abc.abstractmethod
    def observe(self) -> str:
        """Return the current observation text."""

    @abc.abstractmethod
    def step(self, action: str) -> StepResult:
        """Apply the agent's raw text `action`; an unusable action gives an observation saying so."""

    @abc.abstractmethod
    def reset(self, idx: int) -> ResetResult:
        """Start data item `idx` (WebShop: the goal index; WebArena: the task index)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Free the server-side session; a second call does nothing."""

    @classmethod
    def cap_observation(cls, text: str, codec: TokenCodec, max_tokens: int) -> str:
        """The observation as the policy sees it: `text` cut to `max_tokens` tokens of `codec`
        (0 = no cap). Default: the cut applies to the whole text; an env whose benchmark cuts only one
        part of the observation (WebArena: the accessibility tree) overrides this."""
        return cut_to_tokens(text, codec, max_tokens)

    def __enter__(self) -> "BaseEnvClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
