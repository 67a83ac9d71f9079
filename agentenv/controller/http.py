"""The one HTTP transport every environment client uses, and its error type.

Owns the timeout and retry policy: every request honours the configured timeout, and only
idempotent calls are retried (GET requests and the POST paths named idempotent by the caller,
e.g. /reset and /close). A non-idempotent call such as /step or /create is sent exactly once,
so a slow or failed step is never executed twice on the server. It does not know any endpoint.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Iterable, Optional

import requests

__all__ = ["EnvClientError", "EnvHttp"]

logger = logging.getLogger(__name__)

# Statuses worth retrying for an idempotent call: the server is busy, restarting or overloaded.
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class EnvClientError(RuntimeError):
    """An environment server call failed (network error, timeout or non-2xx answer).

    Attributes:
        url: the full URL that was requested.
        status: the HTTP status, or None when no answer arrived.
        body: the (truncated) response body, or "" when none.
    """

    def __init__(self, message: str, *, url: str, status: Optional[int] = None, body: str = ""):
        super().__init__(message)
        self.url = url
        self.status = status
        self.body = body


class EnvHttp:
    """A small JSON-over-HTTP transport bound to one server base URL.

    Args:
        base_url: e.g. "http://127.0.0.1:36001" (a trailing slash is ignored).
        timeout: seconds allowed for connecting and for each read of one attempt.
        max_retries: extra attempts for idempotent calls (0 disables retries).
        backoff_s: sleep before the first retry; doubles on every further retry.
        idempotent_posts: POST paths that may be retried (e.g. {"reset", "close"}).
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 300.0,
        max_retries: int = 3,
        backoff_s: float = 0.1,
        idempotent_posts: Iterable[str] = ("reset", "close"),
    ):
        if timeout is None or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries!r}")
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.idempotent_posts = frozenset(p.strip("/") for p in idempotent_posts)
        self._session = requests.Session()

    def get(self, path: str, params: Optional[dict[str, Any]] = None) -> Any:
        """GET `path` (always retried on transient failures) and return the decoded JSON."""
        return self._request("GET", path, params=params, idempotent=True)

    def post(self, path: str, payload: Optional[dict[str, Any]] = None) -> Any:
        """POST JSON to `path` and return the decoded JSON; retried only if `path` is idempotent."""
        return self._request("POST", path, json=payload, idempotent=path.strip("/") in self.idempotent_posts)

    def close(self) -> None:
        """Release pooled connections."""
        self._session.close()

    def _request(self, method: str, path: str, *, idempotent: bool, **kwargs: Any) -> Any:
        url = f"{self.base_url}/{path.lstrip('/')}"
        attempts = 1 + (self.max_retries if idempotent else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._session.request(method, url, timeout=self.timeout, **kwargs)
            except (requests.ConnectionError, requests.Timeout) as exc:
                if last:
                    kind = "timed out" if isinstance(exc, requests.Timeout) else "failed to connect"
                    raise EnvClientError(
                        f"{method} {url} {kind} after {attempt + 1} attempt(s) (timeout {self.timeout:g} s): {exc}",
                        url=url,
                    ) from exc
                self._sleep_before_retry(attempt, method, url, repr(exc))
                continue
            except requests.RequestException as exc:  # malformed URL and the like: never transient
                raise EnvClientError(f"{method} {url} failed: {exc}", url=url) from exc
            if response.status_code < 300:
                try:
                    return response.json()
                except ValueError as exc:
                    raise EnvClientError(
                        f"{method} {url} answered {response.status_code} with a non-JSON body: {response.text[:500]!r}",
                        url=url, status=response.status_code, body=response.text[:2000],
                    ) from exc
            if response.status_code in _RETRY_STATUSES and not last:
                self._sleep_before_retry(attempt, method, url, f"HTTP {response.status_code}")
                continue
            raise EnvClientError(
                f"{method} {url} answered HTTP {response.status_code}: {response.text[:500]}",
                url=url, status=response.status_code, body=response.text[:2000],
            )
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _sleep_before_retry(self, attempt: int, method: str, url: str, reason: str) -> None:
        delay = self.backoff_s * (2 ** attempt)
        logger.warning("%s %s failed (%s); retry %d/%d in %.2f s",
                       method, url, reason, attempt + 1, self.max_retries, delay)
        time.sleep(delay)
