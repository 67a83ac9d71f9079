"""Drive a verl interaction with the one agent loop: an interaction behind agentenv's client contract.

`InteractionEnvClient` wraps a `BaseInteraction` so that `AgentLoop` (through its env-client pool)
runs it exactly like an env client: `reset(idx)` = `start_interaction(session_id=idx, **start_kwargs)`
(the first observation from the interaction's `get_observation` when it has one), `step(text)` =
`generate_response` with the assistant message (its response, score and should-terminate become the
`StepResult`), `close()` = `finalize_interaction`; the observation cap is the env client's
(`cap_observation`, `default_max_obs_tokens` of the task's client class). The interaction's
coroutines run on one background event loop shared by all adapters, so interactions that keep async
state work from the loop's worker threads. `interaction_client_factory` builds the pool factory the
agent loop takes.
"""
from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, Coroutine, Optional, Sequence

from agentenv.controller.env import BaseEnvClient
from agentenv.controller.types import ConversationMessage, ResetResult, StepResult
from verl.interactions.base import BaseInteraction

__all__ = ["InteractionEnvClient", "interaction_client_factory"]

_loop: Optional[asyncio.AbstractEventLoop] = None
_loop_lock = threading.Lock()


def _run(coro: Coroutine) -> Any:
    """Run `coro` on the shared interaction loop (started on first use) and wait for its result."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="interactions", daemon=True).start()
    return asyncio.run_coroutine_threadsafe(coro, _loop).result()


class InteractionEnvClient(BaseEnvClient):
    """One interaction instance at a time, behind the env-client contract.

    Args:
        interaction: the `BaseInteraction` (shared by many adapters; it keeps per-instance state).
        conversation_start: the prompt turns the agent loop puts before the first observation
            (use the env client's, e.g. `envclient_classes["webshop"].conversation_start`).
        data_len: number of task indices (`len(client)`).
        start_kwargs: extra keyword arguments of every `start_interaction` (a row's
            `interaction_kwargs` without `name`).
        env_client_cls: the env client class whose observation cap applies (its `cap_observation`
            and `default_max_obs_tokens`); None: the default (the whole text is cut).
    """

    def __init__(self, interaction: BaseInteraction, conversation_start: Sequence[ConversationMessage] = (),
                 data_len: int = 0, start_kwargs: Optional[dict] = None,
                 env_client_cls: Optional[type[BaseEnvClient]] = None):
        super().__init__()
        if env_client_cls is not None:  # the env's observations, so the env's cut
            self.cap_observation = env_client_cls.cap_observation
            self.default_max_obs_tokens = env_client_cls.default_max_obs_tokens
        self.interaction = interaction
        self.conversation_start = tuple(conversation_start)
        self.data_len = int(data_len)
        self.start_kwargs = dict(start_kwargs or {})
        self.instance_id: Optional[str] = None
        self._observation = ""

    def __len__(self) -> int:
        return self.data_len

    def reset(self, idx: int) -> ResetResult:
        """Finalize the previous instance, start one for task `idx`."""
        self._finalize()
        self.instance_id = _run(self.interaction.start_interaction(None, session_id=idx, **self.start_kwargs))
        get_observation = getattr(self.interaction, "get_observation", None)
        self._observation = str(get_observation(self.instance_id)) if get_observation is not None else ""
        return ResetResult(observation=self._observation, info={"instance_id": self.instance_id})

    def step(self, action: str) -> StepResult:
        """Give the interaction the assistant's text; its response is the next observation."""
        if self.instance_id is None:
            raise RuntimeError("InteractionEnvClient.step before reset: no interaction instance is open")
        done, response, score, extra = _run(self.interaction.generate_response(
            self.instance_id, [{"role": "assistant", "content": action}]))
        self._observation = str(response)
        return StepResult(observation=self._observation, reward=float(score), terminated=bool(done),
                          info=dict(extra or {}))

    def observe(self) -> str:
        return self._observation

    def close(self) -> None:
        """Finalize the open instance (safe to call twice)."""
        self._finalize()

    def _finalize(self) -> None:
        instance_id, self.instance_id = self.instance_id, None
        if instance_id is not None:
            _run(self.interaction.finalize_interaction(instance_id))


def interaction_client_factory(interaction: BaseInteraction, task_name: str, data_len: int = 0,
                               start_kwargs: Optional[dict] = None) -> Callable[[], InteractionEnvClient]:
    """A zero-argument factory for `AgentLoop(env_client_factory=...)`: adapters over `interaction`
    with the conversation start and observation cap of `task_name`'s env client, so prompts match the
    env-client path."""
    from verl.utils.agentgym.client import envclient_classes

    env_cls = envclient_classes[task_name]
    return lambda: InteractionEnvClient(interaction, env_cls.conversation_start, data_len, start_kwargs,
                                        env_client_cls=env_cls)
