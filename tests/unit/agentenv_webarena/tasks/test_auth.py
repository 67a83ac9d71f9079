"""Site logins against a loopback site with real Chromium: embedded form POSTs through
`context.request`, a UI login, and WebArena's `.auth/*_state.json` files."""
from __future__ import annotations

import asyncio
import copy
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from agentenv_webarena.tasks.auth import (
    ACCOUNTS,
    ADMIN_LOGIN_PATH,
    EMBEDDED_LOGINS,
    FORUM_LOGIN_PATH,
    SHOP_LOGIN_PATH,
    LoginError,
    load_storage_state,
    login,
    login_sites,
    save_storage_state,
    storage_state_path,
)
from agentenv_webarena.webarena.browser_env import default_chromium  # noqa: E402

CHROMIUM = default_chromium()
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]

# path -> (username field, password field, account site, cookie, login page)
FORMS = {
    SHOP_LOGIN_PATH: ("login[username]", "login[password]", "shopping", "shop_session", "/customer/account/login/"),
    "/admin" + ADMIN_LOGIN_PATH: ("login[username]", "login[password]", "shopping_admin", "admin_session", "/admin"),
    FORUM_LOGIN_PATH: ("_username", "_password", "reddit", "forum_session", "/login"),
}
SITE_ACCOUNTS = copy.deepcopy(ACCOUNTS)  # what the fake site accepts (tests patch ACCOUNTS)
UI_LOGIN_PAGE = """<html><body><form method="post" action="/login">
<label for="u">Username</label><input id="u" name="_username">
<label for="p">Password</label><input id="p" name="_password" type="password">
<button type="submit">Log in</button></form></body></html>"""


class Handler(BaseHTTPRequestHandler):
    seen_headers: list[dict] = []

    def log_message(self, *args):
        pass

    def _send(self, status, body=b"", headers=()):
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = urlparse(self.path).path
        if path == "/login":
            self._send(200, UI_LOGIN_PAGE.encode())
        else:
            self._send(200, b"<html><body><h1>Front page</h1></body></html>")

    def do_POST(self):
        path = urlparse(self.path).path
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode()).items()}
        Handler.seen_headers.append({k.lower(): v for k, v in self.headers.items()})
        if path == "/login":  # the UI form posts here
            path = FORUM_LOGIN_PATH
        user_field, password_field, site, cookie, login_page = FORMS[path]
        account = SITE_ACCOUNTS[site]
        if form.get(user_field) == account["username"] and form.get(password_field) == account["password"]:
            self._send(303, headers=[("Location", "/"), ("Set-Cookie", f"{cookie}=tok-{site}; Path=/; HttpOnly")])
        else:
            self._send(303, headers=[("Location", login_page)])


@pytest.fixture(scope="module")
def site_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium not found at {CHROMIUM}; set WEBARENA_CHROMIUM")
    from playwright.async_api import async_playwright

    loop = asyncio.new_event_loop()
    pw = loop.run_until_complete(async_playwright().start())
    chromium = loop.run_until_complete(pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS))

    def run(fn, **context_kw):
        async def body():
            context = await chromium.new_context(**context_kw)
            try:
                return await fn(context)
            finally:
                await context.close()

        return loop.run_until_complete(asyncio.wait_for(body(), timeout=60))

    try:
        yield run
    finally:
        loop.run_until_complete(chromium.close())
        loop.run_until_complete(pw.stop())
        loop.close()


async def cookie_names(context, url):
    return sorted(c["name"] for c in await context.cookies(url))


def test_embedded_logins_post_the_form_and_keep_the_cookie(browser, site_url):
    urls = {"shopping": site_url, "shopping_admin": f"{site_url}/admin", "reddit": site_url, "map": "http://unused"}

    async def body(context):
        await login_sites(context, ["shopping", "shopping_admin", "reddit", "map"], urls, embedded=True)
        return await cookie_names(context, site_url)

    Handler.seen_headers.clear()
    cookies = browser(body, extra_http_headers={"X-Webarena-Instance": "env-1"})
    assert cookies == ["admin_session", "forum_session", "shop_session"]
    assert [h.get("x-webarena-instance") for h in Handler.seen_headers] == ["env-1"] * 3


def test_embedded_login_refused_raises(browser, site_url, monkeypatch):
    monkeypatch.setitem(ACCOUNTS, "reddit", {"username": "MarvelsGrantMan136", "password": "wrong"})

    async def body(context):
        await login(context, "reddit", site_url, embedded=True)

    with pytest.raises(LoginError, match="refused 'MarvelsGrantMan136'.*login page"):
        browser(body)


def test_embedded_login_of_a_site_without_an_embedded_recipe_is_a_value_error(browser, site_url, monkeypatch):
    monkeypatch.delitem(EMBEDDED_LOGINS, "gitlab")

    async def body(context):
        await login(context, "gitlab", site_url, embedded=True)

    with pytest.raises(ValueError, match="embedded sites have no 'gitlab'"):
        browser(body)


def test_ui_login_fills_the_form_in_a_page_of_the_context(browser, site_url):
    async def body(context):
        await login(context, "reddit", site_url, embedded=False, timeout_ms=10_000)
        return await cookie_names(context, site_url), len(context.pages)

    assert browser(body) == (["forum_session"], 0)


def test_ui_login_refused_raises(browser, site_url, monkeypatch):
    monkeypatch.setitem(ACCOUNTS, "reddit", {"username": "MarvelsGrantMan136", "password": "wrong"})

    async def body(context):
        await login(context, "reddit", site_url, embedded=False, timeout_ms=3_000)

    with pytest.raises(LoginError, match="reddit"):
        browser(body)


def test_storage_state_files_use_webarena_names(browser, site_url, tmp_path):
    assert storage_state_path(["reddit", "gitlab"], tmp_path) == str(tmp_path / "gitlab.reddit_state.json")
    assert storage_state_path(["shopping_admin"], ".auth") == os.path.join(".auth", "shopping_admin_state.json")
    assert storage_state_path(["map", "wikipedia"]) is None

    async def body(context):
        await login(context, "reddit", site_url, embedded=True)
        return await save_storage_state(context, ["reddit"], tmp_path)

    path = browser(body)
    assert path == str(tmp_path / "reddit_state.json")
    state = load_storage_state(["reddit"], tmp_path)
    assert state == json.loads(open(path).read())
    assert [c["name"] for c in state["cookies"]] == ["forum_session"]
    assert load_storage_state(path) == state
    with pytest.raises(FileNotFoundError, match="save_storage_state"):
        load_storage_state(["gitlab"], tmp_path)
