"""Actor/rollout/ref, critic and reward-model workers: model lifecycle around the compute cores.

Owns each model's lifecycle: device/dtype placement, FSDP wrapping on multi-GPU (with optional
param/optimizer offload and gradient checkpointing), the optimizer and LR schedule, the rollout
engine and agent loop, weight sync into the engine after each update, checkpoints (model,
optimizer, scheduler, RNG) and the HuggingFace export. With LoRA (`model.lora_rank > 0`, `verl.utils.lora`)
the actor trains an adapter, the colocated reference policy is the same module with the adapter disabled,
the engine receives merged weights and checkpoints hold the adapter and its optimizer state. The math lives in
`verl.workers.agent_actor.dp_actor` / `verl.workers.agent_critic.dp_critic` /
`verl.workers.reward_model.dp_reward_model`; the loop lives in the trainer;
models, tokenizers and optimizers are built by `verl.utils.model_utils`, the engine by
`verl.workers.rollout.base.build_rollout_engine`.

These are plain classes; the trainer wraps them with `ray.remote(num_cpus=<fraction>)`. Their
constructors take the typed config sections they read (`verl.config.schema`), never a
raw mapping. On CPU (or one process) the model is a plain `nn.Module`; FSDP is imported only when
CUDA is used with a world size > 1.
"""
from __future__ import annotations

import contextlib
import copy
import logging
import os
import time
from typing import Any

import torch

from verl.config.device import resolve_device, resolve_dtype
from verl.config.schema import (
    ActorRolloutRefConfig,
    AgentGymConfig,
    CheckpointConfig,
    CriticConfig,
    DataConfig,
    FSDPConfig,
    ModelConfig,
    OptimConfig,
    RewardModelConfig,
    RolloutConfig,
    TrainerConfig,
)
from verl.protocol import DataProto
from verl.utils import lora, model_utils
from verl.utils.checkpoint import (
    MAX_SHARD_BYTES,
    capture_rng_state,
    load_sharded,
    restore_rng_state,
    save_atomic,
    save_sharded,
    to_cpu,
)
from verl.workers.copy_only import copy_only_rule

__all__ = ["ActorRolloutRefWorker", "CriticWorker", "RewardModelWorker"]

logger = logging.getLogger(__name__)

_ROLES = ("actor_rollout", "ref", "actor_rollout_ref", "actor")


# ------------------------------------------------------------------------------------------ helpers
def _check_sections(owner: str, **sections: tuple[object, type]) -> None:
    """Refuse a constructor argument that is not its typed config section (e.g. a dict or DictConfig).

    Raises:
        TypeError: naming the argument, the expected dataclass and what was given.
    """
    for name, (value, cls) in sections.items():
        if not isinstance(value, cls):
            raise TypeError(f"{owner}({name}=...) takes the typed config section {cls.__name__}, got "
                            f"{type(value).__name__}; load the config first (schema.load_config, or "
                            f"schema.from_dict for one section)")


def _world() -> tuple[int, int]:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def _maybe_init_distributed(device: torch.device) -> bool:
    """Initialise the process group from the env (RANK/WORLD_SIZE/MASTER_ADDR) when world size > 1.

    NCCL on GPU; gloo on CPU (there FSDP keeps the ranks' gradients in sync, which plain modules
    would not).

    Returns:
        True when FSDP should be used (world size > 1).
    """
    _, world = _world()
    if world <= 1:
        return False
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    if device.type == "cuda":
        # Ray gives each actor its own CUDA_VISIBLE_DEVICES, where the one visible GPU is index 0.
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)) % torch.cuda.device_count())
    return True


def _fsdp_wrap(module: torch.nn.Module, device: torch.device, compute_dtype: torch.dtype,
               param_offload: bool) -> torch.nn.Module:
    """Shard `module` with FSDP2 (`fully_shard`): one unit per decoder layer plus the root, mixed
    precision (compute in `compute_dtype`, gradients reduced in fp32), optional CPU param offload.

    FSDP2 is used for both `strategy: fsdp` and `fsdp2`: it is torch's supported path and, unlike
    FSDP1, also runs on CPU with gloo, so this code is exercised by the CPU tests.
    """
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy, fully_shard

    if device.type == "cuda" and not param_offload:
        module = module.to(device)
    kwargs = {"mp_policy": MixedPrecisionPolicy(param_dtype=compute_dtype, reduce_dtype=torch.float32),
              "offload_policy": CPUOffloadPolicy() if param_offload else OffloadPolicy()}
    no_split = set(getattr(module, "_no_split_modules", None) or [])
    for sub in list(module.modules()):
        if sub is not module and type(sub).__name__ in no_split:
            fully_shard(sub, **kwargs)
    fully_shard(module, **kwargs)
    return module


def _full_state_dict(module: torch.nn.Module, cpu_offload: bool = True) -> dict[str, torch.Tensor]:
    """Unsharded HF-named state dict. Under FSDP with `cpu_offload` only rank 0 receives it (the
    others get {}); without, every rank gets the full tensors on its GPU."""
    if model_utils.is_fsdp_module(module):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        return get_model_state_dict(module, options=StateDictOptions(full_state_dict=True, cpu_offload=cpu_offload))
    return module.state_dict()


def _move_optimizer_state(optimizer: torch.optim.Optimizer, device: torch.device) -> None:
    for state in optimizer.state.values():
        for k, v in state.items():
            if torch.is_tensor(v):
                state[k] = v.to(device, non_blocking=True)


def _interaction_factory(rollout_cfg: RolloutConfig, agentgym: AgentGymConfig) -> Any:
    """With `rollout.multi_turn.enable`: env clients backed by the interaction of the interaction YAML
    (one item, or the one named like `agentgym.task_name`); else None (the task's env client)."""
    if not rollout_cfg.multi_turn.enable:
        return None
    from verl.interactions import initialize_interactions_from_config, interaction_client_factory

    interactions = initialize_interactions_from_config(
        os.path.expanduser(rollout_cfg.multi_turn.interaction_config_path)
    )
    if len(interactions) == 1:
        (interaction,) = interactions.values()
    elif agentgym.task_name in interactions:
        interaction = interactions[agentgym.task_name]
    else:
        raise ValueError(f"the interaction config defines {sorted(interactions)}; with several, one must be named "
                         f"like actor_rollout_ref.agentgym.task_name={agentgym.task_name!r}")
    return interaction_client_factory(interaction, agentgym.task_name, agentgym.data_len)


class _ModelWorkerBase:
    """Shared lifecycle of a trainable model: device, optimizer, schedule, checkpoints."""

    module: torch.nn.Module | None = None
    optimizer: torch.optim.Optimizer | None = None
    lr_scheduler = None
    tokenizer = None
    _ckpt_tag = "model"
    _lora = False  # the module is a PEFT model: checkpoints hold its adapter, not the base weights

    def _setup_device(self, device_pref) -> None:
        self.device = torch.device(resolve_device(device_pref))
        self.use_fsdp = _maybe_init_distributed(self.device)
        self.rank, self.world_size = _world()

    def _autocast(self):
        # GPU compute runs in bf16/fp16 over fp32 master weights; FSDP's MixedPrecision already does it.
        if self.device.type == "cuda" and not self.use_fsdp and self.compute_dtype != torch.float32:
            return torch.autocast("cuda", dtype=self.compute_dtype)
        return contextlib.nullcontext()

    def _place(self, module: torch.nn.Module, fsdp_cfg: FSDPConfig, gradient_checkpointing: bool) -> torch.nn.Module:
        # FSDP2 renames the class (FSDPQwen2ForCausalLM); PEFT wraps it (PeftModelForCausalLM)
        self._hf_architecture = type(lora.base_model(module)).__name__
        if gradient_checkpointing:
            module.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if self.use_fsdp:
            return _fsdp_wrap(module, self.device, self.compute_dtype, fsdp_cfg.param_offload)
        if fsdp_cfg.param_offload and self.device.type == "cuda":
            # One process, no FSDP: the weights wait in CPU memory and visit the GPU for each pass (_on_device).
            self._offloaded_modules = [*getattr(self, "_offloaded_modules", []), module]
            return module
        return module.to(self.device)

    @contextlib.contextmanager
    def _on_device(self, module: torch.nn.Module | None):
        """`module` on the compute device for the block; a single-process param-offloaded module goes
        back to CPU memory afterwards (FSDP's own CPU offload handles the sharded case)."""
        offloaded = module is not None and any(module is m for m in getattr(self, "_offloaded_modules", []))
        if offloaded:
            module.to(self.device)
        try:
            yield
        finally:
            if offloaded:
                module.to("cpu")

    def _ckpt_config(self) -> CheckpointConfig:
        """The `checkpoint` section that applies to this worker (default: model, optimizer, extra)."""
        return CheckpointConfig()

    def _optimizer_to(self, device: torch.device) -> None:
        if self.optimizer is not None and self._optimizer_offload:
            _move_optimizer_state(self.optimizer, device)

    def _hf_config(self):
        """The model's HF config as it should be saved: HF class name, generation cache on."""
        config = copy.deepcopy(lora.base_model(self.module).config)
        config.architectures = [self._hf_architecture]
        config.use_cache = True
        return config

    def _run_update(self, update, data: DataProto, tag: str) -> dict:
        """One optimizer update `update(data) -> metrics` with the optimizer state on the device, then an
        LR-scheduler step; adds `perf/update_<tag>_s`."""
        self._optimizer_to(self.device)
        start = time.perf_counter()
        with self._on_device(self.module), self._autocast():
            metrics = update(data)
        self.lr_scheduler.step()
        self._optimizer_to(torch.device("cpu"))
        metrics[f"perf/update_{tag}_s"] = time.perf_counter() - start
        return metrics

    def _to_device(self, data: DataProto) -> DataProto:
        return data.to(self.device) if self.device.type != "cpu" else data

    # --------------------------------------------------------------------------- checkpoints
    def _ckpt_files(self, local_path: str) -> dict[str, str]:
        suffix = f"world_size_{self.world_size}_rank_{self.rank}.pt"
        return {k: os.path.join(local_path, f"{k}_{suffix}") for k in ("model", "optim", "extra_state")}

    def save_checkpoint(self, local_path: str, global_step: int = 0) -> None:
        """Write model, optimizer, LR scheduler and RNG state (one file each per rank) to `local_path`.

        `checkpoint.save_contents` (actor) selects model / optimizer / extra (scheduler, RNG, step);
        with `hf_model` the full HF export goes to `huggingface/`. Otherwise rank 0 writes only the
        config and tokenizer there, so the directory is self-describing. Each file is written atomically,
        and under FSDP the ranks meet at a barrier before returning, so the checkpoint is whole on return.
        With LoRA the model is the adapter (`lora_adapter/`, PEFT's format) and the optimizer state is
        the adapter's, both in files of at most `MAX_SHARD_BYTES`.
        """
        os.makedirs(local_path, exist_ok=True)
        files = self._ckpt_files(local_path)
        contents = set(self._ckpt_config().save_contents)
        if self._lora:
            self._save_lora(local_path, files, contents)
        elif self.use_fsdp:
            from torch.distributed.checkpoint.state_dict import (
                StateDictOptions,
                get_model_state_dict,
                get_state_dict,
            )

            opts = StateDictOptions(cpu_offload=True)  # each rank's shards, written as CPU tensors
            if self.optimizer is not None:
                model_sd, optim_sd = get_state_dict(self.module, self.optimizer, options=opts)
            else:
                model_sd, optim_sd = get_model_state_dict(self.module, options=opts), None
        else:  # CPU copies: a checkpoint never holds live CUDA tensors
            model_sd = to_cpu(self.module.state_dict())
            optim_sd = to_cpu(self.optimizer.state_dict()) if self.optimizer is not None else None
        if "model" in contents and not self._lora:
            save_atomic(model_sd, files["model"])
        if not self._lora and optim_sd is not None and "optimizer" in contents:
            save_atomic(optim_sd, files["optim"])
        if "extra" in contents:
            extra = {"global_step": int(global_step), "rng": capture_rng_state(),
                     "lr_scheduler": self.lr_scheduler.state_dict() if self.lr_scheduler is not None else None}
            save_atomic(to_cpu(extra), files["extra_state"])
        if "hf_model" in contents and hasattr(self, "export_hf"):
            self.export_hf(os.path.join(local_path, "huggingface"))
        elif self.rank == 0:
            model_utils.save_hf_dir(os.path.join(local_path, "huggingface"), None, self.tokenizer,
                                    config=self._hf_config())
        if self.use_fsdp:  # every rank's files are complete once any rank returns
            torch.distributed.barrier()
        logger.info("saved %s checkpoint (step %d) to %s", self._ckpt_tag, global_step, local_path)

    def load_checkpoint(self, local_path: str, del_local_after_load: bool = False) -> int:
        """Restore what `save_checkpoint` wrote. Returns the saved global step.

        Raises:
            FileNotFoundError: naming the missing file (e.g. a different world size).
        """
        files = self._ckpt_files(local_path)
        if self._lora:
            self._load_lora(local_path, files)
        elif not os.path.exists(files["model"]):
            raise FileNotFoundError(
                f"no {self._ckpt_tag} checkpoint at {files['model']} (saved with a different world size?)"
            )
        else:
            self._load_model_and_optimizer(files)
        extra = {"global_step": 0}
        if os.path.exists(files["extra_state"]):
            extra = torch.load(files["extra_state"], map_location="cpu", weights_only=False)
            if extra.get("lr_scheduler") is not None and self.lr_scheduler is not None:
                self.lr_scheduler.load_state_dict(extra["lr_scheduler"])
            restore_rng_state(extra["rng"])
        if del_local_after_load:
            for path in files.values():
                if os.path.exists(path):
                    os.remove(path)
        logger.info("loaded %s checkpoint (step %d) from %s", self._ckpt_tag, extra["global_step"], local_path)
        return int(extra["global_step"])

    def _load_model_and_optimizer(self, files: dict[str, str]) -> None:
        model_sd = torch.load(files["model"], map_location="cpu", weights_only=False)
        optim_sd = None
        if os.path.exists(files["optim"]):
            optim_sd = torch.load(files["optim"], map_location="cpu", weights_only=False)
        if self.use_fsdp:
            from torch.distributed.checkpoint.state_dict import set_model_state_dict, set_state_dict

            if self.optimizer is not None and optim_sd is not None:
                set_state_dict(self.module, self.optimizer, model_state_dict=model_sd, optim_state_dict=optim_sd)
            else:
                set_model_state_dict(self.module, model_sd)
        else:
            self.module.load_state_dict(model_sd)
            if optim_sd is not None and self.optimizer is not None:
                self.optimizer.load_state_dict(optim_sd)
                self._optimizer_to(torch.device("cpu"))

    # ------------------------------------------------------------------------- LoRA checkpoints
    def _full(self, tensor: torch.Tensor) -> torch.Tensor:
        """The full tensor of a parameter (an FSDP shard is all-gathered: a collective every rank runs in the
        same order; with CPU param offload the shard visits the device first, as NCCL gathers device memory)."""
        if hasattr(tensor, "full_tensor"):
            if tensor.device.type != self.device.type:
                tensor = tensor.to(self.device)
            tensor = tensor.full_tensor()
        return tensor

    def _save_lora(self, local_path: str, files: dict[str, str], contents: set[str]) -> None:
        """The adapter (rank 0, `lora_adapter/`) and each rank's optimizer state, in files <= MAX_SHARD_BYTES."""
        if "model" in contents:
            state = lora.adapter_state_dict(self.module, gather=self._full)  # every rank gathers
            if self.rank == 0:
                lora.save_adapter(self.module, os.path.join(local_path, lora.ADAPTER_DIR), MAX_SHARD_BYTES, state)
        if self.optimizer is None or "optimizer" not in contents:
            return
        if self.use_fsdp:
            from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

            optim_sd = get_optimizer_state_dict(self.module, self.optimizer, options=StateDictOptions(cpu_offload=True))
        else:
            optim_sd = to_cpu(self.optimizer.state_dict())
        save_sharded(optim_sd, files["optim"], MAX_SHARD_BYTES, keys=["state"])

    def _load_lora(self, local_path: str, files: dict[str, str]) -> None:
        adapter_dir = os.path.join(local_path, lora.ADAPTER_DIR)
        if not os.path.isdir(adapter_dir):
            raise FileNotFoundError(f"no LoRA adapter at {adapter_dir}: the checkpoint was not written with "
                                    "actor_rollout_ref.model.lora_rank > 0 (or not completely)")
        state = lora.read_adapter(adapter_dir)
        optim_sd = load_sharded(files["optim"]) if os.path.exists(files["optim"]) else None
        if self.use_fsdp:
            from torch.distributed.checkpoint.state_dict import (
                StateDictOptions,
                set_model_state_dict,
                set_optimizer_state_dict,
            )

            set_model_state_dict(self.module, state, options=StateDictOptions(full_state_dict=True, strict=False))
            if optim_sd is not None and self.optimizer is not None:
                set_optimizer_state_dict(self.module, self.optimizer, optim_sd)
        else:
            lora.load_adapter(self.module, {k: v.to(self.device) for k, v in state.items()})
            if optim_sd is not None and self.optimizer is not None:
                self.optimizer.load_state_dict(optim_sd)
                self._optimizer_to(torch.device("cpu"))

    def _build_optim(self, optim_cfg: OptimConfig, fsdp_cfg: FSDPConfig) -> None:
        self.optimizer = model_utils.build_optimizer(self.module, optim_cfg)
        self.lr_scheduler = model_utils.build_lr_scheduler(self.optimizer, optim_cfg)
        self._optimizer_offload = fsdp_cfg.optimizer_offload and self.device.type == "cuda"


# --------------------------------------------------------------------------------- actor/rollout/ref
class ActorRolloutRefWorker(_ModelWorkerBase):
    """Policy worker: the trainable actor, its rollout engine + agent loop, and/or the ref policy.

    Args:
        config: the `actor_rollout_ref` section.
        role: "actor_rollout", "ref", "actor_rollout_ref", or "actor" (training only, no engine).
        data_config: the `data` section (prompt and response lengths of the agent loop).
        trainer_config: the `trainer` section: `device` ("auto" | "cpu" | "cuda") and `seed` (seeds the
            actor's mini-batch shuffle).

    Raises:
        ValueError: an unknown role.
        TypeError: a section that is not its typed dataclass.
    """

    _ckpt_tag = "actor"

    def __init__(self, config: ActorRolloutRefConfig, role: str, data_config: DataConfig,
                 trainer_config: TrainerConfig):
        if role not in _ROLES:
            raise ValueError(f"ActorRolloutRefWorker role={role!r} is unknown; choose one of {list(_ROLES)}")
        _check_sections("ActorRolloutRefWorker", config=(config, ActorRolloutRefConfig),
                        data_config=(data_config, DataConfig), trainer_config=(trainer_config, TrainerConfig))
        self.config = config
        self.data_config = data_config
        self._seed = trainer_config.seed  # the mini-batch shuffle's
        self.role = role
        self._is_actor = role in ("actor_rollout", "actor_rollout_ref", "actor")
        self._is_rollout = role in ("actor_rollout", "actor_rollout_ref")
        self._is_ref = role in ("ref", "actor_rollout_ref")
        self._device_pref = trainer_config.device
        self.actor = self.ref_policy = self.engine = self.agent_loop = None
        self.ref_module = None
        self._optimizer_offload = False
        # weight versions: actor updates applied, and the actor version the engine last received
        self.actor_version = self.engine_version = 0
        self._weight_syncs_started = 0  # a sync that began during a rollout changed its weights, finished or not

    # ------------------------------------------------------------------------------ init
    def init_model(self) -> None:
        """Load tokenizer and models, build optimizer/scheduler, the engine and the agent loop."""
        from verl.workers.agent_actor.dp_actor import DataParallelPPOActor

        cfg = self.config
        self._setup_device(self._device_pref)
        model_path = os.path.expanduser(cfg.model.path)
        tok_path = os.path.expanduser(cfg.model.tokenizer_path or model_path)
        trust = cfg.model.trust_remote_code
        self.model_path = model_path
        self.compute_dtype = getattr(torch, resolve_dtype(cfg.model.dtype, self.device))
        self.tokenizer = model_utils.load_tokenizer(tok_path, trust_remote_code=trust)
        override = dict(cfg.model.override_config)
        actor_cfg = cfg.actor

        if self._is_actor:
            # Trained weights in fsdp_config.model_dtype (default fp32: AdamW on bf16 weights loses small
            # updates); compute is cast to model.dtype.
            param_dtype = getattr(torch, resolve_dtype(actor_cfg.fsdp_config.model_dtype, self.device))
            module = model_utils.load_causal_lm(model_path, dtype=param_dtype, trust_remote_code=trust,
                                                attn_implementation=cfg.model.attn_implementation,
                                                override_config=override)
            module.config.use_cache = False
            if cfg.model.use_lora:  # only the adapter requires gradients, so only it reaches the optimizer
                module = lora.apply_lora(module, cfg.model)
                self._lora = True
            self.module = self._place(module, actor_cfg.fsdp_config, cfg.model.enable_gradient_checkpointing)
            self._build_optim(actor_cfg.optim, actor_cfg.fsdp_config)
            mini = actor_cfg.ppo_mini_batch_size * cfg.rollout.n // self.world_size
            if mini < 1:
                raise ValueError(
                    f"actor.ppo_mini_batch_size x rollout.n / world size = {mini} < 1; raise actor.ppo_mini_batch_size"
                )
            self.actor = DataParallelPPOActor(actor_cfg, self.module, self.optimizer, ppo_mini_batch_size=mini,
                                              shuffle_seed=self._seed,
                                              activation_offload=cfg.model.enable_activation_offloading)
            self._optimizer_to(torch.device("cpu"))

        if self._is_ref and self._lora:
            # the base weights are frozen: the reference policy is the actor's module with the adapter disabled
            # (compute_ref_log_prob), not a second copy of the weights
            self.ref_module = self.module
            self.ref_policy = DataParallelPPOActor(actor_cfg, self.module, None)
        elif self._is_ref:
            ref_dtype = self.compute_dtype if self.device.type == "cuda" else torch.float32
            ref = model_utils.load_causal_lm(model_path, dtype=ref_dtype, trust_remote_code=trust,
                                             override_config=override,
                                             attn_implementation=cfg.model.attn_implementation)
            ref.requires_grad_(False)
            ref.eval()
            self.ref_module = self._place(ref, FSDPConfig(param_offload=cfg.ref.fsdp_config.param_offload), False)
            self.ref_policy = DataParallelPPOActor(actor_cfg, self.ref_module, None)

        if cfg.rollout.copy_only_tokens:  # log-probs under the rule the rollout samples with
            rule = copy_only_rule(self.tokenizer, cfg.rollout.copy_only_tokens)
            for policy in (self.actor, self.ref_policy):
                if policy is not None:
                    policy.copy_only = rule
        if self._is_rollout:
            self._build_rollout()

    def _build_rollout(self) -> None:
        from verl.workers.rollout.agent_loop import AgentLoop
        from verl.workers.rollout.base import build_rollout_engine

        rollout_cfg = self.config.rollout
        # The engine keeps its own copy of the weights (FSDP shards cannot be shared), refreshed by sync_weights().
        self.engine = build_rollout_engine(self.model_path, rollout_cfg, self.device, self.config.model)
        self.agent_loop = AgentLoop(self.engine, self.tokenizer, rollout_cfg, self.config.agentgym, self.data_config,
                                    env_client_factory=_interaction_factory(rollout_cfg, self.config.agentgym))

    # ------------------------------------------------------------------------------ rollout
    def generate_sequences(self, prompts: DataProto) -> DataProto:
        """Run the multi-turn agent loop on `prompts` (one row per trajectory).

        With `rollout.free_cache_engine` the engine is woken first (weights, then KV cache) and put
        back to sleep afterwards, so the log-prob passes and the actor update have its GPU memory.
        meta `rollout_weights_version` is the engine's weight version for the whole rollout.

        Raises:
            RuntimeError: the engine's weights changed while the rollout ran (a weight sync ran beside it,
                e.g. an update that synced under `trainer.rollout_overlap`): the batch would mix two policies.
        """
        if self.agent_loop is None:
            raise RuntimeError(f"generate_sequences needs role actor_rollout[_ref], this worker is {self.role!r}")
        start, version, syncs = time.perf_counter(), self.engine_version, self._weight_syncs_started
        self.engine.wake_up()
        try:
            out = self.agent_loop.run(prompts)
        finally:
            if self.engine.free_cache:
                self.engine.sleep()
        if self._weight_syncs_started != syncs:
            raise RuntimeError(f"the rollout engine's weights changed during the rollout (version {version} -> "
                               f"{self.engine_version}): a weight sync ran beside it; under trainer.rollout_overlap "
                               "the update must leave the engine alone (meta_info sync_weights=False) until the join")
        out.meta_info.setdefault("timing_s/rollout", time.perf_counter() - start)
        out.meta_info["rollout_weights_version"] = version
        return out

    def _named_full_params(self):
        """Yield `(HF name, full tensor)` one parameter at a time (tied duplicates such as lm_head once); with
        LoRA the base model's names with the adapter merged in (`lora.merged_named_parameters`).

        Under FSDP each sharded parameter is all-gathered on its own (`_full`), so no rank ever holds more
        than one unsharded parameter (with LoRA: and its adapter) beyond what the engine has taken; the
        engine casts and buckets as it consumes.
        """
        if self._lora:
            yield from lora.merged_named_parameters(self.module, gather=self._full)
            return
        for name, param in self.module.named_parameters():
            yield name, self._full(param.detach())

    def sync_weights(self) -> None:
        """Push the actor's current weights into the rollout engine (every rank into its own engine).

        With `rollout.free_cache_engine` the sleeping engine first gets its weights back
        (`wake_up(["weights"])`), then the new weights; its KV cache stays released until the next
        `generate_sequences`.
        """
        if self.engine is None:
            return
        self._weight_syncs_started += 1
        if self.engine.is_sleeping:
            self.engine.wake_up(["weights"])
        self.engine.update_weights(self._named_full_params())
        self.engine_version = self.actor_version

    # ------------------------------------------------------------------------------ log-probs
    def _log_prob_meta(self, data: DataProto, micro_batch_size, use_dynamic_bsz: bool = False,
                       max_token_len: int | None = None) -> DataProto:
        meta = dict(data.meta_info)  # the caller's meta_info is left untouched
        meta.setdefault("temperature", self.config.rollout.temperature)
        meta.update(
            micro_batch_size=int(micro_batch_size),
            use_dynamic_bsz=use_dynamic_bsz,
            max_token_len=max_token_len,
        )
        return DataProto(batch=data.batch, non_tensor_batch=data.non_tensor_batch, meta_info=meta)

    def _sharing_cores(self):
        """Held while this worker computes: an engine on the host's cores leaves them to it (`sharing_cores`)."""
        return self.engine.sharing_cores() if self.engine is not None else contextlib.nullcontext()

    def _policy_log_probs(self, policy, section, data: DataProto, calculate_entropy: bool):
        """Run `policy.compute_log_prob` micro-batched as `section` (rollout or ref) says: its
        log_prob_micro_batch_size_per_gpu rows, or log_prob_max_token_len_per_gpu tokens."""
        data = self._log_prob_meta(self._to_device(data), section.log_prob_micro_batch_size_per_gpu,
                                   section.log_prob_use_dynamic_bsz, section.log_prob_max_token_len_per_gpu)
        module = self.module if policy is self.actor else self.ref_module
        with self._on_device(module), self._autocast(), self._sharing_cores():
            log_probs, entropys = policy.compute_log_prob(data, calculate_entropy=calculate_entropy)
        return data, log_probs, entropys

    def compute_log_prob(self, data: DataProto) -> DataProto:
        """Log-probs of the responses under the current actor: adds `old_log_probs`, `entropys`, and
        the actor's weight version (meta `actor_weights_version`, updates applied so far)."""
        if self.actor is None:
            raise RuntimeError(f"compute_log_prob needs an actor role, this worker is {self.role!r}")
        data, log_probs, entropys = self._policy_log_probs(self.actor, self.config.rollout, data,
                                                           calculate_entropy=True)
        return DataProto.from_dict(
            tensors={"old_log_probs": log_probs.float().cpu(), "entropys": entropys.float().cpu()},
            meta_info={"temperature": data.meta_info["temperature"], "actor_weights_version": self.actor_version},
        )

    def compute_ref_log_prob(self, data: DataProto) -> DataProto:
        """Log-probs under the frozen initial weights: adds `ref_log_prob`."""
        if self.ref_policy is None:
            raise RuntimeError(
                f"compute_ref_log_prob needs role ref or actor_rollout_ref, this worker is {self.role!r}"
            )
        with lora.adapter_disabled(self.ref_module):  # with LoRA: the actor's module, its base weights only
            _, log_probs, _ = self._policy_log_probs(self.ref_policy, self.config.ref, data, calculate_entropy=False)
        return DataProto.from_dict(tensors={"ref_log_prob": log_probs.float().cpu()})

    # ------------------------------------------------------------------------------ update
    def update_actor(self, data: DataProto) -> DataProto:
        """One PPO update on `data`, an LR-scheduler step and a weight sync into the engine.

        With `meta_info["sync_weights"]=False` (rollout overlap) the engine keeps the previous weights,
        so a rollout running beside the update is not disturbed; the trainer calls `sync_weights` after it.

        Returns:
            DataProto whose meta_info["metrics"] holds the actor/* metrics (and perf/max_memory_* on CUDA).
        """
        if self.actor is None:
            raise RuntimeError(f"update_actor needs an actor role, this worker is {self.role!r}")
        data = self._log_prob_meta(self._to_device(data), self.actor.micro_batch_size)
        sync = data.meta_info.get("sync_weights", True)
        with self._sharing_cores():
            metrics = self._run_update(self.actor.update_policy, data, "actor")
        self.actor_version += 1
        if sync:
            start = time.perf_counter()
            self.sync_weights()
            metrics["timing_s/sync_weights"] = time.perf_counter() - start
        if self.device.type == "cuda":  # verl's peak-memory metrics (GiB, this process, since it started)
            metrics["perf/max_memory_allocated_gb"] = torch.cuda.max_memory_allocated(self.device) / 2**30
            metrics["perf/max_memory_reserved_gb"] = torch.cuda.max_memory_reserved(self.device) / 2**30
        return DataProto(meta_info={"metrics": metrics})

    # ------------------------------------------------------------------------------ checkpoints
    def _ckpt_config(self) -> CheckpointConfig:
        return self.config.actor.checkpoint

    def load_checkpoint(self, local_path: str, del_local_after_load: bool = False) -> int:
        """Restore model, optimizer, scheduler and RNG, then push the weights into the engine."""
        step = super().load_checkpoint(local_path, del_local_after_load)
        self.sync_weights()
        return step

    def export_hf(self, path: str) -> str:
        """Save the actor as a HuggingFace model + tokenizer that AutoModelForCausalLM loads (with LoRA: the
        base weights with the adapter merged in)."""
        if self._lora:  # every rank gathers, rank 0 keeps
            state = {name: tensor.cpu() for name, tensor in self._named_full_params() if self.rank == 0}
        else:
            state = _full_state_dict(self.module)
        if self.rank == 0:
            # the HF class's config (its architectures), not the FSDP wrapper's
            model_utils.save_hf_dir(path, lora.base_model(self.module), self.tokenizer, state_dict=state,
                                    config=self._hf_config())
            logger.info("exported HF model to %s", path)
        return path

    def shutdown(self) -> None:
        """Close the agent loop's env sessions and stop the rollout engine (safe to call twice)."""
        if self.agent_loop is not None:
            self.agent_loop.close()
        if self.engine is not None:
            self.engine.shutdown()


# ------------------------------------------------------------------------------------------- critic
class CriticWorker(_ModelWorkerBase):
    """Value-model worker.

    Args:
        config: the `critic` section.
        policy_config: the `actor_rollout_ref` section: its `model.path` (and `model.tokenizer_path`) is the
            critic's checkpoint when `critic.model.path` is null, and `rollout.n` scales the mini-batch.
        trainer_config: the `trainer` section: `device` and `seed` (seeds the mini-batch shuffle).

    Raises:
        TypeError: a section that is not its typed dataclass.
    """

    _ckpt_tag = "critic"

    def __init__(self, config: CriticConfig, policy_config: ActorRolloutRefConfig, trainer_config: TrainerConfig):
        _check_sections("CriticWorker", config=(config, CriticConfig),
                        policy_config=(policy_config, ActorRolloutRefConfig),
                        trainer_config=(trainer_config, TrainerConfig))
        self.config = config
        self._seed = trainer_config.seed  # the mini-batch shuffle's
        self._fallback_path = policy_config.model.path
        self._tokenizer_path = policy_config.model.tokenizer_path
        self.rollout_n = policy_config.rollout.n
        self._device_pref = trainer_config.device
        self.critic = None
        self._optimizer_offload = False

    def init_model(self) -> None:
        """Load the value model (backbone + 1-output head), optimizer and scheduler."""
        from verl.workers.agent_critic.dp_critic import DataParallelPPOCritic

        cfg = self.config
        self._setup_device(self._device_pref)
        path = cfg.model.path or self._fallback_path
        if not path:
            raise ValueError("critic.model.path is null and no actor model path was given; set critic.model.path")
        path = os.path.expanduser(str(path))
        trust = cfg.model.trust_remote_code
        self.compute_dtype = getattr(torch, resolve_dtype("auto", self.device))
        self.tokenizer = model_utils.load_tokenizer(os.path.expanduser(self._tokenizer_path or path), trust)
        param_dtype = getattr(torch, resolve_dtype(cfg.fsdp_config.model_dtype, self.device))
        module = model_utils.load_value_model(path, dtype=param_dtype, trust_remote_code=trust,
                                              attn_implementation=cfg.model.attn_implementation,
                                              override_config=cfg.model.override_config)
        module.config.use_cache = False
        self.module = self._place(module, cfg.fsdp_config, cfg.model.enable_gradient_checkpointing)
        self._build_optim(cfg.optim, cfg.fsdp_config)
        mini = cfg.ppo_mini_batch_size * self.rollout_n // self.world_size
        if mini < 1:
            raise ValueError(f"critic.ppo_mini_batch_size x rollout.n / world size = {mini} < 1; raise it")
        self.critic = DataParallelPPOCritic(cfg, self.module, self.optimizer, ppo_mini_batch_size=mini,
                                            shuffle_seed=self._seed)
        self._optimizer_to(torch.device("cpu"))

    def compute_values(self, data: DataProto) -> DataProto:
        """Adds `values` (bs, response_length)."""
        data = self._to_device(data)
        with self._on_device(self.module), self._autocast():
            values = self.critic.compute_values(data)
        return DataProto.from_dict(tensors={"values": values.float().cpu()})

    def update_critic(self, data: DataProto) -> DataProto:
        """One value update; returns DataProto with meta_info["metrics"] (critic/*)."""
        metrics = self._run_update(self.critic.update_critic, self._to_device(data), "critic")
        return DataProto(meta_info={"metrics": metrics})


# ------------------------------------------------------------------------------------- reward model
def _check_same_tokenizer(rm_path: str, tokenizer, vocab_size: int) -> None:
    """The reward model reads the policy's token ids as they are: refuse one with another tokenizer.

    Raises:
        ValueError: the checkpoint ships a tokenizer with a different vocabulary, or its embedding is
            smaller than the policy's vocabulary.
    """
    if any(os.path.exists(os.path.join(rm_path, f)) for f in ("tokenizer.json", "tokenizer_config.json")):
        own = model_utils.load_tokenizer(rm_path)
        if own.get_vocab() != tokenizer.get_vocab():
            raise ValueError(f"reward_model.model.path={rm_path!r} has its own tokenizer, different from the policy's; "
                             "the reward model must share the policy tokenizer (re-tokenizing, verl's "
                             "input_tokenizer, is not supported)")
    if vocab_size < len(tokenizer):
        raise ValueError(f"reward_model.model.path={rm_path!r} has vocab_size={vocab_size}, smaller than the policy "
                         f"tokenizer's {len(tokenizer)} tokens")


class RewardModelWorker(_ModelWorkerBase):
    """Learned reward-model worker (frozen; FSDP-sharded like the critic on multi-GPU).

    Args:
        config: the `reward_model` section.
        policy_model: the policy's `actor_rollout_ref.model` section: its tokenizer (`tokenizer_path`, else
            `path`) is the one the reward model must share.
        trainer_config: the `trainer` section (`device`).

    Raises:
        TypeError: a section that is not its typed dataclass.
    """

    _ckpt_tag = "reward_model"

    def __init__(self, config: RewardModelConfig, policy_model: ModelConfig, trainer_config: TrainerConfig):
        _check_sections("RewardModelWorker", config=(config, RewardModelConfig),
                        policy_model=(policy_model, ModelConfig), trainer_config=(trainer_config, TrainerConfig))
        self.config = config
        self._tokenizer_path = policy_model.tokenizer_path or policy_model.path
        self._device_pref = trainer_config.device
        self.reward_model = None

    def init_model(self) -> None:
        """Load the reward model (eval mode, no gradients) and place or shard it."""
        from verl.workers.reward_model import DataParallelRewardModel

        cfg = self.config
        if not cfg.model.path:
            raise ValueError("reward_model.model.path is null; set it to an HF sequence-classification checkpoint")
        self._setup_device(self._device_pref)
        path = os.path.expanduser(cfg.model.path)
        trust = cfg.model.trust_remote_code
        self.compute_dtype = getattr(torch, resolve_dtype("auto", self.device))
        self.tokenizer = model_utils.load_tokenizer(os.path.expanduser(self._tokenizer_path or path), trust)
        dtype = self.compute_dtype if self.device.type == "cuda" else torch.float32
        module = model_utils.load_reward_model(path, dtype=dtype, trust_remote_code=trust,
                                               attn_implementation=cfg.model.attn_implementation,
                                               override_config=cfg.model.override_config)
        _check_same_tokenizer(path, self.tokenizer, module.config.vocab_size)
        if module.config.pad_token_id is None:  # HF pooling refuses batches > 1 without one
            module.config.pad_token_id = self.tokenizer.pad_token_id
        module.requires_grad_(False)
        module.eval()
        self.module = self._place(module, FSDPConfig(param_offload=cfg.model.fsdp_config.param_offload), False)
        self.reward_model = DataParallelRewardModel(self.module, cfg.micro_batch_size_per_gpu)

    def compute_rm_score(self, data: DataProto) -> DataProto:
        """Adds `rm_scores` (bs, response_length): each trajectory's score on its last model token."""
        if self.reward_model is None:
            raise RuntimeError("compute_rm_score called before init_model")
        with self._autocast():
            scores = self.reward_model.compute_rm_score(self._to_device(data))
        return DataProto.from_dict(tensors={"rm_scores": scores.float().cpu()})
