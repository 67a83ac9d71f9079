"""The learned reward model: scoring trajectories with a sequence-classification model
(`DataParallelRewardModel`); its Ray worker is `verl.workers.fsdp_workers.RewardModelWorker`."""
from verl.workers.reward_model.dp_reward_model import DataParallelRewardModel

__all__ = ["DataParallelRewardModel"]
