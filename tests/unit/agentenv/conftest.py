"""A scripted local HTTP server for client tests: real sockets, per-path canned answers, a request log."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class ScriptedServer:
    """Answers each path from `routes[path]`: a list of (status, json_body, delay_s) consumed in order
    (the last entry repeats; bytes bodies are sent raw). Records every request as (method, path, query, body)."""

    def __init__(self):
        self.routes: dict[str, list[tuple[int, object, float]]] = {}
        self.requests: list[tuple[str, str, str, object]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _answer(self, method: str) -> None:
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                with server._lock:
                    server.requests.append((method, path, query, body))
                    script = server.routes.get(path, [(404, {"error": {"code": "not_found"}}, 0.0)])
                    status, payload, delay = script.pop(0) if len(script) > 1 else script[0]
                if delay:
                    time.sleep(delay)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                self._answer("GET")

            def do_POST(self):
                self._answer("POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()

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
