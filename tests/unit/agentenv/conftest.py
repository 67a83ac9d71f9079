"""A scripted local HTTP server for client tests: real sockets, per-path canned answers, a request log."""
from __future__ import annotations

import json
import threading
import time

import pytest
from helpers import serve_in_thread


class ScriptedServer:
    """Answers each path from `routes[path]`: a list of (status, json_body, delay_s) consumed in order
    (the last entry repeats; bytes bodies are sent raw). Records every request as (method, path, query, body)."""

    def __init__(self):
        self.routes: dict[str, list[tuple[int, object, float]]] = {}
        self.requests: list[tuple[str, str, str, object]] = []
        self._lock = threading.Lock()
        self.httpd, self.url = serve_in_thread(self._answer)

    def _answer(self, request, method: str) -> None:
        path, _, query = request.path.partition("?")
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        with self._lock:
            self.requests.append((method, path, query, body))
            script = self.routes.get(path, [(404, {"error": {"code": "not_found"}}, 0.0)])
            status, payload, delay = script.pop(0) if len(script) > 1 else script[0]
        if delay:
            time.sleep(delay)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            request.send_response(status)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            request.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def calls(self, path: str) -> list:
        with self._lock:
            return [r for r in self.requests if r[1] == path]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def scripted_server():
    server = ScriptedServer()
    try:
        yield server
    finally:
        server.stop()
