"""Typed configuration of the supervised warm start (`sft_trainer.yaml`, `main_sft`).

Reuses the trainer's `ModelConfig` and `OptimConfig` (`models.py`) (same keys, same checks); the
`data` and `trainer` sections are specific to SFT. `load_sft_config` turns the Hydra `DictConfig`
(or a dict) into an `SFTConfig`, rejecting unknown keys with close matches and resolving `auto`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional

from verl.config.device import resolve_device, resolve_model_and_rollout
from verl.config.loader import check_choice, check_positive, load_dataclass_config
from verl.config.models import ModelConfig, OptimConfig
from verl.config.trainer import LOGGERS

__all__ = ["SFTDataConfig", "SFTOptimConfig", "SFTTrainerConfig", "SFTConfig", "load_sft_config"]


@dataclass(frozen=True)
class SFTDataConfig:
    """`data`: AgentTraj-style conversations and how they are batched."""

    train_file: str = "saves/sft/webshop_demos.json"
    max_length: int = 4096
    micro_batch_size: int = 1
    train_batch_size: Optional[int] = None
    system_prompt: Optional[str] = None
    max_examples: Optional[int] = None
    shuffle: bool = True
    seed: int = 1
    observation_loss_weight: float = 0.0  # > 0: also learn the non-assistant tokens, with this weight


    def __post_init__(self):
        if not self.train_file:
            raise ValueError("data.train_file is empty; set it to a JSON/JSONL file of AgentTraj-style conversations "
                             "(e.g. written by `bash scripts/webshop_sft.sh`)")
        for key in ("max_length", "micro_batch_size"):
            check_positive(f"data.{key}", getattr(self, key))
        check_positive("data.train_batch_size", self.train_batch_size)
        check_positive("data.max_examples", self.max_examples)
        check_positive("data.observation_loss_weight", self.observation_loss_weight, allow_zero=True)
        if self.train_batch_size is not None and self.train_batch_size % self.micro_batch_size:
            raise ValueError(f"data.train_batch_size={self.train_batch_size} must be a multiple of "
                             f"data.micro_batch_size={self.micro_batch_size}")

    @property
    def batch_size(self) -> int:
        """Conversations per optimizer step (`train_batch_size`, default `micro_batch_size`)."""
        return self.train_batch_size or self.micro_batch_size


@dataclass(frozen=True)
class SFTOptimConfig(OptimConfig):
    """`optim`: the trainer's AdamW/schedule keys plus gradient clipping."""

    lr: float = 1e-3
    clip_grad: float = 1.0

    def __post_init__(self):
        super().__post_init__()
        check_positive("optim.clip_grad", self.clip_grad)


@dataclass(frozen=True)
class SFTTrainerConfig:
    """`trainer`: length of training, device, outputs and loggers."""

    total_epochs: int = 1
    total_training_steps: Optional[int] = None
    device: str = "auto"
    default_local_dir: str = "saves/sft"
    project_name: str = "webshop"
    experiment_name: str = "sft"
    logger: list = field(default_factory=lambda: ["console"])
    log_freq: int = 10
    seed: int = 0
    save_freq: int = -1          # checkpoint (model, optimizer, schedule, position) every N steps; <= 0: never
    resume_mode: str = "auto"    # auto: continue from the checkpoint beside default_local_dir | disable
    autocast_dtype: Optional[str] = None  # bfloat16: forward under torch.autocast (weights/optimizer stay as loaded)

    def __post_init__(self):
        check_choice("trainer.resume_mode", self.resume_mode, ("auto", "disable"))
        if self.autocast_dtype is not None:
            check_choice("trainer.autocast_dtype", self.autocast_dtype, ("bfloat16", "float16"))
        check_positive("trainer.total_epochs", self.total_epochs)
        check_positive("trainer.total_training_steps", self.total_training_steps)
        check_positive("trainer.log_freq", self.log_freq)
        check_choice("trainer.device", self.device, ("auto", "cuda", "cpu"))
        if not self.default_local_dir:
            raise ValueError("trainer.default_local_dir is empty; set the directory the HF model is saved to")
        for name in self.logger:
            check_choice("trainer.logger[]", name, LOGGERS)


@dataclass(frozen=True)
class SFTConfig:
    """The whole SFT configuration (root of `sft_trainer.yaml`)."""

    data: SFTDataConfig = field(default_factory=SFTDataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    optim: SFTOptimConfig = field(default_factory=SFTOptimConfig)
    trainer: SFTTrainerConfig = field(default_factory=SFTTrainerConfig)


def _resolve_auto(cfg: SFTConfig) -> SFTConfig:
    device = resolve_device(cfg.trainer.device)
    model, _ = resolve_model_and_rollout(cfg.model, None, device)
    return dataclasses.replace(cfg, trainer=dataclasses.replace(cfg.trainer, device=device), model=model)


def load_sft_config(cfg: Any = None, resolve_auto: bool = True) -> SFTConfig:
    """Convert a Hydra `DictConfig` (or dict, or None for the shipped `sft_trainer.yaml`) into an
    `SFTConfig` (errors as `loader.load_dataclass_config`)."""
    return load_dataclass_config(SFTConfig, cfg, "sft_trainer.yaml", _resolve_auto if resolve_auto else None)
