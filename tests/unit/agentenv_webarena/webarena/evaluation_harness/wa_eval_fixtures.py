"""Helpers for the WebArena evaluator tests (imported by the test modules; the `site` and `browser`
fixtures built from them live in conftest.py): a loopback site (also the OpenAI-compatible judge) served
by a threaded http.server, and a runner driving one real Chromium."""
from __future__ import annotations

import asyncio
import json
from typing import Callable
from urllib.parse import parse_qs, urlparse

from helpers import serve_in_thread

from agentenv_webarena.webarena.browser_env import default_chromium  # noqa: E402

CHROMIUM = default_chromium()
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]

# (status, content_type, body, extra headers)
Reply = tuple[int, str, bytes, dict]
Route = Callable[[str, dict, bytes, dict], Reply]


def html_reply(body: str, status: int = 200) -> Reply:
    return status, "text/html; charset=utf-8", body.encode(), {}


def json_reply(obj, status: int = 200) -> Reply:
    return status, "application/json", json.dumps(obj).encode(), {}


class LoopbackSite:
    """A threaded HTTP server on 127.0.0.1: `routes[(method, path)] = fn(path, query, body, headers)`.

    Every request is logged as (method, path, query, body, headers) in `requests`.
    """

    def __init__(self):
        self.routes: dict[tuple[str, str], Route] = {}
        self.requests: list[tuple[str, str, dict, bytes, dict]] = []
        self.server, self.url = serve_in_thread(self._serve)

    def _serve(self, request, method: str) -> None:
        parsed = urlparse(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        query = parse_qs(parsed.query)
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append((method, parsed.path, query, body, headers))
        route = self.routes.get((method, parsed.path))
        status, ctype, payload, extra = (
            route(parsed.path, query, body, headers) if route else html_reply("<h1>Not found</h1>", 404)
        )
        request.send_response(status)
        request.send_header("Content-Type", ctype)
        request.send_header("Content-Length", str(len(payload)))
        for key, value in extra.items():
            request.send_header(key, value)
        request.end_headers()
        request.wfile.write(payload)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class BrowserRunner:
    """One asyncio loop and one Chromium; `run(coro)` drives a coroutine to completion."""

    def __init__(self):
        from playwright.async_api import async_playwright

        self.loop = asyncio.new_event_loop()
        self.playwright = self.run(async_playwright().start())
        self.browser = self.run(
            self.playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        )

    def run(self, coro):
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout=60))

    def with_page(self, fn, *, extra_http_headers=None):
        """Run `await fn(page)` in a fresh context; the context is closed whatever happens."""

        async def body():
            context = await self.browser.new_context(extra_http_headers=extra_http_headers)
            try:
                return await fn(await context.new_page())
            finally:
                await context.close()

        return self.run(body())

    def close(self) -> None:
        try:
            self.run(self.browser.close())
            self.run(self.playwright.stop())
        finally:
            self.loop.close()
