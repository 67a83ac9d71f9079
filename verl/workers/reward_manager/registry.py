"""Registry of reward managers, keyed by `reward_model.reward_manager` (e.g. "naive")."""
from __future__ import annotations

from verl.utils.registry import Registry

__all__ = ["REWARD_MANAGERS", "register_reward_manager", "get_reward_manager_cls"]

REWARD_MANAGERS = Registry("reward manager", "reward_model.reward_manager")


def register_reward_manager(name: str):
    """Class decorator registering a reward manager under `name`.

    Raises:
        ValueError: if `name` is already registered to a different class.
    """
    return REWARD_MANAGERS.register(name)


def get_reward_manager_cls(name: str) -> type:
    """Return the reward manager class registered as `name`."""
    return REWARD_MANAGERS.get(name)
