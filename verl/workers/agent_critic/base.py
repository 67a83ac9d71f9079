"""The critic interface (`BasePPOCritic`, as in AgentGym-RL's verl); the update machinery it shares
with the actor lives in `verl.workers.agent_actor.base`."""
from __future__ import annotations

import abc

import torch

__all__ = ["BasePPOCritic"]


class BasePPOCritic(abc.ABC):
    """What a PPO critic does on one data-parallel rank."""

    @abc.abstractmethod
    def compute_values(self, data) -> torch.Tensor:
        """Values of `data`'s response positions, (bs, response_length)."""

    @abc.abstractmethod
    def update_critic(self, data) -> dict[str, float]:
        """PPO epochs of value updates on `data`; returns the update's metrics."""
