"""SGLang rollout engine: token ids in, sampled ids and their log-probs out, on SGLang's offline Engine.

`SGLangEngine` wraps `sglang.Engine` (SGLang's Runtime in-process: the tokenizer manager lives here,
the scheduler and model run in child processes) started with `skip_tokenizer_init=True`, so requests
are token ids and answers are token ids. Every `generate` call is one `Engine.async_generate`
request; SGLang's scheduler batches concurrent calls. SGLang needs CUDA (its kernels load
libcuda): there is no CPU build, and `rollout.name=sglang` without the package fails at start-up
naming the engines that are installed.

Threading: `Engine` keeps an event loop of its own (`engine.loop`) and its tokenizer manager binds
to the loop it first runs on. The engine is built in the caller's thread (SGLang installs signal
handlers, which only the main thread may do) and its loop then runs in a background thread; every
SGLang coroutine (generate, weight update, memory release) is scheduled there, so callers may await
`generate` from any event loop and call the rest from plain synchronous code. The weight and memory
calls go to the tokenizer manager's coroutines with SGLang's request types (`io_struct`), as verl's
SGLang rollout does, because the Engine's own blocking wrappers run `loop.run_until_complete` and
cannot be called while the loop runs.

Sampling: temperature, top_p, top_k (-1: off), max_tokens (`max_new_tokens`), stop_token_ids and
seed (`sampling_seed`; SGLang honours it only when started with
`engine_kwargs={"enable_deterministic_inference": True}`). SGLang also ends a request on the model's
own EOS ids (config / generation_config `eos_token_id`); the agent loop puts the tokenizer's EOS in
`stop_token_ids` anyway. SGLang checks the length limit before stop tokens, so a stop token sampled
as the max_tokens-th token comes back as "length"; it is reported as "stop" here (the turn did end),
like the HF engine and the agent loop's handling of vLLM.

Log-probs: SGLang's default, log softmax(logits / T) of each sampled token before top-k/top-p
(greedy: T = 1), i.e. the temperature-scaled policy the trainer recomputes (as the HF engine).
Leave `SGLANG_RETURN_ORIGINAL_LOGPROB` unset: it switches SGLang to pre-temperature log-probs.

Weight sync: `update_weights` casts each tensor to the engine's dtype, moves it to this process's
GPU and sends buckets of `rollout.update_weights_bucket_megabytes` with
`update_weights_from_tensor`; SGLang serialises CUDA tensors as CUDA IPC handles, so the colocated
scheduler reads the trainer's memory directly. Buckets may cut a layer (SGLang's `load_weights` takes
any subset of a checkpoint). The last bucket flushes the prefix cache; requests in flight finish on
the old weights (SGLang's model-update lock).

Memory release (`rollout.free_cache_engine`, on by default on CUDA): the engine starts with
`enable_memory_saver` and `enable_weights_cpu_backup`; `sleep()` is `release_memory_occupation` (weights
backed up to CPU memory, KV cache and CUDA graphs released),
`wake_up(["weights"])` / `wake_up(["kv_cache"])` resume them (`resume_memory_occupation`).

Not run in this repository's CI: SGLang cannot be installed on the CPU machines nor on the lent GPU
machine. `tests/unit/verl/workers/rollout/test_sglang_engine.py` checks this adapter against a
fake of the Engine surface it uses; `tests/gpu/test_sglang_engine_gpu.py` runs the real engine
where SGLang and CUDA exist.
"""
from __future__ import annotations

import asyncio
import atexit
import logging
import threading
import time
import weakref
from types import SimpleNamespace
from typing import Any, Iterable

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

__all__ = ["SGLangEngine", "sglang_engine_args", "sampling_params", "parse_output"]

logger = logging.getLogger(__name__)


def _import_sglang() -> SimpleNamespace:
    """The SGLang pieces this adapter uses; ImportError naming the extra and the installed engines."""
    try:
        from sglang.srt.entrypoints.engine import Engine
        from sglang.srt.managers import io_struct
        from sglang.srt.utils import MultiprocessingSerializer
    except ImportError as exc:
        raise missing_engine_error("sglang", exc) from exc
    return SimpleNamespace(Engine=Engine, io_struct=io_struct, serializer=MultiprocessingSerializer)


def _memory_saver_support() -> tuple[bool, str]:
    """SGLang's memory saver (release/resume occupation) works on CUDA only."""
    if torch.cuda.is_available():
        return True, ""
    return False, "SGLang's release_memory_occupation needs CUDA and no CUDA device is visible"


def sglang_engine_args(model_path: str, config: RolloutConfig, *, dtype: str, seed: int, trust_remote_code: bool,
                       enable_memory_saver: bool) -> dict[str, Any]:
    """`sglang.Engine` (ServerArgs) fields from the rollout section.

    rollout key -> SGLang: dtype -> dtype, seed -> random_seed, tensor_model_parallel_size -> tp_size,
    gpu_memory_utilization -> mem_fraction_static, max_model_len -> context_length, max_num_seqs ->
    max_running_requests, enable_prefix_caching -> not disable_radix_cache, enforce_eager ->
    disable_cuda_graph (null: CUDA graphs on), free_cache_engine -> enable_memory_saver and
    enable_weights_cpu_backup (colocated runs: `release_memory_occupation` keeps a CPU copy of the weights
    and restores all of them on resume, including what the weight sync never re-sends, such as RoPE caches;
    without it those would come back as garbage). `max_num_batched_tokens` and
    `logprobs_mode` are vLLM's and not read here.
    """
    return dict(
        model_path=str(model_path),
        dtype=dtype,
        random_seed=int(seed),
        tp_size=int(config.tensor_model_parallel_size),
        mem_fraction_static=float(config.gpu_memory_utilization),
        context_length=int(config.max_model_len),
        max_running_requests=int(config.max_num_seqs),
        disable_radix_cache=not config.enable_prefix_caching,
        disable_cuda_graph=bool(config.enforce_eager),
        enable_memory_saver=bool(enable_memory_saver),
        enable_weights_cpu_backup=bool(enable_memory_saver),
        skip_tokenizer_init=True,
        trust_remote_code=bool(trust_remote_code),
        log_level="error",
    )


def sampling_params(sampling: SamplingParams) -> dict[str, Any]:
    """SGLang's per-request `sampling_params` dict for our `SamplingParams`."""
    params: dict[str, Any] = {
        "max_new_tokens": int(sampling.max_tokens),
        "temperature": float(sampling.temperature),  # 0: SGLang switches to top_k=1 (greedy)
        "top_p": float(sampling.top_p),
        "top_k": int(sampling.top_k) if sampling.top_k and sampling.top_k > 0 else -1,
        "stop_token_ids": [int(t) for t in sampling.stop_token_ids],
        "no_stop_trim": True,       # keep the stop token in the output (our contract)
        "skip_special_tokens": False,
    }
    if sampling.seed is not None:
        params["sampling_seed"] = int(sampling.seed)
    return params


def parse_output(out: dict, sampling: SamplingParams) -> GenerationOutput:
    """Our `GenerationOutput` from one `async_generate` answer (`return_logprob=True`).

    Raises:
        RuntimeError: the request was aborted, or ids and log-probs disagree.
    """
    meta = out["meta_info"]
    finish = meta.get("finish_reason") or {}
    kind = finish.get("type") if isinstance(finish, dict) else str(finish)
    if kind not in ("stop", "length"):
        message = finish.get("message", "") if isinstance(finish, dict) else ""
        raise RuntimeError(
            f"SGLang request {meta.get('id', '?')} ended with finish_reason={finish!r} {message}".strip()
        )
    logprobs = meta["output_token_logprobs"]  # [(logprob, token_id, text or None)] per generated token
    token_ids = [int(entry[1]) for entry in logprobs]
    output_ids = out.get("output_ids")
    if output_ids is not None and [int(t) for t in output_ids] != token_ids:
        raise RuntimeError(f"SGLang returned output_ids {list(output_ids)[:8]}... that differ from the ids of its "
                           f"log-probs {token_ids[:8]}...")
    stopped = kind == "stop" or (token_ids and token_ids[-1] in sampling.stop_token_ids)
    return GenerationOutput(token_ids=token_ids, log_probs=[float(entry[0]) for entry in logprobs],
                            finish_reason="stop" if stopped else "length",
                            extra={"matched": finish.get("matched") if isinstance(finish, dict) else None})


@register_engine("sglang")
class SGLangEngine(RolloutEngine):
    """Token-in/token-out engine around SGLang's offline `Engine` (continuous batching, CUDA).

    Args:
        model_path: HF model directory (actor_rollout_ref.model.path).
        config: the rollout section; reads the keys listed in `sglang_engine_args`, plus `seed`, `dtype`,
            `update_weights_bucket_megabytes`.
        dtype: weights dtype (default: `base.engine_dtype`, `rollout.dtype` on GPU).
        trust_remote_code: as `actor_rollout_ref.model.trust_remote_code`.
        engine_kwargs: extra `sglang.Engine` (ServerArgs) fields, passed through unchanged.

    Raises:
        ImportError: SGLang is not installed (the message names the installed engines).
        ValueError: `free_cache_engine=true` without CUDA.
    """

    def __init__(self, model_path: str, config: Any = None, *, dtype: str | torch.dtype | None = None,
                 trust_remote_code: bool = False, engine_kwargs: dict | None = None):
        if not model_path:
            raise ValueError("SGLangEngine needs model_path (actor_rollout_ref.model.path)")
        self._closed = False
        self._engine = None
        self._thread: threading.Thread | None = None
        self._sgl = _import_sglang()
        config = as_section(RolloutConfig, config, "actor_rollout_ref.rollout")
        self.device = (
            torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
        )
        self.free_cache = resolve_free_cache_engine(config.free_cache_engine, *_memory_saver_support())
        dtype_name = engine_dtype(dtype, config.dtype, self.device)
        self.weights_dtype = getattr(torch, dtype_name)
        self.bucket_bytes = int(config.update_weights_bucket_megabytes) << 20
        kwargs = sglang_engine_args(model_path, config, dtype=dtype_name, seed=config.seed,
                                    trust_remote_code=trust_remote_code, enable_memory_saver=self.free_cache)
        kwargs.update(engine_kwargs or {})
        self.engine_kwargs = kwargs
        self._tp = int(kwargs["tp_size"])
        self._cuda_graph = not kwargs["disable_cuda_graph"]
        self.stats = {"requests": 0, "generated_tokens": 0, "weight_updates": 0, "start_s": 0.0,
                      "last_sync_bytes": 0, "last_sync_buckets": 0}
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("SGLangEngine must be built outside a running event loop (sglang.Engine adopts it)")
        t0 = time.perf_counter()
        self._engine = self._sgl.Engine(**kwargs)
        loop = self._engine.loop
        self._thread = threading.Thread(target=loop.run_forever, name="sglang-engine-loop", daemon=True)
        self._thread.start()
        self.stats["start_s"] = time.perf_counter() - t0
        logger.info("SGLangEngine: %s up in %.1f s (dtype=%s, tp=%d)", model_path, self.stats["start_s"], dtype_name,
                    self._tp)
        atexit.register(_shutdown_ref, weakref.ref(self))

    # ------------------------------------------------------------------ public API
    async def _generate_ids(self, prompt_ids: list[int], sampling: SamplingParams) -> GenerationOutput:
        """Sample a continuation of `prompt_ids`; concurrent calls are batched by SGLang."""
        coro = self._engine.async_generate(input_ids=prompt_ids,
                                           sampling_params=sampling_params(sampling), return_logprob=True)
        out = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._engine.loop))
        gen = parse_output(out, sampling)
        self.stats["requests"] += 1
        self.stats["generated_tokens"] += len(gen.token_ids)
        return gen

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Load new weights (HF names) bucket by bucket; the last bucket flushes the prefix cache.

        One bucket is held back until the next is full, so the last one is known when it is sent:
        at most two buckets of converted weights exist at once.

        Raises:
            RuntimeError: SGLang refused a bucket (its message names the tensor), or the engine's
                weights are asleep (`wake_up(["weights"])` first).
        """
        if self._closed:
            raise RuntimeError("SGLangEngine.update_weights called after shutdown()")
        if "weights" in self._released:
            raise RuntimeError("SGLangEngine.update_weights on a sleeping engine: call wake_up(['weights']) first")
        self.stats["last_sync_bytes"] = self.stats["last_sync_buckets"] = 0
        held = None
        for bucket in iter_weight_buckets(named_tensors, self.bucket_bytes, self.weights_dtype):
            if held is not None:
                self._send_bucket(held, last=False)
            held = bucket
        if held is not None:
            self._send_bucket(held, last=True)
        self.stats["weight_updates"] += 1

    def _send_bucket(self, bucket: list[tuple[str, torch.Tensor]], last: bool) -> None:
        # CUDA tensors travel as CUDA IPC handles (one payload per TP rank, each rank maps its own).
        bucket = [(name, t.to(self.device)) for name, t in bucket]
        payload = [self._sgl.serializer.serialize(bucket) for _ in range(self._tp)]
        # A released KV cache is flushed when it wakes (`_resume_memory`).
        req = self._sgl.io_struct.UpdateWeightsFromTensorReqInput(
            serialized_named_tensors=payload, load_format=None, flush_cache=last and not self._released)
        result = self._call(self._engine.tokenizer_manager.update_weights_from_tensor(req, None))
        success, message = (result[0], result[1]) if isinstance(result, tuple) else (bool(result), "")
        if not success:
            raise RuntimeError(f"SGLang refused the weight update: {message}")
        self.stats["last_sync_buckets"] += 1
        self.stats["last_sync_bytes"] += sum(t.numel() * t.element_size() for _, t in bucket)

    def shutdown(self) -> None:
        """Stop SGLang's processes and the loop thread; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        engine, thread = self._engine, self._thread
        if engine is not None:
            loop = engine.loop
            if loop.is_running():
                loop.call_soon_threadsafe(loop.stop)
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=30)
            try:
                engine.shutdown()
            except Exception:  # best effort: the processes may already be gone
                logger.exception("SGLangEngine: error while shutting down SGLang")

    # ------------------------------------------------------------------ memory release
    def _release_memory(self) -> None:
        req = self._sgl.io_struct.ReleaseMemoryOccupationReqInput(tags=None)  # weights, KV cache, CUDA graphs
        self._call(self._engine.tokenizer_manager.release_memory_occupation(req, None))

    def _resume_memory(self, tags: list[str]) -> None:
        sgl_tags = []
        for tag in tags:
            sgl_tags.append(tag)
            if tag == "kv_cache" and self._cuda_graph:
                sgl_tags.append("cuda_graph")
        req = self._sgl.io_struct.ResumeMemoryOccupationReqInput(tags=sgl_tags)
        self._call(self._engine.tokenizer_manager.resume_memory_occupation(req, None))
        if "kv_cache" in tags:
            self._flush_cache()

    # ------------------------------------------------------------------ helpers
    def _flush_cache(self) -> None:
        self._call(self._engine.tokenizer_manager.flush_cache())

    def _call(self, coro, timeout: float | None = None):
        """Run `coro` on the engine's loop from synchronous code and return its result."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("SGLangEngine: blocking call made from the engine's own event loop")
        return asyncio.run_coroutine_threadsafe(coro, self._engine.loop).result(timeout=timeout)


def _shutdown_ref(ref) -> None:
    engine = ref()
    if engine is not None:
        engine.shutdown()
