"""An AgentGym environment as a verl interaction: each instance is one env session reset to a task index.

`start_interaction(instance_id, item_id="webshop_12")` (or `session_id=12`) resets a pooled client
of the config's `task_name`; `get_observation` returns the first observation; `generate_response`
hands the last assistant message to the client's `step` (which parses the action; a reply without
one gets the env's corrective observation, not an exception) and returns (done, next observation,
step reward, {"reward", "done", "turns"[, "eval_status"]}); `calculate_score` is the sum of the step rewards so far;
`finalize_interaction` returns the session to the pool. Env failures raise `EnvClientError` to the
caller, which decides how to fail the sample. `WebshopInteraction` and `WebarenaInteraction` are this
class with their task's defaults.
"""
from __future__ import annotations

import asyncio
import dataclasses
import uuid
from dataclasses import dataclass
from typing import Any, Optional

from agentenv.item_ids import parse_item_id
from verl.config.interaction import EnvInteractionConfig
from verl.config.loader import as_section, to_dict
from verl.interactions.base import BaseInteraction
from verl.utils.agentgym.client import EnvClientPool

__all__ = ["EnvInteraction"]


@dataclass
class _Instance:
    client: Any
    observation: str
    reward: float = 0.0
    score: float = 0.0
    done: bool = False
    turns: int = 0


class EnvInteraction(BaseInteraction):
    """Interaction backed by the env client of `task_name` (`verl.utils.agentgym.client.envclient_classes`).

    Args:
        config: an `EnvInteractionConfig` or a mapping of its keys (`env_server_base`, `timeout`,
            `max_retries`, `task_name`, `name`, ...; an unknown key fails with close matches). In a
            mapping, `client_factory` (a zero-argument callable, not a YAML key) replaces the real
            client, e.g. in tests.
    """

    default_task = "webshop"
    config_class = EnvInteractionConfig  # the registry types `interaction[i].config` with it

    def __init__(self, config: Any = None):
        factory = None
        if not isinstance(config, EnvInteractionConfig):
            config = dict(config or {})
            factory = config.pop("client_factory", None)
        cfg = as_section(EnvInteractionConfig, config, "interaction[].config")
        task = cfg.task_name or self.default_task
        self.settings = cfg = dataclasses.replace(cfg, task_name=task, name=cfg.name or task)
        super().__init__(to_dict(cfg))
        self.pool = EnvClientPool(cfg.env_addrs, task, data_len=cfg.data_len, timeout=cfg.timeout,
                                  max_retries=cfg.max_retries, health_timeout=cfg.health_timeout, factory=factory)
        self._instances: dict[str, _Instance] = {}

    async def start_interaction(self, instance_id: Optional[str] = None, item_id: Optional[str] = None,
                                session_id: Optional[int] = None, **kwargs: Any) -> str:
        """Reset a session to `session_id` (or the index of `item_id`, e.g. "webshop_12")."""
        if session_id is None:
            if item_id is None:
                raise ValueError(f"{type(self).__name__}.start_interaction needs item_id "
                                 f"('{self.config['task_name']}_<index>') or session_id")
            session_id = parse_item_id(item_id)[1]
        instance_id = instance_id or str(uuid.uuid4())
        client = await asyncio.to_thread(self.pool.acquire)
        try:
            result = await asyncio.to_thread(client.reset, int(session_id))
        except Exception:
            self.pool.release(client, healthy=False)
            raise
        self._instances[instance_id] = _Instance(client=client, observation=result.observation)
        return instance_id

    def get_observation(self, instance_id: str) -> str:
        """The current page text of the instance (the first observation right after start)."""
        return self._get(instance_id).observation

    async def generate_response(self, instance_id: str, messages: list[dict], **kwargs: Any
                                ) -> tuple[bool, str, float, dict]:
        """Step the env with the last assistant message; return (done, observation, reward, extra)."""
        inst = self._get(instance_id)
        action = next((m["content"] for m in reversed(messages) if m.get("role") == "assistant"), None)
        if action is None:
            raise ValueError(f"{type(self).__name__}.generate_response: messages contain no assistant turn to act on")
        step = await asyncio.to_thread(inst.client.step, action)
        inst.observation, inst.reward, inst.done = step.observation, float(step.reward), step.done
        inst.score += inst.reward
        inst.turns += 1
        extra = {"reward": inst.reward, "done": inst.done, "turns": inst.turns}
        if step.info and "eval_status" in step.info:  # e.g. needs_judge: the agent loop leaves such episodes out
            extra["eval_status"] = step.info["eval_status"]
        return inst.done, inst.observation, inst.reward, extra

    async def calculate_score(self, instance_id: str, **kwargs: Any) -> float:
        """Sum of the instance's step rewards (WebShop, WebArena: the task score once done, else 0)."""
        return self._get(instance_id).score

    async def finalize_interaction(self, instance_id: str, **kwargs: Any) -> None:
        """Return the instance's session to the pool."""
        inst = self._instances.pop(instance_id, None)
        if inst is not None:
            self.pool.release(inst.client, healthy=True)

    def close(self) -> None:
        """Close every pooled session (finalize open instances first)."""
        for iid in list(self._instances):
            self.pool.release(self._instances.pop(iid).client, healthy=False)
        self.pool.close()

    def _get(self, instance_id: str) -> _Instance:
        if instance_id not in self._instances:
            raise KeyError(f"unknown interaction instance {instance_id!r}; call start_interaction first")
        return self._instances[instance_id]
