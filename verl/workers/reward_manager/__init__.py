"""Reward managers: turn a rolled-out batch into `token_level_scores`.

Built-ins are imported here so the registry is complete whenever this package is imported.
"""
from verl.workers.reward_manager.naive import NaiveRewardManager
from verl.workers.reward_manager.prime import PrimeRewardManager
from verl.workers.reward_manager.registry import REWARD_MANAGERS, get_reward_manager_cls, register_reward_manager

__all__ = ["REWARD_MANAGERS", "register_reward_manager", "get_reward_manager_cls", "NaiveRewardManager",
           "PrimeRewardManager"]
