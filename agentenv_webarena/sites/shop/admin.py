"""The embedded shop's admin side: a Magento-admin-like back office (WebArena's `shopping_admin` site).

Owns the admin pages over the shop's tables (`shop.seed` owns the schema and seed). The app is
mounted at `/admin`, so every path below is served as `{SHOPPING_ADMIN}/...` with
`SHOPPING_ADMIN = http://host:port/admin`. Pages (paths under `/admin`):

- GET `/`, GET `/login`; POST `/login` (`login[username]`, `login[password]`); GET `/logout`: sign-in form; session
  cookie `admin_session`
- GET `/dashboard/`: lifetime sales, average order, last orders, bestsellers, new customers, latest reviews
- GET `/sales/order/`: orders grid: `q` keyword (order #, name, email), `status`, `p` (20 a page, as every grid)
- GET `/sales/order/view/order_id/<id>/`: order view; POST `.../cancel/`, `.../hold/`, `.../unhold/`,
  `.../invoice/`, `.../ship/` (`/sales/order/<action>/order_id/<id>/`), `/sales/order/addComment/order_id/<id>/`
  (`history[comment]`)
- GET `/catalog/product/`: products grid: `q` keyword (name, SKU), `p`
- GET `/catalog/product/edit/id/<id>/`; POST `/catalog/product/save/id/<id>/`: `product[status]` (checkbox, 1),
  `product[name]`, `product[sku]`, `product[price]`, `product[qty]`, `product[description]`
- GET `/review/product/`, `/review/product/pending/`: reviews grid (all / pending): `q`, `p`
- GET `/review/product/edit/id/<id>/`; POST `/review/product/save/id/<id>/` (`status`, `nickname`, `title`,
  `detail`), `/review/product/delete/id/<id>/`: one review
- GET `/customer/index/`, `/customer/index/edit/id/<id>/`: customers grid (`q`, `p`) and customer view with orders
- GET `/reports/report_sales/sales/`: orders report per `period` (day (default, as Magento), month, year) with
  `from` / `to` (YYYY-MM-DD)
- GET `/reports/report_sales/bestsellers/`: top 5 products by quantity per `period` (month, year), `from` / `to`

Reports count every order except canceled ones (Magento's default "Order Status: Any" minus
canceled). CSS hooks for `program_html` locators: `#order-status`, `#order-history`, `#order-items`
on an order view; `#product-form` inputs (`input[name="product[price]"]`, ...) on a product edit page;
`#review-status` on a review edit page; `#records-found` on every grid.
"""
from __future__ import annotations

import math
import re
import sqlite3
from typing import Any, Callable, Iterable, Optional

from starlette.applications import Starlette
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from agentenv_webarena.sites.common import (
    RequestContext,
    SessionTable,
    esc,
    html_page,
    login_required,
    page,
    query_url,
    redirect,
    slash_routes,
    to_int,
)
from agentenv_webarena.sites.shop.model import (
    REVIEW_STATUS_LABELS,
    STATUS_LABELS,
    hash_password,
    long_date,
    money,
    option_text,
    order_items,
    short_date,
    site_now,
)
from agentenv_webarena.sites.store import InstanceStore

__all__ = ["create_app", "COOKIE", "PREFIX", "bestsellers", "sales_report"]

COOKIE = "admin_session"
PREFIX = "/admin"
GRID_PAGE_SIZE = 20  # Magento admin grids default to 20 records a page
# order action -> (statuses it applies to, new status, message)
ORDER_ACTIONS = {
    "cancel": ({"pending", "processing"}, "canceled", "You canceled the order."),
    "hold": ({"pending", "processing"}, "holded", "You put the order on hold."),
    "unhold": ({"holded"}, "processing", "You released the order from holding status."),
    "invoice": ({"pending"}, "processing", "The invoice has been created."),
    "ship": ({"processing"}, "complete", "The shipment has been created."),
}
_ACTION_LABELS = {"cancel": "Cancel", "hold": "Hold", "unhold": "Unhold", "invoice": "Invoice", "ship": "Ship"}


# --- reports (also read by the task templates) -------------------------------------------------------

def _period_key(created_at: str, period: str) -> str:
    return {"day": created_at[:10], "month": created_at[:7], "year": created_at[:4]}[period]


def sales_report(conn: sqlite3.Connection, period: str = "month", date_from: str = "", date_to: str = "") -> list[dict]:
    """Orders report rows, oldest interval first: interval, orders, items, sales total (canceled excluded)."""
    rows = conn.execute("SELECT o.*, (SELECT SUM(qty) FROM shop_order_items WHERE order_id = o.id) AS items "
                        "FROM shop_orders o WHERE status != 'canceled' ORDER BY created_at").fetchall()
    out: dict[str, dict] = {}
    for o in rows:
        day = o["created_at"][:10]
        if (date_from and day < date_from) or (date_to and day > date_to):
            continue
        key = _period_key(o["created_at"], period)
        entry = out.setdefault(key, {"interval": key, "orders": 0, "items": 0, "total": 0.0})
        entry["orders"] += 1
        entry["items"] += o["items"] or 0
        entry["total"] = round(entry["total"] + o["grand_total"], 2)
    return list(out.values())


def bestsellers(conn: sqlite3.Connection, period: str = "year", date_from: str = "", date_to: str = "",
                limit: int = 5) -> list[dict]:
    """Top `limit` products by ordered quantity per interval (canceled orders excluded).

    Returns rows oldest interval first: interval, rank (1-based), product name, price, qty. Ties
    in quantity rank by name.
    """
    rows = conn.execute("SELECT o.created_at, i.product_id, i.name, i.price, i.qty FROM shop_order_items i "
                        "JOIN shop_orders o ON o.id = i.order_id WHERE o.status != 'canceled' "
                        "ORDER BY o.created_at").fetchall()
    per: dict[str, dict[int, dict]] = {}
    for r in rows:
        day = r["created_at"][:10]
        if (date_from and day < date_from) or (date_to and day > date_to):
            continue
        bucket = per.setdefault(_period_key(r["created_at"], period), {})
        entry = bucket.setdefault(r["product_id"], {"name": r["name"], "price": r["price"], "qty": 0})
        entry["qty"] += r["qty"]
    out = []
    for key in sorted(per):
        ranked = sorted(per[key].values(), key=lambda e: (-e["qty"], e["name"]))[:limit]
        out += [{"interval": key, "rank": n, **e} for n, e in enumerate(ranked, start=1)]
    return out


# --- context and layout ------------------------------------------------------------------------------

_CSS = (
    ".admin-header{display:flex;gap:1.5em;align-items:center;padding:.5em 0;border-bottom:2px solid #333}"
    ".admin-menu ul{display:flex;flex-wrap:wrap;gap:.3em 1.2em;list-style:none;padding:0;margin:.5em 0}"
    "table{border-collapse:collapse}td,th{padding:.25em .6em;text-align:left;border-bottom:1px solid #ddd}"
    ".message{padding:.4em;margin:.5em 0}.message-success{background:#e5efe5}.message-error{background:#fae5e5}"
    ".filters{display:flex;gap:1em;flex-wrap:wrap;margin:.5em 0}.field{margin:.4em 0}label{margin-right:.4em}"
    ".page-actions form{display:inline}.page-actions{margin:.5em 0}section{margin:.8em 0}"
)


class _Ctx(RequestContext):
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
         ("/review/product/pending/", "Pending Reviews"), ("/reports/report_sales/sales/", "Orders Report"),
         ("/reports/report_sales/bestsellers/", "Bestsellers Report"))


def _page(ctx: _Ctx, title: str, main: str, status_code: int = 200) -> HTMLResponse:
    menu = "".join(f'<li><a href="{PREFIX}{href}">{label}</a></li>' for href, label in _MENU)
    body = (f'<header class="admin-header"><a href="{PREFIX}/dashboard/"><strong>Magento Admin</strong></a>'
            f'<nav class="admin-menu" aria-label="Admin menu"><ul>{menu}</ul></nav>'
            f'<span>{esc(ctx.admin["username"])}</span><a href="{PREFIX}/logout">Sign Out</a></header>'
            f'<main id="anchor-content"><h1 class="page-title">{esc(title)}</h1>{ctx.take_flash()}{main}</main>'
            '<footer><p>Magento ver. 2.4.6</p></footer>')
    return html_page(f"{title} / Magento Admin", body, status_code=status_code, css=_CSS)


def _not_found(ctx: _Ctx, what: str) -> HTMLResponse:
    return _page(ctx, "404 Error", f"<p>{esc(what)}</p>", status_code=404)


def _grid(ctx: _Ctx, path: str, rows: list, params: dict[str, Any], head: list[str],
          render: Callable[[Any], str], caption: str) -> str:
    total = len(rows)
    pages = max(1, math.ceil(total / GRID_PAGE_SIZE))
    page = min(max(1, to_int(ctx.q.get("p"), 1)), pages)
    shown = rows[(page - 1) * GRID_PAGE_SIZE: page * GRID_PAGE_SIZE]
    links = []
    if page > 1:
        links.append(f'<a href="{esc(query_url(PREFIX + path, **params, p=page - 1))}">Previous page</a>')
    links.append(f"<span>Page {page} of {pages}</span>")
    if page < pages:
        links.append(f'<a href="{esc(query_url(PREFIX + path, **params, p=page + 1))}">Next page</a>')
    head_html = "".join(f"<th>{h}</th>" for h in head)
    body = ("".join(render(r) for r in shown)
            or f'<tr><td colspan="{len(head)}">We couldn\'t find any records.</td></tr>')
    return (f'<p id="records-found">{total} records found</p><nav class="pager" aria-label="Pages">{" ".join(links)}'
            f'</nav><table class="data-grid"><caption>{esc(caption)}</caption><thead><tr>{head_html}</tr></thead>'
            f'<tbody>{body}</tbody></table>')


def _search_form(path: str, value: str, hidden: dict[str, str] | None = None) -> str:
    extra = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in (hidden or {}).items() if v)
    return (f'<form class="data-grid-search" method="get" action="{PREFIX}{path}" role="search">{extra}'
            '<label for="fulltext">Search by keyword</label>'
            f'<input id="fulltext" type="text" name="q" value="{esc(value)}">'
            '<button type="submit">Search</button></form>')


def _like(text: str) -> str:
    return "%" + text.replace("%", "").replace("_", "") + "%"


# --- handlers ----------------------------------------------------------------------------------------

def _login_form(ctx: _Ctx, error: str = "") -> Response:
    message = f'<div class="message message-error" role="alert">{esc(error)}</div>' if error else ""
    body = ('<main class="login"><h1>Welcome, please sign in</h1>' + message +
            f'<form method="post" action="{PREFIX}/login"><div class="field"><label for="username">Username</label>'
            '<input id="username" type="text" name="login[username]" placeholder="user name"></div>'
            '<div class="field"><label for="login">Password</label><input id="login" type="password" '
            'name="login[password]" placeholder="password"></div><button type="submit">Sign in</button></form></main>')
    return html_page("Magento Admin", body, css=_CSS)


def _index(ctx: _Ctx) -> Response:
    if ctx.admin is not None:
        return redirect(f"{PREFIX}/dashboard/")
    error = "The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again " \
            "later." if ctx.q.get("error") else ""
    return _login_form(ctx, error)


def _login_post(ctx: _Ctx) -> Response:
    user = ctx.conn.execute("SELECT * FROM shop_admin_users WHERE username = ?",
                            (ctx.form.get("login[username]", "").strip(),)).fetchone()
    if not ctx.sign_in(user, ctx.form.get("login[password]", ""), hash_password):
        return redirect(f"{PREFIX}/login?error=1")
    return redirect(f"{PREFIX}/dashboard/")


def _logout(ctx: _Ctx) -> Response:
    ctx.end_session()
    return redirect(f"{PREFIX}/")


@login_required
def _dashboard(ctx: _Ctx) -> Response:
    totals = ctx.conn.execute("SELECT COUNT(*), COALESCE(SUM(grand_total), 0) FROM shop_orders "
                              "WHERE status != 'canceled'").fetchone()
    average = totals[1] / totals[0] if totals[0] else 0.0
    last = ctx.conn.execute("SELECT o.*, c.firstname, c.lastname, (SELECT SUM(qty) FROM shop_order_items WHERE "
                            "order_id = o.id) AS items FROM shop_orders o JOIN shop_customers c "
                            "ON c.id = o.customer_id ORDER BY o.created_at DESC, o.id DESC LIMIT 5").fetchall()
    last_rows = "".join(f'<tr><td>{esc(o["firstname"])} {esc(o["lastname"])}</td><td>{o["items"]}</td>'
                        f'<td>{money(o["grand_total"])}</td></tr>' for o in last)
    best = bestsellers(ctx.conn, period="year", date_from="", date_to="", limit=1000)
    overall: dict[str, dict] = {}
    for row in best:
        entry = overall.setdefault(row["name"], {"name": row["name"], "price": row["price"], "qty": 0})
        entry["qty"] += row["qty"]
    top = sorted(overall.values(), key=lambda e: (-e["qty"], e["name"]))[:5]
    best_rows = "".join(f'<tr><td>{esc(e["name"])}</td><td>{money(e["price"])}</td><td>{e["qty"]}</td></tr>'
                        for e in top)
    customers = ctx.conn.execute("SELECT c.*, (SELECT COUNT(*) FROM shop_orders WHERE customer_id = c.id) AS orders "
                                 "FROM shop_customers c ORDER BY c.created_at DESC, c.id DESC LIMIT 5").fetchall()
    customer_rows = "".join(f'<tr><td>{esc(c["firstname"])} {esc(c["lastname"])}</td><td>{esc(c["email"])}</td>'
                            f'<td>{c["orders"]}</td><td>{long_date(c["created_at"])}</td></tr>' for c in customers)
    reviews = ctx.conn.execute("SELECT r.*, p.name AS product FROM shop_reviews r JOIN shop_products p ON "
                               "p.id = r.product_id ORDER BY r.created_at DESC, r.id DESC LIMIT 5").fetchall()
    review_rows = "".join(f'<tr><td>{esc(r["product"])}</td><td>{esc(r["nickname"])}</td>'
                          f'<td>{r["rating_percent"] // 20} stars</td><td>{REVIEW_STATUS_LABELS[r["status"]]}</td></tr>'
                          for r in reviews)
    main = (f'<section class="dashboard-totals"><p>Lifetime Sales: <strong>{money(totals[1])}</strong></p>'
            f'<p>Average Order: <strong>{money(average)}</strong></p></section>'
            '<section><h2>Last Orders</h2><table><thead><tr><th>Customer</th><th>Items</th><th>Total</th></tr></thead>'
            f'<tbody>{last_rows}</tbody></table></section><section><h2>Bestsellers</h2><table><thead><tr>'
            f'<th>Product</th><th>Price</th><th>Quantity</th></tr></thead><tbody>{best_rows}</tbody></table></section>'
            '<section><h2>New Customers</h2><table><thead><tr><th>Customer</th><th>Email</th><th>Orders</th>'
            f'<th>Customer Since</th></tr></thead><tbody>{customer_rows}</tbody></table></section>'
            '<section><h2>Latest Reviews</h2><table><thead><tr><th>Product</th><th>Nickname</th><th>Rating</th>'
            f'<th>Status</th></tr></thead><tbody>{review_rows}</tbody></table></section>')
    return _page(ctx, "Dashboard", main)


@login_required
def _orders(ctx: _Ctx) -> Response:
    status = ctx.q.get("status", "")
    keyword = ctx.q.get("q", "").strip()
    sql = ("SELECT o.*, c.firstname, c.lastname, c.email FROM shop_orders o JOIN shop_customers c ON "
           "c.id = o.customer_id WHERE 1 = 1")
    args: list[Any] = []
    if status in STATUS_LABELS:
        sql += " AND o.status = ?"
        args.append(status)
    if keyword:
        sql += (" AND (o.increment_id LIKE ? OR c.firstname || ' ' || c.lastname LIKE ? OR c.email LIKE ? OR "
                "o.ship_firstname || ' ' || o.ship_lastname LIKE ?)")
        args += [_like(keyword)] * 4
    rows = ctx.conn.execute(sql + " ORDER BY o.created_at DESC, o.id DESC", args).fetchall()
    filters = [f'<a href="{PREFIX}/sales/order/">All Orders</a>' if status else '<strong>All Orders</strong>']
    for key, label in STATUS_LABELS.items():
        href = query_url(PREFIX + "/sales/order/", status=key, q=keyword or None)
        filters.append(f'<strong>{label}</strong>' if key == status else f'<a href="{esc(href)}">{label}</a>')
    grid = _grid(ctx, "/sales/order/", rows, {"status": status or None, "q": keyword or None},
                 ["ID", "Purchase Date", "Bill-to Name", "Ship-to Name", "Grand Total", "Status", "Action"],
                 lambda o: (f'<tr><td>{o["increment_id"]}</td><td>{long_date(o["created_at"])}</td>'
                            f'<td>{esc(o["firstname"])} {esc(o["lastname"])}</td>'
                            f'<td>{esc(o["ship_firstname"])} {esc(o["ship_lastname"])}</td>'
                            f'<td>{money(o["grand_total"])}</td><td>{STATUS_LABELS[o["status"]]}</td>'
                            f'<td><a href="{PREFIX}/sales/order/view/order_id/{o["id"]}/" '
                            f'aria-label="View order {o["increment_id"]}">View</a></td></tr>'),
                 "Orders")
    main = (_search_form("/sales/order/", keyword, {"status": status}) +
            f'<nav class="filters" aria-label="Order status">{" ".join(filters)}</nav>{grid}')
    return _page(ctx, "Orders", main)


def _order_row(ctx: _Ctx, order_id: int) -> Optional[sqlite3.Row]:
    return ctx.conn.execute("SELECT o.*, c.firstname, c.lastname, c.email FROM shop_orders o JOIN shop_customers c ON "
                            "c.id = o.customer_id WHERE o.id = ?", (order_id,)).fetchone()


@login_required
def _order_view(ctx: _Ctx, order_id: int) -> Response:
    o = _order_row(ctx, order_id)
    if o is None:
        return _not_found(ctx, "This order no longer exists.")
    buttons = "".join(
        f'<form method="post" action="{PREFIX}/sales/order/{action}/order_id/{o["id"]}/">'
        f'<button type="submit">{_ACTION_LABELS[action]}</button></form>'
        for action, (allowed, _, _) in ORDER_ACTIONS.items() if o["status"] in allowed)
    items = "".join(
        f'<tr><td>{esc(i["name"])}<br>SKU: {esc(i["sku"])}'
        f'{"<br>" + esc(option_text(i["size"], i["color"])) if i["size"] or i["color"] else ""}</td>'
        f'<td>{money(i["price"])}</td><td>Ordered {i["qty"]}</td><td>{money(i["price"] * i["qty"])}</td></tr>'
        for i in order_items(ctx.conn, o["id"]))
    history = ctx.conn.execute("SELECT * FROM shop_order_comments WHERE order_id = ? ORDER BY created_at DESC, id DESC",
                               (o["id"],)).fetchall()
    history_items = "".join(f'<li><span>{long_date(h["created_at"])}</span> | <span>{STATUS_LABELS[h["status"]]}'
                            f'</span> | <span class="note-comment">{esc(h["comment"])}</span></li>' for h in history)
    main = (f'<div class="page-actions"><a href="{PREFIX}/sales/order/">Back</a> {buttons}</div>'
            '<section class="order-information"><h2>Order &amp; Account Information</h2><table><tbody>'
            f'<tr><th>Order Date</th><td>{long_date(o["created_at"])}</td></tr>'
            f'<tr><th>Order Status</th><td><span id="order-status">{STATUS_LABELS[o["status"]]}</span></td></tr>'
            f'<tr><th>Customer Name</th><td><a href="{PREFIX}/customer/index/edit/id/{o["customer_id"]}/">'
            f'{esc(o["firstname"])} {esc(o["lastname"])}</a></td></tr><tr><th>Email</th><td>{esc(o["email"])}</td></tr>'
            '</tbody></table></section><section><h2>Shipping Address</h2><address>'
            f'{esc(o["ship_firstname"])} {esc(o["ship_lastname"])}<br>{esc(o["ship_street"])}<br>'
            f'{esc(o["ship_city"])}, '
            f'{esc(o["ship_region"])}, {esc(o["ship_postcode"])}<br>{esc(o["ship_country"])}<br>'
            f'T: {esc(o["ship_telephone"])}</address></section><section><h2>Payment &amp; Shipping Method</h2>'
            f'<p>{esc(o["payment_method"])}</p><p>Flat Rate - Fixed</p></section>'
            '<section><h2>Items Ordered</h2><table id="order-items"><thead><tr><th>Product</th><th>Price</th>'
            f'<th>Qty</th><th>Row Total</th></tr></thead><tbody>{items}</tbody></table></section>'
            f'<section><h2>Order Totals</h2><table><tbody><tr><th>Subtotal</th><td>{money(o["subtotal"])}</td></tr>'
            f'<tr><th>Shipping &amp; Handling</th><td>{money(o["shipping"])}</td></tr><tr><th>Grand Total</th>'
            f'<td id="grand-total">{money(o["grand_total"])}</td></tr></tbody></table></section>'
            '<section><h2>Notes for this Order</h2>'
            f'<form method="post" action="{PREFIX}/sales/order/addComment/order_id/{o["id"]}/">'
            '<div class="field"><label for="history_comment">Comment</label><textarea id="history_comment" '
            'name="history[comment]" rows="3" cols="50"></textarea></div><button type="submit">Submit Comment</button>'
            f'</form><ul id="order-history">{history_items}</ul></section>')
    return _page(ctx, f'# {o["increment_id"]}', main)


@login_required
def _order_action(ctx: _Ctx, action: str, order_id: int) -> Response:
    o = _order_row(ctx, order_id)
    if o is None or action not in ORDER_ACTIONS:
        return _not_found(ctx, "This order no longer exists.")
    allowed, new_status, message = ORDER_ACTIONS[action]
    if o["status"] not in allowed:
        ctx.flash(f"You cannot {action} an order whose status is {STATUS_LABELS[o['status']]}.", "error")
    else:
        ctx.conn.execute("UPDATE shop_orders SET status = ?, updated_at = ? WHERE id = ?",
                         (new_status, site_now(ctx.conn), o["id"]))
        ctx.flash(message)
    return redirect(f"{PREFIX}/sales/order/view/order_id/{o['id']}/")


@login_required
def _order_comment(ctx: _Ctx, order_id: int) -> Response:
    o = _order_row(ctx, order_id)
    if o is None:
        return _not_found(ctx, "This order no longer exists.")
    comment = ctx.form.get("history[comment]", "").strip()
    if not comment:
        ctx.flash("Please enter a comment.", "error")
    else:
        ctx.conn.execute("INSERT INTO shop_order_comments (order_id, comment, status, created_at) VALUES (?, ?, ?, ?)",
                         (o["id"], comment, o["status"], site_now(ctx.conn)))
        ctx.flash("You added a comment to the order.")
    return redirect(f"{PREFIX}/sales/order/view/order_id/{o['id']}/")


@login_required
def _products(ctx: _Ctx) -> Response:
    keyword = ctx.q.get("q", "").strip()
    sql = "SELECT * FROM shop_products"
    args: list[Any] = []
    if keyword:
        sql += " WHERE name LIKE ? OR sku LIKE ?"
        args = [_like(keyword)] * 2
    rows = ctx.conn.execute(sql + " ORDER BY id", args).fetchall()
    grid = _grid(ctx, "/catalog/product/", rows, {"q": keyword or None},
                 ["ID", "Name", "SKU", "Price", "Quantity", "Status", "Action"],
                 lambda p: (f'<tr><td>{p["id"]}</td><td>{esc(p["name"])}</td><td>{esc(p["sku"])}</td>'
                            f'<td>{money(p["price"])}</td><td>{p["qty"]}</td>'
                            f'<td>{"Enabled" if p["enabled"] else "Disabled"}</td><td><a href="{PREFIX}/catalog/'
                            f'product/edit/id/{p["id"]}/" aria-label="Edit {esc(p["name"])}">Edit</a></td></tr>'),
                 "Products")
    return _page(ctx, "Products", _search_form("/catalog/product/", keyword) + grid)


@login_required
def _product_edit(ctx: _Ctx, product_id: int) -> Response:
    p = ctx.conn.execute("SELECT p.*, c.name AS category FROM shop_products p JOIN shop_categories c ON "
                         "c.id = p.category_id WHERE p.id = ?", (product_id,)).fetchone()
    if p is None:
        return _not_found(ctx, "This product no longer exists.")
    checked = " checked" if p["enabled"] else ""
    main = (f'<div class="page-actions"><a href="{PREFIX}/catalog/product/">Back</a></div>'
            f'<form id="product-form" method="post" action="{PREFIX}/catalog/product/save/id/{p["id"]}/">'
            '<div class="field"><label>'
            f'<input type="checkbox" name="product[status]" value="1"{checked}> Enable Product'
            '</label></div>'
            f'<div class="field"><label for="product-name">Product Name</label><input id="product-name" type="text" '
            f'name="product[name]" value="{esc(p["name"])}"></div>'
            f'<div class="field"><label for="product-sku">SKU</label><input id="product-sku" type="text" '
            f'name="product[sku]" value="{esc(p["sku"])}"></div>'
            f'<div class="field"><label for="product-price">Price</label><input id="product-price" type="text" '
            f'name="product[price]" value="{p["price"]:.2f}"></div>'
            f'<div class="field"><label for="product-qty">Quantity</label><input id="product-qty" type="text" '
            f'name="product[qty]" value="{p["qty"]}"></div>'
            f'<p>Category: {esc(p["category"])}</p>'
            '<details id="product-content"><summary>Content</summary>'
            f'<p id="description-preview">Current description: {esc(p["description"])}</p>'
            '<div class="field"><label for="product-description">'
            f'Description</label><textarea id="product-description" name="product[description]" rows="4" cols="60">'
            f'{esc(p["description"])}</textarea></div></details>'
            '<button type="submit">Save</button></form>')
    return _page(ctx, p["name"], main)


@login_required
def _product_save(ctx: _Ctx, product_id: int) -> Response:
    p = ctx.conn.execute("SELECT * FROM shop_products WHERE id = ?", (product_id,)).fetchone()
    if p is None:
        return _not_found(ctx, "This product no longer exists.")
    back = redirect(f"{PREFIX}/catalog/product/edit/id/{p['id']}/")
    name = ctx.form.get("product[name]", p["name"]).strip()
    sku = ctx.form.get("product[sku]", p["sku"]).strip()
    try:
        price = round(float(ctx.form.get("product[price]", p["price"]).replace("$", "").replace(",", "")), 2)
        qty = int(float(ctx.form.get("product[qty]", p["qty"])))
    except ValueError:
        ctx.flash("Please enter a valid number in the Price and Quantity fields.", "error")
        return back
    if not name or not sku or price < 0 or qty < 0:
        ctx.flash("Product Name and SKU are required; Price and Quantity cannot be negative.", "error")
        return back
    if ctx.conn.execute("SELECT 1 FROM shop_products WHERE sku = ? AND id != ?", (sku, p["id"])).fetchone():
        ctx.flash("The value specified in the SKU field must be unique.", "error")
        return back
    ctx.conn.execute("UPDATE shop_products SET name = ?, sku = ?, price = ?, qty = ?, enabled = ?, description = ? "
                     "WHERE id = ?", (name, sku, price, qty, 1 if ctx.form.get("product[status]") else 0,
                                      ctx.form.get("product[description]", p["description"]), p["id"]))
    ctx.flash("You saved the product.")
    return back


@login_required
def _reviews(ctx: _Ctx, pending_only: bool = False) -> Response:
    keyword = ctx.q.get("q", "").strip()
    sql = ("SELECT r.*, p.name AS product, p.sku FROM shop_reviews r JOIN shop_products p ON p.id = r.product_id "
           "WHERE 1 = 1")
    args: list[Any] = []
    if pending_only:
        sql += " AND r.status = 'pending'"
    if keyword:
        sql += " AND (p.name LIKE ? OR r.nickname LIKE ? OR r.title LIKE ? OR p.sku LIKE ?)"
        args = [_like(keyword)] * 4
    rows = ctx.conn.execute(sql + " ORDER BY r.created_at DESC, r.id DESC", args).fetchall()
    path = "/review/product/pending/" if pending_only else "/review/product/"
    grid = _grid(ctx, path, rows, {"q": keyword or None},
                 ["ID", "Created", "Status", "Title", "Nickname", "Review", "Rating", "Product", "SKU", "Action"],
                 lambda r: (f'<tr><td>{r["id"]}</td><td>{short_date(r["created_at"])}</td>'
                            f'<td>{REVIEW_STATUS_LABELS[r["status"]]}</td><td>{esc(r["title"])}</td>'
                            f'<td>{esc(r["nickname"])}</td><td>{esc(r["detail"][:50])}...</td>'
                            f'<td>{r["rating_percent"] // 20} stars</td><td>{esc(r["product"])}</td>'
                            f'<td>{esc(r["sku"])}</td><td><a href="{PREFIX}/review/product/edit/id/{r["id"]}/" '
                            f'aria-label="Edit review {r["id"]}">Edit</a></td></tr>'),
                 "Pending Reviews" if pending_only else "Reviews")
    return _page(ctx, "Pending Reviews" if pending_only else "Reviews", _search_form(path, keyword) + grid)


@login_required
def _review_edit(ctx: _Ctx, review_id: int) -> Response:
    r = ctx.conn.execute("SELECT r.*, p.name AS product, p.sku FROM shop_reviews r JOIN shop_products p ON "
                         "p.id = r.product_id WHERE r.id = ?", (review_id,)).fetchone()
    if r is None:
        return _not_found(ctx, "This review no longer exists.")
    author = "Guest" if r["customer_id"] is None else "Customer"
    radios = "".join(f'<label><input type="radio" name="status" value="{key}"'
                     f'{" checked" if key == r["status"] else ""}> {label}</label>'
                     for key, label in REVIEW_STATUS_LABELS.items())
    main = (f'<div class="page-actions"><a href="{PREFIX}/review/product/">Back</a>'
            f'<form method="post" action="{PREFIX}/review/product/delete/id/{r["id"]}/"><button type="submit">'
            'Delete Review</button></form></div><section><h2>Review Details</h2><table><tbody>'
            f'<tr><th>Product</th><td>{esc(r["product"])} (SKU: {esc(r["sku"])})</td></tr>'
            f'<tr><th>Posted By</th><td>{author}</td></tr><tr><th>Product Rating</th>'
            f'<td>{r["rating_percent"] // 20} stars ({r["rating_percent"]}%)</td></tr>'
            f'<tr><th>Status</th><td id="review-status">{REVIEW_STATUS_LABELS[r["status"]]}</td></tr>'
            f'<tr><th>Created</th><td>{long_date(r["created_at"])}</td></tr></tbody></table></section>'
            f'<form method="post" action="{PREFIX}/review/product/save/id/{r["id"]}/"><fieldset><legend>Status</legend>'
            f'{radios}</fieldset><div class="field"><label for="nickname">Nickname</label><input id="nickname" '
            f'type="text" name="nickname" value="{esc(r["nickname"])}"></div><div class="field"><label for="title">'
            f'Summary of Review</label><input id="title" type="text" name="title" value="{esc(r["title"])}"></div>'
            f'<div class="field"><label for="detail">Review</label><textarea id="detail" name="detail" rows="4" '
            f'cols="60">{esc(r["detail"])}</textarea></div><button type="submit">Save Review</button></form>')
    return _page(ctx, f'Edit Review "{r["title"]}"', main)


@login_required
def _review_save(ctx: _Ctx, review_id: int) -> Response:
    r = ctx.conn.execute("SELECT * FROM shop_reviews WHERE id = ?", (review_id,)).fetchone()
    if r is None:
        return _not_found(ctx, "This review no longer exists.")
    status = ctx.form.get("status", r["status"])
    if status not in REVIEW_STATUS_LABELS:
        status = r["status"]
    values = {k: ctx.form.get(k, r[k]).strip() or r[k] for k in ("nickname", "title", "detail")}
    ctx.conn.execute("UPDATE shop_reviews SET status = ?, nickname = ?, title = ?, detail = ? WHERE id = ?",
                     (status, values["nickname"], values["title"], values["detail"], r["id"]))
    ctx.flash("You saved the review.")
    return redirect(f"{PREFIX}/review/product/edit/id/{r['id']}/")


@login_required
def _review_delete(ctx: _Ctx, review_id: int) -> Response:
    ctx.conn.execute("DELETE FROM shop_reviews WHERE id = ?", (review_id,))
    ctx.flash("The review has been deleted.")
    return redirect(f"{PREFIX}/review/product/")


@login_required
def _customers(ctx: _Ctx) -> Response:
    keyword = ctx.q.get("q", "").strip()
    sql = ("SELECT c.*, a.telephone, a.postcode, a.region FROM shop_customers c LEFT JOIN shop_addresses a ON "
           "a.customer_id = c.id AND a.is_default = 1")
    args: list[Any] = []
    if keyword:
        sql += " WHERE c.firstname || ' ' || c.lastname LIKE ? OR c.email LIKE ?"
        args = [_like(keyword)] * 2
    rows = ctx.conn.execute(sql + " ORDER BY c.id", args).fetchall()
    grid = _grid(ctx, "/customer/index/", rows, {"q": keyword or None},
                 ["ID", "Name", "Email", "Phone", "ZIP", "State/Province", "Customer Since", "Action"],
                 lambda c: (f'<tr><td>{c["id"]}</td><td>{esc(c["firstname"])} {esc(c["lastname"])}</td>'
                            f'<td>{esc(c["email"])}</td><td>{esc(c["telephone"] or "")}</td>'
                            f'<td>{esc(c["postcode"] or "")}</td><td>{esc(c["region"] or "")}</td>'
                            f'<td>{long_date(c["created_at"])}</td><td><a href="{PREFIX}/customer/index/edit/id/'
                            f'{c["id"]}/" aria-label="Edit {esc(c["firstname"])} {esc(c["lastname"])}">Edit</a>'
                            '</td></tr>'),
                 "Customers")
    return _page(ctx, "Customers", _search_form("/customer/index/", keyword) + grid)


@login_required
def _customer_view(ctx: _Ctx, customer_id: int) -> Response:
    c = ctx.conn.execute("SELECT * FROM shop_customers WHERE id = ?", (customer_id,)).fetchone()
    if c is None:
        return _not_found(ctx, "This customer no longer exists.")
    a = ctx.conn.execute("SELECT * FROM shop_addresses WHERE customer_id = ? ORDER BY is_default DESC, id LIMIT 1",
                         (c["id"],)).fetchone()
    orders = ctx.conn.execute("SELECT * FROM shop_orders WHERE customer_id = ? ORDER BY created_at DESC, id DESC",
                              (c["id"],)).fetchall()
    address = (f'{esc(a["street"])}<br>{esc(a["city"])}, {esc(a["region"])}, {esc(a["postcode"])}<br>'
               f'{esc(a["country"])}<br>T: {esc(a["telephone"])}'
               if a else "The customer does not have a default address.")
    order_rows = "".join(f'<tr><td>{o["increment_id"]}</td><td>{long_date(o["created_at"])}</td>'
                         f'<td>{esc(o["ship_firstname"])} {esc(o["ship_lastname"])}</td><td>{money(o["grand_total"])}'
                         f'</td><td>{STATUS_LABELS[o["status"]]}</td><td><a href="{PREFIX}/sales/order/view/order_id/'
                         f'{o["id"]}/" aria-label="View order {o["increment_id"]}">View</a></td></tr>' for o in orders)
    main = (f'<div class="page-actions"><a href="{PREFIX}/customer/index/">Back</a></div>'
            '<section><h2>Personal Information</h2><table><tbody>'
            f'<tr><th>Name</th><td>{esc(c["firstname"])} {esc(c["lastname"])}</td></tr>'
            f'<tr><th>Email</th><td>{esc(c["email"])}</td></tr>'
            f'<tr><th>Customer Since</th><td>{long_date(c["created_at"])}</td></tr></tbody></table></section>'
            f'<section><h2>Default Billing Address</h2><address>{address}</address></section>'
            f'<section><h2>Orders</h2><p>{len(orders)} orders</p>'
            '<table id="customer-orders"><thead><tr><th>Order #</th>'
            '<th>Purchased</th><th>Ship-to Name</th><th>Order Total</th><th>Status</th><th>Action</th></tr></thead>'
            f'<tbody>{order_rows}</tbody></table></section>')
    return _page(ctx, f'{c["firstname"]} {c["lastname"]}', main)


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _report_filters(ctx: _Ctx, path: str, periods: Iterable[str], default: str) -> tuple[str, str, str, str]:
    period = ctx.q.get("period", default)
    periods = list(periods)
    if period not in periods:
        period = default
    date_from = ctx.q.get("from", "").strip()
    date_to = ctx.q.get("to", "").strip()
    date_from = date_from if _DATE.match(date_from) else ""
    date_to = date_to if _DATE.match(date_to) else ""
    radios = "".join(f'<label><input type="radio" name="period" value="{p}"{" checked" if p == period else ""}> '
                     f'{p.capitalize()}</label>' for p in periods)
    form = (f'<form class="report-filter" method="get" action="{PREFIX}{path}"><fieldset><legend>Filter</legend>'
            f'<div class="field"><label for="report_from">From</label><input id="report_from" type="text" name="from" '
            f'placeholder="YYYY-MM-DD" value="{esc(date_from)}"></div><div class="field"><label for="report_to">To'
            f'</label><input id="report_to" type="text" name="to" placeholder="YYYY-MM-DD" value="{esc(date_to)}">'
            f'</div><fieldset><legend>Period</legend>{radios}</fieldset></fieldset>'
            '<button type="submit">Show Report</button></form>')
    return form, period, date_from, date_to


@login_required
def _sales_report(ctx: _Ctx) -> Response:
    form, period, date_from, date_to = _report_filters(ctx, "/reports/report_sales/sales/", ("day", "month", "year"),
                                                       "day")
    rows = sales_report(ctx.conn, period, date_from, date_to)
    body = "".join(f'<tr><td>{r["interval"]}</td><td>{r["orders"]}</td><td>{r["items"]}</td>'
                   f'<td>{money(r["total"])}</td></tr>' for r in rows)
    total = (f'<tr><th>Total</th><td>{sum(r["orders"] for r in rows)}</td><td>{sum(r["items"] for r in rows)}</td>'
             f'<td>{money(sum(r["total"] for r in rows))}</td></tr>')
    table = ('<table id="report-table"><caption>Orders Report</caption><thead><tr><th>Interval</th><th>Orders</th>'
             '<th>Sales Items</th><th>Sales Total</th></tr></thead>'
             f'<tbody>{body}</tbody><tfoot>{total}</tfoot></table>')
    return _page(ctx, "Orders Report", form + table)


@login_required
def _bestsellers_report(ctx: _Ctx) -> Response:
    form, period, date_from, date_to = _report_filters(ctx, "/reports/report_sales/bestsellers/", ("month", "year"),
                                                       "year")
    rows = bestsellers(ctx.conn, period, date_from, date_to)
    body = "".join(f'<tr><td>{r["interval"]}</td><td>{r["rank"]}</td><td>{esc(r["name"])}</td>'
                   f'<td>{money(r["price"])}</td><td>{r["qty"]}</td></tr>' for r in rows)
    table = ('<table id="report-table"><caption>Bestsellers Report</caption><thead><tr><th>Interval</th><th>Rank</th>'
             f'<th>Product</th><th>Price</th><th>Order Quantity</th></tr></thead><tbody>{body}</tbody></table>')
    return _page(ctx, "Bestsellers Report", form + table)


# --- app ---------------------------------------------------------------------------------------------

def create_app(store: InstanceStore) -> Starlette:
    """The admin's Starlette app over `store`; mount it at `/admin` (its links carry that prefix)."""

    def bind(handler: Callable[..., Response], **fixed: Any) -> Callable:
        return page(store, _Ctx, handler, **fixed)

    routes = [Route("/", bind(_index)), Route("/login", bind(_index), methods=["GET"]),
              Route("/login", bind(_login_post), methods=["POST"]),
              Route("/logout", bind(_logout), methods=["GET", "POST"])]
    for path, endpoint, methods in (
        ("/dashboard/", bind(_dashboard), ("GET",)),
        ("/admin/dashboard/", bind(_dashboard), ("GET",)),
        ("/sales/order/", bind(_orders), ("GET",)),
        ("/sales/order/view/order_id/{order_id:int}/", bind(_order_view), ("GET",)),
        ("/sales/order/addComment/order_id/{order_id:int}/", bind(_order_comment), ("POST",)),
        ("/catalog/product/", bind(_products), ("GET",)),
        ("/catalog/product/edit/id/{product_id:int}/", bind(_product_edit), ("GET",)),
        ("/catalog/product/save/id/{product_id:int}/", bind(_product_save), ("POST",)),
        ("/review/product/", bind(_reviews), ("GET",)),
        ("/review/product/pending/", bind(_reviews, pending_only=True), ("GET",)),
        ("/review/product/edit/id/{review_id:int}/", bind(_review_edit), ("GET",)),
        ("/review/product/save/id/{review_id:int}/", bind(_review_save), ("POST",)),
        ("/review/product/delete/id/{review_id:int}/", bind(_review_delete), ("POST",)),
        ("/customer/index/", bind(_customers), ("GET",)),
        ("/customer/index/edit/id/{customer_id:int}/", bind(_customer_view), ("GET",)),
        ("/reports/report_sales/sales/", bind(_sales_report), ("GET",)),
        ("/reports/report_sales/bestsellers/", bind(_bestsellers_report), ("GET",)),
    ):
        routes += slash_routes(path, endpoint, methods)
    for action in ORDER_ACTIONS:
        routes += slash_routes(f"/sales/order/{action}/order_id/{{order_id:int}}/",
                               bind(_order_action, action=action), ("POST",))
    return Starlette(routes=routes)
