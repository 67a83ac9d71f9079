"""BM25 product search, as WebShop's pyserini/Lucene engine but with bm25s (no JVM).

Owns the index over WebShop's indexed text (``lower(Title + Description + BulletPoints[0] +
option_text)``), its on-disk cache (keyed by a hash of the documents and parameters, memory-mapped
on load, shared by all processes on the machine) and the per-process singleton. Scoring is
Lucene's BM25 (``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, ``tf / (tf + k1 (1 - b + b dl/avgdl))``)
with pyserini's defaults k1=0.9, b=0.4, via bm25s's ``lucene`` method; the index arrays are built
vectorised with numpy in bm25s's CSC layout and saved/loaded/queried with bm25s (numba backend
when numba imports, else numpy). Only documents sharing a term with the query are returned, best
first, ties broken by catalog order.

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

from agentenv_webshop.engine.text import Analyzer, product_document

logger = logging.getLogger(__name__)

__all__ = ["SearchEngine", "SEARCH_RETURN_N", "default_cache_dir", "K1", "B"]

SEARCH_RETURN_N = 50
K1 = 0.9
B = 0.4
_INDEX_FORMAT = "agentenv_webshop-bm25-v1"
_ASINS_FILE = "asins.npy"
_META_FILE = "meta.json"

try:  # numba is ~9x faster than numpy at 1M documents; fall back (with a warning) if it cannot import.
    from numba import njit

    _BACKEND = "numba"
except Exception:  # pragma: no cover - depends on the environment
    njit = None
    _BACKEND = "numpy"


def _score_top_k_py(query_ids, data, indices, indptr, num_docs, k):  # pragma: no cover - compiled by numba
    """Sum the BM25 impacts of the query's posting lists, then keep the k best (score desc, doc asc).

    Returns (docs, scores), unsorted; only documents with a positive score.
    """
    scores = np.zeros(num_docs, dtype=np.float32)
    for t in query_ids:
        for j in range(indptr[t], indptr[t + 1]):
            scores[indices[j]] += data[j]
    heap_s = np.zeros(k, dtype=np.float32)
    heap_d = np.zeros(k, dtype=np.int64)
    n = 0
    for d in range(num_docs):
        s = scores[d]
        if s <= 0.0:
            continue
        if n < k:  # sift up
            pos = n
            n += 1
            while pos > 0:
                parent = (pos - 1) >> 1
                if heap_s[parent] > s or (heap_s[parent] == s and heap_d[parent] < d):
                    heap_s[pos] = heap_s[parent]
                    heap_d[pos] = heap_d[parent]
                    pos = parent
                else:
                    break
            heap_s[pos] = s
            heap_d[pos] = d
        elif s > heap_s[0]:  # replace the worst (root) and sift down; equal scores keep the earlier doc
            pos = 0
            while True:
                child = 2 * pos + 1
                if child >= k:
                    break
                right = child + 1
                if right < k and (heap_s[right] < heap_s[child]
                                  or (heap_s[right] == heap_s[child] and heap_d[right] > heap_d[child])):
                    child = right
                if heap_s[child] < s or (heap_s[child] == s and heap_d[child] > d):
                    heap_s[pos] = heap_s[child]
                    heap_d[pos] = heap_d[child]
                    pos = child
                else:
                    break
            heap_s[pos] = s
            heap_d[pos] = d
    return heap_d[:n], heap_s[:n]


def _score_top_k_numpy(query_ids, data, indices, indptr, num_docs, k):
    """numpy equivalent of :func:`_score_top_k_py` (used when numba is unavailable)."""
    spans = [np.arange(indptr[t], indptr[t + 1]) for t in query_ids]
    pos = np.concatenate(spans) if spans else np.zeros(0, dtype=np.int64)
    scores = np.bincount(indices[pos], weights=data[pos], minlength=num_docs).astype(np.float32)
    docs = np.flatnonzero(scores > 0)
    if len(docs) > k:
        order = np.lexsort((docs, -scores[docs]))[:k]
        docs = docs[order]
    return docs, scores[docs]


if njit is not None:
    # cache=True: compiled once per machine (numba's on-disk cache), not in every process.
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
    """Tokenise and build bm25s's lucene-BM25 CSC arrays (``data``, ``indices``, ``indptr``) vectorised."""
    vocab: dict[str, int] = {}
    word_ids: dict[str, int] = {}  # surface word -> term id, or -1 for a stopword
    flat = array.array("i")
    lengths = np.zeros(num_docs, dtype=np.int64)
    terms_of = analyzer.terms
    for d, text in enumerate(texts):
        ids = []
        for term in terms_of(text):
            tid = word_ids.get(term)
            if tid is None:
                tid = word_ids[term] = vocab.setdefault(term, len(vocab))
            ids.append(tid)
        flat.extend(ids)
        lengths[d] = len(ids)
    tokens = np.frombuffer(flat, dtype=np.int32).astype(np.int64)
    n_vocab = max(len(vocab), 1)
    doc_of_token = np.repeat(np.arange(num_docs, dtype=np.int64), lengths)
    # Column-major (term, doc) keys: sorted unique keys are already in CSC order.
    keys, tf = np.unique(tokens * num_docs + doc_of_token, return_counts=True)
    del tokens, doc_of_token
    term = (keys // num_docs).astype(np.int64)
    doc = (keys % num_docs).astype(np.int32)
    del keys
    df = np.bincount(term, minlength=n_vocab).astype(np.float64)
    idf = np.log1p((num_docs - df + 0.5) / (df + 0.5))
    avgdl = float(lengths.mean()) if num_docs else 1.0
    avgdl = avgdl or 1.0
    tf = tf.astype(np.float32)
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
        docs, scores = _score_top_k(np.asarray(ids, dtype=np.int64), sc["data"], sc["indices"], sc["indptr"],
                                    int(sc["num_docs"]), k)
        return docs[np.lexsort((docs, -scores))]
