"""HF transformers rollout engine: batched KV-cache sampling on CPU or GPU, exact ids and log-probs.

Concurrent `generate` calls are queued; one background thread takes everything queued (up to
`max_batch_size`) as a batch and runs a manual sampling loop with a KV cache over it. A request that
finishes (stop token or max_tokens) is resolved at once and leaves the batch, so its trajectory can
step its environment while the rest keep generating; requests that arrive while a batch runs are
prefilled and join it at the next decode step (continuous batching).

Log-probs: for each sampled token we return log softmax(logits / T) at that position (T = the
request's temperature; T = 1 for greedy requests), i.e. the temperature-scaled policy the trainer
recomputes (verl divides the actor logits by the rollout temperature). With top_p = 1 and
top_k = -1 (the training defaults) this is exactly the distribution sampled from; when top-k/top-p
truncate, sampling uses the renormalised truncated distribution while the reported log-prob stays
the untruncated temperature-scaled one (vLLM's convention as well).

Prefix KV reuse: after a request, the KV entries of its sequence (prompt + generated ids but the
last) are kept in a small LRU (`prefix_cache_mb`); a later request whose prompt starts with that
sequence (the same trajectory's next turn) only prefills its new tokens. Rows of one batch may
then have different cached lengths; they are aligned with padding slots that the attention mask
hides, and explicit position ids continue each row's own positions. `update_weights` clears it.

Memory release (`rollout.free_cache_engine`, on by default on CUDA): `sleep()` moves the engine's
copy of the weights to host memory and drops the prefix KV cache, then returns the cached blocks to
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
import inspect
import itertools
import logging
import queue
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np
import torch
import torch.nn.functional as F

from verl.agent_trainer.config.schema import RolloutConfig, as_section
from verl.utils import model_utils
from verl.utils.device import resolve_device
from verl.workers.rollout.base import (
    GenerationOutput,
    RolloutEngine,
    SamplingParams,
    engine_dtype,
    register_engine,
    resolve_free_cache_engine,
)

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
        max_batch_size: most requests generated together (default `config.max_num_seqs`, capped at 64).
        seed: base seed for requests that carry none (default `config.seed`, else 0).
        attn_implementation, override_config: as `actor_rollout_ref.model.*` (the engine's copy of
            the policy is built like the actor's).
        num_threads: torch intra-op threads of the engine's worker thread (a per-thread setting).
            Default on CPU: 1 for models under 50M parameters (tiny ops gain nothing from more
            threads, and OpenMP spinning on a loaded 2-core machine slowed generation 30x), else
            torch's default.
        prefix_cache_mb: memory for reusing the KV of earlier turns (0 disables).
        join_min_frac: queued requests join a running batch once at least this fraction of its
            size is waiting (0: always join at once; large values: never join).
    """

    bans_tokens = True  # SamplingParams.banned_token_ids: -inf logits per row (`_Rows.ban`)
    bans_sequences = True  # SamplingParams.token_rule: the row's `_Rows.ban` recomputed after each token

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
        prefix_cache_mb: float = 512,
        join_min_frac: float = 0.5,
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
        # transformers 5.2x renamed the cache argument and output field (`past_key_values` -> `cache`)
        forward_args = inspect.signature(self.model.forward).parameters
        self._cache_kw = "cache" if "cache" in forward_args else "past_key_values"
        self._keep_last = "logits_to_keep" in forward_args
        self._lookahead = self.device.type == "cuda"  # queue step t+1 before reading step t (see _generate_batch)
        self.max_batch_size = int(max_batch_size or min(config.max_num_seqs, 64))
        self.seed = int(seed if seed is not None else config.seed)
        self._counter = itertools.count()
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._weights_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False
        if num_threads is None and self.device.type == "cpu":
            if sum(p.numel() for p in self.model.parameters()) < 50_000_000:
                num_threads = 1
        self.num_threads = num_threads
        self.join_min_frac = float(join_min_frac)
        cfg = self.model.config
        self.max_positions = getattr(cfg, "max_position_embeddings", None)
        heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        bytes_per_token = 2 * cfg.num_hidden_layers * heads * head_dim * torch.tensor([], dtype=dtype).element_size()
        self._prefix = _PrefixCache(int(prefix_cache_mb * 2**20 // bytes_per_token))
        # decode_steps: model calls that each give every row of the batch one token (so generated_tokens /
        # decode_steps is the mean batch); busy_s: time the engine thread spent generating (prefills included)
        self.stats = {"batches": 0, "requests": 0, "generated_tokens": 0, "max_batch": 0,
                      "prefill_tokens": 0, "reused_tokens": 0, "joined": 0, "decode_steps": 0, "busy_s": 0.0}

    # ------------------------------------------------------------------ public API
    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> GenerationOutput:
        """Queue one request and wait for its result (batched with concurrent requests)."""
        if self._closed:
            raise RuntimeError("HFEngine.generate called after shutdown()")
        self._check_awake()
        if not prompt_ids:
            raise ValueError("HFEngine.generate needs a non-empty prompt_ids list")
        self._ensure_thread()
        loop = asyncio.get_running_loop()
        seed = sampling.seed if sampling.seed is not None else self.seed * 1_000_003 + next(self._counter)
        fut = loop.create_future()
        self._queue.put(_Request(list(map(int, prompt_ids)), sampling, fut, loop, int(seed)))
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

    def _worker(self) -> None:
        if self.num_threads:
            torch.set_num_threads(self.num_threads)  # applies to this thread only
        while True:
            first = self._queue.get()
            if first is None:
                self._fail_pending(RuntimeError("HFEngine was shut down"))
                return
            batch = [first]
            stop = False
            while len(batch) < self.max_batch_size:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            batch = [r for r in batch if not r.future.cancelled()]
            if batch:
                try:
                    with self._weights_lock:
                        self._generate_batch(batch, _emit)
                except Exception as exc:  # report to every caller; the engine keeps serving
                    logger.exception("HFEngine batch of %d failed", len(batch))
                    for req in batch:
                        _post(req, _set_exception, exc)
            if stop:
                self._fail_pending(RuntimeError("HFEngine was shut down"))
                return

    def _fail_pending(self, exc: Exception) -> None:
        while True:
            try:
                req = self._queue.get_nowait()
            except queue.Empty:
                return
            if req is not None:
                _post(req, _set_exception, exc)

    def _take_waiting(self, limit: int) -> list[_Request]:
        """Non-blocking: up to `limit` queued requests (a shutdown sentinel is put back)."""
        taken: list[_Request] = []
        while len(taken) < limit:
            try:
                req = self._queue.get_nowait()
            except queue.Empty:
                break
            if req is None:
                self._queue.put(None)
                break
            if not req.future.cancelled():
                taken.append(req)
        return taken

    def _forward(self, input_ids: torch.Tensor, attn: torch.Tensor, position_ids: torch.Tensor, past):
        """One model call; returns (cache, next-token logits (rows, vocab) float32).

        Only the last position's logits are computed when the model supports `logits_to_keep` (a
        prefill would otherwise build (rows, len, vocab) logits it never reads)."""
        kwargs = {self._cache_kw: past, "use_cache": True}
        if self._keep_last:
            kwargs["logits_to_keep"] = 1
        out = self.model(input_ids=input_ids, attention_mask=attn, position_ids=position_ids, **kwargs)
        return getattr(out, self._cache_kw), out.logits[:, -1, :].float()

    def _prefill(self, reqs: list[_Request], base: int) -> "_Rows":
        """Forward the prompts of `reqs` (reusing cached prefixes); returns their rows (indices from `base`)."""
        dev = self.device
        bsz = len(reqs)
        hits = [self._prefix.lookup(r.prompt_ids) for r in reqs]  # (cached_len, kv or None)
        cached = [h[0] for h in hits]
        suffix = [r.prompt_ids[c:] for r, c in zip(reqs, cached, strict=True)]
        C, S = max(cached), max(len(x) for x in suffix)
        input_ids = torch.zeros((bsz, S), dtype=torch.long)
        position_ids = torch.zeros((bsz, S), dtype=torch.long)
        attn = torch.zeros((bsz, C + S), dtype=torch.long)
        for i, (c, suf) in enumerate(zip(cached, suffix, strict=True)):
            # row layout: [pad][cached c][pad][suffix]; the mask hides pads, positions continue at c
            input_ids[i, S - len(suf):] = torch.tensor(suf)
            position_ids[i, S - len(suf):] = torch.arange(c, c + len(suf))
            attn[i, C - c:C] = 1
            attn[i, C + S - len(suf):] = 1
        input_ids, attn, position_ids = input_ids.to(dev), attn.to(dev), position_ids.to(dev)
        past = self._prefix.batch_cache(hits, C, self.model.config, dev) if C > 0 else None
        past, logits = self._forward(input_ids, attn, position_ids, past)
        self.stats["prefill_tokens"] += sum(len(x) for x in suffix)
        self.stats["reused_tokens"] += sum(cached)
        self.stats["requests"] += bsz
        return _Rows.start(reqs, base, past, attn, position_ids[:, -1:], logits, dev)

    @torch.no_grad()
    def _generate_batch(self, reqs: list[_Request], emit: Callable[[_Request, GenerationOutput], None]) -> None:
        """Generate for `reqs` together. A finished request is emitted and leaves the batch at once;
        requests queued meanwhile join it (continuous batching) up to `max_batch_size`.

        A decode step waits on the device once, for the step's ids and log-probs; every other per-row
        decision (greedy or sampled, top-k/top-p) is known on the host. On CUDA the next forward is
        queued before that wait (`_lookahead`), so the GPU runs it while the host reads the ids,
        emits finished requests and admits new ones; a row that finished wasted that one step."""
        self.stats["batches"] += 1  # `reqs` grows with joiners (the caller fails them all if this raises)
        mark = time.perf_counter()
        batch = self._prefill(reqs, 0)
        out_ids: list[list[int]] = [[] for _ in reqs]
        out_lp: list[list[float]] = [[] for _ in reqs]
        fed = int(self._lookahead)  # trailing KV columns already holding this step's ids

        while batch.rows:
            self.stats["max_batch"] = max(self.stats["max_batch"], len(batch.rows))
            self.stats["decode_steps"] += 1
            toks, lp = batch.sample()
            pending = _to_host(toks, lp)
            if self._lookahead:
                self._decode(batch, toks)
            toks_l, lp_l = pending()
            keep = []
            for pos, r in enumerate(batch.rows):
                tok = int(toks_l[pos])
                out_ids[r].append(tok)
                out_lp[r].append(lp_l[pos])
                req = reqs[r]
                finish = ("stop" if tok in req.sampling.stop_token_ids
                          else "length" if len(out_ids[r]) >= req.sampling.max_tokens else "")
                if not finish:
                    keep.append(pos)
                    continue
                self.stats["generated_tokens"] += len(out_ids[r])
                if self._prefix.max_tokens > 0:  # KV of prompt + all generated ids but the last
                    slots = batch.attn[pos, :batch.attn.shape[1] - fed].nonzero().squeeze(-1)
                    self._prefix.store(req.prompt_ids + out_ids[r][:-1], batch.past, pos, slots)
                emit(req, GenerationOutput(token_ids=out_ids[r], log_probs=out_lp[r], finish_reason=finish,
                                           extra={"batch_size": len(batch.rows)}))
            if len(keep) < len(batch.rows):  # drop finished rows from every per-row tensor and the KV cache
                toks = batch.select(keep, reqs, toks)
            for pos, r in enumerate(batch.rows):  # bans that follow the tokens sampled so far
                rule = reqs[r].sampling.token_rule
                if rule is not None:
                    batch.ban[pos] = rule.ban_mask(out_ids[r], batch.ban.shape[-1]).to(batch.ban.device)
            if batch.rows and not self._lookahead:
                self._decode(batch, toks)
            # join only when enough requests wait (many tiny prefills + cache merges cost more than they save)
            waiting = self._queue.qsize()
            joiners = (self._take_waiting(self.max_batch_size - len(batch.rows))
                       if waiting and (not batch.rows or waiting >= self.join_min_frac * len(batch.rows)) else [])
            if joiners:
                self.stats["joined"] = self.stats.get("joined", 0) + (len(joiners) if batch.rows else 0)
                new = self._prefill(joiners, len(reqs))
                reqs.extend(joiners)
                out_ids.extend([] for _ in joiners)
                out_lp.extend([] for _ in joiners)
                batch = batch.merge(new, reqs) if batch.rows else new
            now = time.perf_counter()  # counted per step: a rollout can end while its batch still runs
            self.stats["busy_s"] += now - mark
            mark = now

    def _decode(self, batch: "_Rows", toks: torch.Tensor) -> None:
        """Feed `toks` (rows,) to every row of `batch`: its KV cache grows by one column, logits move on."""
        batch.attn = torch.cat([batch.attn, batch.attn.new_ones((len(batch.rows), 1))], dim=1)
        batch.last_pos = batch.last_pos + 1
        batch.past, batch.logits = self._forward(toks.unsqueeze(-1), batch.attn, batch.last_pos, batch.past)


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
    past: Any                 # transformers Cache; per layer (rows, kv_heads, width, head_dim)
    attn: torch.Tensor        # (rows, width) 1 = a real KV slot, 0 = padding
    last_pos: torch.Tensor    # (rows, 1) position id of the last fed token
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

    @classmethod
    def start(cls, reqs: list[_Request], base: int, past, attn, last_pos, logits, dev) -> "_Rows":
        sp = [r.sampling for r in reqs]
        temps = torch.tensor([s.temperature for s in sp], dtype=torch.float32)
        width = max(s.max_tokens for s in sp)
        uniforms = torch.zeros((len(reqs), width), dtype=torch.float32)
        for i, r in enumerate(reqs):
            if not r.sampling.greedy:
                uniforms[i, :r.sampling.max_tokens] = torch.rand(r.sampling.max_tokens,
                                                                 generator=torch.Generator().manual_seed(r.seed))
        rows = cls(rows=list(range(base, base + len(reqs))), past=past, attn=attn, last_pos=last_pos, logits=logits,
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

    def select(self, keep: list[int], reqs: list[_Request], toks: torch.Tensor) -> torch.Tensor:
        """Keep only the rows at positions `keep` (and `toks`' entries for them, returned)."""
        idx = torch.tensor(keep, dtype=torch.long, device=self.attn.device)
        self.rows = [self.rows[p] for p in keep]
        if not self.rows:
            return toks[idx]
        self.past.batch_select_indices(idx)
        for name in ("attn", "last_pos", "logits", "scale", "greedy", "top_k", "top_p", "uniforms", "n_out"):
            setattr(self, name, getattr(self, name)[idx])
        if self.ban is not None:
            self.ban = self.ban[idx]
        # columns that are padding for every remaining row are dropped
        start = int(self.attn.any(dim=0).to(torch.int8).argmax())
        if start > 0:
            self.attn = self.attn[:, start:]
            for layer in self.past.layers:
                layer.keys, layer.values = layer.keys[:, :, start:], layer.values[:, :, start:]
        self._summarise([reqs[r].sampling for r in self.rows])
        return toks[idx]

    def merge(self, other: "_Rows", reqs: list[_Request]) -> "_Rows":
        """Append `other`'s rows after these (KV caches stacked, the narrower one left-padded)."""
        self.past, self.attn = _merge_caches(self.past, self.attn, other.past, other.attn)
        width = max(self.uniforms.shape[1], other.uniforms.shape[1])
        self.uniforms = torch.cat([F.pad(self.uniforms, (0, width - self.uniforms.shape[1])),
                                   F.pad(other.uniforms, (0, width - other.uniforms.shape[1]))])
        for name in ("last_pos", "logits", "scale", "greedy", "top_k", "top_p", "n_out"):
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


def _merge_caches(a_past, a_attn: torch.Tensor, b_past, b_attn: torch.Tensor):
    """Stack two batches' KV caches (rows of `b` after rows of `a`), left-padding the narrower one."""
    wa, wb = a_attn.shape[1], b_attn.shape[1]
    width = max(wa, wb)
    for la, lb in zip(a_past.layers, b_past.layers, strict=True):
        la.keys = torch.cat([F.pad(la.keys, (0, 0, width - wa, 0)), F.pad(lb.keys, (0, 0, width - wb, 0))])
        la.values = torch.cat([F.pad(la.values, (0, 0, width - wa, 0)), F.pad(lb.values, (0, 0, width - wb, 0))])
    attn = torch.cat([F.pad(a_attn, (width - wa, 0)), F.pad(b_attn, (width - wb, 0))])
    return a_past, attn


class _PrefixCache:
    """LRU of per-sequence KV tensors keyed by the token sequence they encode (engine thread only).

    A lookup reuses the longest common prefix with any stored sequence (a trajectory's previous turn,
    or the shared system/instruction prompt of another trajectory). An entry that is wholly a prefix
    of the new request is removed: that request's own entry will extend it.
    """

    def __init__(self, max_tokens: int):
        self.max_tokens = max(int(max_tokens), 0)
        self.entries: OrderedDict[int, tuple[np.ndarray, list]] = OrderedDict()  # ids, [(k, v)], k: (heads, L, dim)
        self.tokens = 0
        self._next = 0

    def clear(self) -> None:
        self.entries.clear()
        self.tokens = 0

    def lookup(self, ids: list[int]) -> tuple[int, list | None]:
        """Return (length, kv) of the longest reusable prefix of `ids` (at most len(ids) - 1 tokens)."""
        if not self.entries:
            return 0, None
        query = np.asarray(ids, dtype=np.int64)
        best_key, best_len = None, 0
        for key, (stored, _) in self.entries.items():
            m = min(len(stored), len(query) - 1)
            if m <= best_len:
                continue
            diff = np.flatnonzero(stored[:m] != query[:m])
            lcp = int(diff[0]) if diff.size else m
            if lcp > best_len:
                best_key, best_len = key, lcp
        if best_key is None:
            return 0, None
        stored, kv = self.entries[best_key]
        if best_len == len(stored):  # superseded by this request's own entry
            del self.entries[best_key]
            self.tokens -= len(stored)
            return best_len, kv
        self.entries.move_to_end(best_key)
        return best_len, [(k[:, :best_len], v[:, :best_len]) for k, v in kv]

    def store(self, ids: list[int], past, row: int, index: torch.Tensor) -> None:
        """Keep the KV columns `index` of batch row `row` of `past` as the encoding of `ids`."""
        if len(ids) > self.max_tokens or len(ids) != len(index):
            return
        kv = [(layer.keys[row].index_select(1, index).clone(), layer.values[row].index_select(1, index).clone())
              for layer in past.layers]
        self._next += 1
        self.entries[self._next] = (np.asarray(ids, dtype=np.int64), kv)
        self.tokens += len(ids)
        while self.tokens > self.max_tokens and self.entries:
            _, (old, _) = self.entries.popitem(last=False)
            self.tokens -= len(old)

    @staticmethod
    def batch_cache(hits: list[tuple[int, list | None]], width: int, config, device):
        """A DynamicCache of `width` slots per row, each row's cached KV right-aligned (pads are masked)."""
        from transformers import DynamicCache

        ref = next(kv for _, kv in hits if kv is not None)
        cache = DynamicCache(config=config)
        for layer, (k0, v0) in enumerate(ref):
            keys = k0.new_zeros((len(hits), k0.shape[0], width, k0.shape[2]))
            values = v0.new_zeros((len(hits), v0.shape[0], width, v0.shape[2]))
            for i, (c, kv) in enumerate(hits):
                if kv is not None:
                    keys[i, :, width - c:] = kv[layer][0]
                    values[i, :, width - c:] = kv[layer][1]
            cache.update(keys.to(device), values.to(device), layer)
        return cache


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
