"""BM25 product search, as WebShop's pyserini/Lucene engine but with bm25s (no JVM).

Owns the index over WebShop's indexed text (``lower(Title + Description + BulletPoints[0] +
option_text)``), its on-disk cache (keyed by a hash of the documents and parameters, memory-mapped
on load, shared by all processes on the machine) and the per-process singleton. Scoring is
Lucene's BM25 (``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, ``tf / (tf + k1 (1 - b + b dl/avgdl))``)
with pyserini's defaults k1=0.9, b=0.4: bm25s's ``lucene`` method. The index is bm25s's format (CSC
impact arrays, vocab, params; saved and memory-mapped with ``bm25s.BM25.save/load``), built
vectorised with numpy, plus per-term, per-document-window posting offsets and largest impacts.
Impacts are stored rounded to multiples of 2**-24 (< 3e-8 from the float value), so float64 sums of
them are exact in any order. Queries run an exact document-at-a-time windowed MaxScore top-k in
numba (numpy exhaustive scoring if numba is missing): windows of 2,048 documents whose bound
cannot reach the current 50th score are skipped, and common terms such as ``size`` or ``color``
only complete documents that can still enter. Results equal exhaustive scoring, ties included.
Only documents sharing a term with the query are returned, best first, ties broken by catalog
order (as Lucene's doc ids). A query term repeated n times counts n times (Lucene sums repeated
SHOULD clauses).

Cache location: ``cache_dir`` argument, else ``$AGENTENV_WEBSHOP_CACHE``, else
``~/.cache/agentenv_webshop``; each index lives in ``bm25-<hash>/``.
"""
from __future__ import annotations

import array
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from typing import Iterable, Sequence

import bm25s
import numpy as np

from agentenv_webshop.engine.text import _TOKEN_RE, Analyzer, product_document

logger = logging.getLogger(__name__)

__all__ = ["SearchEngine", "SEARCH_RETURN_N", "default_cache_dir", "K1", "B"]

SEARCH_RETURN_N = 50
K1 = 0.9
B = 0.4
_INDEX_FORMAT = "agentenv_webshop-bm25-v3"
_WIN_PTR_FILE = "win_ptr.npy"
_WIN_MAX_FILE = "win_max.npy"
_ASINS_FILE = "asins.npy"
_META_FILE = "meta.json"

try:  # numba is ~9x faster than numpy at 1M documents; fall back (with a warning) if it cannot import.
    from numba import njit

    _BACKEND = "numba"
except Exception:  # pragma: no cover - depends on the environment
    njit = None
    _BACKEND = "numpy"


_WINDOW_SHIFT = 11  # document-id windows of 2,048 documents (a float64 score buffer of 16 KiB: L1-resident)
_PROBE_COST = 16  # a binary-search step costs about this many sequentially scanned postings
_QUANTUM = 2.0 ** -24  # impacts are multiples of this, so float64 sums of them are exact in any order


def _better(s1, d1, s2, d2):  # pragma: no cover - compiled by numba
    """Whether (score s1, doc d1) ranks before (s2, d2): higher score, then lower doc index."""
    return s1 > s2 or (s1 == s2 and d1 < d2)


def _heap_offer(heap_s, heap_d, n, k, s, d):  # pragma: no cover - compiled by numba
    """Offer (s, d) to a size-k heap of the best results whose root is the worst; returns the new size."""
    if n < k:
        pos = n
        n += 1
        while pos > 0:
            parent = (pos - 1) >> 1
            if _better(heap_s[parent], heap_d[parent], s, d):
                heap_s[pos] = heap_s[parent]
                heap_d[pos] = heap_d[parent]
                pos = parent
            else:
                break
        heap_s[pos] = s
        heap_d[pos] = d
        return n
    if not _better(s, d, heap_s[0], heap_d[0]):
        return n
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= n:
            break
        right = child + 1
        if right < n and _better(heap_s[child], heap_d[child], heap_s[right], heap_d[right]):
            child = right  # the worse child
        if _better(s, d, heap_s[child], heap_d[child]):
            heap_s[pos] = heap_s[child]
            heap_d[pos] = heap_d[child]
            pos = child
        else:
            break
    heap_s[pos] = s
    heap_d[pos] = d
    return n


def _score_top_k_py(terms, weights, data, indices, win_ptr, win_max, shift, k):  # pragma: no cover
    """Exact top-k BM25 (score desc, doc asc) by document-at-a-time windowed MaxScore.

    The documents are cut into windows of ``2**shift`` ids, visited in order. Per window, each
    query term's bound is its weight x its largest impact in the window (``win_max``). A window
    whose bounds sum below the current k-th best score ``theta`` is skipped. Otherwise the terms
    with the smallest bounds whose sum stays below ``theta`` are non-essential (a document matching
    only them cannot enter); the essential terms' postings in the window (``win_ptr``) are
    accumulated into a small score buffer, and each touched document that can still reach
    ``theta`` is completed by binary search in the non-essential terms' window postings, largest
    bound first, stopping as soon as it cannot. Impacts are multiples of 2**-24, so the float64
    sums are exact whatever the order of terms: results equal exhaustive scoring, ties included.
    Returns (docs, scores) of the top k, unsorted, positive scores only.
    """
    nt = len(terms)
    nw = win_max.shape[1]
    buf = np.zeros(1 << shift, dtype=np.float64)
    touched = np.empty(1 << shift, dtype=np.int64)
    heap_s = np.zeros(k, dtype=np.float64)
    heap_d = np.zeros(k, dtype=np.int64)
    bound = np.empty(nt, dtype=np.float64)
    order = np.empty(nt, dtype=np.int64)
    n = 0
    theta = 0.0  # k-th best score once the heap is full; until then every positive score enters
    for w in range(nw):
        total = 0.0
        for i in range(nt):
            b = weights[i] * win_max[terms[i], w]
            bound[i] = b
            total += b
        if total == 0.0 or (n == k and total < theta):
            continue
        for i in range(nt):  # insertion sort of the terms by bound, ascending
            b = bound[i]
            j = i
            while j > 0 and bound[order[j - 1]] > b:
                order[j] = order[j - 1]
                j -= 1
            order[j] = i
        p = 0  # order[:p] are non-essential, their bounds summing to ne < theta
        ne = 0.0
        if n == k:
            while p < nt and ne + bound[order[p]] < theta:
                ne += bound[order[p]]
                p += 1
        base = w << shift
        m = 0
        for e in range(p, nt):
            i = order[e]
            t = terms[i]
            wt = weights[i]
            for j in range(win_ptr[t, w], win_ptr[t, w + 1]):  # branch-free: unpredictable conditions
                d = indices[j] - base
                v = buf[d]
                touched[m] = d
                m += v == 0.0
                buf[d] = v + wt * data[j]
        # Candidates: touched documents that can still reach theta; the others leave the buffer.
        c = 0
        for j in range(m):
            d = touched[j]
            if buf[d] + ne < theta:
                buf[d] = 0.0
            else:
                touched[c] = d
                c += 1
        rest = ne
        for e in range(p - 1, -1, -1):  # non-essential terms, largest bound first
            if c == 0:
                break
            i = order[e]
            rest -= bound[i]
            t = terms[i]
            wt = weights[i]
            lo = win_ptr[t, w]
            hi = win_ptr[t, w + 1]
            steps = 1
            x = hi - lo
            while x > 1:
                x >>= 1
                steps += 1
            if c * steps * _PROBE_COST < hi - lo:  # few candidates: binary search each
                for j in range(c):
                    d = touched[j]
                    doc = base + d
                    a = lo
                    z = hi
                    while a < z:
                        mid = (a + z) >> 1
                        if indices[mid] < doc:
                            a = mid + 1
                        else:
                            z = mid
                    if a < hi and indices[a] == doc:
                        buf[d] += wt * data[a]
            else:  # many: scan the window's postings, adding to live candidates (buffer > 0) only
                for j in range(lo, hi):
                    d = indices[j] - base
                    v = buf[d]
                    buf[d] = v + wt * data[j] if v > 0.0 else v
            nc = 0
            for j in range(c):
                d = touched[j]
                if buf[d] + rest < theta:
                    buf[d] = 0.0
                else:
                    touched[nc] = d
                    nc += 1
            c = nc
        for j in range(c):
            d = touched[j]
            s = buf[d]
            buf[d] = 0.0
            if s >= theta:
                n = _heap_offer(heap_s, heap_d, n, k, s, base + d)
                if n == k:
                    theta = heap_s[0]
    return heap_d[:n].copy(), heap_s[:n].copy()


def _score_top_k_numpy(terms, weights, data, indices, indptr, num_docs, k):
    """Exhaustive top-k BM25 (score desc, doc asc): the reference the pruned scorer must equal."""
    acc = np.zeros(num_docs, dtype=np.float64)
    for t, w in zip(terms, weights, strict=True):
        lo, hi = indptr[t], indptr[t + 1]
        acc[indices[lo:hi]] += float(w) * data[lo:hi].astype(np.float64)
    docs = np.flatnonzero(acc > 0)
    order = np.lexsort((docs, -acc[docs]))[:k]
    return docs[order], acc[docs[order]]


def _window_arrays(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, num_docs: int,
                   shift: int = _WINDOW_SHIFT) -> tuple[np.ndarray, np.ndarray]:
    """Per term and document window: posting offsets ``(V, W+1)`` int64 and largest impact ``(V, W)``."""
    nw = max(1, (num_docs + (1 << shift) - 1) >> shift)
    vocab = len(indptr) - 1
    win_ptr = np.empty((vocab, nw + 1), dtype=np.int64)
    win_max = np.zeros((vocab, nw), dtype=np.float32)
    bounds = np.arange(nw + 1, dtype=np.int64) << shift
    for t in range(vocab):
        lo, hi = int(indptr[t]), int(indptr[t + 1])
        rel = np.searchsorted(indices[lo:hi], bounds)
        win_ptr[t] = lo + rel
        nonempty = np.flatnonzero(rel[1:] > rel[:-1])
        if len(nonempty):
            win_max[t, nonempty] = np.maximum.reduceat(data[lo:hi], rel[nonempty])
    return win_ptr, win_max


if njit is not None:
    # cache=True: compiled once per machine (numba's on-disk cache), not in every process.
    _better = njit(cache=True, inline="always")(_better)
    _heap_offer = njit(cache=True)(_heap_offer)
    _score_top_k = njit(cache=True, nogil=True)(_score_top_k_py)
else:  # pragma: no cover
    logger.warning("numba is unavailable: search uses exhaustive numpy scoring (slower on large catalogs)")
    _score_top_k = None


def default_cache_dir() -> str:
    """``$AGENTENV_WEBSHOP_CACHE`` or ``~/.cache/agentenv_webshop``."""
    return (os.environ.get("AGENTENV_WEBSHOP_CACHE")
            or os.path.join(os.path.expanduser("~"), ".cache", "agentenv_webshop"))


def _documents_key(asins: Sequence[str], texts: Sequence[str], stemming: bool) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([_INDEX_FORMAT, K1, B, stemming, bm25s.__version__]).encode())
    for asin, text in zip(asins, texts, strict=True):
        h.update(asin.encode())
        h.update(b"\x00")
        h.update(text.encode("utf-8", "surrogatepass"))
        h.update(b"\x01")
    return h.hexdigest()[:24]


def _build_arrays(texts: Iterable[str], analyzer: Analyzer, num_docs: int) -> tuple[dict, dict]:
    """Tokenise and build bm25s's lucene-BM25 CSC arrays (``data``, ``indices``, ``indptr``) vectorised.

    Each distinct surface word is analysed once; per document only a C-level ``map`` over a dict
    runs, and the (term, doc) grouping is a stable (radix) sort rather than a Python loop.
    """
    vocab: dict[str, int] = {}
    word_ids: dict[str, int] = {}  # surface word -> term id, or -1 for a stopword
    flat = array.array("i")
    lengths = np.zeros(num_docs, dtype=np.int64)
    findall = _TOKEN_RE.findall
    lookup = word_ids.__getitem__
    for d, text in enumerate(texts):
        words = findall(text.lower())
        try:
            ids = list(map(lookup, words))
        except KeyError:
            for word in words:
                if word not in word_ids:
                    term = analyzer.terms(word)
                    word_ids[word] = vocab.setdefault(term[0], len(vocab)) if term else -1
            ids = list(map(lookup, words))
        flat.extend(ids)
        lengths[d] = len(ids)
    tokens = np.frombuffer(flat, dtype=np.int32)
    doc_of_token = np.repeat(np.arange(num_docs, dtype=np.int32), lengths)
    keep = tokens >= 0
    tokens, doc_of_token = tokens[keep], doc_of_token[keep]
    del flat, keep
    lengths = np.bincount(doc_of_token, minlength=num_docs)
    n_vocab = max(len(vocab), 1)
    # Stable sort by term keeps documents ascending inside each term: CSC order. uint16 -> radix sort.
    order = np.argsort(tokens.astype(np.uint16) if n_vocab < 65536 else tokens, kind="stable")
    t_sorted, d_sorted = tokens[order], doc_of_token[order]
    del order, tokens, doc_of_token
    n = len(t_sorted)
    starts = np.ones(n, dtype=bool)
    if n:
        starts[1:] = (t_sorted[1:] != t_sorted[:-1]) | (d_sorted[1:] != d_sorted[:-1])
    starts = np.flatnonzero(starts)
    tf = np.diff(np.append(starts, n)).astype(np.float32)
    term = t_sorted[starts].astype(np.int64)
    doc = d_sorted[starts].astype(np.int32)
    del t_sorted, d_sorted, starts
    df = np.bincount(term, minlength=n_vocab).astype(np.float64)
    idf = np.log1p((num_docs - df + 0.5) / (df + 0.5))
    avgdl = float(lengths.mean()) if num_docs else 1.0
    avgdl = avgdl or 1.0
    norm = (K1 * (1.0 - B + B * lengths[doc] / avgdl)).astype(np.float32)
    impact = idf[term] * (tf / (tf + norm))
    # Multiples of 2**-24 (at least one): exact float64 sums at query time, < 3e-8 from the raw value.
    data = np.maximum(np.rint(impact / _QUANTUM), 1.0).astype(np.float32) * np.float32(_QUANTUM)
    del impact
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df.astype(np.int64), out=indptr[1:])
    scores = {"data": data, "indices": doc, "indptr": indptr, "num_docs": num_docs}
    return scores, vocab


class SearchEngine:
    """A loaded BM25 index: ``search(query, k)`` returns uppercase ASINs, best first."""

    _instances: dict[str, "SearchEngine"] = {}
    _lock = threading.Lock()

    def __init__(self, model: bm25s.BM25, asins: np.ndarray, analyzer: Analyzer, path: str,
                 win_ptr: np.ndarray, win_max: np.ndarray, window_shift: int = _WINDOW_SHIFT):
        self._model = model
        self._asins = asins  # (num_docs,) bytes, memory-mapped
        self._analyzer = analyzer
        self._vocab = model.vocab_dict
        self.path = path
        self._win_ptr = win_ptr  # (vocab, windows + 1) posting offsets per document window
        self._win_max = win_max  # (vocab, windows) largest impact per document window
        self._window_shift = window_shift

    def __len__(self) -> int:
        return len(self._asins)

    @classmethod
    def build(cls, products: Sequence[dict], cache_dir: str | None = None) -> "SearchEngine":
        """The process-wide index for ``products``, loaded from (or built into) the disk cache.

        Args:
            products: loaded product dicts (``asin``, ``Title``, ``Description``, ``BulletPoints``, ``options``).
            cache_dir: cache root; default :func:`default_cache_dir`.
        """
        asins = [p["asin"].upper() for p in products]
        texts = [product_document(p) for p in products]
        return cls.build_from_texts(asins, texts, cache_dir)

    @classmethod
    def build_from_texts(cls, asins: Sequence[str], texts: Sequence[str], cache_dir: str | None = None,
                         force: bool = False) -> "SearchEngine":
        """Like :meth:`build`, from already-made documents (``texts[i]`` is the document of ``asins[i]``).

        Args:
            asins: uppercase ASINs.
            texts: indexed texts, same length as ``asins``.
            cache_dir: cache root; default :func:`default_cache_dir`.
            force: rebuild even if the cache holds the index (benchmarks).

        Raises:
            ValueError: if the lengths differ or there are no documents.
        """
        if len(asins) != len(texts):
            raise ValueError(f"asins and texts must have the same length, got {len(asins)} and {len(texts)}")
        if not asins:
            raise ValueError("cannot build a search index over zero products")
        analyzer = Analyzer()
        key = _documents_key(asins, texts, analyzer.stemming)
        with cls._lock:
            if key in cls._instances and not force:
                return cls._instances[key]
            root = cache_dir or default_cache_dir()
            path = os.path.join(root, f"bm25-{key}")
            if force or not os.path.exists(os.path.join(path, _META_FILE)):
                cls._build_into(path, asins, texts, analyzer)
            engine = cls._load(path, analyzer)
            cls._instances[key] = engine
            return engine

    @staticmethod
    def _build_into(path: str, asins: Sequence[str], texts: Sequence[str], analyzer: Analyzer) -> None:
        t0 = time.perf_counter()
        scores, vocab = _build_arrays(texts, analyzer, len(texts))
        model = bm25s.BM25(k1=K1, b=B, method="lucene")
        model.scores = scores
        model.vocab_dict = vocab
        model.nonoccurrence_array = None  # only BM25L/BM25+ use it
        parent = os.path.dirname(path)
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".tmp-bm25-", dir=parent)
        try:
            model.save(tmp, show_progress=False)
            np.save(os.path.join(tmp, _ASINS_FILE), np.array(asins, dtype="S10"))
            win_ptr, win_max = _window_arrays(scores["data"], scores["indices"], scores["indptr"], len(asins))
            np.save(os.path.join(tmp, _WIN_PTR_FILE), win_ptr)
            np.save(os.path.join(tmp, _WIN_MAX_FILE), win_max)
            with open(os.path.join(tmp, _META_FILE), "w") as f:
                json.dump({"format": _INDEX_FORMAT, "num_docs": len(asins), "vocab": len(vocab),
                           "stemming": analyzer.stemming, "k1": K1, "b": B, "window_shift": _WINDOW_SHIFT}, f)
            if force_replace := os.path.exists(path):
                shutil.rmtree(path, ignore_errors=True)
            try:
                os.rename(tmp, path)
            except OSError:  # another process won the race with an identical index
                if not os.path.exists(os.path.join(path, _META_FILE)):
                    raise
            logger.info("built BM25 index of %d docs (%d terms) in %.1fs at %s%s", len(asins), len(vocab),
                        time.perf_counter() - t0, path, " (replaced)" if force_replace else "")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def _load(cls, path: str, analyzer: Analyzer) -> "SearchEngine":
        model = bm25s.BM25.load(path, mmap=True, load_corpus=False, show_progress=False)
        asins = np.load(os.path.join(path, _ASINS_FILE), mmap_mode="r")
        win_ptr = np.load(os.path.join(path, _WIN_PTR_FILE), mmap_mode="r")
        win_max = np.load(os.path.join(path, _WIN_MAX_FILE), mmap_mode="r")
        with open(os.path.join(path, _META_FILE)) as f:
            shift = int(json.load(f)["window_shift"])
        engine = cls(model, asins, analyzer, path, win_ptr, win_max, shift)
        engine._search_ids([0], 1)  # compile (or load the cached compile of) the scorer now
        return engine

    def query_ids(self, query: str) -> list[int]:
        """Term ids of the analysed query that exist in the index (duplicates kept, like Lucene)."""
        vocab = self._vocab
        return [vocab[t] for t in self._analyzer.terms(query) if t in vocab]

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> list[str]:
        """Top-``k`` uppercase ASINs for ``query`` (only documents sharing a term with it).

        Raises:
            ValueError: if ``k`` < 1.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        ids = self.query_ids(query)
        if not ids:
            return []
        docs = self._search_ids(ids, min(k, len(self._asins)))
        return [self._asins[i].decode() for i in docs]

    def _search_ids(self, ids: list[int], k: int) -> np.ndarray:
        """Document indices of the top-k for term ids, score descending, catalog order on ties.

        A term repeated in the query counts once per repeat (Lucene sums repeated SHOULD clauses).
        """
        sc = self._model.scores
        terms, counts = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
        weights = counts.astype(np.float64)
        if _score_top_k is None:  # pragma: no cover - numba missing
            docs, scores = _score_top_k_numpy(terms, weights, sc["data"], sc["indices"], sc["indptr"], len(self), k)
            return docs
        docs, scores = _score_top_k(terms, weights, sc["data"], sc["indices"], self._win_ptr, self._win_max,
                                    self._window_shift, k)
        return docs[np.lexsort((docs, -scores))]
