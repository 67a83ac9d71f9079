"""Benchmark: BM25 index over a generated 1.18M-product WebShop catalog (build time, memory, query latency).

Generates the catalog with ``agentenv_webshop.engine.catalog_gen`` (plain JSON, one product per line,
kept in the work dir and reused on later runs), streams it into WebShop's indexed documents, builds
the index with ``SearchEngine.build_from_texts(force=True)`` (tokenise + Lucene-BM25 arrays + save +
memory-mapped load) and times top-50 queries derived from goal instructions (WebShop synthetic goal
text, and the same text without the option/price suffix). Reference (Lucene via pyserini, measured
for the original stack): build 84 s, top-50 p50 4.1 ms / p99 10.9 ms.

Usage: python bench/webshop_index.py [--num-products 1180000] [--queries 300] [--work-dir DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import psutil

from agentenv_webshop.engine.catalog import load_products, normalize_options
from agentenv_webshop.engine.catalog_gen import write_catalog
from agentenv_webshop.engine.goal import get_synthetic_goals
from agentenv_webshop.engine.search import SearchEngine, _score_top_k_numpy
from agentenv_webshop.engine.text import product_document


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _stream_raw(path: str):
    """Yield raw products from a catalog_gen items file (one JSON object per line)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip().rstrip(",")
            if line.startswith("{"):
                yield json.loads(line)


def _fresh_load_seconds(path: str, numba_cache_dir: str | None = None) -> float:
    """Seconds for a new process to import the search module and load the index (incl. the scorer's compile)."""
    code = ("import sys, time; t = time.perf_counter(); from agentenv_webshop.engine.search import SearchEngine; "
            "from agentenv_webshop.engine.text import Analyzer; SearchEngine._load(sys.argv[1], Analyzer()); "
            "print(time.perf_counter() - t)")
    env = dict(os.environ)
    if numba_cache_dir:
        env["NUMBA_CACHE_DIR"] = numba_cache_dir
    out = subprocess.run([sys.executable, "-c", code, path], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _pct(values, q):
    return float(np.percentile(np.asarray(values) * 1e3, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-products", type=int, default=1_180_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "agentenv_webshop_bench_index"))
    args = parser.parse_args()

    cat_dir = os.path.join(args.work_dir, f"catalog_{args.num_products}")
    items_path = os.path.join(cat_dir, "items_shuffle.json")
    marker = os.path.join(cat_dir, "done.json")
    if not os.path.exists(marker):
        counts = write_catalog(cat_dir, args.num_products)
        with open(marker, "w") as f:
            json.dump(counts, f)
        print(f"generated {counts['products']} products in {counts['seconds']:.1f} s "
              f"({os.path.getsize(items_path) / 2**20:.0f} MiB items file)")
    with open(marker) as f:
        gen_seconds = json.load(f)["seconds"]

    with open(os.path.join(cat_dir, "items_ins_v2.json"), encoding="utf-8") as f:
        ins = json.load(f)
    instructed = [a for a, e in ins.items() if "instruction" in e]
    sample = set(random.Random(0).sample(instructed, min(args.queries, len(instructed))))

    t0 = time.perf_counter()
    asins, texts, sampled_raw = [], [], []
    for raw in _stream_raw(items_path):
        p = {"Title": raw["name"], "Description": raw["full_description"], "BulletPoints": raw["small_description"],
             "options": normalize_options(raw["customization_options"])[0]}
        asins.append(raw["asin"].upper())
        texts.append(product_document(p))
        if raw["asin"] in sample:
            sampled_raw.append(raw)
    read_s = time.perf_counter() - t0
    del ins
    rss_before = psutil.Process().memory_info().rss / 2**20

    t0, c0 = time.perf_counter(), time.process_time()
    engine = SearchEngine.build_from_texts(asins, texts, cache_dir=os.path.join(args.work_dir, "index"), force=True)
    build_s, build_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    peak_mb = _peak_rss_mb()
    index_mb = sum(os.path.getsize(os.path.join(engine.path, n)) for n in os.listdir(engine.path)) / 2**20
    del texts
    with tempfile.TemporaryDirectory() as numba_cache:
        load_cold_s = _fresh_load_seconds(engine.path, numba_cache)  # empty numba cache: compiles the scorer
    load_warm_s = _fresh_load_seconds(engine.path)

    products = load_products(sampled_raw, {})
    with open(os.path.join(cat_dir, "items_ins_v2.json"), encoding="utf-8") as f:
        ins = json.load(f)
    for p in products:
        e = ins[p["asin"]]
        p["instruction_text"], p["instruction_attributes"] = e["instruction"], e["instruction_attributes"]
    del ins
    rng = random.Random(1)
    goals = [rng.choice(gs) for gs in ([g for g in get_synthetic_goals([p])] for p in products) if gs]
    full_q = [g["instruction_text"] for g in goals]
    short_q = [re.split(r" with |, and price lower", q)[0] for q in full_q]

    rows = []
    mismatches = [0]
    for name, queries in (("instruction", full_q), ("instruction w/o options+price", short_q)):
        for q in queries[:20]:
            engine.search(q)
        lat, cpu, hits = [], [], 0
        for q, g in zip(queries, goals, strict=True):
            t, c = time.perf_counter(), time.thread_time()
            res = engine.search(q, k=50)
            cpu.append(time.thread_time() - c)
            lat.append(time.perf_counter() - t)
            hits += g["asin"] in res
        # exactness of the pruned scorer against exhaustive scoring on these queries
        sc = engine._model.scores
        for q in queries[:100]:
            ids = engine.query_ids(q)
            if ids:
                terms, counts = np.unique(np.asarray(ids), return_counts=True)
                docs, _ = _score_top_k_numpy(terms, counts.astype(np.float64), sc["data"], sc["indices"],
                                             sc["indptr"], len(engine), 50)
                mismatches[0] += list(engine._search_ids(ids, 50)) != list(docs)
        rows.append((name, len(queries), _pct(lat, 50), _pct(lat, 99), _pct(cpu, 50), _pct(cpu, 99),
                     hits / len(queries)))

    print(f"\nWebShop BM25 index benchmark ({len(asins):,} products; catalog generation {gen_seconds:.0f} s, "
          f"streaming read {read_s:.0f} s, not counted)")
    print(f"load average (1 min) while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'metric':<44}{'value':>14}{'Lucene ref':>14}")
    print(f"{'index build (tokenise+arrays+save+mmap load)':<44}{build_s:>12.1f} s{'84 s':>14}")
    print(f"{'  same, process CPU time':<44}{build_cpu_s:>12.1f} s{'':>14}")
    print(f"{'peak RSS of the benchmark process':<44}{peak_mb:>11.0f} MiB{'':>14}")
    print(f"{'RSS before build (docs in memory)':<44}{rss_before:>11.0f} MiB{'':>14}")
    print(f"{'index size on disk':<44}{index_mb:>11.0f} MiB{'':>14}")
    print(f"{'new process: import + load, numba compile':<44}{load_cold_s:>12.2f} s{'':>14}")
    print(f"{'new process: import + load, cached compile':<44}{load_warm_s:>12.2f} s{'':>14}")
    for name, n, p50, p99, c50, c99, hit in rows:
        print(f"{'top-50 ' + name + f' (n={n}), wall':<44}{'p50 %.2f ms' % p50:>14}{'4.1 ms':>14}")
        print(f"{'':<44}{'p99 %.2f ms' % p99:>14}{'10.9 ms':>14}")
        print(f"{'  same, thread CPU time':<44}{'p50 %.2f ms' % c50:>14}")
        print(f"{'':<44}{'p99 %.2f ms' % c99:>14}")
        print(f"{'  goal product in the top 50':<44}{'%.3f' % hit:>14}")
    print(f"pruned top-50 differs from exhaustive scoring on {mismatches[0]} of {2 * min(100, len(full_q))} queries")


if __name__ == "__main__":
    sys.exit(main())
