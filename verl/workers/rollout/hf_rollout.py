"""HF transformers rollout engine: batched KV-cache sampling on CPU or GPU, exact ids and log-probs.

Concurrent `generate` calls are queued; one background thread takes what is queued (up to
`max_batch_size` rows and the KV budget) as a batch and runs a manual sampling loop with a KV cache
over it. A request that finishes (stop token, stop rule or max_tokens) is resolved at once and leaves
the batch, so its trajectory can step its environment while the rest keep generating; requests that
arrive while a batch runs are prefilled and join it at the next decode step (continuous batching).

Log-probs: for each sampled token we return log softmax(logits / T) at that position (T = the
request's temperature; T = 1 for greedy requests), i.e. the temperature-scaled policy the trainer
recomputes (verl divides the actor logits by the rollout temperature). With top_p = 1 and
top_k = -1 (the training defaults) this is exactly the distribution sampled from; when top-k/top-p
truncate, sampling uses the renormalised truncated distribution while the reported log-prob stays
the untruncated temperature-scaled one (vLLM's convention as well).

KV memory (`kv_slots.py`): every live request holds one row of a preallocated per-layer KV buffer;
a decode step writes one column per row and attention reads views of the live rows (a 4-D mask hides
each row's unused columns), a finished row is replaced by the last live one, and joiners are
prefilled into new rows, so no step copies the whole cache. Rows are bounded by `max_batch_size` and
a KV budget in tokens (`kv_budget_tokens`), not by a fixed row count.

Prefix KV reuse: after a request, the KV of its sequence (prompt + generated ids the row holds) goes
to a `PrefixStore` sized in tokens (`rollout.prefix_cache_tokens`; null: whatever the KV budget
leaves beside the live rows); a later request whose prompt starts with that sequence (the same
trajectory's next turn) only prefills its new tokens. `update_weights` clears it. The share of
context tokens not prefilled is `stats["reused_tokens"] / (reused + prefill)`: the agent loop
reports it as `rollout/prefix_reuse`.

Stop rules: `SamplingParams.stop_rule` (e.g. `stop_rules.ActionEnd`, built by the agent loop with the
tokenizer) is fed each sampled id; when it fires the request ends with finish_reason "stop" and
that id is its last (nothing after the action's end is generated).

Memory release (`rollout.free_cache_engine`, on by default on CUDA): `sleep()` moves the engine's
copy of the weights to host memory and drops the prefix store and the KV rows, then returns the cached blocks to
the driver (`torch.cuda.empty_cache`); `wake_up(["weights"])` moves the weights back. On CPU there
is no device memory to release, so `free_cache_engine=true` fails at start-up there.

Reproducibility: each request samples with its own `torch.Generator`, seeded with
`SamplingParams.seed` (or engine seed + request counter when None): its uniforms are drawn when it
is admitted, and inverse-CDF sampling over the vocabulary in id order (top-k/top-p only zero
entries) turns the t-th uniform into the t-th token, so a request's tokens do not depend on which
other requests share its batch.

Speed: a decode step is one model call plus a few batched tensor ops, and the host waits on the
device once per step (the step's ids and log-probs). On CUDA the next model call is queued before
that wait, so host bookkeeping overlaps the GPU (see `_generate_batch`).
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import inspect
import itertools
import logging
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import torch
import torch.nn.functional as F

from verl.config.device import resolve_device
from verl.config.schema import RolloutConfig, as_section
from verl.utils import model_utils
from verl.workers.rollout.base import (
    GenerationOutput,
    RolloutEngine,
    SamplingParams,
    engine_dtype,
    register_engine,
    resolve_free_cache_engine,
)
from verl.workers.rollout.kv_slots import PrefixStore, SlotKV

__all__ = ["HFEngine"]

logger = logging.getLogger(__name__)


@dataclass
class _Request:
    prompt_ids: list[int]
    sampling: SamplingParams
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop
    seed: int


@register_engine("hf")
class HFEngine(RolloutEngine):
    """Token-in/token-out engine around a transformers causal LM.

    Args:
        model_path: HF model directory (loaded with AutoModelForCausalLM); or pass `model`.
        config: the `actor_rollout_ref.rollout` section (`RolloutConfig` or a mapping of its keys;
            reads `dtype`, `seed`, `max_num_seqs`, `free_cache_engine`); optional (the dataclass's defaults).
        model: an already built causal LM (copied by reference; the engine switches it to eval mode).
        device: "cpu", "cuda", ... (default: cuda when available, else cpu).
        dtype: torch dtype or name; default float32 on CPU, config dtype (bfloat16) on GPU.
        max_batch_size: most requests generated together (default `config.max_num_seqs`); the KV
            budget bounds them too (see `kv_budget_tokens`).
        seed: base seed for requests that carry none (default `config.seed`, else 0).
        attn_implementation, override_config: as `actor_rollout_ref.model.*` (the engine's copy of
            the policy is built like the actor's).
        num_threads: torch intra-op threads of the engine's worker thread (a per-thread setting) while the
            process computes beside it (`sharing_cores`: the worker's log-prob passes and updates).
            Default on CPU: 1 for models under 50M parameters (their ops gain little from more threads,
            and two pools of OpenMP threads spinning on a 2-core machine slowed generation 30x), else
            torch's default.
        solo_threads: the engine thread's threads while nothing else in the process computes (a
            validation, a rollout the update does not overlap, the end of one it does). Default on CPU when
            `num_threads` defaulted to 1: the process's torch threads (the worker's share of the cores; the
            shipped policy's greedy rollouts ran 1.5x faster on two than on one); else `num_threads`.
        prefix_cache_tokens: tokens of finished turns' KV kept for reuse (0 disables; default
            `config.prefix_cache_tokens`, whose null means: whatever the KV budget leaves free).
        kv_budget_tokens: KV tokens the engine may hold, live rows and stored prefixes together
            (default from `config.kv_cache_space_gb`, else a quarter of host memory on CPU and
            `gpu_memory_utilization` of the device less what is allocated on CUDA). Requests wait
            while the live rows' tokens plus what they may still generate exceed it.
        join_min_frac: queued requests join a running batch once at least this fraction of its
            size is waiting (0, the default: at the next decode step; large values: never join).
    """

    bans_tokens = True  # SamplingParams.banned_token_ids: -inf logits per row (`_Rows.ban`)
    bans_sequences = True  # SamplingParams.token_rule: the row's `_Rows.ban` recomputed after each token
    stops_on_rules = True  # SamplingParams.stop_rule: fed each sampled id (`_finish_reason`)

    def __init__(
        self,
        model_path: str | None = None,
        config: Any = None,
        *,
        model: torch.nn.Module | None = None,
        device: str | None = None,
        dtype: torch.dtype | str | None = None,
        max_batch_size: int | None = None,
        seed: int | None = None,
        trust_remote_code: bool = False,
        attn_implementation: str | None = None,
        override_config: dict | None = None,
        num_threads: int | None = None,
        solo_threads: int | None = None,
        prefix_cache_tokens: int | None = None,
        kv_budget_tokens: int | None = None,
        join_min_frac: float = 0.0,
    ):
        if model is None and model_path is None:
            raise ValueError("HFEngine needs model_path (actor_rollout_ref.model.path) or a model object")
        config = as_section(RolloutConfig, config, "actor_rollout_ref.rollout")
        self.device = torch.device(resolve_device(device))
        self.free_cache = resolve_free_cache_engine(
            config.free_cache_engine, self.device.type == "cuda",
            f"the HF engine on {self.device.type} shares host memory with the actor, "
            "there is no device memory to release")
        dtype = getattr(torch, engine_dtype(dtype, config.dtype, self.device))
        if model is None:
            model = model_utils.load_causal_lm(model_path, dtype, trust_remote_code=trust_remote_code,
                                               attn_implementation=attn_implementation,
                                               override_config=override_config)
        self.model = model.to(device=self.device, dtype=dtype).eval()
        if getattr(self.model.config, "_attn_implementation", "sdpa") not in ("sdpa", "eager"):
            # the slot cache hands attention a 4-D mask, which flash-attention kernels do not take
            self.model.set_attn_implementation("sdpa")
        # transformers 5.2x renamed the cache argument and output field (`past_key_values` -> `cache`)
        forward_args = inspect.signature(self.model.forward).parameters
        self._cache_kw = "cache" if "cache" in forward_args else "past_key_values"
        self._keep_last = "logits_to_keep" in forward_args
        self._lookahead = self.device.type == "cuda"  # queue step t+1 before reading step t (see _generate_batch)
        self.max_batch_size = int(max_batch_size or config.max_num_seqs)
        self.seed = int(seed if seed is not None else config.seed)
        self._counter = itertools.count()
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._backlog: collections.deque[_Request] = collections.deque()  # taken from the queue, not yet admitted
        self._weights_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False
        if num_threads is None and self.device.type == "cpu":
            if sum(p.numel() for p in self.model.parameters()) < 50_000_000:
                num_threads = 1
                solo_threads = solo_threads or max(1, torch.get_num_threads())
        self.num_threads = num_threads
        self.solo_threads = solo_threads or num_threads
        self._sharing = 0  # `sharing_cores` contexts held now
        self._sharing_lock = threading.Lock()
        self._threads_set: int | None = None  # what the engine thread last gave torch.set_num_threads
        self.join_min_frac = float(join_min_frac)
        cfg = self.model.config
        self.max_positions = getattr(cfg, "max_position_embeddings", None)
        heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        self._kv = SlotKV(cfg.num_hidden_layers, heads, head_dim, dtype, self.device)
        self.kv_bytes_per_token = 2 * cfg.num_hidden_layers * heads * head_dim * self._kv.keys[0].element_size()
        self._kv_budget = int(kv_budget_tokens if kv_budget_tokens is not None
                              else self._default_kv_budget(config) // self.kv_bytes_per_token)
        self._reserved = 0  # the live rows' max_tokens, counted in full beside their KV (a conservative admission)
        if prefix_cache_tokens is None:
            prefix_cache_tokens = (config.prefix_cache_tokens if config.prefix_cache_tokens is not None
                                   else self._kv_budget)
        self._prefix = PrefixStore(prefix_cache_tokens)
        self.prefill_tokens = int(config.max_num_batched_tokens)  # padded tokens per prefill forward
        # decode_steps: model calls that each give every row of the batch one token (so generated_tokens /
        # decode_steps is the mean batch); busy_s: time the engine thread spent generating (prefills included)
        self.stats = {"batches": 0, "requests": 0, "generated_tokens": 0, "max_batch": 0,
                      "prefill_tokens": 0, "reused_tokens": 0, "joined": 0, "decode_steps": 0, "busy_s": 0.0}

    def _default_kv_budget(self, config: RolloutConfig) -> int:
        """Bytes of KV the engine may hold (see `kv_budget_tokens`)."""
        if config.kv_cache_space_gb is not None:
            return int(config.kv_cache_space_gb * 2**30)
        if self.device.type == "cuda":
            total = torch.cuda.get_device_properties(self.device).total_memory
            return max(int(config.gpu_memory_utilization * total) - torch.cuda.memory_allocated(self.device), 2**28)
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4

    # ------------------------------------------------------------------ public API
    async def _generate_ids(self, prompt_ids: list[int], sampling: SamplingParams) -> GenerationOutput:
        """Queue one request and wait for its result (batched with concurrent requests)."""
        self._ensure_thread()
        loop = asyncio.get_running_loop()
        seed = sampling.seed if sampling.seed is not None else self.seed * 1_000_003 + next(self._counter)
        fut = loop.create_future()
        self._queue.put(_Request(prompt_ids, sampling, fut, loop, int(seed)))
        return await fut

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Copy new weights (HF parameter/buffer names) into the model; waits for a running batch."""
        params = self.model.state_dict(keep_vars=True)  # includes tied aliases such as lm_head.weight
        unknown, loaded = [], 0
        with self._weights_lock, torch.no_grad():
            self._prefix.clear()  # cached KV belongs to the old weights
            for name, tensor in named_tensors:
                target = params.get(name)
                if target is None:
                    unknown.append(name)
                    continue
                if tuple(target.shape) != tuple(tensor.shape):
                    raise ValueError(f"update_weights: {name} has shape {tuple(tensor.shape)}, "
                                     f"engine expects {tuple(target.shape)}")
                target.copy_(tensor.detach().to(device=target.device, dtype=target.dtype))
                loaded += 1
        if unknown:
            raise KeyError(f"update_weights: {len(unknown)} names are not parameters of the engine model, "
                           f"e.g. {unknown[:5]}")
        logger.debug("HFEngine loaded %d tensors", loaded)

    def _release_memory(self) -> None:
        with self._weights_lock:  # waits for a running batch
            self._prefix.clear()
            self._kv.free()
            self.model.to("cpu")
            torch.cuda.empty_cache()

    def _resume_memory(self, tags: list[str]) -> None:
        if "weights" in tags:
            with self._weights_lock:
                self.model.to(self.device)

    def shutdown(self) -> None:
        """Stop the worker thread (pending requests get an error); safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout=30)

    # ------------------------------------------------------------------ worker thread
    def _ensure_thread(self) -> None:
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._worker, name="hf-engine", daemon=True)
                self._thread.start()

    @contextlib.contextmanager
    def sharing_cores(self):
        """While held, the engine thread uses `num_threads` instead of `solo_threads` (from its next model call)."""
        with self._sharing_lock:
            self._sharing += 1
        try:
            yield
        finally:
            with self._sharing_lock:
                self._sharing -= 1

    def _set_threads(self) -> None:
        """Engine thread: `num_threads` while the process computes beside it, else `solo_threads`."""
        wanted = self.num_threads if self._sharing else self.solo_threads
        if wanted and wanted != self._threads_set:
            torch.set_num_threads(wanted)  # applies to this thread only
            self._threads_set = wanted

    def _worker(self) -> None:
        self._set_threads()
        while True:
            first = self._backlog.popleft() if self._backlog else self._queue.get()
            if first is None:
                self._fail_pending(RuntimeError("HFEngine was shut down"))
                return
            self._backlog.appendleft(first)
            batch = self._take_waiting(0)
            if batch:
                try:
                    with self._weights_lock:
                        self._generate_batch(batch, _emit)
                except Exception as exc:  # report to every caller; the engine keeps serving
                    logger.exception("HFEngine batch of %d failed", len(batch))
                    for req in batch:
                        _post(req, _set_exception, exc)

    def _fail_pending(self, exc: Exception) -> None:
        while self._backlog:
            _post(self._backlog.popleft(), _set_exception, exc)
        while True:
            try:
                req = self._queue.get_nowait()
            except queue.Empty:
                return
            if req is not None:
                _post(req, _set_exception, exc)

    def _take_waiting(self, live: int) -> list[_Request]:
        """Non-blocking: the queued requests that fit beside `live` rows, in arrival order: at most
        `max_batch_size` rows, and the KV budget (the live rows' tokens plus what every admitted request may
        still generate; one request is always admitted when nothing is live). A request that does not fit
        waits at the head of the line; a shutdown sentinel is put back."""
        taken: list[_Request] = []
        used = self._kv.used_tokens() + self._reserved
        while live + len(taken) < self.max_batch_size:
            if self._backlog:
                req = self._backlog.popleft()
            else:
                try:
                    req = self._queue.get_nowait()
                except queue.Empty:
                    break
            if req is None:
                self._queue.put(None)
                break
            if req.future.cancelled():
                continue
            need = len(req.prompt_ids) + req.sampling.max_tokens
            if (live or taken) and used + need > self._kv_budget:
                self._backlog.appendleft(req)
                break
            used += need
            taken.append(req)
        return taken

    def waiting(self) -> int:
        """Requests queued and not yet admitted."""
        return len(self._backlog) + self._queue.qsize()

    def _forward(self, input_ids: torch.Tensor, mask: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        """One model call over the rows `SlotKV` was set up for; returns next-token logits (rows, vocab) float32.

        Only the last position's logits are computed when the model supports `logits_to_keep` (a
        prefill would otherwise build (rows, len, vocab) logits it never reads)."""
        self._set_threads()
        kwargs = {self._cache_kw: self._kv, "use_cache": True}
        if self._keep_last:
            kwargs["logits_to_keep"] = 1
        out = self.model(input_ids=input_ids, attention_mask=mask, position_ids=position_ids, **kwargs)
        return out.logits[:, -1, :].float()

    def _prefill(self, reqs: list[_Request], base: int) -> "_Rows":
        """Give `reqs` the next live rows (reused prefixes copied in) and forward their new tokens, in
        chunks of at most `max_num_batched_tokens` padded tokens; returns their rows (indices from `base`)."""
        kv, dev = self._kv, self.device
        hits = [self._prefix.lookup(r.prompt_ids) for r in reqs]  # (cached_len, kv or None)
        kv.reserve(kv.n + len(reqs), max(len(r.prompt_ids) for r in reqs) + 1)
        first = kv.n
        for (cached, prefix) in hits:
            kv.add_row(prefix, cached)
        suffix = [r.prompt_ids[c:] for r, (c, _) in zip(reqs, hits, strict=True)]
        logits = []
        i = 0
        while i < len(reqs):  # chunks of rows with similar suffix lengths would pad less; arrival order is kept
            j, width = i, 0
            while j < len(reqs) and (j == i or max(width, len(suffix[j])) * (j - i + 1) <= self.prefill_tokens):
                width = max(width, len(suffix[j]))
                j += 1
            input_ids = torch.zeros((j - i, width), dtype=torch.long)
            for row, suf in enumerate(suffix[i:j]):
                input_ids[row, width - len(suf):] = torch.tensor(suf)
            position_ids, mask = kv.begin_prefill(first + i, [len(x) for x in suffix[i:j]], width)
            logits.append(self._forward(input_ids.to(dev), mask, position_ids))
            i = j
        self.stats["prefill_tokens"] += sum(len(x) for x in suffix)
        self.stats["reused_tokens"] += sum(c for c, _ in hits)
        self.stats["requests"] += len(reqs)
        return _Rows.start(reqs, base, torch.cat(logits), dev)

    def _store_prefix(self, ids: list[int], row: int) -> None:
        """Keep what row `row` holds (`ids`' first len tokens) for the next turn, within the KV budget."""
        if self._prefix.max_tokens <= 0:
            return
        held = self._kv.lens[row]
        self._prefix.store(ids[:held], self._kv.row_kv(row))
        # finished turns give way to live rows
        self._prefix.shrink(max(self._kv_budget - self._kv.used_tokens() - self._reserved, 0))

    @torch.no_grad()
    def _generate_batch(self, reqs: list[_Request], emit: Callable[[_Request, GenerationOutput], None]) -> None:
        """Generate for `reqs` together. A finished request is emitted and leaves the batch at once;
        requests queued meanwhile join it at the next decode step (continuous batching).

        Every live request holds a row of the preallocated `SlotKV`: a decode step writes one column
        per row, a finished row is replaced by the last one, and joiners are prefilled into new rows,
        so no step copies the whole cache. A decode step waits on the device once, for the step's ids
        and log-probs; on CUDA the next forward is queued before that wait (`_lookahead`), so the GPU
        runs it while the host reads the ids, emits finished requests and admits new ones; a row that
        finished wasted that one step."""
        self.stats["batches"] += 1  # `reqs` grows with joiners (the caller fails them all if this raises)
        mark = time.perf_counter()
        self._reserved = sum(r.sampling.max_tokens for r in reqs)
        batch = self._prefill(reqs, 0)
        out_ids: list[list[int]] = [[] for _ in reqs]
        out_lp: list[list[float]] = [[] for _ in reqs]
        try:
            while batch.rows:
                self.stats["max_batch"] = max(self.stats["max_batch"], len(batch.rows))
                self.stats["decode_steps"] += 1
                toks, lp = batch.sample()
                pending = _to_host(toks, lp)
                if self._lookahead:
                    self._decode(batch, toks)
                toks_l, lp_l = pending()
                finished = []
                for pos, r in enumerate(batch.rows):
                    tok = int(toks_l[pos])
                    out_ids[r].append(tok)
                    out_lp[r].append(lp_l[pos])
                    req = reqs[r]
                    finish = _finish_reason(req, tok, len(out_ids[r]))
                    if not finish:
                        continue
                    finished.append(pos)
                    self._reserved -= req.sampling.max_tokens
                    self.stats["generated_tokens"] += len(out_ids[r])
                    self._store_prefix(req.prompt_ids + out_ids[r], pos)
                    emit(req, GenerationOutput(token_ids=out_ids[r], log_probs=out_lp[r], finish_reason=finish,
                                               extra={"batch_size": len(batch.rows)}))
                if finished:  # the last live rows move into the finished rows' places
                    toks = batch.reorder(self._kv.release(finished), reqs, toks)
                for pos, r in enumerate(batch.rows):  # bans that follow the tokens sampled so far
                    rule = reqs[r].sampling.token_rule
                    if rule is not None:
                        batch.ban[pos] = rule.ban_mask(out_ids[r], batch.ban.shape[-1]).to(batch.ban.device)
                if batch.rows and not self._lookahead:
                    self._decode(batch, toks)
                waiting = self.waiting()
                if waiting and (not batch.rows or waiting >= self.join_min_frac * len(batch.rows)):
                    joiners = self._take_waiting(len(batch.rows))
                    if joiners:
                        self.stats["joined"] += len(joiners) if batch.rows else 0
                        self._reserved += sum(j.sampling.max_tokens for j in joiners)
                        new = self._prefill(joiners, len(reqs))
                        reqs.extend(joiners)
                        out_ids.extend([] for _ in joiners)
                        out_lp.extend([] for _ in joiners)
                        batch = batch.merge(new, reqs) if batch.rows else new
                now = time.perf_counter()  # counted per step: a rollout can end while its batch still runs
                self.stats["busy_s"] += now - mark
                mark = now
        finally:
            self._kv.release(list(range(self._kv.n)))  # a failed batch leaves no rows behind
            self._reserved = 0

    def _decode(self, batch: "_Rows", toks: torch.Tensor) -> None:
        """Feed `toks` (rows,) to every live row: each row's KV grows by one column, logits move on."""
        position_ids, mask = self._kv.begin_decode()
        batch.logits = self._forward(toks.unsqueeze(-1), mask, position_ids)


def _finish_reason(req: _Request, tok: int, n_out: int) -> str:
    """"stop" (a stop token, or the request's stop rule fires on `tok`), "length", or "" (go on)."""
    sp = req.sampling
    if tok in sp.stop_token_ids:
        return "stop"
    if sp.stop_rule is not None and sp.stop_rule.feed(tok):
        return "stop"
    return "length" if n_out >= sp.max_tokens else ""


def _to_host(toks: torch.Tensor, lp: torch.Tensor) -> Callable[[], tuple[list[float], list[float]]]:
    """Start copying ids and log-probs (rows,) to the host; the returned call waits and gives two lists.

    On CUDA the copy goes to pinned memory behind an event, so work queued after this call does not
    delay it (ids travel as float64: exact below 2**53)."""
    both = torch.stack([toks.double(), lp.double()])
    if both.device.type != "cuda":
        return both.tolist
    host = torch.empty(both.shape, dtype=both.dtype, pin_memory=True)
    host.copy_(both, non_blocking=True)
    done = torch.cuda.Event()
    done.record(torch.cuda.current_stream(both.device))  # the stream the copy was queued on

    def wait() -> tuple[list[float], list[float]]:
        done.synchronize()
        return host.tolist()

    return wait


@dataclass
class _Rows:
    """Device state of the requests generating together; row i is request `reqs[rows[i]]`.

    Sampling settings are per row tensors, and each sampled request draws its uniforms up front from
    its own seeded generator (`torch.rand(max_tokens)` yields the same numbers as `max_tokens`
    successive one-number draws), so no step needs per-row Python or a host round trip to sample.
    `greedy_all` / `sampled_all` / `truncate` are host-side summaries of the rows' settings.
    """

    rows: list[int]
    logits: torch.Tensor      # (rows, vocab) float32 next-token logits
    scale: torch.Tensor       # (rows, 1) temperature (1 for greedy rows)
    greedy: torch.Tensor      # (rows,) bool
    top_k: torch.Tensor       # (rows,) 0 = off
    top_p: torch.Tensor       # (rows,) 1.0 = off
    uniforms: torch.Tensor    # (rows, max max_tokens) the t-th column samples a row's t-th token
    n_out: torch.Tensor       # (rows,) tokens generated so far
    ban: torch.Tensor | None = None  # (rows, vocab) bool: ids a row may not emit; None when no row bans any
    greedy_all: bool = False
    sampled_all: bool = False
    truncate: bool = False

    _PER_ROW = ("logits", "scale", "greedy", "top_k", "top_p", "uniforms", "n_out")

    @classmethod
    def start(cls, reqs: list[_Request], base: int, logits, dev) -> "_Rows":
        sp = [r.sampling for r in reqs]
        temps = torch.tensor([s.temperature for s in sp], dtype=torch.float32)
        width = max(s.max_tokens for s in sp)
        uniforms = torch.zeros((len(reqs), width), dtype=torch.float32)
        for i, r in enumerate(reqs):
            if not r.sampling.greedy:
                uniforms[i, :r.sampling.max_tokens] = torch.rand(r.sampling.max_tokens,
                                                                 generator=torch.Generator().manual_seed(r.seed))
        rows = cls(rows=list(range(base, base + len(reqs))), logits=logits,
                   scale=torch.where(temps == 0, torch.ones_like(temps), temps).unsqueeze(-1).to(dev),
                   greedy=(temps == 0).to(dev),
                   top_k=torch.tensor([s.top_k if s.top_k and s.top_k > 0 else 0 for s in sp]).to(dev),
                   top_p=torch.tensor([s.top_p for s in sp], dtype=torch.float32).to(dev),
                   uniforms=uniforms.to(dev), n_out=torch.zeros(len(reqs), dtype=torch.long, device=dev),
                   ban=_ban_mask(sp, logits.shape[-1], dev))
        rows._summarise(sp)
        return rows

    def _summarise(self, sp: list[SamplingParams]) -> None:
        """Host-side flags of the rows' sampling settings `sp` (one per row, in row order)."""
        self.greedy_all = all(s.greedy for s in sp)
        self.sampled_all = not any(s.greedy for s in sp)
        self.truncate = any((s.top_k and s.top_k > 0) or s.top_p < 1.0 for s in sp if not s.greedy)

    def sample(self) -> tuple[torch.Tensor, torch.Tensor]:
        """One token per row and its log-prob under softmax(logits / T): ids (rows,), log-probs (rows,).
        A row's banned ids (`SamplingParams.banned_token_ids`) are out of both: their logits are -inf."""
        logits = self.logits if self.ban is None else self.logits.masked_fill(self.ban, float("-inf"))
        scaled = logits / self.scale
        if self.greedy_all:
            toks = logits.argmax(-1)
        else:
            u = self.uniforms.gather(1, self.n_out.unsqueeze(-1)).squeeze(-1)
            toks = _sample_rows(scaled, self.top_k, self.top_p, u, truncate=self.truncate)
            if not self.sampled_all:
                toks = torch.where(self.greedy, logits.argmax(-1), toks)
        self.n_out += 1
        lp = scaled.gather(1, toks.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(scaled, dim=-1)
        return toks, lp

    def reorder(self, order: list[int], reqs: list[_Request], toks: torch.Tensor) -> torch.Tensor:
        """Keep the rows at positions `order`, in that order (`SlotKV.release`'s result); returns `toks`
        reordered the same way."""
        self.rows = [self.rows[p] for p in order]
        idx = torch.tensor(order, dtype=torch.long, device=toks.device)
        if not self.rows:
            return toks[idx]
        for name in self._PER_ROW:
            setattr(self, name, getattr(self, name)[idx])
        if self.ban is not None:
            self.ban = self.ban[idx]
        self._summarise([reqs[r].sampling for r in self.rows])
        return toks[idx]

    def merge(self, other: "_Rows", reqs: list[_Request]) -> "_Rows":
        """Append `other`'s rows after these."""
        width = max(self.uniforms.shape[1], other.uniforms.shape[1])
        self.uniforms = torch.cat([F.pad(self.uniforms, (0, width - self.uniforms.shape[1])),
                                   F.pad(other.uniforms, (0, width - other.uniforms.shape[1]))])
        for name in self._PER_ROW:
            if name != "uniforms":
                setattr(self, name, torch.cat([getattr(self, name), getattr(other, name)]))
        if self.ban is not None or other.ban is not None:
            self.ban = torch.cat([b if b is not None else torch.zeros_like(r.logits, dtype=torch.bool)
                                  for b, r in ((self.ban, self), (other.ban, other))])
        self.rows = self.rows + other.rows
        self._summarise([reqs[r].sampling for r in self.rows])
        return self


def _ban_mask(sp: list[SamplingParams], vocab: int, dev) -> torch.Tensor | None:
    """(rows, vocab) bool, True where a row's request bans the id (its `token_rule` before any token);
    None when no request bans any."""
    if not any(s.banned_token_ids or s.token_rule is not None for s in sp):
        return None
    ban = torch.zeros((len(sp), vocab), dtype=torch.bool)
    for i, s in enumerate(sp):
        ids = [t for t in s.banned_token_ids if 0 <= t < vocab]
        if ids:
            ban[i, ids] = True
        if s.token_rule is not None:
            ban[i] |= s.token_rule.ban_mask([], vocab)
    return ban.to(dev)


def _sample_rows(scaled: torch.Tensor, top_k: torch.Tensor, top_p: torch.Tensor, u: torch.Tensor,
                 truncate: bool | None = None) -> torch.Tensor:
    """Inverse-CDF sampling of one id per row from softmax(scaled) after per-row top-k / top-p.

    `top_k` (B,) uses 0 for "off", `top_p` (B,) 1.0 for "off"; `u` (B,) are uniforms in [0, 1) drawn
    from each request's own generator. The CDF runs over the vocabulary in id order for every row,
    truncated or not, so a row's sample depends only on its own logits, settings and uniform, never
    on the other rows of the batch. `truncate`: whether any row uses top-k/top-p (None: read it from
    the tensors, a device sync).
    """
    vocab = scaled.shape[-1]
    if truncate is None:
        truncate = not (bool((top_k == 0).all()) and bool((top_p >= 1.0).all()))
    probs = torch.softmax(scaled, dim=-1)
    if truncate:  # the kept ids, found in sorted order and mapped back to id order
        sorted_logits, order = torch.sort(scaled, dim=-1, descending=True)
        ranks = torch.arange(vocab, device=scaled.device).unsqueeze(0)
        in_top_k = ranks < torch.where(top_k > 0, top_k, torch.full_like(top_k, vocab)).unsqueeze(-1)
        sorted_p = torch.softmax(sorted_logits.masked_fill(~in_top_k, float("-inf")), dim=-1)
        mass_before = sorted_p.cumsum(-1) - sorted_p
        keep = in_top_k & (mass_before < top_p.unsqueeze(-1))  # top-p: smallest prefix reaching top_p
        keep = torch.zeros_like(keep).scatter_(1, order, keep)
        truncated = ((top_k > 0) | (top_p < 1.0)).unsqueeze(-1)
        probs = probs.masked_fill(truncated & ~keep, 0.0)
    cdf = probs.double().cumsum(-1)
    idx = torch.searchsorted(cdf, (u.double() * cdf[:, -1]).unsqueeze(-1), right=True).squeeze(-1)
    if not truncate:
        return idx.clamp(max=vocab - 1)
    # never land on a zero-probability id (u * total can reach the cdf's final plateau)
    return torch.minimum(idx, (probs > 0).cumsum(-1).argmax(-1))


def _emit(req: _Request, out: GenerationOutput) -> None:
    _post(req, _set_result, out)


def _post(req: _Request, setter: Callable, value) -> None:
    """Resolve `req.future` on its event loop; a caller whose loop has closed no longer listens."""
    try:
        req.loop.call_soon_threadsafe(setter, req.future, value)
    except RuntimeError:  # "Event loop is closed"
        logger.debug("HFEngine: dropped a result for a request whose event loop has closed")


def _set_result(fut: asyncio.Future, value) -> None:
    if not fut.done():
        fut.set_result(value)


def _set_exception(fut: asyncio.Future, exc: BaseException) -> None:
    if not fut.done():
        fut.set_exception(exc)
