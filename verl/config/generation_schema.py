"""Typed configuration of the evaluation entry point (`generation.yaml`, `main_generation`).

Reuses the trainer's section dataclasses (model, rollout, agentgym) so the same key
names and validation apply; only the `data` and `trainer` sections are specific to evaluation.
`load_generation_config` turns the Hydra `DictConfig` (or a dict) into a `GenerationConfig`,
rejecting unknown keys with close matches and resolving `auto` device/engine/dtype values.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional

from verl.config.device import resolve_device, resolve_model_and_rollout
from verl.config.loader import check_choice, check_positive, load_dataclass_config
from verl.config.models import ModelConfig
from verl.config.rollout import AgentGymConfig, RolloutConfig

__all__ = ["GenerationDataConfig", "GenerationTrainerConfig", "GenerationConfig", "load_generation_config"]


@dataclass(frozen=True)
class GenerationDataConfig:
    """`data`: which items to evaluate, how many samples each, where results go."""

    path: str = "AgentItemId/webshop_test.json"
    prompt_key: str = "item_id"
    n_samples: int = 1
    batch_size: int = 32
    max_items: Optional[int] = None
    max_prompt_length: int = 2048
    max_response_length: int = 8192
    output_path: Optional[str] = None

    def __post_init__(self):
        if not self.path:
            raise ValueError("data.path is empty; set it to an item-id JSON file (AgentItemId/webshop_test.json) "
                             "or a directory of <task>_*.json category files")
        for key in ("n_samples", "batch_size", "max_prompt_length", "max_response_length"):
            check_positive(f"data.{key}", getattr(self, key))
        check_positive("data.max_items", self.max_items)


@dataclass(frozen=True)
class GenerationTrainerConfig:
    """`trainer`: the device evaluation runs on."""

    device: str = "auto"

    def __post_init__(self):
        check_choice("trainer.device", self.device, ("auto", "cuda", "cpu"))


@dataclass(frozen=True)
class GenerationConfig:
    """The whole evaluation configuration (root of `generation.yaml`)."""

    data: GenerationDataConfig = field(default_factory=GenerationDataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    rollout: RolloutConfig = field(default_factory=lambda: RolloutConfig(
        max_tokens=512, max_model_len=16384, gpu_memory_utilization=0.9, load_format="auto",
        free_cache_engine=False))
    agentgym: AgentGymConfig = field(default_factory=lambda: AgentGymConfig(max_rounds=15))
    trainer: GenerationTrainerConfig = field(default_factory=GenerationTrainerConfig)

    def __post_init__(self):
        if self.model.use_lora:
            raise ValueError(f"model.lora_rank={self.model.lora_rank} trains an adapter; evaluation samples from a "
                             "whole model: merge a LoRA checkpoint first (python -m verl.model_merger merge "
                             "--local_dir <global_step_N/actor> --target_dir DIR) and set model.path=DIR")
        if self.rollout.n != 1:
            raise ValueError(f"rollout.n={self.rollout.n} is not used by evaluation; "
                             f"set data.n_samples={self.rollout.n} "
                             f"for {self.rollout.n} samples per item")
        if self.rollout.max_model_len < self.data.max_prompt_length + self.rollout.max_tokens:
            raise ValueError(f"rollout.max_model_len={self.rollout.max_model_len} is smaller than "
                             f"data.max_prompt_length + rollout.max_tokens = "
                             f"{self.data.max_prompt_length + self.rollout.max_tokens}")


def _resolve_auto(cfg: GenerationConfig) -> GenerationConfig:
    device = resolve_device(cfg.trainer.device)
    model, rollout = resolve_model_and_rollout(cfg.model, cfg.rollout, device)
    return dataclasses.replace(cfg, trainer=GenerationTrainerConfig(device=device), rollout=rollout, model=model)


def load_generation_config(cfg: Any = None, resolve_auto: bool = True) -> GenerationConfig:
    """Convert a Hydra `DictConfig` (or dict, or None for the shipped `generation.yaml`) into a
    `GenerationConfig` (errors as `loader.load_dataclass_config`)."""
    return load_dataclass_config(GenerationConfig, cfg, "generation.yaml", _resolve_auto if resolve_auto else None)
