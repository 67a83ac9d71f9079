"""Benchmark the WebShop env server: /create latency, steps/s and latency under 1/16/64 concurrent
clients, search-step latency, and server memory per live session.

Starts `python -m agentenv_webshop.launch` itself (default: 1,000-product catalog) and drives it
with keep-alive HTTP clients (http.client, the cheapest Python client, in threads spread over a
few client processes so the client side is not the bottleneck on a small machine).

Each client plays episodes: reset(goal) -> search[<goal words> <nonce>] -> click[first product]
-> click[< prev] -> click[back to search] -> ... The nonce makes every search miss the server's
query cache, so search steps measure a real BM25 query plus page rendering.

    python bench/webshop_server.py [--num-products 1000] [--clients 1,16,64] [--seconds 6]
"""
from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import socket
import subprocess
import sys
import threading
import time

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Conn:
    """One keep-alive JSON connection."""

    def __init__(self, port: int):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def post(self, path: str, payload=None):
        body = json.dumps(payload).encode() if payload is not None else b""
        self.c.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        r = self.c.getresponse()
        data = r.read()
        if r.status != 200:
            raise RuntimeError(f"{path}: HTTP {r.status} {data[:200]!r}")
        return json.loads(data)

    def get(self, path: str):
        self.c.request("GET", path)
        r = self.c.getresponse()
        data = r.read()
        if r.status != 200:
            raise RuntimeError(f"{path}: HTTP {r.status} {data[:200]!r}")
        return json.loads(data)


def pct(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def start_server(args) -> tuple[subprocess.Popen, int]:
    port = free_port()
    cmd = [sys.executable, "-m", "agentenv_webshop.launch", "--port", str(port), "--log-level", "warning",
           "--max-sessions", "0", "--session-ttl", "0"]
    if args.num_products:
        cmd += ["--num-products", str(args.num_products)]
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    cmd += args.server_args.split()
    proc = subprocess.Popen(cmd, cwd=ROOT)
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            if Conn(port).get("/") == "ok":
                return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not start")


def client_thread(port, goal, stop_at, warm_until, out, num_goals):
    conn = Conn(port)
    env = conn.post("/create")
    lat = {"search": [], "other": []}
    steps = 0
    k = goal
    nonce = 0
    while time.perf_counter() < stop_at:
        obs = conn.post("/reset", {"env_idx": env, "session_id": k % num_goals})[0]
        words = obs.split(" [SEP] ")[2].split(" with ")[0].split()[-4:]
        nonce += 1
        actions = [f"search[{' '.join(words)} z{goal}x{nonce}]", None, "click[< prev]", "click[back to search]"]
        for action in actions:
            if action is None:
                clickables = conn.get(f"/available_actions?env_idx={env}")["clickables"]
                asins = [c for c in clickables if c.startswith("b0")]
                if not asins:
                    continue
                action = f"click[{asins[0]}]"
            t0 = time.perf_counter()
            conn.post("/step", {"env_idx": env, "action": action})
            dt = time.perf_counter() - t0
            if t0 >= warm_until and time.perf_counter() < stop_at:
                lat["search" if action.startswith("search") else "other"].append(dt)
                steps += 1
        k += 7
    conn.post("/close", {"env_idx": env})
    out.append((steps, lat))


def client_proc(port, first_goal, n_threads, start_at, warm_s, run_s, num_goals, queue):
    while time.time() < start_at:
        time.sleep(0.001)
    # perf_counter is per process but monotonic; convert the shared wall-clock window once
    base = time.perf_counter()
    warm_until = base + warm_s
    stop_at = warm_until + run_s
    out: list = []
    threads = [threading.Thread(target=client_thread, args=(port, first_goal + i, stop_at, warm_until, out, num_goals))
               for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put(out)


def run_load(port, n_clients, args, num_goals, server: psutil.Process):
    n_procs = min(args.client_procs, n_clients)
    per = [n_clients // n_procs + (1 if i < n_clients % n_procs else 0) for i in range(n_procs)]
    queue = mp.Queue()
    start_at = time.time() + 0.5
    procs, first = [], 0
    for n in per:
        p = mp.Process(target=client_proc,
                       args=(port, first * 13, n, start_at, args.warmup, args.seconds, num_goals, queue))
        p.start()
        procs.append(p)
        first += n
    time.sleep(max(0.0, start_at - time.time()) + args.warmup)
    cpu0 = server.cpu_times()
    results = [r for _ in procs for r in queue.get()]
    cpu1 = server.cpu_times()
    for p in procs:
        p.join()
    steps = sum(s for s, _ in results)
    search = [x for _, lat in results for x in lat["search"]]
    every = search + [x for _, lat in results for x in lat["other"]]
    return {
        "clients": n_clients,
        "steps_per_s": steps / args.seconds,
        "p50_ms": pct(every, 0.5) * 1e3,
        "p99_ms": pct(every, 0.99) * 1e3,
        "search_p50_ms": pct(search, 0.5) * 1e3,
        "search_p99_ms": pct(search, 0.99) * 1e3,
        "other_p50_ms": pct([x for _, lat in results for x in lat["other"]], 0.5) * 1e3,
        # server CPU per step (approximate: the window also covers each client's last episode and
        # its /reset, /available_actions calls); an upper bound on the unloaded per-step cost
        "server_cpu_ms_per_step": (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / max(steps, 1) * 1e3,
    }


def bench_create(port, n):
    conn = Conn(port)
    lat, ids = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        ids.append(conn.post("/create"))
        lat.append(time.perf_counter() - t0)
    for i in ids:
        conn.post("/close", {"env_idx": i})
    return pct(lat, 0.5) * 1e3, pct(lat, 0.99) * 1e3


def bench_memory(port, pid, n, num_goals):
    proc = psutil.Process(pid)
    conn = Conn(port)
    # warm up code paths and caches with a small create/reset/close round; a round as large as the
    # measured one would leave freed memory in the allocator and hide the per-session cost
    ids = [conn.post("/create") for _ in range(100)]
    for k, i in enumerate(ids):
        conn.post("/reset", {"env_idx": i, "session_id": k % num_goals})
    for i in ids:
        conn.post("/close", {"env_idx": i})
    time.sleep(0.5)
    before = proc.memory_info().rss
    ids = [conn.post("/create") for _ in range(n)]
    for k, i in enumerate(ids):
        conn.post("/reset", {"env_idx": i, "session_id": (k * 7) % num_goals})
        conn.post("/step", {"env_idx": i, "action": "click[back to search]"})
    time.sleep(0.5)
    after = proc.memory_info().rss
    for i in ids:
        conn.post("/close", {"env_idx": i})
    return (after - before) / n, before, after


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--num-products", type=int, default=1000)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--clients", default="1,16,64")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--client-procs", type=int, default=2, help="client processes the threads are spread over")
    ap.add_argument("--server-args", default="", help="extra launch flags, e.g. '--worker-threads 4'")
    ap.add_argument("--creates", type=int, default=1000)
    ap.add_argument("--live-sessions", type=int, default=5000)
    args = ap.parse_args()

    t0 = time.time()
    proc, port = start_server(args)
    print(f"server up in {time.time() - t0:.1f} s on port {port} (num_products={args.num_products})")
    try:
        probe = Conn(port)
        env = probe.post("/create")
        # num_goals from the 422 answer's valid_range, without knowing the catalog
        probe.c.request("POST", "/reset", body=json.dumps({"env_idx": env, "session_id": 10 ** 9}),
                        headers={"Content-Type": "application/json"})
        r = probe.c.getresponse()
        num_goals = json.loads(r.read())["error"]["valid_range"][1] + 1
        probe.post("/close", {"env_idx": env})

        c50, c99 = bench_create(port, args.creates)
        print(f"/create latency: p50 {c50:.2f} ms, p99 {c99:.2f} ms over {args.creates} sequential creates")
        per, before, after = bench_memory(port, proc.pid, args.live_sessions, num_goals)
        print(f"memory per live session (reset + 1 step): {per / 1024:.2f} KiB "
              f"(RSS {before / 2**20:.1f} -> {after / 2**20:.1f} MiB over {args.live_sessions} sessions)")
        print(f"{'clients':>7} {'steps/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'search p50':>11} {'search p99':>11} "
              f"{'nav p50':>8} {'srv cpu ms/step':>16}")
        for n in [int(x) for x in args.clients.split(",")]:
            r = run_load(port, n, args, num_goals, psutil.Process(proc.pid))
            print(f"{r['clients']:>7} {r['steps_per_s']:>9.0f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} "
                  f"{r['search_p50_ms']:>11.2f} {r['search_p99_ms']:>11.2f} {r['other_p50_ms']:>8.2f} "
                  f"{r['server_cpu_ms_per_step']:>16.3f}")
        print(f"server RSS at end: {psutil.Process(proc.pid).memory_info().rss / 2**20:.1f} MiB")
    finally:
        proc.terminate()
        proc.wait(timeout=15)


if __name__ == "__main__":
    main()
