"""`trainer` (loop length, logging, devices, checkpoints) and `ray_init` (the Ray runtime)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from verl.config.loader import check_choice, check_positive

__all__ = ["LOGGERS", "TrainerConfig", "RayInitConfig"]

LOGGERS = ("console", "file", "tensorboard", "wandb")


@dataclass(frozen=True)
class TrainerConfig:
    """`trainer`: loop length, logging, devices, checkpoints."""

    total_epochs: int = 30
    total_training_steps: Optional[int] = None
    project_name: str = "agentgym_rl"
    experiment_name: str = "webshop"
    logger: Any = field(default_factory=lambda: ["console"])
    log_dir: Optional[str] = None
    nnodes: int = 1
    n_gpus_per_node: int = 8
    device: str = "auto"
    save_freq: int = -1
    test_freq: int = -1
    val_before_train: bool = False
    val_only: bool = False
    resume_mode: str = "auto"
    resume_from_path: Optional[str] = None
    default_local_dir: str = "checkpoints/agentgym_rl/webshop"
    max_actor_ckpt_to_keep: Optional[int] = None
    export_hf: Optional[bool] = None  # null: on, off with LoRA (actor_rollout_ref.model.lora_rank > 0)
    critic_warmup: int = 0
    seed: int = 1   # seeds the PPO mini-batch shuffle (actor/critic.shuffle) with the step
    plots: bool = True            # PNGs of the file logger's metrics under <log_dir>/plots at the end of fit()
    learning_report: bool = False  # greedy validation before and after training -> learning_report.json
    rollout_overlap: bool = False  # one-step off-policy: rollout k+1 (previous weights) runs beside update k
    # wall seconds fit() may take: checkpoint and stop before a step (with the final validation) that would not fit
    time_budget_s: Optional[float] = None

    def __post_init__(self):
        p = "trainer"
        check_positive(f"{p}.total_epochs", self.total_epochs)
        check_positive(f"{p}.total_training_steps", self.total_training_steps)
        check_positive(f"{p}.nnodes", self.nnodes)
        check_positive(f"{p}.n_gpus_per_node", self.n_gpus_per_node, allow_zero=True)
        check_choice(f"{p}.device", self.device, ("auto", "cuda", "cpu"))
        check_choice(f"{p}.resume_mode", self.resume_mode, ("auto", "disable", "resume_path"))
        if self.resume_mode == "resume_path" and not self.resume_from_path:
            raise ValueError("trainer.resume_mode=resume_path needs trainer.resume_from_path=<dir>/global_step_N")
        for key in ("save_freq", "test_freq"):
            value = getattr(self, key)
            if value == 0 or value < -1:
                raise ValueError(f"{p}.{key} must be -1 (off) or a positive step interval, got {value}")
        for name in self.loggers:
            check_choice(f"{p}.logger[]", name, LOGGERS)
        check_positive(f"{p}.max_actor_ckpt_to_keep", self.max_actor_ckpt_to_keep)
        check_positive(f"{p}.time_budget_s", self.time_budget_s)

    @property
    def loggers(self) -> list[str]:
        """`logger` as a list (a single string is accepted too)."""
        return [self.logger] if isinstance(self.logger, str) else list(self.logger)


@dataclass(frozen=True)
class RayInitConfig:
    """`ray_init`: the Ray runtime (a local one, or a cluster started with `ray start`)."""

    address: Optional[str] = None  # null: start a local Ray; "auto" or host:port: join a `ray start` cluster
    num_cpus: Optional[int] = None
    object_store_memory: Optional[int] = 1_000_000_000
    worker_num_cpus: float = 0.5
    worker_cpu_threads: Optional[int] = None  # CPU: torch threads per worker; null: node cores / worker groups
    include_dashboard: bool = False
    timeline_json_file: Optional[str] = None

    def __post_init__(self):
        check_positive("ray_init.num_cpus", self.num_cpus)
        check_positive("ray_init.worker_num_cpus", self.worker_num_cpus, allow_zero=True)
        check_positive("ray_init.worker_cpu_threads", self.worker_cpu_threads)
        if self.object_store_memory is not None and self.object_store_memory < 78_643_200:
            raise ValueError(f"ray_init.object_store_memory={self.object_store_memory} is below Ray's minimum "
                             f"(78643200 bytes); use e.g. 1000000000")
