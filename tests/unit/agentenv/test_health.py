"""The one health probe and wait loop (`agentenv.health`), against loopback HTTP servers."""
from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import free_port, serve_in_thread

from agentenv import health


def _ok_server(status: int = 200):
    def handle(req, method):
        req.send_response(status)
        req.send_header("Content-Length", "4")
        req.end_headers()
        req.wfile.write(b'"ok"')

    return serve_in_thread(handle)


def test_a_server_that_answers_200_is_healthy():
    server, url = _ok_server()
    try:
        assert health.server_answers(url) and health.server_answers(url + "/")
        health.wait_until_healthy(url, timeout_s=5)
        assert subprocess.run([sys.executable, "-m", "agentenv.health", url]).returncode == 0
    finally:
        server.shutdown()
        server.server_close()


def test_errors_name_the_address_attempts_and_last_error():
    server, url = _ok_server(status=503)
    try:
        assert not health.server_answers(url)
        with pytest.raises(health.EnvServerUnavailable, match=r"after 3 attempts.*HTTP 503.*Start it"):
            health.wait_until_healthy(url, timeout_s=None, max_attempts=3, interval_s=0.01, hint="Start it.")
    finally:
        server.shutdown()
        server.server_close()
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(health.EnvServerUnavailable, match=dead):
        health.wait_until_healthy(dead, timeout_s=0.5, interval_s=0.05)
    proc = subprocess.run([sys.executable, "-m", "agentenv.health", dead, "--wait", "0.5"], capture_output=True,
                          text=True)
    assert proc.returncode == 1 and dead in proc.stderr


def test_a_server_process_that_exits_fails_at_once():
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    proc.wait()
    with pytest.raises(health.EnvServerUnavailable, match="exited with code 3"):
        health.wait_until_healthy(f"http://127.0.0.1:{free_port()}", timeout_s=30, proc=proc)


def test_a_wait_needs_a_limit():
    with pytest.raises(ValueError, match="limit"):
        health.wait_until_healthy("http://127.0.0.1:1", timeout_s=None)
