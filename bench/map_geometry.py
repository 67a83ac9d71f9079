"""Benchmark: the embedded map's routes against WebArena's reference travel answers.

Usage: python bench/map_geometry.py

For every pair of `sites.map.calibration.REFERENCES` (places WebArena's map tasks ask about that our
map also has): our distance and time, WebArena's reference (a distance or a time) and the ratio
ours / WebArena's. The last line is a JSON summary: pairs, the median ratio and the share within
+-25 % (overall, for distances and for times), and how long a route takes (ms, uncached).
"""
from __future__ import annotations

import json
import statistics
import time

from agentenv_webarena.sites.map.calibration import compare, resolve
from agentenv_webarena.sites.map.roads import graph, node_key

TOLERANCE = 0.25


def _within(ratios: list[float]) -> float:
    return round(sum(abs(r - 1.0) <= TOLERANCE for r in ratios) / len(ratios), 3) if ratios else 0.0


def main() -> None:
    start = time.perf_counter()
    graph()
    build_s = time.perf_counter() - start
    rows = compare()
    head = f"{'tasks':<8} {'from':<34} {'to':<34} {'mode':<5} {'ours':>16} {'WebArena':>10} {'ratio':>6}"
    print(head)
    print("-" * len(head))
    for c in rows:
        ref = c.ref
        theirs = f"{ref.km:g} km" if ref.km is not None else f"{ref.minutes:g} min"
        ours = f"{c.ours.distance_text} {c.ours.time_text}"
        tasks = ",".join(str(t) for t in ref.tasks)
        print(f"{tasks:<8} {resolve(ref.a).name[:34]:<34} {resolve(ref.b).name[:34]:<34} {ref.mode:<5} "
              f"{ours:>16} {theirs:>10} {c.ratio:6.2f}" + (f"  ({ref.note})" if ref.note else ""))
    g = graph()
    start = time.perf_counter()
    for c in rows:
        g.route(node_key(resolve(c.ref.a)), node_key(resolve(c.ref.b)), c.ref.mode)
    route_ms = (time.perf_counter() - start) / len(rows) * 1000
    ratios = [c.ratio for c in rows]
    dist = [c.ratio for c in rows if c.measure == "distance"]
    times = [c.ratio for c in rows if c.measure == "time"]
    print(json.dumps({"pairs": len(rows), "median_ratio": round(statistics.median(ratios), 3),
                      "within_25pct": _within(ratios), "distance_pairs": len(dist),
                      "distance_median_ratio": round(statistics.median(dist), 3),
                      "distance_within_25pct": _within(dist),
                      "time_pairs": len(times), "time_median_ratio": round(statistics.median(times), 3),
                      "time_within_25pct": _within(times), "graph_build_s": round(build_s, 3),
                      "route_ms": round(route_ms, 2)}))


if __name__ == "__main__":
    main()
