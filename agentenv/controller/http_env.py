"""`HttpEnvClient`: the part of an env client that is the same for every AgentGym-style server.

Owns one server session's HTTP life: `POST /create` at construction (the session id is read by
the subclass's `_session_id`), `_post` / `_get` with the session id added, a clear error when a
closed client is used, `close()` (POST /close; safe twice; 404 counts as closed) and recreating a
session the server evicted before a reset. Subclasses add the environment's prompt, parsing and
result shapes.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from agentenv.controller.env import BaseEnvClient
from agentenv.controller.http import EnvClientError, EnvHttp

__all__ = ["HttpEnvClient"]

logger = logging.getLogger(__name__)


class HttpEnvClient(BaseEnvClient):
    """Base for clients bound to one session on an env server.

    Args:
        env_server_base: server base URL, e.g. "http://127.0.0.1:36001".
        data_len: number of data items this client may be reset to (`len(client)`).
        timeout: seconds allowed per connect/read of every request.
        max_retries: extra attempts for idempotent calls (GET, /reset, /close).
        action_format: passed to `BaseEnvClient`.

    Raises:
        EnvClientError: the server could not create a session.
    """

    env_label = "env"

    def __init__(self, env_server_base: str, data_len: int, *, timeout: float = 300, max_retries: int = 3,
                 action_format: Any = "react"):
        super().__init__(action_format=action_format)
        self.env_server_base = env_server_base
        self.data_len = int(data_len)
        self.timeout = timeout
        self._http = EnvHttp(env_server_base, timeout=timeout, max_retries=max_retries)
        self._closed = False
        try:
            self.env_id = self._create()
        except EnvClientError:
            self._http.close()
            self._closed = True
            raise

    @staticmethod
    def _session_id(created: Any) -> int:
        """The session id in the server's /create answer (a bare int by default)."""
        return int(created)

    def _create(self) -> int:
        return self._session_id(self._http.post("create"))

    def __len__(self) -> int:
        return self.data_len

    def _reset_recreating(self, send: Callable[[], Any]) -> Any:
        """Run `send()` (a /reset); if the server no longer knows this session (evicted after its idle
        TTL, or restarted), create a new one and send once more: a reset starts from scratch anyway."""
        try:
            return send()
        except EnvClientError as exc:
            if exc.status != 404 or "unknown_env_idx" not in exc.body:
                raise
            old = self.env_id
            self.env_id = self._create()
            logger.info("%s %s is gone on the server (%s); continuing as new env %s", self.env_label, old,
                        exc.status, self.env_id)
            return send()

    def close(self) -> None:
        """Free the server session (POST /close). Safe to call twice; a server without /close or a
        session already evicted (HTTP 404) counts as closed."""
        if self._closed:
            return
        self._closed = True
        try:
            self._http.post("close", {"env_idx": self.env_id})
        except EnvClientError as exc:
            if exc.status != 404:
                raise
            logger.debug("%s %s: /close answered 404 (already gone or unsupported)", self.env_label, self.env_id)
        finally:
            self._http.close()

    def _post(self, path: str, payload: dict[str, Any]) -> Any:
        self._check_open(path)
        return self._http.post(path, {"env_idx": self.env_id, **payload})

    def _get(self, path: str) -> Any:
        self._check_open(path)
        return self._http.get(path, params={"env_idx": self.env_id})

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise EnvClientError(f"cannot call /{what}: {self.env_label} client for env {self.env_id} was closed",
                                 url=f"{self._http.base_url}/{what}")
