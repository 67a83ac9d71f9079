"""`algorithm`: advantage estimation, the reward-side KL, the rounds schedule, GiGPO and dynamic sampling.

Which estimators exist, and whether one needs a critic or groups of samples (rollout.n >= 2), is the
estimator registry's to say (`verl.agent_trainer.ppo.core_algos`); the trainer checks those at start-up.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verl.config.loader import check_choice, check_positive

__all__ = ["KL_TYPES", "KL_CHOICES", "KLCtrlConfig", "RoundsCtrlConfig", "GiGPOConfig", "FilterGroupsConfig",
           "AlgoConfig"]

# The KL estimators core_algos implements; a trailing "+" is the straight-through form (k2's gradient).
# verl's "full" (the whole-vocabulary KL) needs both full distributions and is not offered: it used to
# pass here and fail after a whole rollout.
KL_TYPES = ("kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3")
KL_CHOICES = KL_TYPES + tuple(k + "+" for k in KL_TYPES)


@dataclass(frozen=True)
class KLCtrlConfig:
    """`algorithm.kl_ctrl`: the reward-side KL coefficient controller."""

    type: str = "fixed"
    kl_coef: float = 0.001
    horizon: int = 10000
    target_kl: float = 0.1

    def __post_init__(self):
        check_choice("algorithm.kl_ctrl.type", self.type, ("fixed", "adaptive"))
        check_positive("algorithm.kl_ctrl.kl_coef", self.kl_coef, allow_zero=True)
        check_positive("algorithm.kl_ctrl.horizon", self.horizon)


@dataclass(frozen=True)
class RoundsCtrlConfig:
    """`algorithm.rounds_ctrl`: the interaction-horizon schedule (AgentGym-RL's ScalingInter-RL)."""

    type: str = "fixed"
    rounds: Any = 15
    steps_scaling_inter: int = 100

    def __post_init__(self):
        p = "algorithm.rounds_ctrl"
        check_choice(f"{p}.type", self.type, ("fixed", "scaling_inter_stepwise"))
        values = self.rounds if isinstance(self.rounds, (list, tuple)) else [self.rounds]
        if not values or any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in values):
            raise ValueError(f"{p}.rounds={self.rounds!r} must be a positive int or a non-empty list of them "
                             f"(e.g. [8,12,15])")
        if self.type == "fixed" and isinstance(self.rounds, (list, tuple)) and len(self.rounds) > 1:
            raise ValueError(f"{p}.rounds={list(self.rounds)} is a list but {p}.type=fixed; "
                             f"use {p}.type=scaling_inter_stepwise or a single int")
        check_positive(f"{p}.steps_scaling_inter", self.steps_scaling_inter)


@dataclass(frozen=True)
class GiGPOConfig:
    """`algorithm.gigpo` (verl-agent's names): the step-level half of GiGPO (arXiv:2505.10978)."""

    step_advantage_w: float = 1.0   # weight of the step advantage A_S added to the episode advantage A_E
    mode: str = "mean_norm"         # mean_norm: A - mean; mean_std_norm: (A - mean) / (std + eps)

    def __post_init__(self):
        check_choice("algorithm.gigpo.mode", self.mode, ("mean_norm", "mean_std_norm"))


@dataclass(frozen=True)
class FilterGroupsConfig:
    """`algorithm.filter_groups` (verl's DAPO names): dynamic sampling. Groups whose rows all score the
    same carry no GRPO signal; they are dropped before the update, and up to `max_num_gen_batches`
    rollouts per step (0: no limit) refill the batch with groups that have reward variance."""

    enable: bool = False
    metric: str = "score"         # score: the row's total score (token_level_scores); success: is_success
    max_num_gen_batches: int = 1  # 1: drop only (the update trains on what is left); 0: no limit

    def __post_init__(self):
        check_choice("algorithm.filter_groups.metric", self.metric, ("score", "success"))
        if self.max_num_gen_batches < 0:
            raise ValueError(f"algorithm.filter_groups.max_num_gen_batches={self.max_num_gen_batches} must be "
                             f">= 0 (0: no limit)")


@dataclass(frozen=True)
class AlgoConfig:
    """`algorithm`: advantage estimation, reward-side KL and the rounds schedule."""

    gamma: float = 1.0
    lam: float = 1.0
    adv_estimator: str = "gae"    # validated against core_algos' registry by the trainer
    norm_adv_by_std_in_grpo: bool = True
    use_kl_in_reward: bool = False
    kl_penalty: str = "kl"
    kl_ctrl: KLCtrlConfig = field(default_factory=KLCtrlConfig)
    rounds_ctrl: RoundsCtrlConfig = field(default_factory=RoundsCtrlConfig)
    gigpo: GiGPOConfig = field(default_factory=GiGPOConfig)
    filter_groups: FilterGroupsConfig = field(default_factory=FilterGroupsConfig)

    def __post_init__(self):
        for key in ("gamma", "lam"):
            value = getattr(self, key)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"algorithm.{key} must be in [0, 1], got {value}")
        check_choice("algorithm.kl_penalty", self.kl_penalty, KL_CHOICES)
        if not self.adv_estimator:
            raise ValueError("algorithm.adv_estimator is empty; use e.g. grpo or gae")
