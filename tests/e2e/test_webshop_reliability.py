"""10,000 create/step/close cycles must not grow the WebShop server's memory by more than a few percent.

Each cycle is create -> reset(goal) -> step -> close over keep-alive connections from a few threads.
The explicit reset keeps the cycle cheap: a step on a never-reset session first draws a weighted
random goal, which costs more than the rest of the cycle together.
"""
from __future__ import annotations

import http.client
import json
import threading
from urllib.parse import urlparse

import psutil
import pytest

CYCLES = 10_000
WARMUP_CYCLES = 500
THREADS = 4
QUERIES = [f"search[{w}]" for w in ("shoes", "red chair", "wool socks", "office desk lamp", "green tea")]


def server_process(base_url: str) -> psutil.Process:
    """The process listening on `base_url`'s port, found through its command line."""
    port = urlparse(base_url).port
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "agentenv_webshop.launch" in cmd and str(port) in cmd:
            try:  # skip wrappers (timeout, shells) that carry the same command line but hold no socket
                if any(c.laddr.port == port and c.status == psutil.CONN_LISTEN for c in proc.net_connections()):
                    return proc
            except psutil.Error:
                continue
    raise AssertionError(f"no agentenv_webshop.launch process serving port {port}")


def run_cycles(base_url: str, n: int) -> None:
    """n create/reset/step/close cycles spread over THREADS keep-alive connections; raises on any non-200."""
    url = urlparse(base_url)
    errors: list[str] = []

    def worker(count: int, offset: int) -> None:
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        headers = {"Content-Type": "application/json"}

        def post(path: str, payload=None):
            conn.request("POST", path, body=json.dumps(payload) if payload is not None else b"", headers=headers)
            response = conn.getresponse()
            body = response.read()
            if response.status != 200:
                raise AssertionError(f"{path}: HTTP {response.status} {body[:200]!r}")
            return json.loads(body)

        try:
            for i in range(count):
                env = post("/create")
                post("/reset", {"env_idx": env, "session_id": (i * 11 + offset) % 1000})
                post("/step", {"env_idx": env, "action": QUERIES[(i + offset) % len(QUERIES)]})
                post("/close", {"env_idx": env})
        except Exception as exc:  # reported by the main thread
            errors.append(repr(exc))
        finally:
            conn.close()

    per = n // THREADS
    threads = [threading.Thread(target=worker, args=(per + (n % THREADS if k == 0 else 0), k)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.timeout(300)
def test_create_step_close_cycles_do_not_leak(webshop_url):
    proc = server_process(webshop_url)
    live_before = set(json.loads(_get(webshop_url, "/list_envs")))
    run_cycles(webshop_url, WARMUP_CYCLES)
    rss_warm = proc.memory_info().rss
    run_cycles(webshop_url, CYCLES)
    rss_after = proc.memory_info().rss
    assert set(json.loads(_get(webshop_url, "/list_envs"))) <= live_before  # every session was freed
    growth = (rss_after - rss_warm) / rss_warm
    assert growth < 0.03, f"server RSS grew {growth:.1%} ({rss_warm / 2**20:.1f} -> {rss_after / 2**20:.1f} MiB)"


def _get(base_url: str, path: str) -> bytes:
    url = urlparse(base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request("GET", path)
        return conn.getresponse().read()
    finally:
        conn.close()
