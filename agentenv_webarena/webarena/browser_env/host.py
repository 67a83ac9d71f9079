"""`BrowserHost`: one Chromium process and the one asyncio loop (a daemon thread) that drives it.

`BrowserHost.run` is the thread-safe door (run a coroutine on the loop and wait).
`BrowserHost.new_context` gives a context with the configured viewport whose every request is
checked against the allow-list (`config.url_allowed`; refused requests are aborted). A crashed or
closed Chromium is relaunched on the next `new_context`.

Does not own what an environment does with its context (tabs, observations, actions: `session`).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any, Awaitable, Coroutine, TypeVar

from playwright.async_api import Browser, BrowserContext, Playwright, Request, Route, async_playwright
from playwright.async_api import Error as PlaywrightError

from agentenv_webarena.webarena.browser_env.config import CHROMIUM_ARGS, BrowserConfig, url_allowed

__all__ = ["BrowserHost"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Limit for lifecycle calls that are not agent actions (launch, new context, close): generous,
# because a loaded machine can take seconds to start a Chromium or a context.
_LIFECYCLE_TIMEOUT_S = 60.0


class BrowserHost:
    """One Chromium process driven from one asyncio loop running in a daemon thread.

    Every Playwright object belongs to that loop: call coroutines through `run` from any other
    thread. Used as a context manager it starts and closes itself.
    """

    def __init__(self, config: BrowserConfig | None = None):
        self.config = config or BrowserConfig()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._launch_lock: asyncio.Lock | None = None
        self._state_lock = threading.Lock()
        self._closed = False
        self.launch_count = 0  # how many times Chromium was (re)launched

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        """Start the loop thread and launch Chromium (idempotent).

        Raises:
            RuntimeError: the host was closed, or Chromium could not be launched.
        """
        with self._state_lock:
            if self._closed:
                raise RuntimeError("BrowserHost is closed; create a new one")
            if self._loop is not None:
                return
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def _serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            self._thread = threading.Thread(target=_serve, name="webarena-browser-loop", daemon=True)
            self._thread.start()
            ready.wait()
            self._loop = loop
        self.run(self._ensure_browser(), timeout_s=60)

    def run(self, coro: Coroutine[Any, Any, T] | Awaitable[T], timeout_s: float | None = None) -> T:
        """Run ``coro`` on the host loop and return its result (thread-safe; starts the host if needed).

        Args:
            coro: a coroutine, e.g. ``session.observe()``.
            timeout_s: give up after this many seconds; the coroutine is cancelled.

        Raises:
            TimeoutError: ``timeout_s`` passed.
            RuntimeError: called from the loop thread itself (it would deadlock), or the host is closed.
        """
        if self._closed or threading.current_thread() is self._thread:
            if asyncio.iscoroutine(coro):
                coro.close()  # never awaited: avoid the "was never awaited" warning
            if self._closed:
                raise RuntimeError("BrowserHost is closed; create a new one")
            raise RuntimeError("BrowserHost.run() was called on the browser loop itself; `await` the "
                               "coroutine there instead")
        if self._loop is None:
            self.start()
        loop = self._loop
        assert loop is not None
        future = asyncio.run_coroutine_threadsafe(_as_coroutine(coro), loop)
        try:
            return future.result(timeout=timeout_s)
        except concurrent.futures.TimeoutError as exc:
            future.cancel()
            raise TimeoutError(f"browser call did not finish within {timeout_s} s") from exc

    def close(self) -> None:
        """Close Chromium, stop Playwright and the loop thread (idempotent)."""
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=30)
        except Exception as exc:  # closing must not raise; the process may already be gone
            logger.warning("closing Chromium failed: %s", exc)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=10)
        if not loop.is_running():
            loop.close()
        logger.info("browser host closed")

    def __enter__(self) -> "BrowserHost":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The host loop (None before `start`)."""
        return self._loop

    @property
    def browser(self) -> Browser | None:
        """The current Chromium (replaced after a relaunch)."""
        return self._browser

    # -- on the loop -------------------------------------------------------------------------
    async def _ensure_browser(self) -> Browser:
        if self._launch_lock is None:
            self._launch_lock = asyncio.Lock()
        async with self._launch_lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            if self._browser is not None:
                logger.warning("Chromium is gone (crashed or closed); relaunching")
                self._browser = None
            cfg = self.config
            for attempt in (1, 2):
                if self._playwright is None:
                    self._playwright = await asyncio.wait_for(async_playwright().start(),
                                                              timeout=_LIFECYCLE_TIMEOUT_S)
                try:
                    browser = await self._playwright.chromium.launch(
                        executable_path=cfg.executable_path, headless=cfg.headless,
                        args=list(CHROMIUM_ARGS), timeout=_LIFECYCLE_TIMEOUT_S * 1000,
                    )
                    break
                except PlaywrightError as exc:
                    # The Playwright driver itself may have died with the browser: restart it once.
                    await self._stop_playwright()
                    if attempt == 2:
                        raise RuntimeError(f"could not launch Chromium at {cfg.executable_path!r}: {exc}; "
                                           "set BrowserConfig.executable_path (or WEBARENA_CHROMIUM)") from exc
            self._browser = browser
            self.launch_count += 1
            logger.info("Chromium launched (%s, version %s)", cfg.executable_path, browser.version)
            return browser

    async def _stop_playwright(self) -> None:
        if self._playwright is not None:
            try:
                await asyncio.wait_for(self._playwright.stop(), timeout=_LIFECYCLE_TIMEOUT_S)
            except Exception as exc:  # a dead driver cannot be stopped cleanly
                logger.debug("stopping Playwright failed: %s", exc)
            self._playwright = None

    async def _shutdown(self) -> None:
        if self._browser is not None:
            try:
                await asyncio.wait_for(self._browser.close(), timeout=_LIFECYCLE_TIMEOUT_S)
            except Exception as exc:
                logger.debug("closing Chromium failed: %s", exc)
            self._browser = None
        await self._stop_playwright()

    async def new_context(self, *, storage_state: Any = None,
                          extra_http_headers: dict[str, str] | None = None) -> BrowserContext:
        """A fresh isolated context (own cookies/storage) with the viewport and the request policy.

        Must run on the host loop (e.g. inside ``host.run(...)``). Relaunches Chromium first if it
        crashed or was closed.

        Args:
            storage_state: Playwright storage state (path or dict) to start from.
            extra_http_headers: headers sent with every request (e.g. an instance header).
        """
        browser = await self._ensure_browser()
        cfg = self.config
        kwargs: dict[str, Any] = dict(
            viewport={"width": cfg.viewport_width, "height": cfg.viewport_height},
            device_scale_factor=1,  # WebArena asserts devicePixelRatio == 1
            service_workers="block",  # they could fetch past the route policy
            accept_downloads=False,
        )
        if storage_state is not None:
            kwargs["storage_state"] = storage_state
        if extra_http_headers:
            kwargs["extra_http_headers"] = dict(extra_http_headers)
        try:
            context = await asyncio.wait_for(browser.new_context(**kwargs), timeout=_LIFECYCLE_TIMEOUT_S)
        except PlaywrightError:
            if browser.is_connected():
                raise
            browser = await self._ensure_browser()  # died between the check and the call
            context = await asyncio.wait_for(browser.new_context(**kwargs), timeout=_LIFECYCLE_TIMEOUT_S)
        context.set_default_timeout(cfg.action_timeout_ms)
        context.set_default_navigation_timeout(cfg.action_timeout_ms)
        await asyncio.wait_for(context.route("**/*", self._route), timeout=_LIFECYCLE_TIMEOUT_S)
        return context

    async def _route(self, route: Route, request: Request) -> None:
        try:
            if url_allowed(request.url, self.config.allowed_hosts):
                await route.continue_()
            else:
                logger.debug("blocked request to %s", request.url)
                await route.abort("blockedbyclient")
        except PlaywrightError as exc:  # the page went away meanwhile
            logger.debug("route handling for %s failed: %s", request.url, exc)


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable
