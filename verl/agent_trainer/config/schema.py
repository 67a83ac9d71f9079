"""Typed trainer configuration: one frozen dataclass per section of `ppo_trainer.yaml`.

The dataclasses follow the YAML tree field for field (same keys, same defaults). `load_config`
turns the Hydra `DictConfig` (or a plain dict) into a `PPOConfig`, rejecting unknown keys with the
closest valid names, checking types, and resolving `auto` values (device, rollout engine, dtype).
Each `__post_init__` raises `ValueError` naming the key path, the value and the fix.

This module owns the shape and validity of the config; it does not know how stages use it.
"""
from __future__ import annotations

import dataclasses
import difflib
import importlib.util
import re
import sys
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Union

from verl.utils.device import resolve_device, resolve_dtype

__all__ = [
    "load_dataclass_config", "resolve_model_and_rollout", "check_attn_implementation",
    "DataConfig", "ModelConfig", "OptimConfig", "FSDPConfig", "PolicyLossConfig", "CheckpointConfig",
    "ActorConfig", "RefConfig", "ValKwargsConfig", "MultiTurnConfig", "AgentLoopConfig", "RolloutConfig", "EnvServersConfig", "AgentGymConfig",
    "ActorRolloutRefConfig", "CriticModelConfig", "CriticConfig", "RewardModelModelConfig", "PrimeRewardConfig",
    "CodeSandboxConfig", "RewardModelConfig", "REWARD_COMBINE_MODES", "CustomRewardFunctionConfig",
    "KLCtrlConfig", "RoundsCtrlConfig", "GiGPOConfig", "AlgoConfig", "TrainerConfig", "RayInitConfig", "PPOConfig",
    "load_config", "from_dict", "to_dict", "as_section", "COMPAT_ONLY_KEYS", "warn_compat_keys", "check_override_keys", "default_config_path",
    "shipped_config_path", "console_entry",
]

_LOSS_AGG_MODES = ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm")
# The KL estimators core_algos implements; a trailing "+" is the straight-through form (k2's gradient).
# verl's "full" (the whole-vocabulary KL) needs both full distributions and is not offered: it used to
# pass here and fail after a whole rollout.
KL_TYPES = ("kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3")
_KL_CHOICES = KL_TYPES + tuple(k + "+" for k in KL_TYPES)
ATTN_IMPLEMENTATIONS = ("eager", "sdpa", "flash_attention_2")
_DTYPES = ("auto", "float32", "bfloat16", "float16")  # resolved by verl.utils.device.resolve_dtype
_MODEL_DTYPES = ("float32", "fp32", "bfloat16", "bf16", "float16", "fp16")  # fsdp_config.model_dtype (verl spells fp32)
# Estimators whose baseline is the other samples of the same prompt: with rollout.n=1 they have none.
GROUP_BASELINE_ESTIMATORS = ("grpo", "grpo_passk", "rloo", "opo", "reinforce_plus_plus_baseline", "gpg", "gigpo")
_LOGGERS = ("console", "file", "tensorboard", "wandb")


def _check_choice(path: str, value: Any, choices: tuple) -> None:
    if value not in choices:
        raise ValueError(f"{path}={value!r} is not valid; choose one of {list(choices)}")


def _check_positive(path: str, value: Any, allow_zero: bool = False) -> None:
    if value is None:
        return
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{path} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")


# ---------------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class DataConfig:
    """`data`: where prompts come from and how long sequences may be."""

    train_file: Optional[str] = "AgentItemId/webshop_train.json"
    val_file: Optional[str] = "AgentItemId/webshop_test.json"
    train_files: Any = None   # verl spelling (str or list of str); wins over train_file when set
    val_files: Any = None
    prompt_key: str = "item_id"
    reward_fn_key: str = "data_source"
    max_prompt_length: int = 2048
    max_response_length: int = 2048
    train_batch_size: int = 1024
    val_batch_size: Optional[int] = None
    val_max_items: Optional[int] = None
    return_raw_chat: bool = True
    shuffle: bool = True
    seed: int = 1

    def __post_init__(self):
        for key in ("max_prompt_length", "max_response_length", "train_batch_size"):
            _check_positive(f"data.{key}", getattr(self, key))
        _check_positive("data.val_batch_size", self.val_batch_size)
        _check_positive("data.val_max_items", self.val_max_items)
        if self.train_files is None and not self.train_file:
            raise ValueError("data.train_file is empty; set data.train_file=AgentItemId/<task>_train.json "
                             "(or data.train_files=<parquet>)")

    @property
    def train_paths(self) -> list[str]:
        """Training files, preferring verl's `train_files` spelling when set."""
        return _as_paths(self.train_files if self.train_files is not None else self.train_file)

    @property
    def val_paths(self) -> list[str]:
        """Validation files (empty: no validation set)."""
        return _as_paths(self.val_files if self.val_files is not None else self.val_file)


def _as_paths(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


# ------------------------------------------------------------------------------ actor / rollout / ref
@dataclass(frozen=True)
class ModelConfig:
    """`actor_rollout_ref.model`: the policy checkpoint (HF format)."""

    path: str = "~/models/Qwen2.5-3B-Instruct"
    tokenizer_path: Optional[str] = None
    trust_remote_code: bool = False
    enable_gradient_checkpointing: bool = False
    use_remove_padding: bool = False
    dtype: str = "auto"
    override_config: dict = field(default_factory=dict)
    attn_implementation: str = "sdpa"   # transformers' attention kernel: eager | sdpa | flash_attention_2 (GPU)
    enable_activation_offloading: bool = False  # actor update: activations saved for backward wait in CPU memory (GPU)

    def __post_init__(self):
        _check_choice("actor_rollout_ref.model.attn_implementation", self.attn_implementation, ATTN_IMPLEMENTATIONS)
        if not self.path:
            raise ValueError("actor_rollout_ref.model.path is empty; set it to an HF model directory "
                             "(e.g. one built by `python -m verl.utils.tiny_model --out DIR`)")
        _check_choice("actor_rollout_ref.model.dtype", self.dtype, _DTYPES)


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
        _check_positive("optim.lr", self.lr, allow_zero=True)
        _check_choice("optim.lr_scheduler_type", self.lr_scheduler_type, ("constant", "cosine"))
        if not 0.0 <= self.warmup_steps_ratio <= 1.0:
            raise ValueError(f"optim.warmup_steps_ratio must be in [0, 1], got {self.warmup_steps_ratio}")
        if len(self.betas) != 2:
            raise ValueError(f"optim.betas must have two values, got {self.betas!r}")


@dataclass(frozen=True)
class FSDPConfig:
    """`*.fsdp_config`: offload switches (GPU only; no-ops on CPU) and the dtype of the trained weights."""

    param_offload: bool = False       # weights in CPU memory between passes (FSDP's CPU offload; one process: moved per pass)
    optimizer_offload: bool = False   # optimizer state in CPU memory between updates
    model_dtype: str = "float32"      # dtype of the trained parameters (verl's key); compute runs in model.dtype

    def __post_init__(self):
        _check_choice("*.fsdp_config.model_dtype", self.model_dtype, _MODEL_DTYPES)


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
        _check_positive(f"{p}.ppo_kl_coef", self.ppo_kl_coef, allow_zero=True)


@dataclass(frozen=True)
class CheckpointConfig:
    """`actor_rollout_ref.actor.checkpoint`: what a checkpoint holds."""

    save_contents: list = field(default_factory=lambda: ["model", "optimizer", "extra"])

    def __post_init__(self):
        for item in self.save_contents:
            _check_choice("actor_rollout_ref.actor.checkpoint.save_contents[]", item, ("model", "optimizer", "extra", "hf_model"))


@dataclass(frozen=True)
class ActorConfig:
    """`actor_rollout_ref.actor`: the PPO policy update."""

    strategy: str = "fsdp"
    ppo_mini_batch_size: int = 256
    ppo_micro_batch_size_per_gpu: int = 1
    use_dynamic_bsz: bool = False         # micro-batches by token budget (ppo_max_token_len_per_gpu), not row count
    ppo_max_token_len_per_gpu: int = 16384  # with use_dynamic_bsz: real tokens (prompt + response) per micro-batch
    ppo_epochs: int = 1
    shuffle: bool = False                 # permute the rows (seeded by trainer.seed and the step) before each epoch's mini-batches
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
        _check_choice(f"{p}.strategy", self.strategy, ("fsdp", "fsdp2"))
        for key in ("ppo_mini_batch_size", "ppo_micro_batch_size_per_gpu", "ppo_epochs", "ppo_max_token_len_per_gpu"):
            _check_positive(f"{p}.{key}", getattr(self, key))
        _check_positive(f"{p}.clip_ratio", self.clip_ratio)
        if self.clip_ratio_c <= 1.0:
            raise ValueError(f"{p}.clip_ratio_c must be > 1.0 (dual-clip bound), got {self.clip_ratio_c}")
        _check_choice(f"{p}.loss_agg_mode", self.loss_agg_mode, _LOSS_AGG_MODES)
        _check_choice(f"{p}.kl_loss_type", self.kl_loss_type, _KL_CHOICES)
        _check_positive(f"{p}.grad_clip", self.grad_clip, allow_zero=True)
        _check_positive(f"{p}.kl_loss_coef", self.kl_loss_coef, allow_zero=True)
        _check_positive(f"{p}.loss_scale_factor", self.loss_scale_factor)

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
            _check_positive(f"{p}.{key}", getattr(self, key))


@dataclass(frozen=True)
class ValKwargsConfig:
    """`actor_rollout_ref.rollout.val_kwargs`: sampling during validation."""

    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = -1
    n: int = 1
    do_sample: bool = False

    def __post_init__(self):
        _check_positive("actor_rollout_ref.rollout.val_kwargs.n", self.n)
        _check_positive("actor_rollout_ref.rollout.val_kwargs.temperature", self.temperature, allow_zero=True)
        if self.temperature > 0 and not self.do_sample:
            raise ValueError(
                f"actor_rollout_ref.rollout.val_kwargs.temperature={self.temperature} has no effect while "
                "val_kwargs.do_sample=false (validation is greedy); set val_kwargs.do_sample=true for a sampled "
                "validation pass at that temperature, or leave the temperature at 0")


@dataclass(frozen=True)
class MultiTurnConfig:
    """`actor_rollout_ref.rollout.multi_turn` (verl's keys): run verl interactions through the agent loop.

    With `enable`, the interactions in `interaction_config_path` (verl's YAML) drive the rows whose
    `extra_info.interaction_kwargs` name one, through the same agent loop as `agentgym.task_name`.
    """

    enable: bool = False
    max_user_turns: Optional[int] = None        # null: agentgym.max_rounds (one user turn per env step)
    max_assistant_turns: Optional[int] = None   # null: agentgym.max_rounds
    interaction_config_path: Optional[str] = None

    def __post_init__(self):
        p = "actor_rollout_ref.rollout.multi_turn"
        if self.enable and not self.interaction_config_path:
            raise ValueError(f"{p}.enable=true needs {p}.interaction_config_path (verl's interaction YAML)")
        _check_positive(f"{p}.max_user_turns", self.max_user_turns)
        _check_positive(f"{p}.max_assistant_turns", self.max_assistant_turns)


@dataclass(frozen=True)
class AgentLoopConfig:
    """`actor_rollout_ref.rollout.agent` (verl's keys): which agent loop runs a row."""

    default_agent_loop: str = "tool_agent"   # tool_agent: multi-turn (env / interaction); single_turn_agent
    num_workers: int = 1                     # verl's AgentLoopWorker count; one asyncio loop serves all here

    def __post_init__(self):
        _check_choice("actor_rollout_ref.rollout.agent.default_agent_loop", self.default_agent_loop,
                      ("tool_agent", "single_turn_agent"))
        _check_positive("actor_rollout_ref.rollout.agent.num_workers", self.num_workers)


@dataclass(frozen=True)
class RolloutConfig:
    """`actor_rollout_ref.rollout`: the engine and the multi-turn agent loop."""

    name: str = "auto"
    mode: str = "async"
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    max_tokens: int = 1024
    max_model_len: int = 32768
    dtype: str = "bfloat16"
    gpu_memory_utilization: float = 0.5
    tensor_model_parallel_size: int = 1
    enforce_eager: bool = True
    free_cache_engine: Optional[bool] = None  # release the engine's GPU memory around the actor update; null: on CUDA
    load_format: str = "dummy_dtensor"
    max_num_batched_tokens: int = 8192
    max_num_seqs: int = 1024
    enable_prefix_caching: bool = True
    kv_cache_space_gb: Optional[float] = None   # vLLM on CPU: KV-cache GiB (VLLM_CPU_KVCACHE_SPACE); null: 1
    logprobs_mode: str = "processed_logprobs"   # vLLM: log-probs after temperature/top-p (processed_*) or raw_*
    update_weights_bucket_megabytes: int = 512  # weight sync: MiB per bucket pushed into the engine
    log_prob_micro_batch_size_per_gpu: int = 1
    log_prob_use_dynamic_bsz: bool = False       # old log-probs in token-budget micro-batches (YAML: actor.use_dynamic_bsz)
    log_prob_max_token_len_per_gpu: int = 16384  # their budget in real tokens
    max_concurrency: int = 64
    send_interval: float = 0.0
    seed: int = 0
    rollout_log_dir: Optional[str] = None
    system_prompt: Optional[str] = None      # null: AgentGym-RL's Qwen system line; "" for none
    stop_token_ids: List[int] = field(default_factory=list)  # extra ids that end a turn (besides EOS)
    copy_only_tokens: Optional[str] = None   # regex: matching vocabulary tokens only when already in the context
    val_kwargs: ValKwargsConfig = field(default_factory=ValKwargsConfig)
    multi_turn: MultiTurnConfig = field(default_factory=MultiTurnConfig)
    agent: AgentLoopConfig = field(default_factory=AgentLoopConfig)
    prompt_length: Optional[int] = None      # verl's name of data.max_prompt_length (must agree when set)
    response_length: Optional[int] = None    # verl's name of data.max_response_length (must agree when set)

    def __post_init__(self):
        p = "actor_rollout_ref.rollout"
        _check_choice(f"{p}.name", self.name, ("auto", "hf", "vllm", "sglang"))
        _check_choice(f"{p}.mode", self.mode, ("async", "sync"))
        _check_choice(f"{p}.dtype", self.dtype, _DTYPES)
        for key in ("n", "max_tokens", "max_model_len", "max_concurrency", "tensor_model_parallel_size",
                    "log_prob_micro_batch_size_per_gpu", "update_weights_bucket_megabytes",
                    "log_prob_max_token_len_per_gpu"):
            _check_positive(f"{p}.{key}", getattr(self, key))
        _check_positive(f"{p}.temperature", self.temperature, allow_zero=True)
        if not 0 < self.top_p <= 1:
            raise ValueError(f"{p}.top_p must be in (0, 1], got {self.top_p}")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(f"{p}.gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}")
        _check_positive(f"{p}.send_interval", self.send_interval, allow_zero=True)
        _check_positive(f"{p}.kv_cache_space_gb", self.kv_cache_space_gb)
        _check_choice(f"{p}.logprobs_mode", self.logprobs_mode,
                      ("processed_logprobs", "raw_logprobs", "processed_logits", "raw_logits"))
        if self.copy_only_tokens is not None:
            try:
                re.compile(self.copy_only_tokens)
            except re.error as exc:
                raise ValueError(f"{p}.copy_only_tokens is not a regular expression "
                                 f"({self.copy_only_tokens!r}: {exc})") from None


@dataclass(frozen=True)
class EnvServersConfig:
    """`actor_rollout_ref.agentgym.env_servers`: env servers launched as Ray actors (the env fleet).

    With `num > 0` the trainer starts `num` servers on the cluster (GPU-less nodes first), waits
    until each answers, uses their addresses as `agentgym.env_addr` and stops them at the end.
    """

    num: int = 0                 # servers to launch; 0: none (attach to agentgym.env_addr)
    per_node: int = 0            # most servers on one node; 0: no cap (spread evenly over the nodes)
    # Ray resources each server actor holds: CPU (fractional is fine), GPU, and custom node labels
    # (e.g. {CPU: 1, env_node: 1} with `ray start --resources '{"env_node": 8}'` on the env nodes)
    resources: dict = field(default_factory=lambda: {"CPU": 0.25})
    # launch command with {python}, {host}, {port} filled in; null: `{python} -m agentenv_<task_name>.launch
    # --host {host} --port {port} --log-level warning`
    cmd: Optional[str] = None
    startup_timeout: float = 180  # seconds for every server to answer GET / before the run fails

    def __post_init__(self):
        p = "actor_rollout_ref.agentgym.env_servers"
        _check_positive(f"{p}.num", self.num, allow_zero=True)
        _check_positive(f"{p}.per_node", self.per_node, allow_zero=True)
        _check_positive(f"{p}.startup_timeout", self.startup_timeout)
        for key, value in self.resources.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{p}.resources.{key}={value!r} must be a number >= 0 (Ray resource units)")
        if self.cmd is not None and "{port}" not in self.cmd:
            raise ValueError(f"{p}.cmd={self.cmd!r} must contain {{port}} (each server gets a free port), e.g. "
                             "'{python} -m agentenv_webshop.launch --host {host} --port {port}'")


@dataclass(frozen=True)
class AgentGymConfig:
    """`actor_rollout_ref.agentgym`: which environment servers the agent talks to."""

    task_name: str = "webshop"
    env_addr: Any = "http://127.0.0.1:36001"  # one server URL or a list of them (sessions spread by load)
    max_retries: int = 10
    timeout: float = 300
    max_rounds: int = 10
    data_len: int = 0          # AgentGym's client argument (number of items the server holds; 0: unknown)
    max_failed_frac: float = 0.5  # a training rollout with more failed trajectories (env errors) aborts
    health_timeout: float = 5.0   # seconds for the GET / probe of a server whose session just failed
    server_backoff_s: float = 5.0  # a server out of rotation is probed again after this; doubles per failed probe
    server_max_backoff_s: float = 120.0
    env_servers: EnvServersConfig = field(default_factory=EnvServersConfig)

    def __post_init__(self):
        p = "actor_rollout_ref.agentgym"
        if not 0.0 <= float(self.max_failed_frac) <= 1.0:
            raise ValueError(f"{p}.max_failed_frac={self.max_failed_frac!r} must be in [0, 1] "
                             "(the fraction of failed trajectories a training step tolerates)")
        if not self.task_name:
            raise ValueError(f"{p}.task_name is empty; choose webshop or webarena")
        addrs = self.env_addrs
        if not addrs:
            raise ValueError(f"{p}.env_addr is an empty list; give at least one URL such as http://127.0.0.1:36001")
        for addr in addrs:
            if not isinstance(addr, str) or not addr.startswith(("http://", "https://")):
                raise ValueError(f"{p}.env_addr={addr!r} must be an http(s) URL such as http://127.0.0.1:36001")
        if len({a.rstrip("/") for a in addrs}) < len(addrs):
            raise ValueError(f"{p}.env_addr={addrs!r} names a server twice; list each server once")
        _check_positive(f"{p}.max_retries", self.max_retries, allow_zero=True)
        _check_positive(f"{p}.timeout", self.timeout)
        _check_positive(f"{p}.max_rounds", self.max_rounds)
        _check_positive(f"{p}.data_len", self.data_len, allow_zero=True)
        _check_positive(f"{p}.health_timeout", self.health_timeout)
        _check_positive(f"{p}.server_backoff_s", self.server_backoff_s)
        if self.server_max_backoff_s < self.server_backoff_s:
            raise ValueError(f"{p}.server_max_backoff_s={self.server_max_backoff_s} is below "
                             f"{p}.server_backoff_s={self.server_backoff_s}; raise it or lower the back-off")

    @property
    def env_addrs(self) -> list[str]:
        """`env_addr` as a list of base URLs without a trailing slash (a single string is one server)."""
        addrs = [self.env_addr] if isinstance(self.env_addr, str) else list(self.env_addr)
        return [a.rstrip("/") if isinstance(a, str) else a for a in addrs]


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
            raise ValueError("actor_rollout_ref.hybrid_engine=False is not supported; the actor worker owns the rollout "
                             "engine. Remove the override.")


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
        _check_choice("critic.model.attn_implementation", self.attn_implementation, ATTN_IMPLEMENTATIONS)


@dataclass(frozen=True)
class CriticConfig:
    """`critic`: value-function training (used by estimators that need values, e.g. gae)."""

    enable: Optional[bool] = None
    strategy: str = "fsdp"
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
        _check_choice("critic.strategy", self.strategy, ("fsdp", "fsdp2"))
        for key in ("ppo_mini_batch_size", "ppo_micro_batch_size_per_gpu", "ppo_epochs", "cliprange_value",
                    "ppo_max_token_len_per_gpu"):
            _check_positive(f"critic.{key}", getattr(self, key))
        _check_choice("critic.loss_agg_mode", self.loss_agg_mode, _LOSS_AGG_MODES)


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
        _check_choice("reward_model.model.attn_implementation", self.attn_implementation, ATTN_IMPLEMENTATIONS)


@dataclass(frozen=True)
class PrimeRewardConfig:
    """`reward_model.prime`: the prime reward manager's worker processes (reward_manager=prime)."""

    num_processes: int = 8      # scorer processes (spawned once, reused across steps)
    timeout_s: float = 60.0     # per-sample wall time; a scorer still running is killed and the sample scores 0

    def __post_init__(self):
        _check_positive("reward_model.prime.num_processes", self.num_processes)
        _check_positive("reward_model.prime.timeout_s", self.timeout_s)


@dataclass(frozen=True)
class CodeSandboxConfig:
    """`reward_model.code_sandbox`: limits of the subprocess that runs a code answer (prime code scorer)."""

    timeout_s: float = 5.0          # wall time per test case (CPU time is capped to the same)
    memory_limit_mb: int = 1024     # address-space limit (RLIMIT_AS) of the solution process
    max_output_mb: int = 16         # files and captured stdout the solution may write (RLIMIT_FSIZE)

    def __post_init__(self):
        p = "reward_model.code_sandbox"
        _check_positive(f"{p}.timeout_s", self.timeout_s)
        _check_positive(f"{p}.memory_limit_mb", self.memory_limit_mb)
        _check_positive(f"{p}.max_output_mb", self.max_output_mb)


@dataclass(frozen=True)
class RewardModelConfig:
    """`reward_model`: how token-level scores are produced.

    The reward manager (`reward_manager`) owns `token_level_scores`: env or rule scores, and with
    `enable` the learned reward model's `rm_scores`, joined by `combine`:
      sum:      env/rule score + rm_coef * rm score
      rm_only:  rm_coef * rm score (the env/rule score is still logged as `reward` and decides `success`)
      env_only: env/rule score; the rm score is only logged (reward/rm_score/*)
    """

    enable: bool = False
    reward_manager: str = "naive"
    combine: str = "sum"
    rm_coef: float = 1.0
    strategy: str = "fsdp"
    micro_batch_size_per_gpu: int = 1
    model: RewardModelModelConfig = field(default_factory=RewardModelModelConfig)
    prime: PrimeRewardConfig = field(default_factory=PrimeRewardConfig)
    code_sandbox: CodeSandboxConfig = field(default_factory=CodeSandboxConfig)

    def __post_init__(self):
        p = "reward_model"
        _check_choice(f"{p}.combine", self.combine, REWARD_COMBINE_MODES)
        _check_choice(f"{p}.strategy", self.strategy, ("fsdp", "fsdp2"))
        _check_positive(f"{p}.micro_batch_size_per_gpu", self.micro_batch_size_per_gpu)
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


# ----------------------------------------------------------------------------------------- algorithm
@dataclass(frozen=True)
class KLCtrlConfig:
    """`algorithm.kl_ctrl`: the reward-side KL coefficient controller."""

    type: str = "fixed"
    kl_coef: float = 0.001
    horizon: int = 10000
    target_kl: float = 0.1

    def __post_init__(self):
        _check_choice("algorithm.kl_ctrl.type", self.type, ("fixed", "adaptive"))
        _check_positive("algorithm.kl_ctrl.kl_coef", self.kl_coef, allow_zero=True)
        _check_positive("algorithm.kl_ctrl.horizon", self.horizon)


@dataclass(frozen=True)
class RoundsCtrlConfig:
    """`algorithm.rounds_ctrl`: the interaction-horizon schedule (AgentGym-RL's ScalingInter-RL)."""

    type: str = "fixed"
    rounds: Any = 15
    steps_scaling_inter: int = 100

    def __post_init__(self):
        p = "algorithm.rounds_ctrl"
        _check_choice(f"{p}.type", self.type, ("fixed", "scaling_inter_stepwise"))
        values = self.rounds if isinstance(self.rounds, (list, tuple)) else [self.rounds]
        if not values or any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in values):
            raise ValueError(f"{p}.rounds={self.rounds!r} must be a positive int or a non-empty list of them "
                             f"(e.g. [8,12,15])")
        if self.type == "fixed" and isinstance(self.rounds, (list, tuple)) and len(self.rounds) > 1:
            raise ValueError(f"{p}.rounds={list(self.rounds)} is a list but {p}.type=fixed; "
                             f"use {p}.type=scaling_inter_stepwise or a single int")
        _check_positive(f"{p}.steps_scaling_inter", self.steps_scaling_inter)


@dataclass(frozen=True)
class GiGPOConfig:
    """`algorithm.gigpo` (verl-agent's names): the step-level half of GiGPO (arXiv:2505.10978)."""

    step_advantage_w: float = 1.0   # weight of the step advantage A_S added to the episode advantage A_E
    mode: str = "mean_norm"         # mean_norm: A - mean; mean_std_norm: (A - mean) / (std + eps)

    def __post_init__(self):
        _check_choice("algorithm.gigpo.mode", self.mode, ("mean_norm", "mean_std_norm"))


@dataclass(frozen=True)
class FilterGroupsConfig:
    """`algorithm.filter_groups` (verl's DAPO names): dynamic sampling. Groups whose rows all score the
    same carry no GRPO signal; they are dropped before the update, and up to `max_num_gen_batches`
    rollouts per step (0: no limit) refill the batch with groups that have reward variance."""

    enable: bool = False
    metric: str = "score"         # score: the row's total score (token_level_scores); success: is_success
    max_num_gen_batches: int = 1  # 1: drop only (the update trains on what is left); 0: no limit

    def __post_init__(self):
        _check_choice("algorithm.filter_groups.metric", self.metric, ("score", "success"))
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
        _check_choice("algorithm.kl_penalty", self.kl_penalty, _KL_CHOICES)
        if not self.adv_estimator:
            raise ValueError("algorithm.adv_estimator is empty; use e.g. grpo or gae")


# ------------------------------------------------------------------------------------------- trainer
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
    export_hf: bool = True
    critic_warmup: int = 0
    seed: int = 1   # seeds the PPO mini-batch shuffle (actor/critic.shuffle) with the step
    plots: bool = True            # PNGs of the file logger's metrics under <log_dir>/plots at the end of fit()
    learning_report: bool = False  # greedy validation before and after training -> learning_report.json
    rollout_overlap: bool = False  # one-step off-policy: rollout k+1 (previous weights) runs beside update k

    def __post_init__(self):
        p = "trainer"
        _check_positive(f"{p}.total_epochs", self.total_epochs)
        _check_positive(f"{p}.total_training_steps", self.total_training_steps)
        _check_positive(f"{p}.nnodes", self.nnodes)
        _check_positive(f"{p}.n_gpus_per_node", self.n_gpus_per_node, allow_zero=True)
        _check_choice(f"{p}.device", self.device, ("auto", "cuda", "cpu"))
        _check_choice(f"{p}.resume_mode", self.resume_mode, ("auto", "disable", "resume_path"))
        if self.resume_mode == "resume_path" and not self.resume_from_path:
            raise ValueError("trainer.resume_mode=resume_path needs trainer.resume_from_path=<dir>/global_step_N")
        for key in ("save_freq", "test_freq"):
            value = getattr(self, key)
            if value == 0 or value < -1:
                raise ValueError(f"{p}.{key} must be -1 (off) or a positive step interval, got {value}")
        for name in self.loggers:
            _check_choice(f"{p}.logger[]", name, _LOGGERS)
        _check_positive(f"{p}.max_actor_ckpt_to_keep", self.max_actor_ckpt_to_keep)

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
        _check_positive("ray_init.num_cpus", self.num_cpus)
        _check_positive("ray_init.worker_num_cpus", self.worker_num_cpus, allow_zero=True)
        _check_positive("ray_init.worker_cpu_threads", self.worker_cpu_threads)
        if self.object_store_memory is not None and self.object_store_memory < 78_643_200:
            raise ValueError(f"ray_init.object_store_memory={self.object_store_memory} is below Ray's minimum "
                             f"(78643200 bytes); use e.g. 1000000000")


# ------------------------------------------------------------------------------------------------ root
@dataclass(frozen=True)
class PPOConfig:
    """The whole trainer configuration (root of `ppo_trainer.yaml`)."""

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
        if self.use_critic and self.data.train_batch_size % self.critic.ppo_mini_batch_size:
            raise ValueError(
                f"data.train_batch_size={self.data.train_batch_size} must be divisible by "
                f"critic.ppo_mini_batch_size={self.critic.ppo_mini_batch_size} (or lower critic.ppo_mini_batch_size)")
        for rollout_key, data_key in (("prompt_length", "max_prompt_length"), ("response_length", "max_response_length")):
            value = getattr(arr.rollout, rollout_key)
            if value is not None and value != getattr(self.data, data_key):
                raise ValueError(f"actor_rollout_ref.rollout.{rollout_key}={value} disagrees with data.{data_key}="
                                 f"{getattr(self.data, data_key)}; they name one limit (verl's and AgentGym-RL's "
                                 "key): set both to the same value, or only one")
        if self.algorithm.adv_estimator in GROUP_BASELINE_ESTIMATORS and arr.rollout.n < 2:
            raise ValueError(
                f"algorithm.adv_estimator={self.algorithm.adv_estimator} compares the samples of one prompt, but "
                f"actor_rollout_ref.rollout.n={arr.rollout.n} gives each prompt a single sample (no baseline); set "
                "rollout.n >= 2 or use an estimator without groups (gae, reinforce_plus_plus, remax)")
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
    def use_critic(self) -> bool:
        """Whether a critic is trained: explicit `critic.enable`, else whether the estimator needs values."""
        if self.critic.enable is not None:
            return bool(self.critic.enable)
        return self.algorithm.adv_estimator == "gae"

    @property
    def use_reference_policy(self) -> bool:
        """A reference policy is needed for a KL loss or a reward-side KL penalty."""
        return self.actor_rollout_ref.actor.use_kl_loss or self.algorithm.use_kl_in_reward


# ------------------------------------------------------------------------------------------- loading
def _type_ok(value: Any, annotation: Any) -> tuple[bool, Any]:
    """Check (and lightly coerce) `value` against a field annotation. Returns (ok, value)."""
    if annotation is Any:
        return True, value
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in typing.get_args(annotation):
            return True, None
        for arg in typing.get_args(annotation):
            if arg is type(None):
                continue
            ok, coerced = _type_ok(value, arg)
            if ok:
                return True, coerced
        return False, value
    if annotation is bool:
        return isinstance(value, bool), value
    if annotation is int:
        if isinstance(value, bool):
            return False, value
        if isinstance(value, float) and value.is_integer():
            return True, int(value)
        return isinstance(value, int), value
    if annotation is float:
        if isinstance(value, bool):
            return False, value
        return isinstance(value, (int, float)), float(value) if isinstance(value, (int, float)) else value
    if annotation is str:
        return isinstance(value, str), value
    if annotation in (list, dict):
        return isinstance(value, annotation), value
    return True, value


def from_dict(cls: type, data: dict | None, path: str = "") -> Any:
    """Build dataclass `cls` from a nested dict, rejecting unknown keys and wrong types.

    Raises:
        ValueError: naming the full key path, the bad value and the fix (close matches for typos).
    """
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ValueError(f"{path or '<root>'} must be a mapping of keys, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in data if k not in names]
    if unknown:
        key = unknown[0]
        full = f"{path}.{key}" if path else key
        close = difflib.get_close_matches(str(key), names, n=3, cutoff=0.5)
        hint = f"did you mean {', '.join((path + '.' if path else '') + c for c in close)}?" if close else \
            f"valid keys under {path or 'the root'}: {sorted(names)}"
        raise ValueError(f"unknown config key {full!r}; {hint}")
    kwargs = {}
    for name in names:
        if name not in data:
            continue
        value, annotation, full = data[name], hints[name], f"{path}.{name}" if path else name
        if dataclasses.is_dataclass(annotation):
            kwargs[name] = from_dict(annotation, value, full)
            continue
        ok, coerced = _type_ok(value, annotation)
        if not ok:
            raise ValueError(f"{full}={value!r} has the wrong type; expected {_type_name(annotation)}")
        kwargs[name] = coerced
    return cls(**kwargs)


def as_section(cls: type, value: Any, path: str) -> Any:
    """`value` as the typed config section `cls`: the instance itself, `cls()` for None, or a mapping
    (dict or OmegaConf `DictConfig`) loaded with `from_dict` (unknown keys fail naming `path`).

    The one conversion consumers apply at their boundary, so they read attributes (with the
    dataclass's defaults) and never re-read a mapping with a second default.
    """
    if isinstance(value, cls):
        return value
    if value is None:
        return cls()
    if dataclasses.is_dataclass(value):
        value = dataclasses.asdict(value)
    elif not isinstance(value, dict):
        try:
            from omegaconf import DictConfig, OmegaConf
        except ImportError:  # pragma: no cover - omegaconf ships with hydra
            DictConfig = ()
        if DictConfig and isinstance(value, DictConfig):
            value = OmegaConf.to_container(value, resolve=True)
    return from_dict(cls, dict(value), path)


def _type_name(annotation: Any) -> str:
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(annotation))
    return "null" if annotation is type(None) else getattr(annotation, "__name__", str(annotation))


def to_dict(cfg: Any) -> dict:
    """A plain nested dict of a config dataclass (for logging and checkpoints)."""
    return dataclasses.asdict(cfg)


def check_attn_implementation(key: str, attn_implementation: str, device: str) -> None:
    """Fail at start-up when `key` (an `attn_implementation`) cannot run here: flash_attention_2 needs
    CUDA and the flash-attn package; eager and sdpa run anywhere."""
    if attn_implementation != "flash_attention_2":
        return
    if device != "cuda":
        raise ValueError(f"{key}=flash_attention_2 needs a CUDA device (trainer.device resolved to {device}); "
                         "use sdpa (the default) or eager")
    if importlib.util.find_spec("flash_attn") is None:
        raise ValueError(f"{key}=flash_attention_2 needs the flash-attn package (pip install '.[gpu]'); "
                         "use sdpa (the default) or eager")


def resolve_model_and_rollout(model: "ModelConfig", rollout: "RolloutConfig | None", device: str):
    """Concrete `model.dtype` (`resolve_dtype`: bf16 on GPU, fp32 on CPU) and `rollout.name` (vllm on GPU
    when installed, else hf); checks `model.attn_implementation` can run on `device`."""
    model = dataclasses.replace(model, dtype=resolve_dtype(model.dtype, device))
    check_attn_implementation("actor_rollout_ref.model.attn_implementation", model.attn_implementation, device)
    if rollout is not None and rollout.name == "auto":
        use_vllm = device == "cuda" and importlib.util.find_spec("vllm") is not None
        rollout = dataclasses.replace(rollout, name="vllm" if use_vllm else "hf")
    return model, rollout


def _resolve_auto(cfg: PPOConfig) -> PPOConfig:
    """Replace `auto` values (device, rollout engine, model dtype) by what this machine supports."""
    trainer = dataclasses.replace(cfg.trainer, device=resolve_device(cfg.trainer.device))
    arr = cfg.actor_rollout_ref
    model, rollout = resolve_model_and_rollout(arr.model, arr.rollout, trainer.device)
    arr = dataclasses.replace(arr, rollout=rollout, model=model)
    if cfg.use_critic:
        check_attn_implementation("critic.model.attn_implementation", cfg.critic.model.attn_implementation,
                                  trainer.device)
    if cfg.reward_model.enable:
        check_attn_implementation("reward_model.model.attn_implementation",
                                  cfg.reward_model.model.attn_implementation, trainer.device)
    return dataclasses.replace(cfg, trainer=trainer, actor_rollout_ref=arr)


# Keys accepted only so verl / AgentGym-RL configs and command lines load unchanged; nothing reads
# them. (section dataclass, field) -> what happens instead. Setting one to a non-default value warns
# once per process (`warn_compat_keys`, run by `load_dataclass_config`).
COMPAT_ONLY_KEYS: dict[tuple[str, str], str] = {
    ("DataConfig", "return_raw_chat"): "chats are always kept raw",
    ("ModelConfig", "use_remove_padding"): "padding is handled by attention_mask and per-micro-batch trimming",
    ("RolloutConfig", "mode"): "the agent loop is always asynchronous",
    ("RolloutConfig", "load_format"): "the engine loads the checkpoint at model.path, then receives synced weights",
    ("AgentLoopConfig", "num_workers"): "one asyncio agent loop per rank serves every trajectory",
}
_WARNED_COMPAT: set[str] = set()


def warn_compat_keys(cfg: Any, defaults: Any = None, path: str = "") -> list[str]:
    """Warn once per key path for each `COMPAT_ONLY_KEYS` entry set to a non-default value in `cfg`.

    Args:
        cfg: a config dataclass (the root or a section).
        defaults: the same section with default values (default: `type(cfg)()`).
        path: key path of `cfg` (for the message).

    Returns:
        The key paths warned about by this call.
    """
    import logging

    defaults = type(cfg)() if defaults is None else defaults
    warned = []
    for f in dataclasses.fields(cfg):
        value, default, full = getattr(cfg, f.name), getattr(defaults, f.name), f"{path}.{f.name}" if path else f.name
        if dataclasses.is_dataclass(value):
            warned += warn_compat_keys(value, default, full)
            continue
        note = COMPAT_ONLY_KEYS.get((type(cfg).__name__, f.name))
        if note is not None and value != default and full not in _WARNED_COMPAT:
            _WARNED_COMPAT.add(full)
            warned.append(full)
            logging.getLogger(__name__).warning("%s=%r is accepted for compatibility and not used (%s); default %r",
                                                full, value, note, default)
    return warned


def load_dataclass_config(root: type, cfg: Any, yaml_name: str, resolve: Optional[Callable[[Any], Any]] = None) -> Any:
    """Convert a Hydra `DictConfig` (or dict, or None for the shipped `yaml_name`) into the dataclass `root`.

    Interpolations such as `${trainer.project_name}` are resolved first; `resolve` (e.g. replacing
    `auto` device/engine/dtype values for this machine) is applied last.

    Raises:
        ValueError: unknown key (with close matches), wrong type, or an invalid value.
    """
    from omegaconf import DictConfig, OmegaConf

    if cfg is None:
        cfg = OmegaConf.load(shipped_config_path(yaml_name))
    if isinstance(cfg, DictConfig):
        cfg = OmegaConf.to_container(cfg, resolve=True)
    config = from_dict(root, cfg)
    warn_compat_keys(config)
    return resolve(config) if resolve is not None else config


def shipped_config_path(yaml_name: str) -> str:
    """Path of a YAML shipped beside this module (`ppo_trainer.yaml`, `sft_trainer.yaml`, ...)."""
    import os

    return os.path.join(os.path.dirname(os.path.abspath(__file__)), yaml_name)


def console_entry(root: type, hydra_main: Callable[[], None]) -> Callable[[], None]:
    """A console entry point: check the command-line keys against `root` (unknown keys fail with
    close matches, before Hydra's own less helpful message), then run `hydra_main`."""

    def main() -> None:
        try:
            check_override_keys(sys.argv[1:], root=root)
        except ValueError as exc:
            sys.exit(f"error: {exc}")
        hydra_main()

    return main


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
    """Fail early, with close matches, on `key=value` command-line overrides naming no config key.

    Hydra's own message for a typo ("Key 'x' is not in struct") lists no alternatives; this one does.
    Overrides starting with `+`, `~` or `hydra.` and non-`key=value` arguments are left to Hydra.
    `root` is the config dataclass checked against (default `PPOConfig`).
    """
    for arg in overrides:
        if "=" not in arg or arg.startswith(("+", "~", "hydra.", "-")):
            continue
        key = arg.split("=", 1)[0].lstrip("+")
        cls: Any = root or PPOConfig
        parts = key.split(".")
        for i, part in enumerate(parts):
            if not dataclasses.is_dataclass(cls):
                break  # inside a free-form field (dict/list); Hydra checks the rest
            hints = typing.get_type_hints(cls)
            if part not in hints:
                prefix = ".".join(parts[:i])
                close = difflib.get_close_matches(part, list(hints), n=3, cutoff=0.5)
                where = f"{prefix}." if prefix else ""
                hint = (f"did you mean {', '.join(where + c for c in close)}?" if close
                        else f"valid keys under {prefix or 'the root'}: {sorted(hints)}")
                raise ValueError(f"unknown config key {key!r} in override {arg!r}; {hint}")
            cls = hints[part]
