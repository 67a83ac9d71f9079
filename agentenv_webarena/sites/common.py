"""Small helpers every embedded site uses: HTML pages, escaping, redirects, forms, the request's DB.

Owns the plumbing every site shares (binding handlers to the store, pages, forms, redirects) so each
site holds only its own routes and markup. Pages are plain server-rendered HTML (no scripts needed to use them), so the
accessibility tree Chromium builds from them is rich and stable.
"""
from __future__ import annotations

import contextlib
import html
import inspect
import secrets
import sqlite3
from typing import Any, Awaitable, Callable, Iterator, Optional, Union
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from agentenv_webarena.sites.store import InstanceStore, instance_of

__all__ = ["Handler", "bind_handler", "RequestContext", "esc", "html_page", "redirect", "db", "new_token", "query_url",
           "json_error", "form_fields", "read_form", "to_int", "slash_routes"]


Handler = Callable[[InstanceStore, Request], Union[Response, Awaitable[Response]]]


def bind_handler(store: InstanceStore, handler: Handler) -> Callable:
    """`handler(store, request)` as a Starlette endpoint over `store`, keeping it sync or async (sync
    endpoints run in Starlette's thread pool)."""
    if inspect.iscoroutinefunction(handler):
        async def endpoint(request: Request) -> Response:
            return await handler(store, request)
    else:
        def endpoint(request: Request) -> Response:
            return handler(store, request)
    return endpoint


class RequestContext:
    """One request to an embedded site: the request, its instance DB, the posted form fields and
    the session token from the site's cookie (None without one). Sites add who is signed in."""

    def __init__(self, request: Request, conn: sqlite3.Connection, form: dict[str, str], cookie: str):
        self.request = request
        self.conn = conn
        self.form = form
        self.token: Optional[str] = request.cookies.get(cookie)


def esc(value: object) -> str:
    """HTML-escape any value (quotes too, so it is safe inside attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def html_page(title: str, body: str, *, status_code: int = 200, css: str = "") -> HTMLResponse:
    """A complete HTML document with `title` and `body` (body is trusted markup: escape your values)."""
    doc = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
           f"<style>body{{font-family:sans-serif;margin:0 1em}}{css}</style></head><body>{body}</body></html>")
    return HTMLResponse(doc, status_code=status_code)


def redirect(url: str) -> RedirectResponse:
    """303 See Other to `url` (the browser follows it with a GET, as after a form POST)."""
    return RedirectResponse(url, status_code=303)


@contextlib.contextmanager
def db(store: InstanceStore, request: Request) -> Iterator[sqlite3.Connection]:
    """The request's instance database (commits at the end of the block)."""
    with store.connection(instance_of(request)) as conn:
        yield conn


def new_token() -> str:
    """A fresh random session token for a cookie."""
    return secrets.token_urlsafe(18)


def query_url(path: str, **params: Optional[object]) -> str:
    """`path?k=v&...` with the None values left out."""
    kept = {k: v for k, v in params.items() if v is not None and v != ""}
    return f"{path}?{urlencode(kept)}" if kept else path


def json_error(status: int, message: str) -> JSONResponse:
    """A JSON error body `{"message": ...}` (the shape Magento's REST API answers with)."""
    return JSONResponse({"message": message}, status_code=status)


def form_fields(body: bytes) -> dict[str, str]:
    """URL-encoded form body -> {field: first value}."""
    text = body.decode("utf-8", errors="replace")
    return {k: v for k, v in reversed(parse_qsl(text, keep_blank_values=True))}


async def read_form(request: Request) -> dict[str, str]:
    """The POSTed form fields (first value of each).

    Browsers post our forms URL-encoded, which is parsed here directly: Starlette's own form parser
    needs the optional `python-multipart` package, used only for other encodings.
    """
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype in ("", "application/x-www-form-urlencoded"):
        return form_fields(await request.body())
    form = await request.form()
    return {k: str(v) for k, v in form.items()}


def to_int(value: Any, default: int = 0) -> int:
    """`value` as an int (surrounding spaces allowed), else `default` (query and form fields)."""
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


def slash_routes(path: str, endpoint: Callable, methods: tuple[str, ...] = ("GET",)) -> list[Route]:
    """Routes for `path` with and without its trailing slash (Magento answers both)."""
    other = path[:-1] if path.endswith("/") else path + "/"
    return [Route(path, endpoint, methods=list(methods)), Route(other, endpoint, methods=list(methods))]
