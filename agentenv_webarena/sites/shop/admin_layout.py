"""The shop admin's request context and page chrome: menu, grids, keyword search, active-filters bar.

Owns what every back-office page shares (`admin`, `admin_marketing`, `admin_content` render through
it): `AdminCtx` (one request: instance DB, form, signed-in admin, flash message), `admin_page` (header
menu, title, flash), `grid` (Magento's 20-a-page grids with `#records-found`), `search_form` and
`active_filters` (Magento's `div.admin__data-grid-filters-current`, present on every grid and shown
when a filter applies).
"""
from __future__ import annotations

import math
import sqlite3
from typing import Any, Callable, Optional

from starlette.responses import HTMLResponse

from agentenv_webarena.sites.common import RequestContext, SessionTable, esc, html_page, query_url, to_int

__all__ = ["COOKIE", "PREFIX", "GRID_PAGE_SIZE", "AdminCtx", "admin_page", "not_found", "grid",
           "search_form", "active_filters", "like"]

COOKIE = "admin_session"
PREFIX = "/admin"
GRID_PAGE_SIZE = 20  # Magento admin grids default to 20 records a page



class AdminCtx(RequestContext):
    """One admin request: its instance DB, form fields and the signed-in admin (`admin`, or None)."""

    SESSIONS = SessionTable(cookie=COOKIE, table="shop_admin_sessions", accounts="shop_admin_users",
                            account_column="admin_id", cookie_path=PREFIX)
    LOGIN_URL = f"{PREFIX}/"

    @property
    def admin(self) -> Optional[sqlite3.Row]:
        """The signed-in admin user, or None."""
        return self.account

    def flash(self, message: str, kind: str = "success") -> None:
        self.conn.execute("UPDATE shop_admin_sessions SET flash = ?, flash_kind = ? WHERE token = ?",
                          (message, kind, self.token))

    def take_flash(self) -> str:
        if self.admin is None:
            return ""
        row = self.conn.execute("SELECT flash, flash_kind FROM shop_admin_sessions WHERE token = ?",
                                (self.token,)).fetchone()
        if not row or not row["flash"]:
            return ""
        self.conn.execute("UPDATE shop_admin_sessions SET flash = '' WHERE token = ?", (self.token,))
        return f'<div class="message message-{esc(row["flash_kind"])}" role="alert">{esc(row["flash"])}</div>'



_MENU = (("/dashboard/", "Dashboard"), ("/sales/order/", "Orders"), ("/catalog/product/", "Products"),
         ("/customer/index/", "All Customers"), ("/review/product/", "All Reviews"),
         ("/review/product/pending/", "Pending Reviews"), ("/sales_rule/promo_quote/", "Cart Price Rules"),
         ("/cms/page/", "Pages"), ("/admin/system_design_theme/", "Themes"),
         ("/search/term/index/", "Search Terms"), ("/newsletter/subscriber/", "Newsletter Subscribers"),
         ("/reports/report_sales/sales/", "Orders Report"),
         ("/reports/report_sales/bestsellers/", "Bestsellers Report"))


def admin_page(ctx: AdminCtx, title: str, main: str, status_code: int = 200) -> HTMLResponse:
    """A back-office page: header with the admin menu, `title`, the flash message, `main`."""
    menu = "".join(f'<li><a href="{PREFIX}{href}">{label}</a></li>' for href, label in _MENU)
    body = (f'<header class="admin-header"><a href="{PREFIX}/dashboard/"><strong>Magento Admin</strong></a>'
            f'<nav class="admin-menu" aria-label="Admin menu"><ul>{menu}</ul></nav>'
            f'<span>{esc(ctx.admin["username"])}</span><a href="{PREFIX}/logout">Sign Out</a></header>'
            f'<main id="anchor-content"><h1 class="page-title">{esc(title)}</h1>{ctx.take_flash()}{main}</main>'
            '<footer><p>Magento ver. 2.4.6</p></footer>')
    return html_page(f"{title} / Magento Admin", body, status_code=status_code, site="admin")


def not_found(ctx: AdminCtx, what: str) -> HTMLResponse:
    """The admin's 404 page saying what is missing."""
    return admin_page(ctx, "404 Error", f"<p>{esc(what)}</p>", status_code=404)


def grid(ctx: AdminCtx, path: str, rows: list, params: dict[str, Any], head: list[str],
         render: Callable[[Any], str], caption: str) -> str:
    """A paged data grid (`p`, 20 a page) with `#records-found`; `params` are the filters its page links keep."""
    total = len(rows)
    pages = max(1, math.ceil(total / GRID_PAGE_SIZE))
    current = min(max(1, to_int(ctx.q.get("p"), 1)), pages)
    shown = rows[(current - 1) * GRID_PAGE_SIZE: current * GRID_PAGE_SIZE]
    links = []
    if current > 1:
        links.append(f'<a href="{esc(query_url(PREFIX + path, **params, p=current - 1))}">Previous page</a>')
    links.append(f"<span>Page {current} of {pages}</span>")
    if current < pages:
        links.append(f'<a href="{esc(query_url(PREFIX + path, **params, p=current + 1))}">Next page</a>')
    head_html = "".join(f"<th>{h}</th>" for h in head)
    body = ("".join(render(r) for r in shown)
            or f'<tr><td colspan="{len(head)}">We couldn\'t find any records.</td></tr>')
    return (f'<p id="records-found">{total} records found</p><nav class="pager" aria-label="Pages">{" ".join(links)}'
            f'</nav><table class="data-grid"><caption>{esc(caption)}</caption><thead><tr>{head_html}</tr></thead>'
            f'<tbody>{body}</tbody></table>')


def search_form(path: str, value: str, hidden: dict[str, str] | None = None) -> str:
    """The grid's "Search by keyword" box (`q`), keeping the other filters as hidden fields."""
    extra = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in (hidden or {}).items() if v)
    return (f'<form class="data-grid-search" method="get" action="{PREFIX}{path}" role="search">{extra}'
            '<label for="fulltext">Search by keyword</label>'
            f'<input id="fulltext" type="text" name="q" value="{esc(value)}">'
            '<button type="submit">Search</button></form>')


def active_filters(path: str, filters: list[tuple[str, str]]) -> str:
    """Magento's "Active filters" bar: (label, value) of each applied filter and "Clear all"; hidden when none."""
    shown = [(label, value) for label, value in filters if value]
    if not shown:
        return '<div class="admin__data-grid-filters-current" hidden></div>'
    items = "".join(f'<li><span>{esc(label)}: </span><span>{esc(value)}</span></li>' for label, value in shown)
    return (f'<div class="admin__data-grid-filters-current _show"><strong>Active filters:</strong><ul>{items}</ul>'
            f'<a href="{PREFIX}{path}">Clear all</a></div>')


def like(text: str) -> str:
    """A LIKE pattern matching `text` anywhere (its own wildcards dropped)."""
    return "%" + text.replace("%", "").replace("_", "") + "%"


