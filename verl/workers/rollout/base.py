"""The rollout engine contract: token ids in, token ids (and their log-probs) out.

Every engine (HF transformers on CPU/GPU, vLLM) implements `RolloutEngine`; the one multi-turn
agent loop (`agent_loop.py`) talks only to this interface, so the ids it trains on are exactly the
ids the engine sampled. Engines register under the `actor_rollout_ref.rollout.name` value
(`hf`, `vllm`) with `register_engine`, and are looked up with `get_engine_cls`.

Construction convention (all engines): `get_engine_cls(name)(model_path, config, **kwargs)` where
`config` is the `actor_rollout_ref.rollout` section (`RolloutConfig`; a mapping of its keys is loaded
into one with `schema.as_section`, so defaults come from the dataclass, never from the engine). `HFEngine` also accepts `model=`
(an already built transformers module) and `device=`.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Iterable

import torch

from verl.agent_trainer.config.schema import ModelConfig, RolloutConfig, as_section
from verl.utils.registry import Registry

__all__ = [
    "SamplingParams",
    "GenerationOutput",
    "RolloutEngine",
    "register_engine",
    "get_engine_cls",
    "build_rollout_engine",
    "engine_dtype",
    "ENGINES",
]


@dataclass(frozen=True)
class SamplingParams:
    """Per-request sampling settings (the rollout section of the config)."""

    max_tokens: int = 512          # new tokens per turn (rollout.max_tokens)
    temperature: float = 1.0       # 0 means greedy
    top_p: float = 1.0
    top_k: int = -1                # -1: disabled
    stop_token_ids: tuple[int, ...] = ()  # generation ends after emitting one of these (kept in output)
    seed: int | None = None

    def __post_init__(self):
        if self.max_tokens < 1:
            raise ValueError(f"actor_rollout_ref.rollout.max_tokens must be >= 1, got {self.max_tokens}")
        if self.temperature < 0:
            raise ValueError(f"actor_rollout_ref.rollout.temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"actor_rollout_ref.rollout.top_p must be in (0, 1], got {self.top_p}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass
class GenerationOutput:
    """What the engine sampled for one request.

    token_ids: the sampled ids, including the stop token when one was produced.
    log_probs: log pi(token | prefix) of each sampled id under the sampling distribution of the
        engine's current weights (same length as token_ids).
    finish_reason: "stop" (a stop token was produced) or "length" (max_tokens reached).
    """

    token_ids: list[int]
    log_probs: list[float]
    finish_reason: str
    extra: dict = field(default_factory=dict)


class RolloutEngine(abc.ABC):
    """Token-in/token-out generation engine used by the agent loop.

    `generate` is a coroutine so that many trajectories can wait on the engine while environment
    calls for others run; engines batch concurrent requests internally.
    """

    @abc.abstractmethod
    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> GenerationOutput:
        """Sample a continuation of `prompt_ids`."""

    @abc.abstractmethod
    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Load new policy weights (HF parameter names) into the engine."""

    def shutdown(self) -> None:
        """Release engine resources; safe to call twice."""


# Built-ins are lazy "module:Class" targets: vLLM is imported only when asked for, so a CPU install never
# needs it; each engine module registers its class over its own target when imported.
ENGINES = Registry("rollout engine", "actor_rollout_ref.rollout.name", {
    "hf": "verl.workers.rollout.hf_rollout:HFEngine",
    "vllm": "verl.workers.rollout.agent_vllm_rollout.vllm_rollout:VLLMEngine",
})


def register_engine(name: str):
    """Class decorator registering a rollout engine under `actor_rollout_ref.rollout.name`."""
    return ENGINES.register(name)


def get_engine_cls(name: str):
    """Return the engine class registered as `name` (imports the built-ins lazily)."""
    return ENGINES.get(name)


def engine_dtype(dtype, rollout_dtype: str, device) -> str:
    """The engine's weights dtype: `dtype` when given, else float32 on CPU (the actor's precision
    there) and `rollout.dtype` on GPU; one name from `verl.utils.device.resolve_dtype`."""
    from verl.utils.device import resolve_dtype

    if dtype is None:
        dtype = None if str(getattr(device, "type", device)) == "cpu" else rollout_dtype
    return resolve_dtype(dtype, device)


def build_rollout_engine(model_path: str, rollout_cfg, device: torch.device,
                         model_cfg: ModelConfig | None = None) -> RolloutEngine:
    """Build the engine named by `rollout_cfg.name` (`auto`: vllm on CUDA, else hf) for `model_path`.

    Engines follow this module's convention `cls(model_path, rollout_config, **kwargs)`. The HF engine
    builds its model as the actor does (`model_cfg`: trust_remote_code, attn_implementation,
    override_config) on `device`; vLLM gets trust_remote_code and override_config (as its
    `hf_overrides`) and picks its own attention kernels. Shared by the actor worker and `main_generation`.
    """
    rollout_cfg = as_section(RolloutConfig, rollout_cfg, "actor_rollout_ref.rollout")
    name = rollout_cfg.name
    if name == "auto":
        name = "vllm" if device.type == "cuda" else "hf"
    model_cfg = model_cfg or ModelConfig(path=model_path)
    override = dict(model_cfg.override_config)
    kwargs: dict = {"trust_remote_code": model_cfg.trust_remote_code}
    if name == "hf":
        kwargs.update(device=str(device), attn_implementation=model_cfg.attn_implementation, override_config=override)
    elif name == "vllm" and override:
        kwargs["engine_kwargs"] = {"hf_overrides": override}
    return get_engine_cls(name)(model_path, rollout_cfg, **kwargs)
