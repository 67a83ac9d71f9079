"""BM25 search: WebShop's indexed text, Lucene BM25 scores (checked against bm25s's own indexer),
top-k handling, goal recall on the embedded catalog, disk cache reuse across processes, latency."""
import json
import os
import subprocess
import sys
import time

import bm25s
import numpy as np
import pytest

from agentenv_webshop.engine.catalog import load_catalog
from agentenv_webshop.engine.goal import build_goals
from agentenv_webshop.engine.search import SearchEngine
from agentenv_webshop.engine.text import Analyzer, option_text, product_document

TEXTS = [
    "red cotton t-shirt with short sleeve, machine wash",
    "blue cotton dresses for women's summer parties",
    "wireless bluetooth speaker with deep bass and long battery life",
    "argan oil shampoo, sulfate free, for dry hair; argan argan",
    "tea tree shampoo for damaged hair",
    "size 8 running shoes with rubber sole",
    "the and of with",  # only stopwords: an empty document
]
ASINS = [f"B00000T{i:03d}" for i in range(len(TEXTS))]


@pytest.fixture(scope="module")
def small_engine(tmp_path_factory):
    return SearchEngine.build_from_texts(ASINS, TEXTS, cache_dir=str(tmp_path_factory.mktemp("bm25")))


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    catalog = load_catalog()
    engine = SearchEngine.build(catalog.products, cache_dir=str(tmp_path_factory.mktemp("bm25_embedded")))
    return catalog, engine


def test_product_document_is_webshops_indexed_text():
    product = {"Title": "Acme Shirt", "Description": "Soft Cotton.", "BulletPoints": ["First", "Second"],
               "options": {"color": ["red", "blue | white"], "size": ["xl"]}}
    assert option_text(product["options"]) == "color: red, blue | white, and size: xl"
    assert product_document(product) == "acme shirt soft cotton. first color: red, blue | white, and size: xl"
    assert product_document({"Title": "T", "Description": "D", "BulletPoints": [], "options": {}}) == "t d  "


def test_analyzer_lowercases_drops_stopwords_and_stems():
    terms = Analyzer().terms("The Women's Dresses and RUNNING shoes, size 6.5")
    assert terms == ["women", "dress", "run", "shoe", "size", "6.5"]


def test_scores_equal_bm25s_lucene_indexer(small_engine):
    analyzer = Analyzer()
    reference = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    reference.index([analyzer.terms(t) for t in TEXTS], show_progress=False)
    for query in ("argan shampoo", "cotton shirt wash", "bass speaker battery", "hair"):
        terms = [t for t in analyzer.terms(query) if t in reference.vocab_dict]
        expected = reference.get_scores(terms)
        ours = small_engine._model.get_scores(terms)  # our arrays, scored by bm25s
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)
        ranked = [ASINS[i] for i in np.lexsort((np.arange(len(TEXTS)), -expected)) if expected[i] > 0]
        assert small_engine.search(query) == ranked


def test_search_results_and_k_handling(small_engine):
    assert small_engine.search("argan shampoo")[:2] == ["B00000T003", "B00000T004"]
    assert small_engine.search("DRESS")[0] == "B00000T001"  # case and stemming
    assert small_engine.search("shampoo", k=1) == ["B00000T004"]  # shorter document wins (length norm)
    assert small_engine.search("argan shampoo", k=1) == ["B00000T003"]
    # only matching docs (not the empty one)
    assert len(small_engine.search("cotton shampoo speaker shoes", k=1000)) == 6
    assert small_engine.search("the and with") == [] and small_engine.search("zzzz") == []
    assert all(a.isupper() for a in small_engine.search("size 8 shoes"))
    with pytest.raises(ValueError, match="k must be"):
        small_engine.search("shampoo", k=0)


def test_index_is_memory_mapped_and_reused_by_another_process(small_engine):
    assert isinstance(small_engine._model.scores["data"], np.memmap)
    meta = os.path.join(small_engine.path, "meta.json")
    mtime = os.path.getmtime(meta)
    code = ("import json, sys; from agentenv_webshop.engine.search import SearchEngine; "
            "e = SearchEngine.build_from_texts(json.loads(sys.argv[1]), json.loads(sys.argv[2]), "
            "cache_dir=sys.argv[3]); "
            "print(e.path); print(json.dumps(e.search('argan shampoo')))")
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(ASINS), json.dumps(TEXTS),
                           os.path.dirname(small_engine.path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    path, results = proc.stdout.splitlines()
    assert path == small_engine.path and os.path.getmtime(meta) == mtime  # loaded, not rebuilt
    assert json.loads(results) == small_engine.search("argan shampoo")
    # same documents -> the same shared instance in this process
    assert SearchEngine.build_from_texts(ASINS, TEXTS) is small_engine


def test_goal_products_found_from_instructions(embedded):
    catalog, engine = embedded
    goals = build_goals(catalog.products)
    sample = goals[:300]
    hits = 0
    for goal in sample:
        results = engine.search(goal["instruction_text"])
        assert len(results) == 50 and len(set(results)) == 50
        assert all(asin in catalog.by_asin for asin in results)
        hits += goal["asin"] in results
    assert hits / len(sample) >= 0.97
    # search is not trivial: a bare product type matches more products than one results list holds
    assert sum(p["query"] == "shampoo" for p in catalog.products) > 50


def test_search_latency_on_1000_products(tmp_path):
    catalog = load_catalog(num_products=1000)
    engine = SearchEngine.build(catalog.products, cache_dir=str(tmp_path))
    goals = build_goals(catalog.products)[:100]
    for goal in goals[:10]:
        engine.search(goal["instruction_text"])
    times = []
    for goal in goals:
        t0 = time.perf_counter()
        engine.search(goal["instruction_text"])
        times.append(time.perf_counter() - t0)
    assert np.percentile(times, 50) < 0.003


def _exhaustive(engine, ids, k):
    from agentenv_webshop.engine.search import _score_top_k_numpy

    sc = engine._model.scores
    terms, counts = np.unique(np.asarray(ids), return_counts=True)
    docs, _ = _score_top_k_numpy(terms, counts.astype(np.float64), sc["data"], sc["indices"], sc["indptr"],
                                 len(engine), k)
    return list(docs)


def _with_windows(engine, shift):
    """The same index with document windows of 2**shift documents (many windows on a small catalog)."""
    from agentenv_webshop.engine.search import _window_arrays

    sc = engine._model.scores
    win_ptr, win_max = _window_arrays(sc["data"], sc["indices"], sc["indptr"], len(engine), shift)
    return SearchEngine(engine._model, engine._asins, engine._analyzer, engine.path, win_ptr, win_max, shift)


def test_pruned_top_k_equals_exhaustive_scoring(embedded):
    catalog, engine = embedded
    queries = [g["instruction_text"] for g in build_goals(catalog.products)[300:400]]
    queries += ["shampoo", "size", "black pack of 2", "the of and", "size size color shampoo shampoo shampoo"]
    engines = [engine, _with_windows(engine, 4), _with_windows(engine, 7)]
    assert [e._win_max.shape[1] for e in engines] == [2, 250, 32]
    checked = 0
    for query in queries:
        ids = engine.query_ids(query)
        if not ids:
            continue
        for k in (1, 50):
            expected = _exhaustive(engine, ids, k)
            for e in engines:
                assert list(e._search_ids(ids, k)) == expected, (query, k, e._window_shift)
            checked += 1
    assert checked == 2 * (len(queries) - 1)


def test_ties_break_by_catalog_order_across_windows(tmp_path):
    texts = ["red shoe", "blue shoe", "red shoe", "red red shoe", "red shoe", "green hat"] * 7
    asins = [f"B0TIE{i:05d}" for i in range(len(texts))]
    engine = SearchEngine.build_from_texts(asins, texts, cache_dir=str(tmp_path))
    for e in (engine, _with_windows(engine, 1), _with_windows(engine, 3)):
        got = e.search("red shoe", k=20)
        assert got == [asins[i] for i in _exhaustive(engine, engine.query_ids("red shoe"), 20)]
        # identical documents tie exactly and come in catalog order
        same = [a for a in got if texts[asins.index(a)] == "red shoe"]
        assert same == sorted(same) and len(same) >= 10


def test_repeated_query_terms_weigh_once_per_repeat(small_engine):
    # Lucene sums repeated SHOULD clauses: "tea tea" weighs tea twice, enough to flip the ranking.
    assert small_engine.search("tea argan") == ["B00000T003", "B00000T004"]
    assert small_engine.search("tea tea argan") == ["B00000T004", "B00000T003"]
    analyzer = Analyzer()
    reference = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    reference.index([analyzer.terms(t) for t in TEXTS], show_progress=False)
    single = {t: reference.get_scores([t]) for t in ("tea", "argan")}
    expected = 2 * single["tea"] + single["argan"]
    ranked = [ASINS[i] for i in np.lexsort((np.arange(len(TEXTS)), -expected)) if expected[i] > 0]
    assert small_engine.search("tea tea argan") == ranked


def test_concurrent_searches_agree_with_sequential(embedded):
    from concurrent.futures import ThreadPoolExecutor

    catalog, engine = embedded
    queries = [g["instruction_text"] for g in build_goals(catalog.products)[:64]]
    expected = [engine.search(q) for q in queries]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(engine.search, queries))
    assert got == expected
