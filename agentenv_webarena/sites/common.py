"""Small helpers every embedded site uses: the request context, sign-in sessions, HTML pages, escaping,
redirects, forms, the request's DB.

Owns the plumbing every site shares so each site holds only its own routes and markup: `page()` turns a
handler `handler(ctx, **path_params)` into an endpoint (the form, the instance DB, the site's
`RequestContext` with who is signed in, the `login_required` gate, the session cookie), and
`SessionTable` (the sessions) with `SignIn` (the sign-in form and its POST) is the one sign-in/sign-out
helper of the sites that log in. Pages are plain server-rendered HTML (no scripts needed to use them), so
the accessibility tree Chromium builds from them is rich and stable.
"""
from __future__ import annotations

import contextlib
import html
import secrets
import sqlite3
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterable, Iterator, Optional
from urllib.parse import parse_qsl, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from agentenv_webarena.sites.store import InstanceStore, instance_of
from agentenv_webarena.sites.styles import stylesheet

__all__ = ["SessionTable", "RequestContext", "SignIn", "page", "login_required", "esc", "html_page", "redirect", "db",
           "new_token", "query_url", "json_error", "PostedForm", "form_fields", "read_form", "to_int", "slash_routes"]


@dataclass(frozen=True)
class SessionTable:
    """Where a site keeps its sign-in sessions: rows `(token, <account_column>)` of `table`, each naming a
    row of `accounts`, and the cookie (`cookie`, on `cookie_path`) that carries the token."""

    cookie: str
    table: str
    accounts: str
    account_column: str
    cookie_path: str = "/"

    def account(self, conn: sqlite3.Connection, token: str) -> Optional[sqlite3.Row]:
        """The account signed in with `token`, or None (no such session, or a guest session)."""
        return conn.execute(f"SELECT a.* FROM {self.table} s JOIN {self.accounts} a ON a.id = s.{self.account_column} "
                            "WHERE s.token = ?", (token,)).fetchone()

    def start(self, conn: sqlite3.Connection, account_id: Optional[int]) -> str:
        """A new session for `account_id` (None: a guest session); returns its token."""
        token = new_token()
        conn.execute(f"INSERT INTO {self.table} (token, {self.account_column}) VALUES (?, ?)", (token, account_id))
        return token

    def end(self, conn: sqlite3.Connection, token: str) -> None:
        """Delete the session `token`."""
        conn.execute(f"DELETE FROM {self.table} WHERE token = ?", (token,))


class RequestContext:
    """One request to an embedded site: the request, its instance DB, the posted form fields (empty on a
    GET), the session token from the site's cookie and the signed-in account (None without one).

    Sites subclass it, naming their `SESSIONS` (None: the site has no sessions) and `LOGIN_URL` (where
    `login_required` sends an anonymous visitor); `page()` builds one per request.
    """

    SESSIONS: ClassVar[Optional[SessionTable]] = None
    LOGIN_URL: ClassVar[str] = "/"

    def __init__(self, request: Request, conn: sqlite3.Connection, form: PostedForm):
        self.request = request
        self.conn = conn
        self.form = form
        sessions = self.SESSIONS
        self.token: Optional[str] = request.cookies.get(sessions.cookie) if sessions else None
        self.account: Optional[sqlite3.Row] = sessions.account(conn, self.token) if self.token else None
        self._cookie: Optional[str] = None  # the token to send in the cookie; "" deletes the cookie

    @property
    def posted(self) -> bool:
        """Whether this is a form POST."""
        return self.request.method == "POST"

    @property
    def q(self) -> QueryParams:
        """The query parameters."""
        return self.request.query_params

    def sign_in(self, account: sqlite3.Row) -> None:
        """Sign `account` in, its password checked (`SignIn.post`): a new session and its cookie. A site whose
        visitors keep one session across signing in (the storefront's guests) overrides it."""
        self.start_session(account["id"])

    def start_session(self, account_id: Optional[int]) -> str:
        """Sign `account_id` in (None: open a guest session) with a new session and its cookie; returns the token."""
        self.token = self.SESSIONS.start(self.conn, account_id)
        self._cookie = self.token
        return self.token

    def end_session(self) -> None:
        """Sign out: delete the session and its cookie."""
        if self.token:
            self.SESSIONS.end(self.conn, self.token)
        self.token, self.account, self._cookie = None, None, ""

    def send_cookie(self, response: Response) -> Response:
        """`response` with the session cookie set or deleted, if this request changed it."""
        sessions = self.SESSIONS
        if self._cookie:
            response.set_cookie(sessions.cookie, self._cookie, path=sessions.cookie_path, httponly=True, samesite="lax")
        elif self._cookie == "":
            response.delete_cookie(sessions.cookie, path=sessions.cookie_path)
        return response


@dataclass(frozen=True)
class SignIn:
    """One site's sign-in: the form (`form()`) and its POST (`post(ctx)`), the one helper every site that
    logs in uses.

    The form posts `user_field` and `password_field` to `action`; the POST looks the account up with
    `account_sql` (its every `?` is the login), checks the password (the row's `password`, or its
    `password_hash` when `hash_password` is given), signs in through the site's `RequestContext.sign_in`
    and redirects to `signed_in_url`; a refused sign-in calls `on_refused(ctx)` (if any) and redirects to
    `refused_url`. The other fields shape the form's markup: labels, ids, the login input's type, extra
    attributes, and `magento` (Magento's markup: each label and input in a `div.field`, the button bare;
    otherwise the fields bare and the button in a `p`; `form_class` is for the latter).
    """

    action: str
    user_field: str
    password_field: str
    account_sql: str
    signed_in_url: str
    refused_url: str
    hash_password: Optional[Callable[[str], str]] = None
    strip_login: bool = True
    on_refused: Optional[Callable[[Any], None]] = None
    user_label: str = "Username"
    user_id: str = "username"
    user_type: str = "text"
    password_id: str = "password"
    button: str = "Sign in"
    form_class: str = ""
    user_attrs: str = ""
    password_attrs: str = ""
    button_attrs: str = ""
    magento: bool = False

    def form(self) -> str:
        """The sign-in form's markup."""
        fields = [(self.user_id, self.user_type, self.user_field, self.user_label, self.user_attrs),
                  (self.password_id, "password", self.password_field, "Password", self.password_attrs)]
        button = f'<button type="submit"{self.button_attrs}>{esc(self.button)}</button>'
        if self.magento:
            body = "".join(f'<div class="field"><label for="{esc(id_)}">{esc(label)}</label><input id="{esc(id_)}" '
                           f'type="{type_}" name="{esc(name)}"{attrs}></div>'
                           for id_, type_, name, label, attrs in fields)
            return f'<form method="post" action="{esc(self.action)}">{body}{button}</form>'
        body = "".join(f'<label for="{esc(id_)}">{esc(label)}</label><input type="{type_}" id="{esc(id_)}" '
                       f'name="{esc(name)}"{attrs}>' for id_, type_, name, label, attrs in fields)
        cls = f' class="{esc(self.form_class)}"' if self.form_class else ""
        return f'<form action="{esc(self.action)}" method="post"{cls}>{body}<p>{button}</p></form>'

    def post(self, ctx: RequestContext) -> Response:
        """Handle the form's POST: sign in and redirect, or refuse (back to `refused_url`)."""
        login = str(ctx.form.get(self.user_field, ""))
        login = login.strip() if self.strip_login else login
        account = ctx.conn.execute(self.account_sql, (login,) * self.account_sql.count("?")).fetchone()
        password = str(ctx.form.get(self.password_field, ""))
        stored = account and (account["password_hash"] if self.hash_password else account["password"])
        if account is None or stored != (self.hash_password(password) if self.hash_password else password):
            if self.on_refused is not None:
                self.on_refused(ctx)
            return redirect(self.refused_url)
        ctx.sign_in(account)
        return redirect(self.signed_in_url)


def login_required(handler: Callable[..., Response]) -> Callable[..., Response]:
    """Mark a page handler as for signed-in visitors: `page()` redirects anyone else to the site's `LOGIN_URL`."""
    handler.login_required = True
    return handler


def page(store: InstanceStore, context: type[RequestContext], handler: Callable[..., Response],
         **fixed: Any) -> Callable:
    """`handler(ctx, **fixed, **path_params)` as a Starlette endpoint over `store`.

    Reads a POSTed form, opens the request's instance DB (committed when the handler returns), builds the
    site's `context`, applies `login_required` and the session cookie the handler set. The handler runs
    in Starlette's thread pool, as any synchronous endpoint.
    """
    gated = getattr(handler, "login_required", False)

    def respond(request: Request, form: PostedForm) -> Response:
        with db(store, request) as conn:
            ctx = context(request, conn, form)
            if gated and ctx.account is None:
                response: Response = redirect(ctx.LOGIN_URL)
            else:
                response = handler(ctx, **fixed, **request.path_params)
        return ctx.send_cookie(response)

    async def endpoint(request: Request) -> Response:
        form = await read_form(request) if request.method == "POST" else PostedForm()
        return await run_in_threadpool(respond, request, form)
    return endpoint


def esc(value: object) -> str:
    """HTML-escape any value (quotes too, so it is safe inside attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def html_page(title: str, body: str, *, site: str, status_code: int = 200) -> HTMLResponse:
    """A complete HTML document with `title` and `body` (body is trusted markup: escape your values), styled
    with `site`'s stylesheet (`sites.styles`)."""
    doc = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
           f"<style>{stylesheet(site)}</style></head><body>{body}</body></html>")
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


class PostedForm(dict):
    """The POSTed fields: `form[name]` / `form.get(name)` is a field's first value, `form.getlist(name)` every
    value in order (a multi-select's options)."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()):
        pairs = list(pairs)
        super().__init__((k, v) for k, v in reversed(pairs))
        self._lists: dict[str, list[str]] = {}
        for key, value in pairs:
            self._lists.setdefault(key, []).append(value)

    def getlist(self, name: str) -> list[str]:
        """Every posted value of `name`, in the order posted ([] when absent)."""
        return list(self._lists.get(name, []))


def form_fields(body: bytes) -> PostedForm:
    """URL-encoded form body -> `PostedForm` (first value per field; `getlist` for all)."""
    return PostedForm(parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True))


async def read_form(request: Request) -> PostedForm:
    """The POSTed form fields (`PostedForm`: first value of each, `getlist` for every value).

    Browsers post our forms URL-encoded, which is parsed here directly: Starlette's own form parser
    needs the optional `python-multipart` package, used only for other encodings.
    """
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype in ("", "application/x-www-form-urlencoded"):
        return form_fields(await request.body())
    form = await request.form()
    return PostedForm((k, str(v)) for k, v in form.multi_items())


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
