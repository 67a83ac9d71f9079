"""Benchmark the WebArena env server: memory per live env, /reset latency, /step latency (1 and 8 envs).

    python bench/webarena_server.py [--envs 8] [--tasks 24] [--out bench/webarena_server.json] [--server-args ARGS]

Starts `python -m agentenv_webarena.launch` (embedded sites + one Chromium) on a free port, then:
1. memory: USS summed over the server and every child process (Chromium's browser, renderer, GPU and
   utility processes, the embedded sites) with 1 live env and with N live envs (each reset to a task
   and stepped once); per additional env = (USS_N - USS_1) / (N - 1);
2. /reset latency (site state restore + fresh browser context + login + start page + observation);
3. /step latency p50/p99 while replaying reference action sequences: with 1 env; with N envs live
   but one request at a time (does a live env slow the others?); with N envs stepping at once
   (threads, one env each: bound by the cores, since every step costs CPU in Chromium, the
   Playwright driver and the server);
4. CPU per step (server + Chromium + driver + sites, summed over processes) from the one-at-a-time
   phase, and what it implies for N envs that always step together: N x CPU per step / cores (the
   replay's envs also spend time resetting and reading metadata, so they overlap less than that).
5. the embedded sites' start-up (every site of `sites.apps.SITES`: imports, the pristine database build,
   binding the ports), timed as `EmbeddedSites().start()` three times before the server starts, and the
   size of the pristine database every /reset copies.
Prints a table and writes the numbers (with machine, commit, date) to --out.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import socket
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone

import psutil
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from agentenv.envs.webarena import WebarenaEnvClient  # noqa: E402
from agentenv.health import wait_until_healthy  # noqa: E402
from agentenv_webarena.expert import MAX_SEEK_DOWN, MAX_SEEK_UP  # noqa: E402
from agentenv_webarena.sites.process import EmbeddedSites  # noqa: E402
from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, SITE_ENV_VARS, load_tasks  # noqa: E402
from agentenv_webarena.tasks.reference import (  # noqa: E402
    PAUSE,
    ReplayError,
    pause_action,
    reference_actions,
    seek_actions,
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree_uss_mb(pid: int) -> float:
    root = psutil.Process(pid)
    total = 0
    for proc in [root, *root.children(recursive=True)]:
        try:
            total += proc.memory_full_info().uss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total / 2**20


def _chromium_binary(pid: int) -> str:
    """The Chromium executable the server launched (first browser child found), for the record."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for child in psutil.Process(pid).children(recursive=True):
            try:
                cmd = child.cmdline()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            if (cmd and "chrom" in os.path.basename(cmd[0]) and "crashpad" not in cmd[0]
                    and not any(a.startswith("--type=") for a in cmd)):
                return cmd[0]
        time.sleep(0.2)
    return "unknown"


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of `pid` and its children (this client's few ms per step are left out:
    reading ~20 processes' times costs more than the client's own work)."""
    total = 0.0
    for proc in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        try:
            t = proc.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total


class _OneAtATime:
    """Serialises requests across the env threads and sums the CPU each step costs (all processes)."""

    def __init__(self, pid: int):
        self.pid, self.lock, self.cpu_s, self.steps = pid, threading.Lock(), 0.0, 0

    def step(self, client: WebarenaEnvClient, text: str) -> tuple[object, float]:
        """Step under the lock; returns (result, latency in ms, lock wait excluded)."""
        with self.lock:
            before = _tree_cpu_s(self.pid)
            t = time.perf_counter()
            out = client.step(text)
            ms = (time.perf_counter() - t) * 1e3
            self.cpu_s += _tree_cpu_s(self.pid) - before
            self.steps += 1
            return out, ms


def _replay(client: WebarenaEnvClient, task_index: int, task: dict, site_urls: dict, step_ms: list, reset_ms: list,
            lock: threading.Lock, serial: _OneAtATime | None = None) -> None:
    t = time.perf_counter()
    if serial is not None:
        with serial.lock:
            client.reset(task_index)
    else:
        client.reset(task_index)
    with lock:
        reset_ms.append((time.perf_counter() - t) * 1e3)
    for step in task.get("reference_action_sequence") or []:
        seeks = seek_actions(MAX_SEEK_DOWN, MAX_SEEK_UP)  # as the expert: scroll to an element below the fold
        while True:
            meta = client.observation_metadata()
            try:
                text = reference_actions(step, meta["obs_nodes_info"], site_urls)
                break
            except ReplayError:
                if not seeks:
                    raise
                move = seeks.pop(0)
                if _timed_step(client, pause_action(meta["obs_nodes_info"]) if move == PAUSE else move,
                               step_ms, lock, serial).done:
                    return
        if _timed_step(client, text, step_ms, lock, serial).done:
            break


def _timed_step(client: WebarenaEnvClient, text: str, step_ms: list, lock: threading.Lock,
                serial: _OneAtATime | None) -> object:
    if serial is not None:
        out, ms = serial.step(client, f"```{text}```")
    else:
        t = time.perf_counter()
        out = client.step(f"```{text}```")
        ms = (time.perf_counter() - t) * 1e3
    with lock:
        step_ms.append(ms)
    return out


def _phase(base: str, tasks: list, ids: list, n_envs: int, site_urls: dict,
           serial: _OneAtATime | None = None) -> tuple[list, list]:
    step_ms, reset_ms, lock = [], [], threading.Lock()
    clients = [WebarenaEnvClient(base, data_len=len(tasks), timeout=300) for _ in range(n_envs)]
    chunks = [ids[i::n_envs] for i in range(n_envs)]

    def run(k: int) -> None:
        for i in chunks[k]:
            _replay(clients[k], i, tasks[i], site_urls, step_ms, reset_ms, lock, serial)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n_envs)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for c in clients:
        c.close()
    return step_ms, reset_ms


def _sites_startup(runs: int = 3) -> tuple[list[float], int]:
    """Seconds of `EmbeddedSites().start()` per run, and the number of sites it serves."""
    seconds, n_sites = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        with EmbeddedSites(start_timeout_s=300) as sites:
            seconds.append(time.perf_counter() - t0)
            n_sites = len(sites.urls)
    return seconds, n_sites


def _pristine_db_mb() -> float:
    """Size of the seeded database an instance reset copies (SQLite pages in use)."""
    from agentenv_webarena.sites.apps import pristine_database

    conn = pristine_database()
    pages = conn.execute("PRAGMA page_count").fetchone()[0] - conn.execute("PRAGMA freelist_count").fetchone()[0]
    return pages * conn.execute("PRAGMA page_size").fetchone()[0] / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--envs", type=int, default=8, help="live envs in the multi-env phases")
    parser.add_argument("--tasks", type=int, default=24, help="tasks replayed per phase")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "webarena_server.json"))
    parser.add_argument("--server-args", default="",
                        help="extra launch flags, e.g. '--whole-page' (the old observation) to compare with")
    args = parser.parse_args()

    tasks = load_tasks(EMBEDDED_TASK_FILE)
    ids = list(range(0, len(tasks), max(1, len(tasks) // args.tasks)))[: args.tasks]
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k not in SITE_ENV_VARS.values()}
    sites_start_s, n_sites = _sites_startup()
    db_mb = _pristine_db_mb()
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "agentenv_webarena.launch", "--port", str(port),
                             "--log-level", "warning", *shlex.split(args.server_args)], env=env, cwd=ROOT)
    try:
        wait_until_healthy(base, timeout_s=600, proc=proc, interval_s=0.1, max_interval_s=0.1)
        start_s = time.perf_counter() - t0
        site_urls = requests.get(base + "/tasks", timeout=10).json()["site_urls"]
        requests_chromium = _chromium_binary(proc.pid)

        # warm-up: one full replay (first context, first page loads, Python imports on the hot path)
        _phase(base, tasks, ids[:2], 1, site_urls)

        # memory with 1 and N live envs (each reset and stepped once)
        def live(n: int) -> tuple[float, list]:
            clients = [WebarenaEnvClient(base, data_len=len(tasks), timeout=300) for _ in range(n)]
            for k, c in enumerate(clients):
                c.reset(ids[k % len(ids)])
                c.step("```scroll [down]```")
            time.sleep(1.0)
            return _tree_uss_mb(proc.pid), clients

        uss_1, c1 = live(1)
        for c in c1:
            c.close()
        time.sleep(0.5)
        uss_n, cn = live(args.envs)
        for c in cn:
            c.close()
        per_env = (uss_n - uss_1) / (args.envs - 1)

        step_1, reset_1 = _phase(base, tasks, ids, 1, site_urls)
        serial = _OneAtATime(proc.pid)
        step_seq, _ = _phase(base, tasks, ids, args.envs, site_urls, serial)
        step_n, reset_n = _phase(base, tasks, ids, args.envs, site_urls)
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    cpu_step_ms = serial.cpu_s / max(serial.steps, 1) * 1e3
    cores = os.cpu_count() or 1
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout.strip()
    result = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": commit,
        "server_args": args.server_args,
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, {psutil.virtual_memory().total / 2**30:.0f} GiB",
        "sites": n_sites,
        "sites_start_s_median": round(statistics.median(sites_start_s), 2),
        "sites_start_s_runs": [round(x, 2) for x in sites_start_s],
        "pristine_db_mb": round(db_mb, 1),
        "server_start_s": round(start_s, 2),
        "uss_mb_1_env": round(uss_1, 1),
        f"uss_mb_{args.envs}_envs": round(uss_n, 1),
        "uss_mb_per_additional_env": round(per_env, 1),
        "reset_ms_p50_1_env": round(statistics.median(reset_1), 1),
        "reset_ms_p99_1_env": round(_pct(reset_1, 0.99), 1),
        f"reset_ms_p50_{args.envs}_envs": round(statistics.median(reset_n), 1),
        "step_ms_p50_1_env": round(statistics.median(step_1), 1),
        "step_ms_p99_1_env": round(_pct(step_1, 0.99), 1),
        f"step_ms_p50_{args.envs}_live_one_at_a_time": round(statistics.median(step_seq), 1),
        f"step_ms_p99_{args.envs}_live_one_at_a_time": round(_pct(step_seq, 0.99), 1),
        "cpu_ms_per_step_all_processes": round(cpu_step_ms, 1),
        f"step_ms_model_{args.envs}_in_lockstep_{cores}_cores": round(args.envs * cpu_step_ms / cores, 1),
        f"step_ms_p50_{args.envs}_envs": round(statistics.median(step_n), 1),
        f"step_ms_p99_{args.envs}_envs": round(_pct(step_n, 0.99), 1),
        "chromium": requests_chromium,
        "steps_measured": [len(step_1), len(step_seq), len(step_n)],
        "resets_measured": [len(reset_1), len(reset_n)],
    }
    print(f"{'metric':34s} {'value':>10s}   target")
    targets = {"uss_mb_per_additional_env": "<= 150 MB (AgentGym ~800 MB)", "reset_ms_p50_1_env": "<= 1000 ms",
               "step_ms_p50_1_env": "<= 300 ms", f"step_ms_p50_{args.envs}_live_one_at_a_time": "<= 300 ms",
               f"step_ms_p50_{args.envs}_envs": "<= 300 ms (all stepping at once: CPU-bound)"}
    for key, value in result.items():
        if isinstance(value, (int, float)):
            print(f"{key:34s} {value:>10}   {targets.get(key, '')}")
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
