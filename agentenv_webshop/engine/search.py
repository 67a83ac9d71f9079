"""BM25 product search, as WebShop's pyserini/Lucene engine but with bm25s (no JVM).

Owns the index over WebShop's indexed text (``lower(Title + Description + BulletPoints[0] +
option_text)``), its on-disk cache (keyed by a hash of the documents and parameters, memory-mapped
on load, shared by all processes on the machine) and the per-process singleton. Scoring is
Lucene's BM25 (``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, ``tf / (tf + k1 (1 - b + b dl/avgdl))``)
with pyserini's defaults k1=0.9, b=0.4: bm25s's ``lucene`` method. The index is bm25s's format (CSC
impact arrays, vocab, params; saved and memory-mapped with ``bm25s.BM25.save/load``), built
vectorised with numpy. Queries run an exact term-at-a-time MaxScore top-k in numba (numpy
exhaustive scoring if numba is missing), so common terms such as ``size`` or ``color`` do not cost
a pass over every matching document; results equal exhaustive scoring. Only documents sharing a
term with the query are returned, best first, ties broken by catalog order (as Lucene's doc ids).

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
_INDEX_FORMAT = "agentenv_webshop-bm25-v2"
_MAX_IMPACT_FILE = "max_impact.npy"
_ASINS_FILE = "asins.npy"
_META_FILE = "meta.json"

try:  # numba is ~9x faster than numpy at 1M documents; fall back (with a warning) if it cannot import.
    from numba import njit

    _BACKEND = "numba"
except Exception:  # pragma: no cover - depends on the environment
    njit = None
    _BACKEND = "numpy"


_SLACK = 1e-5  # relative float32 rounding slack in pruning decisions (keeps pruning exact)


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


def _score_top_k_py(term_ids, weights, upper, data, indices, indptr, k, scores, touched):  # pragma: no cover
    """Exact top-k BM25 (score desc, doc asc) with term-at-a-time MaxScore pruning.

    Terms come sorted by ``upper`` (weight x max impact) descending. Posting lists are accumulated
    in that order until the sum of the remaining terms' upper bounds falls below the current k-th
    best partial score (no unseen document can still enter the top k); the remaining terms are
    then added only to documents that can still reach it, by binary search in their (doc-sorted)
    posting lists. ``scores``/``touched`` are caller-owned buffers (all zero on entry and on exit).
    Returns (docs, scores) of the top k, unsorted, positive scores only.
    """
    nt = len(term_ids)
    suffix = np.zeros(nt + 1, dtype=np.float64)
    suffix_df = np.zeros(nt + 1, dtype=np.int64)  # postings still to accumulate from term i on
    for i in range(nt - 1, -1, -1):
        suffix[i] = suffix[i + 1] + upper[i]
        suffix_df[i] = suffix_df[i + 1] + indptr[term_ids[i] + 1] - indptr[term_ids[i]]
    heap_s = np.zeros(k, dtype=np.float32)
    heap_d = np.zeros(k, dtype=np.int64)
    m = 0
    stop = nt
    theta = 0.0
    max_partial = 0.0
    for i in range(nt):
        # Computing the k-th best partial score costs O(touched); only try when that is cheap
        # against the postings it could save.
        if i > 0 and m >= k and suffix[i] < max_partial and 4 * m <= suffix_df[i]:
            n = 0
            for j in range(m):
                d = touched[j]
                n = _heap_offer(heap_s, heap_d, n, k, scores[d], d)
            theta = heap_s[0]
            if suffix[i] < theta - _SLACK * (1.0 + theta):
                stop = i
                break
        t = term_ids[i]
        w = weights[i]
        for j in range(indptr[t], indptr[t + 1]):
            d = indices[j]
            s = scores[d]
            if s == 0.0:
                touched[m] = d
                m += 1
            s += w * data[j]
            scores[d] = s
            if s > max_partial:
                max_partial = s
    if stop < nt:
        # Candidates: touched documents that can still reach the top k (float slack for rounding).
        rest = suffix[stop]
        cand = np.empty(m, dtype=np.int64)
        c = 0
        for j in range(m):
            d = touched[j]
            if scores[d] + rest >= theta - _SLACK * (1.0 + theta):
                cand[c] = d
                c += 1
            else:
                scores[d] = -1.0  # excluded: never updated again, skipped by the final selection
        for i in range(stop, nt):
            t = term_ids[i]
            start = indptr[t]
            end = indptr[t + 1]
            w = weights[i]
            steps = 1
            x = end - start
            while x > 1:
                x >>= 1
                steps += 1
            if c * steps < end - start:  # few candidates: binary search each in the doc-sorted postings
                for jj in range(c):
                    d = cand[jj]
                    lo = start
                    hi = end
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if indices[mid] < d:
                            lo = mid + 1
                        else:
                            hi = mid
                    if lo < end and indices[lo] == d:
                        scores[d] += w * data[lo]
            else:  # many candidates: scan the postings, updating candidates only (score > 0)
                for j in range(start, end):
                    d = indices[j]
                    if scores[d] > 0.0:
                        scores[d] += w * data[j]
            rest -= upper[i]
            if i + 1 < nt and c > k:  # tighten the threshold and drop hopeless candidates
                n = 0
                for jj in range(c):
                    d = cand[jj]
                    n = _heap_offer(heap_s, heap_d, n, k, scores[d], d)
                theta = heap_s[0]
                nc = 0
                for jj in range(c):
                    d = cand[jj]
                    if scores[d] + rest >= theta - _SLACK * (1.0 + theta):
                        cand[nc] = d
                        nc += 1
                    else:
                        scores[d] = -1.0
                c = nc
    n = 0
    for j in range(m):
        d = touched[j]
        s = scores[d]
        if s > 0.0:
            n = _heap_offer(heap_s, heap_d, n, k, s, d)
        scores[d] = 0.0
    return heap_d[:n].copy(), heap_s[:n].copy()


def _score_top_k_numpy(term_ids, weights, upper, data, indices, indptr, k, scores, touched):
    """numpy equivalent of :func:`_score_top_k_py` without pruning (used when numba is unavailable)."""
    acc = np.zeros(len(scores), dtype=np.float32)
    for t, w in zip(term_ids, weights):
        lo, hi = indptr[t], indptr[t + 1]
        acc[indices[lo:hi]] += w * data[lo:hi]
    docs = np.flatnonzero(acc > 0)
    order = np.lexsort((docs, -acc[docs]))[:k]
    return docs[order], acc[docs[order]]


if njit is not None:
    # cache=True: compiled once per machine (numba's on-disk cache), not in every process.
    _better = njit(cache=True, inline="always")(_better)
    _heap_offer = njit(cache=True)(_heap_offer)
    _score_top_k = njit(cache=True, nogil=True)(_score_top_k_py)
else:  # pragma: no cover
    logger.warning("numba is unavailable: search uses the numpy scorer (slower on large catalogs)")
    _score_top_k = _score_top_k_numpy


def default_cache_dir() -> str:
    """``$AGENTENV_WEBSHOP_CACHE`` or ``~/.cache/agentenv_webshop``."""
    return os.environ.get("AGENTENV_WEBSHOP_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "agentenv_webshop")


def _documents_key(asins: Sequence[str], texts: Sequence[str], stemming: bool) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([_INDEX_FORMAT, K1, B, stemming, bm25s.__version__]).encode())
    for asin, text in zip(asins, texts):
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
    data = (idf[term].astype(np.float32) * tf / (tf + norm)).astype(np.float32)
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df.astype(np.int64), out=indptr[1:])
    scores = {"data": data, "indices": doc, "indptr": indptr, "num_docs": num_docs}
    return scores, vocab


class SearchEngine:
    """A loaded BM25 index: ``search(query, k)`` returns uppercase ASINs, best first."""

    _instances: dict[str, "SearchEngine"] = {}
    _lock = threading.Lock()

    def __init__(self, model: bm25s.BM25, asins: np.ndarray, analyzer: Analyzer, path: str):
        self._model = model
        self._asins = asins  # (num_docs,) bytes, memory-mapped
        self._analyzer = analyzer
        self._vocab = model.vocab_dict
        self.path = path
        self._max_impact: np.ndarray | None = None
        # Free (scores, touched) buffer pairs; one per concurrently running search, reused.
        self._buffers: list[tuple[np.ndarray, np.ndarray]] = []
        self._buffers_lock = threading.Lock()

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
            data, indptr = scores["data"], scores["indptr"]
            max_impact = np.zeros(len(indptr) - 1, dtype=np.float32)
            nonempty = np.flatnonzero(np.diff(indptr) > 0)
            if len(nonempty):
                max_impact[nonempty] = np.maximum.reduceat(data, indptr[nonempty])
            np.save(os.path.join(tmp, _MAX_IMPACT_FILE), max_impact)
            with open(os.path.join(tmp, _META_FILE), "w") as f:
                json.dump({"format": _INDEX_FORMAT, "num_docs": len(asins), "vocab": len(vocab),
                           "stemming": analyzer.stemming, "k1": K1, "b": B}, f)
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
        engine = cls(model, asins, analyzer, path)
        engine._max_impact = np.load(os.path.join(path, _MAX_IMPACT_FILE), mmap_mode="r")
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
        """Document indices of the top-k for term ids, score descending, catalog order on ties."""
        sc = self._model.scores
        with self._buffers_lock:
            buffers = self._buffers.pop() if self._buffers else None
        if buffers is None:
            num_docs = int(sc["num_docs"])
            buffers = (np.zeros(num_docs, dtype=np.float32), np.zeros(num_docs, dtype=np.int32))
        terms, counts = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
        weights = counts.astype(np.float32)
        upper = weights.astype(np.float64) * self._max_impact[terms]
        order = np.lexsort((terms, -upper))  # a repeated query term counts once per repeat, as in Lucene
        docs, scores = _score_top_k(terms[order], weights[order], upper[order], sc["data"], sc["indices"],
                                    sc["indptr"], k, buffers[0], buffers[1])
        with self._buffers_lock:  # the scorer left the score buffer zeroed again: reusable
            self._buffers.append(buffers)
        return docs[np.lexsort((docs, -scores))]
