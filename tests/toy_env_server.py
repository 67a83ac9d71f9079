"""A tiny loopback HTTP server speaking the part of the WebShop server API the client uses
(GET /, /create, /reset, /step, /observation, /close), which can be killed and restarted on its
port: for tests of clients and pools spread over several servers (see tests/e2e for the real one)."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

__all__ = ["ToyWebshopServer"]


class ToyWebshopServer:
    """Episodes end after `done_after` steps with reward 1.0; every /step sleeps `step_delay_s`.

    `kill_after_steps = k` makes the server die while answering its k-th /step: that request's
    connection is dropped unanswered and the port refuses from then on (as a crashed process).
    `step_error_status = 503` answers every /step with that HTTP status (resets still work): the
    agent has produced tokens when its env fails. `restart()` serves again on the same port, with no sessions.
    """

    def __init__(self, done_after: int = 3, step_delay_s: float = 0.0, port: int = 0):
        self.done_after, self.step_delay_s = done_after, step_delay_s
        self.kill_after_steps: int | None = None
        self.step_error_status: int | None = None
        self.steps = 0
        self._lock = threading.Lock()
        self._sessions: dict[int, dict] = {}
        self._next_id = 0
        self._dead = False
        self._httpd = self._serve(port)
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    @property
    def open_sessions(self) -> int:
        with self._lock:
            return len(self._sessions)

    def _serve(self, port: int) -> ThreadingHTTPServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                owner._handle(self, "GET")

            def do_POST(self):
                owner._handle(self, "POST")

        httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return httpd

    def _reply(self, req: BaseHTTPRequestHandler, body, status: int = 200) -> None:
        data = json.dumps(body).encode()
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    def _handle(self, req: BaseHTTPRequestHandler, method: str) -> None:
        if self._dead:
            req.close_connection = True
            return
        url = urlparse(req.path)
        path = url.path.strip("/")
        payload = {}
        if method == "POST":
            length = int(req.headers.get("Content-Length") or 0)
            payload = json.loads(req.rfile.read(length) or b"null") or {}
        else:
            payload = {k: v[0] for k, v in parse_qs(url.query).items()}
        if method == "GET" and path == "":
            return self._reply(req, "ok")
        with self._lock:
            if path == "create":
                self._next_id += 1
                self._sessions[self._next_id] = {"t": 0, "goal": None}
                return self._reply(req, self._next_id)
            env = self._sessions.get(int(payload.get("env_idx", -1)))
            if env is None:
                return self._reply(req, {"error": {"code": "unknown_env_idx"}}, status=404)
            if path == "close":
                del self._sessions[int(payload["env_idx"])]
                return self._reply(req, {"closed": True})
            if path == "reset":
                env.update(t=0, goal=int(payload["session_id"]))
                return self._reply(req, [f"WebShop [SEP] Instruction: [SEP] goal {env['goal']} [SEP] Search", None])
            if path == "observation":
                return self._reply(req, f"page {env['t']}")
            if path == "step":
                self.steps += 1
                if self.step_error_status is not None:
                    return self._reply(req, {"error": {"code": "env_failed"}}, status=self.step_error_status)
                if self.kill_after_steps is not None and self.steps >= self.kill_after_steps:
                    self._die()
                    req.close_connection = True
                    return
                env["t"] += 1
                done = env["t"] >= self.done_after
                state = f"page {env['t']} of goal {env['goal']}"
        if path == "step":
            time.sleep(self.step_delay_s)
            return self._reply(req, {"state": state, "reward": 1.0 if done else 0.0, "done": done})
        return self._reply(req, {"error": {"code": "not_found"}}, status=404)

    def _die(self) -> None:
        self._dead = True
        self._sessions.clear()
        httpd = self._httpd
        threading.Thread(target=lambda: (httpd.shutdown(), httpd.server_close()), daemon=True).start()

    def restart(self) -> None:
        """Serve again on the same port (after a kill), with no sessions."""
        self.stop()
        with self._lock:
            self._sessions.clear()
            self.kill_after_steps, self.step_error_status, self.steps, self._dead = None, None, 0, False
        self._httpd = self._serve(self.port)

    def stop(self) -> None:
        """Stop serving (safe twice)."""
        self._dead = True
        self._httpd.shutdown()
        self._httpd.server_close()
