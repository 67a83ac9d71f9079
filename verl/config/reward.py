"""`reward_model` (how token-level scores are produced: reward manager, learned reward model, scorer
limits) and `custom_reward_function`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Optional

from verl.config.loader import check_choice, check_positive
from verl.config.models import ATTN_IMPLEMENTATIONS, STRATEGIES, STRATEGY_NOTE, RefFSDPConfig

__all__ = ["REWARD_COMBINE_MODES", "RewardModelModelConfig", "PrimeRewardConfig", "CodeSandboxConfig",
           "RewardModelConfig", "CustomRewardFunctionConfig"]

REWARD_COMBINE_MODES = ("sum", "rm_only", "env_only")


@dataclass(frozen=True)
class RewardModelModelConfig:
    """`reward_model.model`: the learned reward model (an HF sequence-classification checkpoint, num_labels=1)."""

    path: Optional[str] = None
    trust_remote_code: bool = False
    override_config: dict = field(default_factory=dict)
    attn_implementation: str = "sdpa"   # as actor_rollout_ref.model.attn_implementation
    fsdp_config: RefFSDPConfig = field(default_factory=RefFSDPConfig)   # verl's reward_model.model.fsdp_config

    def __post_init__(self):
        check_choice("reward_model.model.attn_implementation", self.attn_implementation, ATTN_IMPLEMENTATIONS)


@dataclass(frozen=True)
class PrimeRewardConfig:
    """`reward_model.prime`: the prime reward manager's worker processes (reward_manager=prime)."""

    num_processes: int = 8      # scorer processes (spawned once, reused across steps)
    timeout_s: float = 60.0     # per-sample wall time; a scorer still running is killed and the sample scores 0

    def __post_init__(self):
        check_positive("reward_model.prime.num_processes", self.num_processes)
        check_positive("reward_model.prime.timeout_s", self.timeout_s)


@dataclass(frozen=True)
class CodeSandboxConfig:
    """`reward_model.code_sandbox`: limits of the subprocess that runs a code answer (prime code scorer)."""

    timeout_s: float = 5.0          # wall time per test case (CPU time is capped to the same)
    memory_limit_mb: int = 1024     # address-space limit (RLIMIT_AS) of the solution process
    max_output_mb: int = 16         # files and captured stdout the solution may write (RLIMIT_FSIZE)

    def __post_init__(self):
        p = "reward_model.code_sandbox"
        check_positive(f"{p}.timeout_s", self.timeout_s)
        check_positive(f"{p}.memory_limit_mb", self.memory_limit_mb)
        check_positive(f"{p}.max_output_mb", self.max_output_mb)


@dataclass(frozen=True)
class RewardModelConfig:
    """`reward_model`: how token-level scores are produced.

    The reward manager (`reward_manager`) owns `token_level_scores`: env or rule scores, and with
    `enable` the learned reward model's `rm_scores`, joined by `combine`:
      sum:      env/rule score + rm_coef * rm score
      rm_only:  rm_coef * rm score (the env/rule score is still logged as `reward` and decides `success`)
      env_only: env/rule score; the rm score is only logged (reward/rm_score/*)
    `invalid_action_penalty` (verl-agent's invalid-action penalty): subtracted from the training signal once
    per action the environment refused (info `valid: false`: unparseable or not allowed on the page); like the
    reward model, it shapes the signal and never the outcome (`reward`, `success`).
    """

    compat_keys: ClassVar[dict[str, str]] = {"strategy": STRATEGY_NOTE}

    enable: bool = False
    reward_manager: str = "naive"
    combine: str = "sum"
    rm_coef: float = 1.0
    invalid_action_penalty: float = 0.0
    strategy: str = "fsdp2"       # compatibility only, as actor_rollout_ref.actor.strategy
    micro_batch_size_per_gpu: int = 1
    model: RewardModelModelConfig = field(default_factory=RewardModelModelConfig)
    prime: PrimeRewardConfig = field(default_factory=PrimeRewardConfig)
    code_sandbox: CodeSandboxConfig = field(default_factory=CodeSandboxConfig)

    def __post_init__(self):
        p = "reward_model"
        check_choice(f"{p}.combine", self.combine, REWARD_COMBINE_MODES)
        check_choice(f"{p}.strategy", self.strategy, STRATEGIES)
        check_positive(f"{p}.micro_batch_size_per_gpu", self.micro_batch_size_per_gpu)
        check_positive(f"{p}.invalid_action_penalty", self.invalid_action_penalty, allow_zero=True)
        if self.enable and not self.model.path:
            raise ValueError("reward_model.enable=true needs reward_model.model.path (an HF sequence-classification "
                             "checkpoint with num_labels=1)")
        if not self.enable and self.combine != "sum":
            raise ValueError(f"reward_model.combine={self.combine} joins a reward model's scores, but "
                             "reward_model.enable=false; set reward_model.enable=true or leave combine at sum")


@dataclass(frozen=True)
class CustomRewardFunctionConfig:
    """`custom_reward_function` (verl's key): a Python file whose function `name` scores rule-based rows,
    `(data_source, solution_str, ground_truth, extra_info=None) -> float | dict`, instead of the
    `data_source` registry in `verl.utils.reward_score`."""

    path: Optional[str] = None
    name: str = "compute_score"
