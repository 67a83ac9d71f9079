"""verl's interaction YAML (`actor_rollout_ref.rollout.multi_turn.interaction_config_path`) as dataclasses.

The file is `interaction: [{name, class_name (or _target_), config}, ...]` (verl's format): the root is
`InteractionsConfig`, an item `InteractionItemConfig`, and an interaction class names the dataclass of
its own `config` in a class attribute `config_class` (`EnvInteractionConfig` for the env-backed
WebshopInteraction and WebarenaInteraction). Unknown keys fail naming the key path and its close
matches, as everywhere in the config. Building the interactions is `verl.interactions.registry`'s job.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from verl.config.loader import check_positive
from verl.config.rollout import AgentGymConfig, env_urls

__all__ = ["InteractionsConfig", "InteractionItemConfig", "EnvInteractionConfig"]


@dataclass(frozen=True)
class InteractionItemConfig:
    """`interaction[i]`: one interaction and its settings."""

    name: Optional[str] = None        # null: from the class name (WebshopInteraction -> webshop)
    class_name: Optional[str] = None  # dotted path of a verl.interactions.BaseInteraction subclass
    _target_: Optional[str] = None    # Hydra's spelling of class_name
    config: Optional[dict] = None     # the interaction's settings, typed by its class's `config_class`

    @property
    def target(self) -> Optional[str]:
        """The class path, from `class_name` or `_target_`."""
        return self.class_name or self._target_


@dataclass(frozen=True)
class InteractionsConfig:
    """The interaction YAML's root: a list of `InteractionItemConfig` mappings."""

    interaction: list = field(default_factory=list)


@dataclass(frozen=True)
class EnvInteractionConfig:
    """`interaction[i].config` of an env-backed interaction: the AgentGym env server its sessions run on.

    Keys follow verl's recipe (`env_server_base`) and `actor_rollout_ref.agentgym` (the others, with
    that section's defaults).
    """

    name: Optional[str] = None        # null: the task name
    task_name: Optional[str] = None   # null: the class's task (webshop for WebshopInteraction, ...)
    env_server_base: Any = None       # the env server URL, or a list of them (sessions spread by load)
    env_addr: Any = None              # actor_rollout_ref.agentgym's name for env_server_base; set one of the two
    timeout: float = AgentGymConfig.timeout
    max_retries: int = AgentGymConfig.max_retries
    data_len: int = AgentGymConfig.data_len
    health_timeout: float = AgentGymConfig.health_timeout

    def __post_init__(self):
        p = "interaction[].config"
        if self.env_server_base is not None and self.env_addr is not None:
            raise ValueError(f"{p} sets env_server_base={self.env_server_base!r} and env_addr={self.env_addr!r}; "
                             "they name the same server URL: keep one")
        _ = self.env_addrs  # checks the URLs
        check_positive(f"{p}.timeout", self.timeout)
        check_positive(f"{p}.max_retries", self.max_retries, allow_zero=True)
        check_positive(f"{p}.data_len", self.data_len, allow_zero=True)
        check_positive(f"{p}.health_timeout", self.health_timeout)

    @property
    def env_addrs(self) -> list[str]:
        """`env_server_base` or `env_addr` (else agentgym's default) as base URLs without a trailing slash."""
        key, value = ("env_addr", self.env_addr) if self.env_addr is not None else (
            "env_server_base", AgentGymConfig.env_addr if self.env_server_base is None else self.env_server_base)
        return env_urls(f"interaction[].config.{key}", value)
