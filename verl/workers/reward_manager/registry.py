"""Registry of reward managers, keyed by `reward_model.reward_manager` (e.g. "naive")."""
from __future__ import annotations

__all__ = ["REWARD_MANAGERS", "register_reward_manager", "get_reward_manager_cls"]

REWARD_MANAGERS: dict[str, type] = {}


def register_reward_manager(name: str):
    """Class decorator registering a reward manager under `name`.

    Raises:
        ValueError: if `name` is already registered to a different class.
    """

    def deco(cls: type) -> type:
        if name in REWARD_MANAGERS and REWARD_MANAGERS[name] is not cls:
            raise ValueError(f"reward manager {name!r} is already registered to {REWARD_MANAGERS[name]!r}")
        REWARD_MANAGERS[name] = cls
        return cls

    return deco


def get_reward_manager_cls(name: str) -> type:
    """Return the reward manager class registered as `name`."""
    if name not in REWARD_MANAGERS:
        raise ValueError(
            f"reward_model.reward_manager={name!r} is not registered; choose one of {sorted(REWARD_MANAGERS)}"
        )
    return REWARD_MANAGERS[name]
