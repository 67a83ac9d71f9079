"""`BaseTask`: a set of environment clients plus a simple sequential episode loop.

Owns client construction from `client_args` and `generate_experience`, which plays episodes with
any policy callable (messages -> text). Batched / async rollouts for training live in the trainer
(verl.workers.rollout.agent_loop); this loop is for evaluation scripts, demos and tests.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, ClassVar, Iterable, Mapping, Optional

from agentenv.controller.env import BaseEnvClient
from agentenv.controller.types import ConversationMessage, ExperienceOutput

__all__ = ["BaseTask", "Policy"]

logger = logging.getLogger(__name__)

# A policy maps the conversation so far to the agent's next turn text.
Policy = Callable[[list[ConversationMessage]], str]


class BaseTask:
    """Builds `n_clients` clients of `env_client_cls` from `client_args`.

    Args:
        client_args: keyword arguments for the client constructor (e.g. env_server_base, data_len).
        n_clients: number of clients (server sessions) to open.
    """

    env_client_cls: ClassVar[type[BaseEnvClient]]
    env_name: ClassVar[str] = ""

    def __init__(self, client_args: Mapping[str, Any], n_clients: int = 1):
        if n_clients < 1:
            raise ValueError(f"n_clients must be >= 1, got {n_clients}")
        self.client_args = dict(client_args)
        self.clients: list[BaseEnvClient] = []
        try:
            for _ in range(n_clients):
                self.clients.append(self.env_client_cls(**self.client_args))
        except Exception:
            self.close()
            raise
        self.len = len(self.clients[0])

    def generate_experience(
        self, policy: Policy, idxs: Iterable[int], max_rounds: Optional[int] = None, client_index: int = 0
    ) -> list[ExperienceOutput]:
        """Play one episode per index in `idxs`, sequentially, on one client.

        Each episode: reset(idx), the first observation as a human turn, then up to `max_rounds`
        rounds of policy turn -> step -> observation turn, stopping early when the env says done.

        Returns:
            One ExperienceOutput per index; `done` False means `max_rounds` cut the episode.
        """
        client = self.clients[client_index]
        results = []
        for idx in idxs:
            first = client.reset(idx)
            conversation: list[ConversationMessage] = [dict(m) for m in client.conversation_start]  # type: ignore[misc]
            conversation.append({"from": "human", "loss": None, "value": first.observation})
            reward, done, rounds = 0.0, False, 0
            while not done and (max_rounds is None or rounds < max_rounds):
                text = policy(conversation)
                conversation.append({"from": "gpt", "loss": True, "value": text})
                out = client.step(text)
                rounds += 1
                reward, done = out.reward, out.done
                conversation.append({"from": "human", "loss": None, "value": out.observation})
            logger.debug("episode idx=%s rounds=%d reward=%.3f done=%s", idx, rounds, reward, done)
            results.append(ExperienceOutput(
                item_idx=idx,
                conversation=conversation,
                reward=reward,
                done=done,
                num_rounds=rounds,
            ))
        return results

    def close(self) -> None:
        """Close every client (safe to call twice)."""
        for client in self.clients:
            client.close()

    def __enter__(self) -> "BaseTask":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
