"""`BrowserSession`: one environment's context and tabs in the shared Chromium, driven from the host loop.

`BrowserSession.observe` (WebArena's accessibility tree, from two CDP calls per observation, plus a few for
text inside form fields in viewport-only mode),
`BrowserSession.execute` (WebArena's id-based actions), `BrowserSession.screenshot`,
`BrowserSession.close`. All coroutine methods run on the `BrowserHost` loop
(``host.run(session.observe())``).

Behaviour worth knowing (differences from WebArena's ``ScriptBrowserEnv``):

* click/hover/type scroll the element into view (``DOM.scrollIntoViewIfNeeded``) and use its
  current box (``DOM.getContentQuads``), so an element listed in a full-page observation is
  reachable; WebArena clicked the stale observed coordinates, off-screen ones included.
* No fixed sleep after an action (WebArena slept 2 s): a navigation the action started (seen
  through ``Page.frameRequestedNavigation``) is waited for until the frame stops loading, capped
  by ``settle_timeout_ms``; a link that opens a new tab makes that tab current.
* A crashed tab is replaced (same URL, re-opened as the last tab) on the next call; `execute`
  then raises `ActionExecutionError` without running the action.

Does not own Chromium or the loop (`host`), the observation text format (`observation`), the
action grammar (`actions`), task setup, logins and scoring (the environment and
`evaluation_harness`).
"""
from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import time
from typing import Any, Awaitable, Callable, TypeVar

from playwright.async_api import BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from agentenv_webarena.webarena.browser_env.actions import Action, ActionTypes, playwright_key_comb
from agentenv_webarena.webarena.browser_env.config import url_allowed
from agentenv_webarena.webarena.browser_env.host import BrowserHost
from agentenv_webarena.webarena.browser_env.observation import (
    IGNORED_PROPERTIES,
    bounds_from_snapshot,
    render_observation,
    snapshot_node_ids,
    unlisted_nodes,
)

__all__ = ["BrowserSession", "Observation", "ActionExecutionError"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# scrollTop += sign * innerHeight on the scrolling element (WebArena's scroll).
_SCROLL_JS = ("(sign) => { const el = document.scrollingElement || document.body;"
              " el.scrollTop = el.scrollTop + sign * window.innerHeight; }")
# Lets tasks the action queued (a form submission, a click handler's navigation) run before we
# look for navigations: one macrotask turn in the page, event-driven rather than a fixed sleep.
_BARRIER_JS = "new Promise((resolve) => setTimeout(resolve, 0))"
# [x, y, w, h] per node argument, relative to the viewport (text nodes through a Range), null if not measurable.
_RECTS_JS = ("function(...nodes) { return nodes.map((node) => { let rect = null;"
             " if (node && node.nodeType === Node.TEXT_NODE) { const range = document.createRange();"
             " range.selectNode(node); rect = range.getBoundingClientRect(); range.detach(); }"
             " else if (node && node.getBoundingClientRect) { rect = node.getBoundingClientRect(); }"
             " return rect ? [rect.x, rect.y, rect.width, rect.height] : null; }); }")
_MEASURE_GROUP = "webarena-observation-bounds"


class ActionExecutionError(RuntimeError):
    """An action could not be executed; the message is meant for the agent (what and why)."""


@dataclasses.dataclass
class Observation:
    """What the agent sees after a step.

    Attributes:
        text: ``"Tab 0 (current): <title> | Tab 1: <title>\\n\\n" + tree``, capped by
            ``max_obs_chars``.
        nodes_info: AX node id -> ``{"backend_id", "union_bound": [x, y, w, h] | None, "text",
            "role", "name"}`` for every node of the tree (before the cap).
        url: the current tab's URL.
        tabs: the titles of all tabs, in tab order.
    """

    text: str
    nodes_info: dict[str, dict[str, Any]]
    url: str
    tabs: list[str]


class _PageState:
    """Per-page CDP session plus what it heard about navigations during the current action."""

    def __init__(self, cdp: CDPSession, main_frame_id: str):
        self.cdp = cdp
        self.main_frame_id = main_frame_id
        self.documents = 0  # main-frame documents committed so far (ids die with their document)
        self.nav_requested = False
        self.popup_requested = False
        self.settled = asyncio.Event()
        cdp.on("Page.frameRequestedNavigation", self._on_requested)
        cdp.on("Page.frameStartedNavigating", self._on_started)
        cdp.on("Page.frameStoppedLoading", self._on_stopped)
        cdp.on("Page.navigatedWithinDocument", self._on_stopped)
        cdp.on("Page.frameNavigated", self._on_navigated)
        cdp.on("Page.windowOpen", self._on_window_open)

    def arm(self) -> None:
        self.nav_requested = False
        self.popup_requested = False
        self.settled.clear()

    def _on_requested(self, params: dict) -> None:
        if params.get("frameId") != self.main_frame_id:
            return
        disposition = params.get("disposition", "currentTab")
        if disposition == "currentTab":
            self.nav_requested = True
            self.settled.clear()
        elif disposition in ("newTab", "newWindow"):
            self.popup_requested = True

    def _on_window_open(self, params: dict) -> None:
        self.popup_requested = True  # target=_blank link or window.open: a new tab is coming

    def _on_started(self, params: dict) -> None:
        if params.get("frameId") == self.main_frame_id:
            self.nav_requested = True
            self.settled.clear()

    def _on_stopped(self, params: dict) -> None:
        if params.get("frameId") == self.main_frame_id:
            self.settled.set()

    def _on_navigated(self, params: dict) -> None:
        frame = params.get("frame") or {}
        if not frame.get("parentId") and frame.get("id"):
            self.main_frame_id = frame["id"]
            self.documents += 1


class BrowserSession:
    """One environment's browser state: a context, its tabs and the last observation.

    All coroutine methods must run on the host loop (``host.run(session.observe())``).
    """

    def __init__(self, host: BrowserHost):
        self.host = host
        self.config = host.config
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._states: dict[Page, _PageState] = {}
        self._crashed: set[Page] = set()
        self._watched: set[Page] = set()  # pages whose crash/close events we listen to
        self._new_pages: list[Page] = []  # tabs the page opened during the current action
        self._new_page_event = asyncio.Event()
        self._nodes_info: dict[str, dict[str, Any]] = {}
        self._observed: tuple[Page, int] | None = None  # (tab, document number) of the last observation
        self.cdp_calls = 0  # CDP commands this session sent (a cost counter)

    # -- properties ---------------------------------------------------------------------------
    @property
    def context(self) -> BrowserContext:
        """The current context. Raises RuntimeError before `open`."""
        if self._context is None:
            raise RuntimeError("BrowserSession has no context; call `await session.open([...])` first")
        return self._context

    @property
    def page(self) -> Page:
        """The current tab. Raises RuntimeError before `open`."""
        if self._page is None:
            raise RuntimeError("BrowserSession has no page; call `await session.open([...])` first")
        return self._page

    @property
    def pages(self) -> list[Page]:
        """All open tabs, in tab order."""
        return list(self.context.pages)

    @property
    def nodes_info(self) -> dict[str, dict[str, Any]]:
        """``nodes_info`` of the last observation (element ids the next action may use)."""
        return self._nodes_info

    # -- lifecycle ----------------------------------------------------------------------------
    async def open(self, start_urls: list[str], *, storage_state: Any = None,
                   extra_http_headers: dict[str, str] | None = None,
                   before_goto: Callable[[BrowserContext], Awaitable[Any]] | None = None) -> None:
        """Close the previous context and open a fresh one with one tab per start URL.

        Args:
            start_urls: URLs to open, one tab each; the first tab becomes current. Empty: one
                ``about:blank`` tab.
            storage_state: Playwright storage state to start from.
            extra_http_headers: headers sent with every request of this context.
            before_goto: awaited with the new context before any tab loads (e.g. to log in
                through ``context.request``).

        Raises:
            ValueError: a start URL is refused by ``allowed_hosts``.
            RuntimeError: a start URL could not be loaded (connection refused, ...).
        """
        for url in start_urls:
            if not url_allowed(url, self.config.allowed_hosts):
                raise ValueError(f"start URL {url!r} is not allowed: only http(s) URLs to "
                                 f"{self._allowed_desc()} (or about:blank) can be opened")
        await self.close()
        self._context = await self.host.new_context(storage_state=storage_state,
                                                    extra_http_headers=extra_http_headers)
        self._context.on("page", self._on_new_page)
        if before_goto is not None:
            await before_goto(self._context)
        first: Page | None = None
        for url in start_urls or ["about:blank"]:
            page = await self._new_page()
            first = first or page
            if url != "about:blank":
                try:
                    await page.goto(url, wait_until="load", timeout=self.config.action_timeout_ms)
                except PlaywrightTimeoutError as exc:
                    if page.url == "about:blank":  # nothing arrived at all
                        raise RuntimeError(f"start URL {url!r} did not answer within "
                                           f"{self.config.action_timeout_ms} ms") from exc
                    logger.warning("start URL %s did not reach load within %d ms; observing it as it is",
                                   url, self.config.action_timeout_ms)
                except PlaywrightError as exc:
                    raise RuntimeError(f"could not open start URL {url!r}: {_first_line(exc)}") from exc
        self._page = first
        await self._bounded(first.bring_to_front(), "bring the first tab to front")
        logger.debug("session opened %d tab(s): %s", len(start_urls), start_urls)

    async def close(self) -> None:
        """Close the context and forget its tabs (idempotent)."""
        context, self._context = self._context, None
        self._page = None
        self._states.clear()
        self._crashed.clear()
        self._watched.clear()
        self._new_pages.clear()
        self._nodes_info = {}
        self._observed = None
        if context is not None:
            try:
                await asyncio.wait_for(context.close(), timeout=self.config.action_timeout_ms / 1000)
            except Exception as exc:  # a crashed browser takes its contexts with it
                logger.debug("closing a context failed: %s", exc)

    # -- observation --------------------------------------------------------------------------
    async def observe(self) -> Observation:
        """WebArena's accessibility-tree observation of the current tab.

        Two CDP calls whatever the page size: ``Accessibility.getFullAXTree`` and
        ``DOMSnapshot.captureSnapshot`` (bounds of every node at once); plus one title read per
        tab. In viewport-only mode, shown nodes the snapshot does not list (text inside form fields)
        are measured on top: one call per such node and two more (`_measure`). A crashed tab is
        replaced first (see the module docstring).

        Raises:
            RuntimeError: the page could not be read twice in a row (e.g. the browser died).
        """
        page, _ = await self._live_page()
        # a navigation that committed after the action's settle window (busy machine, many envs)
        # must reach "load" before its tree is read; returns at once for a loaded page
        await self._wait_load(page)
        last_exc: Exception | None = None
        for attempt in (1, 2):
            try:
                ax = await self._cdp_send(page, "Accessibility.getFullAXTree", {})
                snapshot = await self._cdp_send(page, "DOMSnapshot.captureSnapshot", {"computedStyles": []})
                break
            except (PlaywrightError, asyncio.TimeoutError) as exc:
                # Typically a navigation replaced the document between the calls: retry once loaded.
                last_exc = exc
                logger.debug("reading the accessibility tree failed (attempt %d): %s", attempt, exc)
                await self._wait_load(page)
        else:
            raise RuntimeError(f"could not read the accessibility tree of {page.url}: "
                               f"{_first_line(last_exc)}") from last_exc
        nodes = ax.get("nodes", [])
        bounds = bounds_from_snapshot(snapshot)
        ignored = IGNORED_PROPERTIES | frozenset(self.config.extra_ignored_properties)
        if self.config.current_viewport_only:
            missing = unlisted_nodes(nodes, snapshot_node_ids(snapshot), ignored)
            if missing:
                bounds.update(await self._measure(page, missing))
        pages = self.pages
        titles = [await self._title(p) for p in pages]
        current = pages.index(page) if page in pages else 0
        text, nodes_info = render_observation(
            nodes, bounds, titles, current,
            current_viewport_only=self.config.current_viewport_only,
            viewport=(self.config.viewport_width, self.config.viewport_height),
            max_chars=self.config.max_obs_chars,
            ignored_properties=ignored,
        )
        self._nodes_info = nodes_info
        self._observed = (page, (await self._state(page)).documents)
        return Observation(text=text, nodes_info=nodes_info, url=page.url, tabs=titles)

    async def _measure(self, page: Page, backend_ids: list[int]) -> dict[int, list[float]]:
        """``[x, y, w, h]`` of DOM nodes the layout snapshot does not list, measured as WebArena measured.

        ``DOM.resolveNode`` per node (sent together), one ``Runtime.callFunctionOn`` for all of them
        (``getBoundingClientRect``; a Range for text nodes), then the objects are released. A node
        that cannot be resolved (gone, a pseudo-element) gets no bound, as in WebArena.
        """
        resolved = await asyncio.gather(*(
            self._cdp_send(page, "DOM.resolveNode", {"backendNodeId": bid, "objectGroup": _MEASURE_GROUP})
            for bid in backend_ids), return_exceptions=True)
        objects = [(bid, r["object"]["objectId"]) for bid, r in zip(backend_ids, resolved, strict=True)
                   if isinstance(r, dict) and r.get("object", {}).get("objectId")]
        out: dict[int, list[float]] = {}
        if not objects:
            return out
        try:
            result = await self._cdp_send(page, "Runtime.callFunctionOn", {
                "objectId": objects[0][1], "functionDeclaration": _RECTS_JS, "returnByValue": True,
                "arguments": [{"objectId": oid} for _, oid in objects]})
            for (bid, _), rect in zip(objects, result.get("result", {}).get("value") or [], strict=False):
                if rect is not None:
                    out[bid] = [float(v) for v in rect]
        except (PlaywrightError, asyncio.TimeoutError) as exc:
            logger.debug("measuring %d unlisted nodes failed: %s", len(objects), exc)
        try:
            await self._cdp_send(page, "Runtime.releaseObjectGroup", {"objectGroup": _MEASURE_GROUP})
        except (PlaywrightError, asyncio.TimeoutError) as exc:
            logger.debug("releasing measured nodes failed: %s", exc)
        return out

    async def screenshot(self) -> bytes:
        """A PNG of the current tab's viewport."""
        page, _ = await self._live_page()
        return await self._bounded(page.screenshot(type="png", timeout=self.config.action_timeout_ms),
                                   "take a screenshot")

    # -- actions ------------------------------------------------------------------------------
    async def execute(self, action: Action) -> None:
        """Execute one WebArena action on the current tab, then let a navigation it started load.

        Raises:
            ActionExecutionError: the action could not be executed (unknown element id, refused
                URL, no such tab, timeout, crashed tab, ...); the message says what and why.
        """
        try:
            page, replaced = await self._live_page()
        except PlaywrightError as exc:  # e.g. Chromium died: only a new `open` helps
            raise ActionExecutionError(f"the browser tab is unusable ({_first_line(exc)}); "
                                       "the session must be opened again") from exc
        if replaced:
            raise ActionExecutionError(
                f"the tab crashed and was re-opened at {page.url}; {str(action)!r} was not executed")
        t = action.action_type
        if t in (ActionTypes.STOP, ActionTypes.NONE):
            return
        handler = self._HANDLERS.get(t)
        if handler is None:
            raise ActionExecutionError(f"action type {t.value!r} cannot be executed")
        try:
            await handler(self, page, action)
        except ActionExecutionError:
            raise
        except (PlaywrightError, asyncio.TimeoutError) as exc:
            if page in self._crashed:
                raise ActionExecutionError(f"the tab crashed while executing {str(action)!r}") from exc
            raise ActionExecutionError(f"{str(action)!r} failed: {_first_line(exc)}") from exc

    async def _with_settle(self, page: Page, act: Awaitable[Any]) -> None:
        """Run an in-page action, then wait (capped) for a navigation or new tab it started."""
        state = await self._state(page)
        state.arm()
        self._new_pages.clear()
        self._new_page_event.clear()
        started = time.monotonic()
        await act
        cap_s = self.config.settle_timeout_ms / 1000
        self.cdp_calls += 1
        try:  # let queued tasks (form submission) run; a navigation may destroy the context: fine
            await asyncio.wait_for(state.cdp.send("Runtime.evaluate", {
                "expression": _BARRIER_JS, "awaitPromise": True}), timeout=cap_s)
        except (PlaywrightError, asyncio.TimeoutError):
            pass
        remaining = max(0.0, cap_s - (time.monotonic() - started))
        if state.popup_requested or self._new_pages:
            popup = await self._wait_new_page(remaining)
            if popup is not None:
                self._page = popup
                await self._wait_load(popup, remaining)
                await self._bounded(popup.bring_to_front(), "focus the new tab")
            return
        if state.nav_requested and not state.settled.is_set():
            try:
                await asyncio.wait_for(state.settled.wait(), timeout=remaining)
            except asyncio.TimeoutError:
                logger.debug("navigation on %s did not settle within %.1f s", page.url, cap_s)
        if state.nav_requested:
            # the frame may report "stopped loading" as the new document commits; make sure the
            # document the agent will observe has reached "load" (returns at once when it has)
            await self._wait_load(page, max(0.0, cap_s - (time.monotonic() - started)))

    async def _wait_new_page(self, timeout_s: float) -> Page | None:
        if not self._new_pages:
            try:
                await asyncio.wait_for(self._new_page_event.wait(), timeout=timeout_s)
            except asyncio.TimeoutError:
                logger.debug("a new tab was requested but did not appear within %.1f s", timeout_s)
        return self._new_pages[-1] if self._new_pages else None

    async def _element_point(self, page: Page, element_id: str) -> tuple[float, float]:
        """Scroll the observed element into view and return the centre of its visible box."""
        info = self._nodes_info.get(element_id)
        if info is None:
            raise ActionExecutionError(
                f"element [{element_id}] is not in the current observation; use an id shown in "
                "brackets in the latest observation")
        gone = ActionExecutionError(f"element [{element_id}] is no longer on the page (the page changed "
                                    "since the last observation)")
        if self._observed != (page, (await self._state(page)).documents):
            raise gone  # another tab, or the tab navigated: the observed ids belong to a dead document
        backend_id = info.get("backend_id")
        if backend_id is None:
            raise ActionExecutionError(f"element [{element_id}] ({info.get('role')} "
                                       f"{info.get('name')!r}) is not a page element and cannot be targeted")
        try:
            await self._cdp_send(page, "DOM.scrollIntoViewIfNeeded", {"backendNodeId": backend_id})
        except PlaywrightError as exc:
            if "No node" in str(exc) or "detached" in str(exc):
                raise gone from exc
            logger.debug("scrollIntoViewIfNeeded failed for [%s]: %s", element_id, exc)
        try:
            quads = (await self._cdp_send(page, "DOM.getContentQuads", {"backendNodeId": backend_id}))["quads"]
        except PlaywrightError as exc:
            if "No node" in str(exc) or "detached" in str(exc):
                raise gone from exc
            quads = []
        vw, vh = self.config.viewport_width, self.config.viewport_height
        for quad in quads:
            xs, ys = quad[0::2], quad[1::2]
            left, right = max(min(xs), 0.0), min(max(xs), float(vw))
            top, bottom = max(min(ys), 0.0), min(max(ys), float(vh))
            if right > left and bottom > top:  # the part inside the viewport
                return (left + right) / 2, (top + bottom) / 2
        raise ActionExecutionError(f"element [{element_id}] ({info.get('role')} {info.get('name')!r}) "
                                   "has no visible box on the page")

    async def _do_click(self, page: Page, action: Action) -> None:
        x, y = await self._element_point(page, action.element_id)
        await self._with_settle(page, self._bounded(page.mouse.click(x, y), f"click at ({x:.0f}, {y:.0f})"))

    async def _do_hover(self, page: Page, action: Action) -> None:
        x, y = await self._element_point(page, action.element_id)
        await self._bounded(page.mouse.move(x, y), f"move the mouse to ({x:.0f}, {y:.0f})")

    async def _do_type(self, page: Page, action: Action) -> None:
        x, y = await self._element_point(page, action.element_id)

        async def _type() -> None:
            await self._bounded(page.mouse.click(x, y), f"click at ({x:.0f}, {y:.0f})")
            if action.text:
                # keyboard.type sends key events per character and inserts the ones no key makes
                # (any Unicode); allow a little time per character on top of the call limit.
                budget_s = self.config.action_timeout_ms / 1000 + 0.02 * len(action.text)
                await self._bounded(page.keyboard.type(action.text), "type the text", budget_s)
            if action.press_enter:
                await self._bounded(page.keyboard.press("Enter"), "press Enter")

        await self._with_settle(page, _type())

    async def _do_press(self, page: Page, action: Action) -> None:
        key = playwright_key_comb(action.key_comb)
        await self._with_settle(page, self._bounded(page.keyboard.press(key), f"press {key}"))

    async def _do_scroll(self, page: Page, action: Action) -> None:
        sign = -1 if action.direction == "up" else 1
        await self._bounded(page.evaluate(_SCROLL_JS, sign), f"scroll {action.direction}")

    async def _do_new_tab(self, page: Page, action: Action) -> None:
        new = await self._new_page()
        self._page = new
        await self._bounded(new.bring_to_front(), "focus the new tab")

    async def _do_tab_focus(self, page: Page, action: Action) -> None:
        pages = self.pages
        if not 0 <= action.page_number < len(pages):
            raise ActionExecutionError(f"tab {action.page_number} does not exist; the open tabs are "
                                       f"0..{len(pages) - 1}")
        self._page = pages[action.page_number]
        await self._bounded(self._page.bring_to_front(), f"focus tab {action.page_number}")

    async def _do_close_tab(self, page: Page, action: Action) -> None:
        await self._bounded(page.close(), "close the tab")
        remaining = self.pages
        self._page = remaining[-1] if remaining else await self._new_page()
        await self._bounded(self._page.bring_to_front(), "focus the last tab")

    async def _do_goto(self, page: Page, action: Action) -> None:
        url = action.url
        if not url_allowed(url, self.config.allowed_hosts):
            raise ActionExecutionError(f"cannot open {url!r}: only http(s) URLs to "
                                       f"{self._allowed_desc()} are allowed")
        try:
            await page.goto(url, wait_until="commit", timeout=self.config.action_timeout_ms)
        except PlaywrightError as exc:
            raise ActionExecutionError(f"cannot open {url!r}: {_first_line(exc)}") from exc
        await self._wait_load(page)

    async def _do_history(self, page: Page, action: Action) -> None:
        go = page.go_back if action.action_type is ActionTypes.GO_BACK else page.go_forward
        await go(wait_until="commit", timeout=self.config.action_timeout_ms)  # None: no history entry
        await self._wait_load(page)

    _HANDLERS: dict[ActionTypes, Callable[["BrowserSession", Page, Action], Awaitable[None]]] = {
        ActionTypes.CLICK: _do_click,
        ActionTypes.HOVER: _do_hover,
        ActionTypes.TYPE: _do_type,
        ActionTypes.PRESS: _do_press,
        ActionTypes.SCROLL: _do_scroll,
        ActionTypes.NEW_TAB: _do_new_tab,
        ActionTypes.TAB_FOCUS: _do_tab_focus,
        ActionTypes.CLOSE_TAB: _do_close_tab,
        ActionTypes.GOTO: _do_goto,
        ActionTypes.GO_BACK: _do_history,
        ActionTypes.GO_FORWARD: _do_history,
    }

    # -- helpers ------------------------------------------------------------------------------
    def _allowed_desc(self) -> str:
        hosts = self.config.allowed_hosts
        return ", ".join(hosts) if hosts else "any host"

    async def _bounded(self, awaitable: Awaitable[T], what: str, timeout_s: float | None = None) -> T:
        """Await with the per-call limit; a timeout becomes an ActionExecutionError naming the call."""
        limit = timeout_s if timeout_s is not None else self.config.action_timeout_ms / 1000
        try:
            return await asyncio.wait_for(awaitable, timeout=limit)
        except asyncio.TimeoutError as exc:
            raise ActionExecutionError(f"could not {what} within {limit:.1f} s") from exc

    async def _cdp_send(self, page: Page, method: str, params: dict | None = None) -> dict:
        """One CDP command on the page's cached session, under the per-call limit."""
        state = await self._state(page)
        self.cdp_calls += 1
        return await asyncio.wait_for(_raw_cdp_send(state.cdp, method, params or {}),
                                      timeout=self.config.action_timeout_ms / 1000)

    async def _state(self, page: Page) -> _PageState:
        state = self._states.get(page)
        if state is None:
            timeout = self.config.action_timeout_ms / 1000
            cdp = await asyncio.wait_for(self.context.new_cdp_session(page), timeout=timeout)
            await asyncio.wait_for(cdp.send("Page.enable"), timeout=timeout)
            tree = await asyncio.wait_for(cdp.send("Page.getFrameTree"), timeout=timeout)
            state = _PageState(cdp, tree["frameTree"]["frame"]["id"])
            self._states[page] = state
        return state

    def _on_new_page(self, page: Page) -> None:
        self._watch(page)
        self._new_pages.append(page)
        self._new_page_event.set()

    def _watch(self, page: Page) -> None:
        if page in self._watched:
            return
        self._watched.add(page)
        page.on("crash", self._on_crash)
        page.on("close", self._on_close)

    def _on_close(self, page: Page) -> None:
        self._states.pop(page, None)
        self._watched.discard(page)

    def _on_crash(self, page: Page) -> None:
        logger.warning("tab crashed: %s", page.url)
        self._crashed.add(page)

    async def _new_page(self) -> Page:
        page = await self._bounded(self.context.new_page(), "open a new tab")
        self._watch(page)
        if page in self._new_pages:  # our own tabs are not popups
            self._new_pages.remove(page)
        await self._state(page)
        return page

    async def _live_page(self) -> tuple[Page, bool]:
        """The current tab, replacing a crashed one; returns (page, whether it was replaced)."""
        page = self.page
        if page in self._crashed:
            url = page.url
            self._crashed.discard(page)
            self._states.pop(page, None)
            try:
                await asyncio.wait_for(page.close(), timeout=self.config.action_timeout_ms / 1000)
            except Exception as exc:
                logger.debug("closing the crashed tab failed: %s", exc)
            fresh = await self._new_page()
            self._page = fresh
            if url and url != "about:blank" and url_allowed(url, self.config.allowed_hosts):
                try:
                    await fresh.goto(url, wait_until="commit", timeout=self.config.action_timeout_ms)
                    await self._wait_load(fresh)
                except PlaywrightError as exc:
                    logger.warning("re-opening %s after a crash failed: %s", url, exc)
            logger.warning("replaced a crashed tab with a fresh one at %s", fresh.url)
            return fresh, True
        if page.is_closed():  # closed by the page itself (window.close())
            remaining = self.pages
            self._page = remaining[-1] if remaining else await self._new_page()
            return self._page, False
        return page, False

    async def _wait_load(self, page: Page, timeout_s: float | None = None) -> None:
        """Wait for "load" on the page's current document, capped; a timeout is not an error."""
        limit = self.config.settle_timeout_ms / 1000 if timeout_s is None else timeout_s
        try:
            await page.wait_for_load_state("load", timeout=max(limit, 0.001) * 1000)
        except PlaywrightError as exc:
            logger.debug("%s did not reach load within %.1f s: %s", page.url, limit, _first_line(exc))

    async def _title(self, page: Page) -> str:
        try:
            return await asyncio.wait_for(page.title(), timeout=self.config.action_timeout_ms / 1000)
        except (PlaywrightError, asyncio.TimeoutError) as exc:
            logger.debug("reading the title of %s failed: %s", page.url, exc)
            return ""


async def _raw_cdp_send(cdp: CDPSession, method: str, params: dict) -> dict:
    """`CDPSession.send` without the public wrapper's result mapping.

    The wrapper walks the whole result converting implementation objects to API objects; a CDP
    result holds only JSON, and for ``Accessibility.getFullAXTree`` (~100 KB) that walk was the
    largest Python cost of a step (py-spy). Falls back to the public call if the wrapper changes.
    """
    impl = getattr(cdp, "_impl_obj", None)
    send = getattr(impl, "send", None)
    if send is None:
        return await cdp.send(method, params)
    if "timeout" in inspect.signature(send).parameters:  # the impl takes it since Playwright 1.5x
        return await send(method=method, params=params, timeout=None)
    return await send(method=method, params=params)


def _first_line(exc: BaseException | None) -> str:
    text = str(exc) if exc is not None else ""
    text = text.strip().split("\n", 1)[0]
    return text or type(exc).__name__
