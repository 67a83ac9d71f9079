"""The embedded homepage: WebArena's start page listing the sites, with its calculator and scratchpad.

Owns three pages, in the shape of WebArena's `webarena-homepage` (a card per site, names and blurbs
as there):

| Method & path          | Page                                                                  |
|------------------------|-----------------------------------------------------------------------|
| GET `/`                | "Welcome to WebArena": a card per site linking to its start page      |
| GET `/calculator.html` | a calculator: `?expression=...` shows the expression and its value    |
| GET/POST `/scratchpad.html` | a note kept per instance (`note` field), shown back in a textarea |

The cards link to the URLs the sites process passes in (`site_urls`, filled in once the ports are
bound); a site without a URL is listed without a link. The scratchpad note lives in the instance's
SQLite copy (`homepage_notes`), so a /reset clears it like any other site state.
"""
from __future__ import annotations

import ast
import operator
from typing import Mapping, Optional

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentenv_webarena.sites.common import RequestContext, esc, html_page, page, redirect
from agentenv_webarena.sites.store import InstanceStore

__all__ = ["SCHEMA", "CARDS", "seed", "create_app", "evaluate_expression"]

SCHEMA = """
CREATE TABLE homepage_notes (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    body TEXT NOT NULL
);
"""

# (site key or page, title, blurb, path under the site's base URL): WebArena's homepage cards, in its order.
CARDS: tuple[tuple[str, str, str, str], ...] = (
    ("shopping", "OneStopShop", "An online shopping site", ""),
    ("shopping_admin", "Merchant Admin Portal",
     "An admin portal to manage E-commerce business (u: admin, p: admin1234)", ""),
    ("reddit", "Reddit", "A social news aggregation and discussion website", "/forums"),
    ("gitlab", "Gitlab", "a DevOps software", "/explore"),
    ("map", "OpenStreetMap", "North east US map", ""),
    ("calculator", "Calculator", "A calculator", "calculator.html"),
    ("scratchpad", "Scratchpad", "A scratchpad for taking notes", "scratchpad.html"),
    ("wikipedia", "Wikipedia", "An online encyclopedia",
     "/wikipedia_en_all_maxi_2022-05/A/User:The_other_Kiwix_guy/Landing"),
)


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Pow: operator.pow, ast.Mod: operator.mod, ast.FloorDiv: operator.floordiv}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def seed(conn) -> None:
    """The scratchpad starts empty."""
    conn.execute("INSERT INTO homepage_notes (id, body) VALUES (1, '')")


def evaluate_expression(expression: str) -> float:
    """The value of an arithmetic expression (numbers, + - * / // % ** and parentheses).

    Raises:
        ValueError: anything else in the expression, a division by zero, or an exponent over 100.
    """
    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > 100:
                raise ValueError("exponent over 100")
            return _OPS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](value(node.operand))
        raise ValueError(f"unsupported element {type(node).__name__}")

    try:
        return value(ast.parse(expression.strip(), mode="eval").body)
    except SyntaxError as exc:
        raise ValueError(f"not an arithmetic expression: {exc.msg}") from exc
    except ZeroDivisionError as exc:
        raise ValueError("division by zero") from exc


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.10g}"


def _card(title: str, blurb: str, href: Optional[str]) -> str:
    heading = f'<a href="{esc(href)}">{esc(title)}</a>' if href else esc(title)
    return f'<div class="card"><h2>{heading}</h2><p>{esc(blurb)}</p></div>'


def _home(site_urls: Mapping[str, str]) -> Response:
    cards = []
    for key, title, blurb, path in CARDS:
        if key in ("calculator", "scratchpad"):
            href: Optional[str] = path
        else:
            base = site_urls.get(key)
            href = base + path if base else None
        cards.append(_card(title, blurb, href))
    body = f'<div id="header"><h1>Welcome to WebArena</h1></div><main id="container">{"".join(cards)}</main>'
    return html_page("Homepage", body, site="homepage")


def _calculator(request: Request) -> Response:
    expression = request.query_params.get("expression", "")
    result = ""
    if expression.strip():
        try:
            value = _number(evaluate_expression(expression))
            result = f'<p id="result">{esc(expression)} = <output>{esc(value)}</output></p>'
        except (ValueError, OverflowError) as exc:
            result = f'<p id="result" role="alert">Cannot compute {esc(expression)}: {esc(exc)}</p>'
    form = ('<form method="get" action="calculator.html"><label for="expression">Expression</label> '
            f'<input id="expression" name="expression" value="{esc(expression)}"> '
            '<button type="submit">Calculate</button></form>')
    return html_page("Calculator", f'<h1>Calculator</h1>{form}{result}<p><a href="/">Homepage</a></p>', site="homepage")


def _scratchpad(ctx: RequestContext) -> Response:
    if ctx.posted:
        ctx.conn.execute("UPDATE homepage_notes SET body = ? WHERE id = 1", (ctx.form.get("note", "")[:20_000],))
        return redirect("scratchpad.html")
    note = ctx.conn.execute("SELECT body FROM homepage_notes WHERE id = 1").fetchone()["body"]
    form = ('<form method="post" action="scratchpad.html"><label for="note">Notes</label>'
            f'<textarea id="note" name="note" rows="12" cols="80">{esc(note)}</textarea>'
            '<button type="submit">Save</button></form>')
    return html_page("Scratchpad", f'<h1>Scratchpad</h1>{form}<p><a href="/">Homepage</a></p>', site="homepage")


def create_app(store: InstanceStore, site_urls: Optional[Mapping[str, str]] = None) -> Starlette:
    """The homepage app over `store`, linking to `site_urls` (read at each request)."""
    urls = site_urls if site_urls is not None else {}

    def home(request: Request) -> Response:
        return _home(urls)

    return Starlette(routes=[Route("/", home), Route("/calculator.html", _calculator),
                             Route("/scratchpad.html", page(store, RequestContext, _scratchpad),
                                   methods=["GET", "POST"])])
