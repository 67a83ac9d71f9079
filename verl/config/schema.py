"""Typed trainer configuration: one frozen dataclass per section of `ppo_trainer.yaml`, and `load_config`.

The dataclasses follow the YAML tree field for field (same keys, same defaults) and live in one module
per section: `data`, `models` (actor_rollout_ref.model/actor/ref, critic), `rollout` (rollout,
agentgym), `reward`, `algorithm`, `trainer` (trainer, ray_init); this module holds the roots
(`ActorRolloutRefConfig`, `PPOConfig`) and re-exports every section, so `from
verl.config.schema import X` works for all of them. `load_config` turns the Hydra
`DictConfig` (or a plain dict) into a `PPOConfig` through the generic `loader` (unknown keys fail with
the closest valid names, types are checked) and resolves `auto` values (`device`: device, rollout
engine, dtype). Each `__post_init__` raises `ValueError` naming the key path, the value and the fix.

This package owns the shape and validity of the config; it does not know how stages use it, and it
imports nothing of verl outside itself (no torch at import time).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from verl.config.algorithm import (
    KL_TYPES,
    AlgoConfig,
    FilterGroupsConfig,
    GiGPOConfig,
    KLCtrlConfig,
    RoundsCtrlConfig,
)
from verl.config.data import DataConfig
from verl.config.device import check_attn_implementation, resolve_device, resolve_model_and_rollout
from verl.config.loader import (
    _WARNED_COMPAT,  # noqa: F401  (tests reset the once-only warnings)
    as_section,
    compat_only_keys,
    console_entry,
    from_dict,
    load_dataclass_config,
    shipped_config_path,
    to_dict,
    warn_compat_keys,
)
from verl.config.loader import check_override_keys as _check_override_keys
from verl.config.models import (
    ATTN_IMPLEMENTATIONS,
    ActorConfig,
    CheckpointConfig,
    CriticConfig,
    CriticModelConfig,
    FSDPConfig,
    ModelConfig,
    OptimConfig,
    PolicyLossConfig,
    RefConfig,
    RefFSDPConfig,
)
from verl.config.reward import (
    REWARD_COMBINE_MODES,
    CodeSandboxConfig,
    CustomRewardFunctionConfig,
    PrimeRewardConfig,
    RewardModelConfig,
    RewardModelModelConfig,
)
from verl.config.rollout import (
    AgentGymConfig,
    AgentLoopConfig,
    EnvServersConfig,
    MultiTurnConfig,
    RolloutConfig,
    ValKwargsConfig,
)
from verl.config.trainer import RayInitConfig, TrainerConfig

__all__ = [
    "load_dataclass_config", "resolve_model_and_rollout", "check_attn_implementation", "resolve_device",
    "DataConfig", "ModelConfig", "OptimConfig", "FSDPConfig", "PolicyLossConfig", "CheckpointConfig",
    "ActorConfig", "RefFSDPConfig", "RefConfig", "ValKwargsConfig", "MultiTurnConfig", "AgentLoopConfig",
    "RolloutConfig", "EnvServersConfig", "AgentGymConfig", "ActorRolloutRefConfig", "CriticModelConfig",
    "CriticConfig", "RewardModelModelConfig", "PrimeRewardConfig", "CodeSandboxConfig", "RewardModelConfig",
    "REWARD_COMBINE_MODES", "CustomRewardFunctionConfig", "KL_TYPES", "ATTN_IMPLEMENTATIONS",
    "KLCtrlConfig", "RoundsCtrlConfig", "GiGPOConfig", "FilterGroupsConfig", "AlgoConfig", "TrainerConfig",
    "RayInitConfig", "PPOConfig", "load_config", "from_dict", "to_dict", "as_section", "COMPAT_ONLY_KEYS",
    "warn_compat_keys", "check_override_keys", "default_config_path", "shipped_config_path", "console_entry",
]


# ---------------------------------------------------------------------------------------------- roots
@dataclass(frozen=True)
class ActorRolloutRefConfig:
    """`actor_rollout_ref`: the policy, its rollout engine, its reference copy and the env."""

    hybrid_engine: bool = True
    model: ModelConfig = field(default_factory=ModelConfig)
    actor: ActorConfig = field(default_factory=ActorConfig)
    ref: RefConfig = field(default_factory=RefConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    agentgym: AgentGymConfig = field(default_factory=AgentGymConfig)

    def __post_init__(self):
        if not self.hybrid_engine:
            raise ValueError("actor_rollout_ref.hybrid_engine=False is not supported; the actor worker owns the "
                             "rollout engine. Remove the override.")



@dataclass(frozen=True)
class PPOConfig:
    """The whole trainer configuration (root of `ppo_trainer.yaml`).

    What depends on the estimator registry (whether a critic is trained, whether `rollout.n` must be
    >= 2, the critic's batch and attention checks) is checked by the trainer at start-up
    (`verl.agent_trainer.ppo.ray_trainer.check_config`), which keeps this package free of the trainer.
    """

    data: DataConfig = field(default_factory=DataConfig)
    actor_rollout_ref: ActorRolloutRefConfig = field(default_factory=ActorRolloutRefConfig)
    critic: CriticConfig = field(default_factory=CriticConfig)
    reward_model: RewardModelConfig = field(default_factory=RewardModelConfig)
    custom_reward_function: CustomRewardFunctionConfig = field(default_factory=CustomRewardFunctionConfig)
    algorithm: AlgoConfig = field(default_factory=AlgoConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    ray_init: RayInitConfig = field(default_factory=RayInitConfig)

    def __post_init__(self):
        arr = self.actor_rollout_ref
        if self.data.train_batch_size < arr.actor.ppo_mini_batch_size:
            raise ValueError(
                f"actor_rollout_ref.actor.ppo_mini_batch_size={arr.actor.ppo_mini_batch_size} exceeds "
                f"data.train_batch_size={self.data.train_batch_size} (both count prompts); lower the mini-batch size")
        if self.data.train_batch_size % arr.actor.ppo_mini_batch_size:
            raise ValueError(
                f"data.train_batch_size={self.data.train_batch_size} must be divisible by "
                f"actor_rollout_ref.actor.ppo_mini_batch_size={arr.actor.ppo_mini_batch_size}")
        for rollout_key, data_key in (("prompt_length", "max_prompt_length"),
                                      ("response_length", "max_response_length")):
            value = getattr(arr.rollout, rollout_key)
            if value is not None and value != getattr(self.data, data_key):
                raise ValueError(f"actor_rollout_ref.rollout.{rollout_key}={value} disagrees with data.{data_key}="
                                 f"{getattr(self.data, data_key)}; they name one limit (verl's and AgentGym-RL's "
                                 "key): set both to the same value, or only one")
        if self.algorithm.filter_groups.enable and arr.rollout.n < 2:
            raise ValueError(f"algorithm.filter_groups.enable=true keeps groups whose samples score differently, but "
                             f"actor_rollout_ref.rollout.n={arr.rollout.n}: every group has one sample; set "
                             "rollout.n >= 2")
        if arr.rollout.max_model_len < self.data.max_prompt_length + arr.rollout.max_tokens:
            raise ValueError(
                f"actor_rollout_ref.rollout.max_model_len={arr.rollout.max_model_len} is smaller than "
                f"data.max_prompt_length + rollout.max_tokens = {self.data.max_prompt_length + arr.rollout.max_tokens}")
        if self.trainer.learning_report and not self.data.val_paths:
            raise ValueError("trainer.learning_report=True evaluates on the validation items, but data.val_file "
                             "(or data.val_files) is not set; point it at held-out item ids "
                             "(AgentItemId/webshop_test.json) or set trainer.learning_report=False")

    @property
    def exports_hf(self) -> bool:
        """Whether checkpoints get the HF export: `trainer.export_hf`, whose null means on without LoRA and off
        with it (a LoRA checkpoint holds the adapter; `python -m verl.model_merger` merges it)."""
        if self.trainer.export_hf is not None:
            return self.trainer.export_hf
        return not self.actor_rollout_ref.model.use_lora

    @property
    def use_reference_policy(self) -> bool:
        """A reference policy is needed for a KL loss or a reward-side KL penalty."""
        return self.actor_rollout_ref.actor.use_kl_loss or self.algorithm.use_kl_in_reward


# Keys accepted only so verl / AgentGym-RL configs and command lines load unchanged; nothing reads
# them: (section dataclass, field) -> what happens instead, gathered from the sections' `compat_keys`.
# Setting one to a non-default value warns once per process (`warn_compat_keys`).
COMPAT_ONLY_KEYS: dict[tuple[str, str], str] = compat_only_keys(PPOConfig)


def _resolve_auto(cfg: PPOConfig) -> PPOConfig:
    """Replace `auto` values (device, rollout engine, model dtype) by what this machine supports."""
    trainer = dataclasses.replace(cfg.trainer, device=resolve_device(cfg.trainer.device))
    arr = cfg.actor_rollout_ref
    model, rollout = resolve_model_and_rollout(arr.model, arr.rollout, trainer.device)
    arr = dataclasses.replace(arr, rollout=rollout, model=model)
    if cfg.reward_model.enable:
        check_attn_implementation("reward_model.model.attn_implementation",
                                  cfg.reward_model.model.attn_implementation, trainer.device)
    return dataclasses.replace(cfg, trainer=trainer, actor_rollout_ref=arr)


def load_config(cfg: Any = None, resolve_auto: bool = True) -> PPOConfig:
    """Convert a Hydra `DictConfig` (or dict, or None for the shipped defaults) into a `PPOConfig`.

    Args:
        cfg: the composed config; interpolations such as `${trainer.project_name}` are resolved.
        resolve_auto: replace `auto` device/engine/dtype values by concrete ones for this machine.

    Raises:
        ValueError: unknown key (with close matches), wrong type, or an invalid value.
    """
    return load_dataclass_config(PPOConfig, cfg, "ppo_trainer.yaml", _resolve_auto if resolve_auto else None)


def default_config_path() -> str:
    """Path of the shipped `ppo_trainer.yaml`."""
    return shipped_config_path("ppo_trainer.yaml")


def check_override_keys(overrides: list[str], root: type | None = None) -> None:
    """`loader.check_override_keys` against `root` (default `PPOConfig`): unknown command-line keys fail
    with close matches."""
    _check_override_keys(overrides, root or PPOConfig)
