"""BrowserHost / BrowserSession against real Chromium and static pages served on 127.0.0.1.

One BrowserHost for the module (plus small dedicated ones where a test changes host-wide
settings or kills the browser); every browser and server is closed in a fixture's ``finally``.
"""
from __future__ import annotations

import asyncio
import functools
import http.server
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from agentenv_webarena.webarena.browser_env import (
    ActionExecutionError,
    BrowserConfig,
    BrowserHost,
    BrowserSession,
    create_id_based_action,
    url_allowed,
)

PAGES_DIR = Path(__file__).resolve().parents[1] / "data" / "webarena_pages"
from agentenv_webarena.webarena.browser_env import default_chromium  # noqa: E402

CHROMIUM = default_chromium()

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no Chromium at {CHROMIUM}")


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static pages, plus /set-cookie and /echo-cookie for the isolation test."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path.startswith("/slow-page"):  # answers after 500 ms
            time.sleep(0.5)
            return self._html("<title>Slow</title><p>slow page body</p>")
        if self.path.startswith("/slow-load"):  # commits at once, but "load" waits for a 10 s image
            return self._html("<title>Slow load</title><p>text first</p><img src='/slow-image' alt='late'>")
        if self.path.startswith("/slow-image"):
            time.sleep(10)
            try:
                self.send_response(404)
                self.end_headers()
            except OSError:  # the browser gave up on it long ago
                pass
            return None
        if self.path.startswith("/links"):
            return self._html("<title>Links</title><a href='/slow-page'>slow page</a> "
                              "<a href='/slow-load'>slow load</a> <a href='#frag'>fragment</a>")
        if self.path.startswith("/set-cookie"):
            return self._html("<title>Set</title><p>cookie set</p>", {"Set-Cookie": "sid=secret42; Path=/"})
        if self.path.startswith("/echo-cookie"):
            cookie = self.headers.get("Cookie", "none")
            return self._html(f"<title>Echo</title><p>cookies: {cookie}</p>")
        return super().do_GET()

    def _html(self, body: str, headers: dict | None = None):
        data = f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{body}</body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # keep test output clean
        pass


def _serve():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(PAGES_DIR)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def servers():
    """(allowed base URL, a second server's base URL that the browser may not reach)."""
    allowed, base = _serve()
    other, other_base = _serve()
    try:
        yield base, other_base
    finally:
        allowed.shutdown()
        other.shutdown()
        allowed.server_close()
        other.server_close()


@pytest.fixture(scope="module")
def base(servers):
    return servers[0]


def _config(base: str, **kwargs) -> BrowserConfig:
    return BrowserConfig(executable_path=CHROMIUM, allowed_hosts=(base.split("//", 1)[1],), **kwargs)


@pytest.fixture(scope="module")
def host(base):
    # whole-page mode: these tests reach elements below the fold (viewport-only, the default, has its own tests)
    browser_host = BrowserHost(_config(base, current_viewport_only=False))
    try:
        browser_host.start()
        yield browser_host
    finally:
        browser_host.close()


@pytest.fixture
def session(host):
    browser_session = BrowserSession(host)
    try:
        yield browser_session
    finally:
        host.run(browser_session.close(), timeout_s=30)


def act(host, session, text):
    host.run(session.execute(create_id_based_action(text)), timeout_s=30)


def observe(host, session):
    return host.run(session.observe(), timeout_s=30)


def find_id(obs, role, name):
    for node_id, info in obs.nodes_info.items():
        if info["role"] == role and info["name"] == name:
            return node_id
    raise AssertionError(f"no {role} {name!r} in:\n{obs.text}")


def scroll_y(host, session):
    return host.run(session.page.evaluate("window.scrollY"))


# -- observation --------------------------------------------------------------------------------

def test_observation_of_a_static_page(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    obs = observe(host, session)
    assert obs.text.startswith("Tab 0 (current): Test Home\n\n")
    assert obs.url == f"{base}/index.html" and obs.tabs == ["Test Home"]
    lines = obs.text.split("\n")[2:]
    assert re.fullmatch(
        r"\[\d+\] RootWebArea 'Test Home' focused: True url: " + re.escape(f"{base}/index.html"), lines[0]
    )
    body = "\n".join(lines)
    assert re.search(r"^\t\[\d+\] link 'Second page' url: " + re.escape(f"{base}/page2.html") + "$", body, re.M)
    # autofocus lands in a task after load: under heavy load the observation may come first
    assert re.search(r"^\t+\[\d+\] textbox 'Search'( focused: True)? required: True$", body, re.M)
    assert re.search(r"^\t+\[\d+\] button 'Go'$", body, re.M)
    assert re.search(r"^\t+\[\d+\] heading 'Welcome home'$", body, re.M)
    assert re.search(r"^\t+\[\d+\] StaticText 'Plain paragraph text'$", body, re.M)
    # StaticText inside a link/button/heading repeats the line above it: deduped
    assert "StaticText 'Second page'" not in body and "StaticText 'Go'" not in body
    assert "StaticText 'Welcome home'" not in body
    # full-page mode lists the element far below the fold
    far = find_id(obs, "button", "Far below button")
    assert obs.nodes_info[far]["union_bound"][1] > 720
    for info in obs.nodes_info.values():
        assert isinstance(info["backend_id"], int)
        assert info["text"] in obs.text or info["role"] == "StaticText"  # deduped StaticText stay in nodes_info


def test_viewport_only_drops_what_is_below_the_fold(base):
    vp_host = BrowserHost(_config(base, current_viewport_only=True))
    try:
        vp_session = BrowserSession(vp_host)
        vp_host.run(vp_session.open([f"{base}/index.html"]))
        obs = observe(vp_host, vp_session)
        assert "button 'Click me'" in obs.text
        assert "Far below button" not in obs.text
        assert all(info["union_bound"] is not None for info in obs.nodes_info.values())
        act(vp_host, vp_session, "scroll [down]")
        act(vp_host, vp_session, "scroll [down]")
        act(vp_host, vp_session, "scroll [down]")
        act(vp_host, vp_session, "scroll [down]")
        obs = observe(vp_host, vp_session)
        assert "Far below button" in obs.text and "button 'Click me'" not in obs.text
        vp_host.run(vp_session.close())
    finally:
        vp_host.close()


def test_observation_takes_a_bounded_number_of_cdp_calls(host, session, base):
    host.run(session.open([f"{base}/big.html"]))
    observe(host, session)  # first observation of the page: per-page CDP setup already done by open()
    calls = []
    original = session._cdp_send

    async def counting(page, method, params=None):
        calls.append(method)
        return await original(page, method, params)

    session._cdp_send = counting
    obs = observe(host, session)
    assert len(obs.nodes_info) >= 200  # 120 list items with links (+ their text)
    assert len(calls) <= 4, calls


def test_viewport_only_default_shows_field_text_and_no_list_markers(host, session, base):
    vp_host = BrowserHost(_config(base))  # the default: viewport-only, as WebArena's run.py
    try:
        vp_session = BrowserSession(vp_host)
        vp_host.run(vp_session.open([f"{base}/index.html"]))
        obs = observe(vp_host, vp_session)
        act(vp_host, vp_session, f"type [{find_id(obs, 'textbox', 'Search')}] [typed words] [0]")
        calls = []
        original = vp_session._cdp_send

        async def counting(page, method, params=None):
            calls.append(method)
            return await original(page, method, params)

        vp_session._cdp_send = counting
        obs = observe(vp_host, vp_session)
        # the typed text lives in the input's user-agent shadow tree: measured on its own, as WebArena did
        assert re.search(r"textbox 'Search'.*\n\t+\[\d+\] StaticText 'typed words'$", obs.text, re.M), obs.text
        assert len(calls) <= 4 + 3, calls  # + DOM.resolveNode, Runtime.callFunctionOn, releaseObjectGroup
        vp_host.run(vp_session.open([f"{base}/big.html"]))
        assert "ListMarker" not in observe(vp_host, vp_session).text  # WebArena cannot measure ::marker
        vp_host.run(vp_session.close())
    finally:
        vp_host.close()
    host.run(session.open([f"{base}/big.html"]))
    assert "ListMarker" in observe(host, session).text  # the whole page lists them, as WebArena's does


def test_max_obs_chars_caps_the_text_and_url_can_be_hidden(base):
    cap_host = BrowserHost(_config(base, current_viewport_only=False, max_obs_chars=120,
                                   extra_ignored_properties=("url",)))
    try:
        cap_session = BrowserSession(cap_host)
        cap_host.run(cap_session.open([f"{base}/index.html"]))
        obs = observe(cap_host, cap_session)
        head, marker = obs.text.rsplit("\n", 1)
        assert len(head) == 120 and "truncated" in marker
        assert find_id(obs, "button", "Far below button")  # nodes_info is not capped
        link = obs.nodes_info[find_id(obs, "link", "Second page")]
        assert link["text"] == f"[{find_id(obs, 'link', 'Second page')}] link 'Second page'"
        assert head.startswith("Tab 0 (current): Test Home\n\n[") and "url:" not in head
        cap_host.run(cap_session.close())
    finally:
        cap_host.close()


# -- actions ------------------------------------------------------------------------------------

def test_click_navigates_and_back_forward(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    obs = observe(host, session)
    act(host, session, f"click [{find_id(obs, 'link', 'Second page')}]")
    assert session.page.url == f"{base}/page2.html"
    obs = observe(host, session)
    assert obs.tabs == ["Second Page"] and "heading 'Second page heading'" in obs.text
    act(host, session, "go_back")
    assert observe(host, session).url == f"{base}/index.html"
    act(host, session, "go_forward")
    assert observe(host, session).url == f"{base}/page2.html"


def test_action_waits_for_the_navigation_it_started(host, session, base):
    host.run(session.open([f"{base}/links"]))
    obs = observe(host, session)
    act(host, session, f"click [{find_id(obs, 'link', 'fragment')}]")  # same-document: no wait
    assert session.page.url == f"{base}/links#frag"
    act(host, session, f"click [{find_id(obs, 'link', 'slow page')}]")
    assert session.page.url == f"{base}/slow-page"  # waited past the 500 ms answer
    assert "StaticText 'slow page body'" in observe(host, session).text


def test_waiting_for_load_is_capped(host, session, base):
    host.run(session.open([f"{base}/links"]))
    obs = observe(host, session)
    started = time.monotonic()
    act(host, session, f"click [{find_id(obs, 'link', 'slow load')}]")
    elapsed = time.monotonic() - started
    assert elapsed < 8, elapsed  # settle_timeout_ms = 3000; the load event needs 10 s
    assert session.page.url == f"{base}/slow-load"
    assert "StaticText 'text first'" in observe(host, session).text


def test_click_runs_page_handlers_and_hover(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    obs = observe(host, session)
    act(host, session, f"click [{find_id(obs, 'button', 'Click me')}]")
    obs = observe(host, session)
    assert "button 'Clicked 1'" in obs.text
    act(host, session, f"hover [{find_id(obs, 'button', 'Hover me')}]")
    assert "button 'Hovered'" in observe(host, session).text


def test_click_far_below_scrolls_it_into_view(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    obs = observe(host, session)
    act(host, session, f"click [{find_id(obs, 'button', 'Far below button')}]")
    assert scroll_y(host, session) > 1000


def test_type_unicode_and_enter_submits_the_form(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    obs = observe(host, session)
    act(host, session, f"type [{find_id(obs, 'textbox', 'Search')}] [mug™ blue 東京] [1]")
    assert session.page.url == f"{base}/results.html?q=mug%E2%84%A2+blue+%E6%9D%B1%E4%BA%AC"
    obs = observe(host, session)
    assert obs.tabs == ["Results"] and "StaticText 'mug™ blue 東京'" in obs.text


def test_type_without_enter_stays_and_appends(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    obs = observe(host, session)
    box = find_id(obs, "textbox", "Search")
    act(host, session, f"type [{box}] [abc] [0]")
    act(host, session, f"type [{box}] [def] [0]")  # WebArena does not clear existing text
    assert session.page.url == f"{base}/index.html"
    assert host.run(session.page.input_value("#q")) == "abcdef"


def test_press_sends_keys(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    observe(host, session)
    act(host, session, "press [arrowdown]")
    assert "StaticText 'key ArrowDown'" in observe(host, session).text
    act(host, session, "press [meta+a]")  # Meta -> Control off Mac: no error
    with pytest.raises(ActionExecutionError, match="NoSuchKey"):
        act(host, session, "press [NoSuchKey]")


def test_scroll_changes_scroll_y(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    assert scroll_y(host, session) == 0
    act(host, session, "scroll [down]")
    assert scroll_y(host, session) == 720  # one window height
    act(host, session, "scroll [up]")
    assert scroll_y(host, session) == 0


def test_tabs_new_focus_close(host, session, base):
    host.run(session.open([f"{base}/index.html", f"{base}/page2.html"]))
    obs = observe(host, session)
    assert obs.text.startswith("Tab 0 (current): Test Home | Tab 1: Second Page\n\n")
    act(host, session, "new_tab")
    assert len(session.pages) == 3 and session.page.url == "about:blank"
    assert observe(host, session).text.startswith("Tab 0: Test Home | Tab 1: Second Page | Tab 2 (current): ")
    act(host, session, f"goto [{base}/results.html?q=x]")
    assert observe(host, session).tabs == ["Test Home", "Second Page", "Results"]
    act(host, session, "tab_focus [1]")
    assert observe(host, session).text.startswith("Tab 0: Test Home | Tab 1 (current): Second Page | Tab 2: Results")
    act(host, session, "close_tab")  # the last remaining tab becomes current
    assert observe(host, session).text.startswith("Tab 0: Test Home | Tab 1 (current): Results\n\n")
    with pytest.raises(ActionExecutionError, match=r"tab 5 does not exist.*0\.\.1"):
        act(host, session, "tab_focus [5]")
    act(host, session, "close_tab")
    act(host, session, "close_tab")  # closing the last tab opens a blank one
    assert len(session.pages) == 1 and session.page.url == "about:blank"


def test_target_blank_link_opens_a_current_tab(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    obs = observe(host, session)
    act(host, session, f"click [{find_id(obs, 'link', 'Open in new tab')}]")
    obs = observe(host, session)
    assert obs.text.startswith("Tab 0: Test Home | Tab 1 (current): Second Page\n\n")


def test_stop_and_none_are_no_ops(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    act(host, session, "stop [N/A]")
    assert session.page.url == f"{base}/index.html"


# -- errors -------------------------------------------------------------------------------------

def test_unknown_and_stale_element_ids(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    obs = observe(host, session)
    with pytest.raises(ActionExecutionError, match=r"element \[999999\] is not in the current observation"):
        act(host, session, "click [999999]")
    link = find_id(obs, "link", "Second page")
    button = find_id(obs, "button", "Click me")
    act(host, session, f"click [{link}]")
    with pytest.raises(ActionExecutionError, match=rf"element \[{button}\] is no longer on the page"):
        act(host, session, f"click [{button}]")  # observed on the previous page


def test_refused_urls(host, session, base, servers):
    other = servers[1]
    host.run(session.open([f"{base}/index.html"]))
    for url in ("file:///etc/passwd", f"{other}/index.html", "chrome://version", "data:text/html,hi"):
        with pytest.raises(ActionExecutionError) as err:
            act(host, session, f"goto [{url}]")
        assert url in str(err.value)
    assert session.page.url == f"{base}/index.html"
    act(host, session, "goto [about:blank]")
    assert session.page.url == "about:blank"
    with pytest.raises(ValueError, match="file:///etc/passwd"):
        host.run(session.open(["file:///etc/passwd"]))


def test_route_policy_blocks_requests_the_page_makes(host, session, base, servers):
    other = servers[1]
    host.run(session.open([f"{base}/index.html"]))
    fetch = "(u) => fetch(u).then(r => r.status, e => 'blocked')"
    assert host.run(session.page.evaluate(fetch, f"{base}/page2.html")) == 200
    assert host.run(session.page.evaluate(fetch, f"{other}/page2.html")) == "blocked"
    assert not url_allowed("file:///etc/passwd", ()) and url_allowed("http://any.test/", ())


def test_sessions_do_not_share_cookies(host, base):
    first, second = BrowserSession(host), BrowserSession(host)
    try:
        host.run(first.open([f"{base}/set-cookie"]))
        host.run(second.open([f"{base}/echo-cookie"]))
        assert "cookies: none" in observe(host, second).text
        act(host, first, f"goto [{base}/echo-cookie]")
        assert "cookies: sid=secret42" in observe(host, first).text
        host.run(first.open([f"{base}/echo-cookie"]))  # open() starts a fresh context
        assert "cookies: none" in observe(host, first).text
    finally:
        host.run(first.close())
        host.run(second.close())


def test_crashed_tab_is_replaced(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    observe(host, session)

    async def crash():
        # the renderer dies before it answers, so the command is not awaited
        pending = asyncio.ensure_future(session._cdp_send(session.page, "Page.crash"))
        for _ in range(250):  # the crash event arrives asynchronously
            if session.page in session._crashed:
                break
            await asyncio.sleep(0.02)
        pending.cancel()
        await asyncio.gather(pending, return_exceptions=True)

    host.run(crash())
    with pytest.raises(ActionExecutionError, match="crashed"):
        act(host, session, "scroll [down]")
    obs = observe(host, session)
    assert obs.url == f"{base}/index.html" and "button 'Click me'" in obs.text
    act(host, session, "scroll [down]")


def test_screenshot_only_when_asked(host, session, base):
    host.run(session.open([f"{base}/index.html"]))
    png = host.run(session.screenshot())
    assert png.startswith(b"\x89PNG")


# -- host lifecycle -----------------------------------------------------------------------------

def test_host_relaunches_a_killed_browser_and_closes_idempotently(base):
    own_host = BrowserHost(_config(base))
    try:
        own_session = BrowserSession(own_host)
        own_host.run(own_session.open([f"{base}/index.html"]))

        async def browser_pid():
            cdp = await own_host.browser.new_browser_cdp_session()
            info = await cdp.send("SystemInfo.getProcessInfo")
            return next(p["id"] for p in info["processInfo"] if p["type"] == "browser")

        os.kill(own_host.run(browser_pid()), signal.SIGKILL)  # a Chromium this test started

        async def wait_disconnected():
            for _ in range(250):
                if not own_host.browser.is_connected():
                    return True
                await asyncio.sleep(0.02)
            return False

        assert own_host.run(wait_disconnected())
        with pytest.raises(ActionExecutionError):
            act(own_host, own_session, "scroll [down]")
        own_host.run(own_session.open([f"{base}/index.html"]))  # new_context relaunches Chromium
        assert own_host.launch_count == 2
        assert "button 'Click me'" in observe(own_host, own_session).text
        own_host.run(own_session.close())
        own_host.run(own_session.close())
    finally:
        own_host.close()
    own_host.close()
    with pytest.raises(RuntimeError, match="closed"):
        own_host.run(asyncio.sleep(0))


def test_run_times_out_and_refuses_the_loop_thread(host):
    with pytest.raises(TimeoutError):
        host.run(asyncio.sleep(5), timeout_s=0.1)

    async def nested():
        return host.run(asyncio.sleep(0))

    with pytest.raises(RuntimeError, match="browser loop itself"):
        host.run(nested())
