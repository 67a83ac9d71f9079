"""The trained and frozen models' sections: `actor_rollout_ref.{model, actor, ref}` and `critic`, with the
optimizer and FSDP settings they share.

`strategy` (actor, critic) is accepted for verl / AgentGym-RL configs and does not choose anything:
every worker runs the plain module in one process and shards it with FSDP2 (`fully_shard`) across
ranks, whatever the value; verl's `fsdp` (FSDP1) warns once that FSDP2 runs instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

from verl.config.algorithm import KL_CHOICES
from verl.config.loader import check_choice, check_positive

__all__ = ["ATTN_IMPLEMENTATIONS", "DTYPES", "LORA_ALL_LINEAR", "LOSS_AGG_MODES", "STRATEGIES", "STRATEGY_NOTE",
           "ModelConfig", "OptimConfig", "FSDPConfig", "PolicyLossConfig", "CheckpointConfig", "ActorConfig",
           "RefFSDPConfig", "RefConfig", "CriticModelConfig", "CriticConfig"]

LOSS_AGG_MODES = ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm")
ATTN_IMPLEMENTATIONS = ("eager", "sdpa", "flash_attention_2")
DTYPES = ("auto", "float32", "bfloat16", "float16")  # resolved by config.device.resolve_dtype
_MODEL_DTYPES = ("float32", "fp32", "bfloat16", "bf16", "float16", "fp16")  # fsdp_config.model_dtype (verl spells fp32)
LORA_ALL_LINEAR = "all-linear"  # PEFT's shorthand: every linear layer except the output head
STRATEGIES = ("fsdp", "fsdp2")  # verl's megatron is not implemented
STRATEGY_NOTE = ("every strategy shards with FSDP2 (fully_shard) across ranks and runs the plain module on one; "
                 "FSDP1, which verl's fsdp names, is not implemented")


@dataclass(frozen=True)
class ModelConfig:
    """`actor_rollout_ref.model`: the policy checkpoint (HF format), and LoRA.

    `lora_rank > 0` trains a LoRA adapter (PEFT) of that rank on `target_modules` (verl's key: `all-linear`,
    or a list of module names such as `[q_proj, v_proj]`), scaled by `lora_alpha / lora_rank`, with the
    base weights frozen; 0 trains every weight. SFT reads the same keys under `model`.
    """

    compat_keys: ClassVar[dict[str, str]] = {
        "use_remove_padding": "padding is handled by attention_mask and per-micro-batch trimming"}

    path: str = "~/models/Qwen2.5-3B-Instruct"
    tokenizer_path: Optional[str] = None
    trust_remote_code: bool = False
    enable_gradient_checkpointing: bool = False
    use_remove_padding: bool = False
    dtype: str = "auto"
    override_config: dict = field(default_factory=dict)
    attn_implementation: str = "sdpa"   # transformers' attention kernel: eager | sdpa | flash_attention_2 (GPU)
    enable_activation_offloading: bool = False  # actor update: activations saved for backward wait in CPU memory (GPU)
    lora_rank: int = 0                  # > 0: train a LoRA adapter of this rank (PEFT); 0: every weight
    lora_alpha: float = 16              # LoRA scale = lora_alpha / lora_rank
    target_modules: Any = LORA_ALL_LINEAR  # all-linear, or a list of module names ([q_proj, k_proj, ...])

    def __post_init__(self):
        p = "actor_rollout_ref.model"
        check_choice(f"{p}.attn_implementation", self.attn_implementation, ATTN_IMPLEMENTATIONS)
        if not self.path:
            raise ValueError(f"{p}.path is empty; set it to an HF model directory "
                             "(e.g. one built by `python -m verl.utils.tiny_model --out DIR`)")
        check_choice(f"{p}.dtype", self.dtype, DTYPES)
        check_positive(f"{p}.lora_rank", self.lora_rank, allow_zero=True)
        if self.lora_rank:
            check_positive(f"{p}.lora_alpha", self.lora_alpha)
            modules = self.target_modules
            names = [modules] if isinstance(modules, str) else modules
            if (not isinstance(names, (list, tuple)) or not names
                    or not all(isinstance(n, str) and n.strip() for n in names)):
                raise ValueError(f"{p}.target_modules={modules!r} is not valid with {p}.lora_rank={self.lora_rank}; "
                                 f"set {LORA_ALL_LINEAR!r} or a non-empty list of module names "
                                 "(e.g. [q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj])")

    @property
    def use_lora(self) -> bool:
        """True when a LoRA adapter is trained (`lora_rank > 0`)."""
        return self.lora_rank > 0


@dataclass(frozen=True)
class OptimConfig:
    """`*.optim`: AdamW and the learning-rate schedule."""

    lr: float = 1e-6
    weight_decay: float = 0.01
    betas: list = field(default_factory=lambda: [0.9, 0.999])
    warmup_steps: int = -1
    warmup_steps_ratio: float = 0.0
    lr_scheduler_type: str = "constant"
    min_lr_ratio: float = 0.0
    total_training_steps: int = -1

    def __post_init__(self):
        check_positive("optim.lr", self.lr, allow_zero=True)
        check_choice("optim.lr_scheduler_type", self.lr_scheduler_type, ("constant", "cosine"))
        if not 0.0 <= self.warmup_steps_ratio <= 1.0:
            raise ValueError(f"optim.warmup_steps_ratio must be in [0, 1], got {self.warmup_steps_ratio}")
        if len(self.betas) != 2:
            raise ValueError(f"optim.betas must have two values, got {self.betas!r}")


@dataclass(frozen=True)
class FSDPConfig:
    """`*.fsdp_config`: offload switches (GPU only; no-ops on CPU) and the dtype of the trained weights."""

    param_offload: bool = False       # weights in CPU memory between passes (FSDP's CPU offload; one process:
                                      # moved per pass)
    optimizer_offload: bool = False   # optimizer state in CPU memory between updates
    model_dtype: str = "float32"      # dtype of the trained parameters (verl's key); compute runs in model.dtype

    def __post_init__(self):
        check_choice("*.fsdp_config.model_dtype", self.model_dtype, _MODEL_DTYPES)


@dataclass(frozen=True)
class PolicyLossConfig:
    """`actor_rollout_ref.actor.policy_loss` (verl's sub-config): the loss and its variant-specific knobs."""

    loss_mode: str = "vanilla"       # registry key in core_algos; validated there by the actor
    clip_cov_ratio: float = 0.0002   # clip_cov: fraction of tokens whose gradient is cut
    clip_cov_lb: float = 1.0         # clip_cov: covariance window lower bound
    clip_cov_ub: float = 5.0         # clip_cov: covariance window upper bound
    kl_cov_ratio: float = 0.0002     # kl_cov: fraction of tokens that get the KL term
    ppo_kl_coef: float = 0.1         # kl_cov: coefficient of |log ratio| on those tokens

    def __post_init__(self):
        p = "actor_rollout_ref.actor.policy_loss"
        for key in ("clip_cov_ratio", "kl_cov_ratio"):
            value = getattr(self, key)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{p}.{key} must be a fraction in [0, 1], got {value}")
        if self.clip_cov_lb > self.clip_cov_ub:
            raise ValueError(f"{p}.clip_cov_lb={self.clip_cov_lb} exceeds {p}.clip_cov_ub={self.clip_cov_ub}")
        check_positive(f"{p}.ppo_kl_coef", self.ppo_kl_coef, allow_zero=True)


@dataclass(frozen=True)
class CheckpointConfig:
    """`actor_rollout_ref.actor.checkpoint`: what a checkpoint holds."""

    save_contents: list = field(default_factory=lambda: ["model", "optimizer", "extra"])

    def __post_init__(self):
        for item in self.save_contents:
            check_choice("actor_rollout_ref.actor.checkpoint.save_contents[]", item,
                         ("model", "optimizer", "extra", "hf_model"))


@dataclass(frozen=True)
class ActorConfig:
    """`actor_rollout_ref.actor`: the PPO policy update."""

    compat_keys: ClassVar[dict[str, str]] = {"strategy": STRATEGY_NOTE}

    strategy: str = "fsdp2"               # compatibility only: fsdp | fsdp2, both run FSDP2 (see STRATEGY_NOTE)
    ppo_mini_batch_size: int = 256
    ppo_micro_batch_size_per_gpu: int = 1
    use_dynamic_bsz: bool = False         # micro-batches by token budget (ppo_max_token_len_per_gpu), not row count
    ppo_max_token_len_per_gpu: int = 16384  # with use_dynamic_bsz: real tokens (prompt + response) per micro-batch
    ppo_epochs: int = 1
    shuffle: bool = False               # permute the rows (seed: trainer.seed + step) before each epoch's mini-batches
    clip_ratio: float = 0.2
    clip_ratio_low: Optional[float] = None
    clip_ratio_high: Optional[float] = None
    clip_ratio_c: float = 3.0
    use_rollout_log_probs: bool = False   # use the engine's log-probs as pi_old instead of recomputing
    policy_loss: PolicyLossConfig = field(default_factory=PolicyLossConfig)
    loss_agg_mode: str = "token-mean"
    loss_scale_factor: Optional[float] = None   # seq-mean-token-sum-norm divisor (Dr.GRPO); null: response length
    entropy_coeff: float = 0.001
    use_kl_loss: bool = False
    kl_loss_coef: float = 0.001
    kl_loss_type: str = "low_var_kl"
    grad_clip: float = 1.0
    optim: OptimConfig = field(default_factory=OptimConfig)
    fsdp_config: FSDPConfig = field(default_factory=FSDPConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)

    def __post_init__(self):
        p = "actor_rollout_ref.actor"
        check_choice(f"{p}.strategy", self.strategy, STRATEGIES)
        for key in ("ppo_mini_batch_size", "ppo_micro_batch_size_per_gpu", "ppo_epochs", "ppo_max_token_len_per_gpu"):
            check_positive(f"{p}.{key}", getattr(self, key))
        check_positive(f"{p}.clip_ratio", self.clip_ratio)
        if self.clip_ratio_c <= 1.0:
            raise ValueError(f"{p}.clip_ratio_c must be > 1.0 (dual-clip bound), got {self.clip_ratio_c}")
        check_choice(f"{p}.loss_agg_mode", self.loss_agg_mode, LOSS_AGG_MODES)
        check_choice(f"{p}.kl_loss_type", self.kl_loss_type, KL_CHOICES)
        check_positive(f"{p}.grad_clip", self.grad_clip, allow_zero=True)
        check_positive(f"{p}.kl_loss_coef", self.kl_loss_coef, allow_zero=True)
        check_positive(f"{p}.loss_scale_factor", self.loss_scale_factor)

    @property
    def clip_low(self) -> float:
        return self.clip_ratio if self.clip_ratio_low is None else self.clip_ratio_low

    @property
    def clip_high(self) -> float:
        return self.clip_ratio if self.clip_ratio_high is None else self.clip_ratio_high


@dataclass(frozen=True)
class RefFSDPConfig:
    param_offload: bool = False


@dataclass(frozen=True)
class RefConfig:
    """`actor_rollout_ref.ref`: the frozen reference policy (for KL)."""

    log_prob_micro_batch_size_per_gpu: int = 1
    log_prob_use_dynamic_bsz: bool = False       # token-budget micro-batches (the YAML follows actor.use_dynamic_bsz)
    log_prob_max_token_len_per_gpu: int = 16384  # their budget in real tokens
    fsdp_config: RefFSDPConfig = field(default_factory=RefFSDPConfig)

    def __post_init__(self):
        p = "actor_rollout_ref.ref"
        for key in ("log_prob_micro_batch_size_per_gpu", "log_prob_max_token_len_per_gpu"):
            check_positive(f"{p}.{key}", getattr(self, key))


# -------------------------------------------------------------------------------------------- critic
@dataclass(frozen=True)
class CriticModelConfig:
    """`critic.model`: the value model (defaults to the actor's checkpoint with a value head)."""

    path: Optional[str] = None
    trust_remote_code: bool = False
    enable_gradient_checkpointing: bool = False
    override_config: dict = field(default_factory=dict)
    attn_implementation: str = "sdpa"   # as actor_rollout_ref.model.attn_implementation

    def __post_init__(self):
        check_choice("critic.model.attn_implementation", self.attn_implementation, ATTN_IMPLEMENTATIONS)


@dataclass(frozen=True)
class CriticConfig:
    """`critic`: value-function training (for estimators that need values, e.g. gae)."""

    compat_keys: ClassVar[dict[str, str]] = {"strategy": STRATEGY_NOTE}

    enable: Optional[bool] = None   # null: on when the estimator needs values (its registry entry says so)
    strategy: str = "fsdp2"         # compatibility only, as actor_rollout_ref.actor.strategy
    model: CriticModelConfig = field(default_factory=CriticModelConfig)
    optim: OptimConfig = field(default_factory=lambda: OptimConfig(lr=1e-5))
    ppo_mini_batch_size: int = 256
    ppo_micro_batch_size_per_gpu: int = 1
    use_dynamic_bsz: bool = False           # token-budget micro-batches (the YAML follows actor.use_dynamic_bsz)
    ppo_max_token_len_per_gpu: int = 32768  # their budget in real tokens (values and update)
    ppo_epochs: int = 1
    shuffle: bool = False                   # as actor.shuffle
    cliprange_value: float = 0.5
    loss_agg_mode: str = "token-mean"
    grad_clip: float = 1.0
    fsdp_config: FSDPConfig = field(default_factory=FSDPConfig)

    def __post_init__(self):
        check_choice("critic.strategy", self.strategy, STRATEGIES)
        for key in ("ppo_mini_batch_size", "ppo_micro_batch_size_per_gpu", "ppo_epochs", "cliprange_value",
                    "ppo_max_token_len_per_gpu"):
            check_positive(f"critic.{key}", getattr(self, key))
        check_choice("critic.loss_agg_mode", self.loss_agg_mode, LOSS_AGG_MODES)
