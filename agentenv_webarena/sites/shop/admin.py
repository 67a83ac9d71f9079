"""The embedded shop's admin side: a Magento-admin-like back office (WebArena's `shopping_admin` site).

Owns the admin pages over the shop's tables (`shop.seed` owns the schema and seed). The app is
mounted at `/admin`, so every path below is served as `{SHOPPING_ADMIN}/...` with
`SHOPPING_ADMIN = http://host:port/admin`. Pages (paths under `/admin`):

- GET `/`, GET `/login`; POST `/login` (`login[username]`, `login[password]`); GET `/logout`: sign-in form; session
  cookie `admin_session`
- GET `/dashboard/`: lifetime sales, average order, last orders, bestsellers, new customers, latest reviews
- GET `/sales/order/`: orders grid: `q` keyword (order #, name, email), `status` (Magento's statuses, "Suspected
  Fraud" too), `p` (20 a page, as every grid); the applied filters in `div.admin__data-grid-filters-current`
- GET `/sales/order/view/order_id/<id>/`: order view (`#order_status`, `#order_history_block` `.note-list`, newest
  first); POST `.../cancel/`, `.../hold/`, `.../unhold/`, `.../invoice/`, `.../ship/`
  (`/sales/order/<action>/order_id/<id>/`), `/sales/order/addComment/order_id/<id>/` (`history[comment]`)
- GET `/sales/order/commentsHistory/order_id/<id>/active_tab/<tab>/`: the order's Invoices, Credit Memos,
  Shipments or Comments History tab; POST `/sales/order/addTrack/order_id/<id>/` (`tracking[carrier_code]`,
  `tracking[number]`, shipped orders only): "Tracking number <n> for <carrier> assigned" in the history
- GET `/review/product/`, `/review/product/pending/`: reviews grid (all / pending): `q`, `p`
- GET `/review/product/edit/id/<id>/`; POST `/review/product/save/id/<id>/` (`status`, `nickname`, `title`,
  `detail`), `/review/product/delete/id/<id>/`: one review
- GET `/customer/index/`, `/customer/index/edit/id/<id>/`: customers grid (`q`, `p`) and customer view with orders
- products (grid, edit, new: `admin_catalog`), reports (`admin_reports`), cart price rules (`admin_marketing`), CMS
  pages and themes (`admin_content`), search terms (`admin_search_terms`), newsletter subscribers and a customer's
  subscription (`admin_newsletter`), an order's billing and shipping addresses (`admin_order_address`); page chrome
  and grids in `admin_layout`

CSS hooks of the embedded tasks' `program_html` locators: `#order-status`, `#order-history`, `#order-items`
on an order view; `#product-form` inputs on a product edit page; `#review-status` on a review edit page;
`#records-found` on every grid.
"""
from __future__ import annotations

import re
import sqlite3
from typing import Any, Callable, Optional

from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from agentenv_webarena.sites.common import (
    SignIn,
    esc,
    html_page,
    login_required,
    page,
    query_url,
    redirect,
    slash_routes,
)
from agentenv_webarena.sites.shop import (
    admin_catalog,
    admin_content,
    admin_marketing,
    admin_newsletter,
    admin_order_address,
    admin_reports,
    admin_search_terms,
)
from agentenv_webarena.sites.shop.admin_layout import (
    COOKIE,
    PREFIX,
    AdminCtx,
    active_filters,
    admin_page,
    grid,
    like,
    not_found,
    search_form,
)
from agentenv_webarena.sites.shop.admin_newsletter import newsletter_section
from agentenv_webarena.sites.shop.admin_order_address import address_sections
from agentenv_webarena.sites.shop.admin_reports import bestsellers, sales_report
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

# order action -> (statuses it applies to, new status, message)
ORDER_ACTIONS = {
    "cancel": ({"pending", "processing"}, "canceled", "You canceled the order."),
    "hold": ({"pending", "processing"}, "holded", "You put the order on hold."),
    "unhold": ({"holded"}, "processing", "You released the order from holding status."),
    "invoice": ({"pending"}, "processing", "The invoice has been created."),
    "ship": ({"processing"}, "complete", "The shipment has been created."),
}
_ACTION_LABELS = {"cancel": "Cancel", "hold": "Hold", "unhold": "Unhold", "invoice": "Invoice", "ship": "Ship"}


# --- handlers ----------------------------------------------------------------------------------------

_SIGN_IN = SignIn(action=f"{PREFIX}/login", user_field="login[username]", password_field="login[password]",
                  account_sql="SELECT * FROM shop_admin_users WHERE username = ?",
                  signed_in_url=f"{PREFIX}/dashboard/", refused_url=f"{PREFIX}/login?error=1",
                  hash_password=hash_password, password_id="login", user_attrs=' placeholder="user name"',
                  password_attrs=' placeholder="password"', magento=True)


def _index(ctx: AdminCtx) -> Response:
    if ctx.admin is not None:
        return redirect(f"{PREFIX}/dashboard/")
    error = ('<div class="message message-error" role="alert">The account sign-in was incorrect or your account is '
             'disabled temporarily. Please wait and try again later.</div>' if ctx.q.get("error") else "")
    body = f'<main class="login"><h1>Welcome, please sign in</h1>{error}{_SIGN_IN.form()}</main>'
    return html_page("Magento Admin", body, site="admin")


def _login_post(ctx: AdminCtx) -> Response:
    return _SIGN_IN.post(ctx)


def _logout(ctx: AdminCtx) -> Response:
    ctx.end_session()
    return redirect(f"{PREFIX}/")


@login_required
def _dashboard(ctx: AdminCtx) -> Response:
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
    return admin_page(ctx, "Dashboard", main)


@login_required
def _orders(ctx: AdminCtx) -> Response:
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
        args += [like(keyword)] * 4
    rows = ctx.conn.execute(sql + " ORDER BY o.created_at DESC, o.id DESC", args).fetchall()
    filters = [f'<a href="{PREFIX}/sales/order/">All Orders</a>' if status else '<strong>All Orders</strong>']
    for key, label in STATUS_LABELS.items():
        href = query_url(PREFIX + "/sales/order/", status=key, q=keyword or None)
        filters.append(f'<strong>{label}</strong>' if key == status else f'<a href="{esc(href)}">{label}</a>')
    table = grid(ctx, "/sales/order/", rows, {"status": status or None, "q": keyword or None},
                 ["ID", "Purchase Date", "Bill-to Name", "Ship-to Name", "Grand Total", "Status", "Action"],
                 lambda o: (f'<tr><td>{o["increment_id"]}</td><td>{long_date(o["created_at"])}</td>'
                            f'<td>{esc(o["firstname"])} {esc(o["lastname"])}</td>'
                            f'<td>{esc(o["ship_firstname"])} {esc(o["ship_lastname"])}</td>'
                            f'<td>{money(o["grand_total"])}</td><td>{STATUS_LABELS[o["status"]]}</td>'
                            f'<td><a href="{PREFIX}/sales/order/view/order_id/{o["id"]}/" '
                            f'aria-label="View order {o["increment_id"]}">View</a></td></tr>'),
                 "Orders")
    main = (search_form("/sales/order/", keyword, {"status": status}) +
            f'<nav class="filters" aria-label="Order status">{" ".join(filters)}</nav>'
            + active_filters("/sales/order/", [("Status", STATUS_LABELS.get(status, "")), ("Keyword", keyword)])
            + table)
    return admin_page(ctx, "Orders", main)


def _order_row(ctx: AdminCtx, order_id: int) -> Optional[sqlite3.Row]:
    return ctx.conn.execute("SELECT o.*, c.firstname, c.lastname, c.email FROM shop_orders o JOIN shop_customers c ON "
                            "c.id = o.customer_id WHERE o.id = ?", (order_id,)).fetchone()


@login_required
def _order_view(ctx: AdminCtx, order_id: int) -> Response:
    o = _order_row(ctx, order_id)
    if o is None:
        return not_found(ctx, "This order no longer exists.")
    buttons = "".join(
        f'<form method="post" action="{PREFIX}/sales/order/{action}/order_id/{o["id"]}/">'
        f'<button type="submit">{_ACTION_LABELS[action]}</button></form>'
        for action, (allowed, _, _) in ORDER_ACTIONS.items() if o["status"] in allowed)
    items = "".join(
        f'<tr><td>{esc(i["name"])}<br>SKU: {esc(i["sku"])}'
        f'{"<br>" + esc(option_text(i["size"], i["color"])) if i["size"] or i["color"] else ""}</td>'
        f'<td>{money(i["price"])}</td><td>Ordered {i["qty"]}</td><td>{money(i["price"] * i["qty"])}</td></tr>'
        for i in order_items(ctx.conn, o["id"]))
    main = (f'<div class="page-actions"><a href="{PREFIX}/sales/order/">Back</a> {buttons}</div>{_order_tabs(o)}'
            '<section class="order-information"><h2>Order &amp; Account Information</h2><table><tbody>'
            f'<tr><th>Order Date</th><td>{long_date(o["created_at"])}</td></tr>'
            f'<tr><th>Order Status</th><td><span id="order_status"><span id="order-status">'
            f'{STATUS_LABELS[o["status"]]}</span></span></td></tr>'
            f'<tr><th>Customer Name</th><td><a href="{PREFIX}/customer/index/edit/id/{o["customer_id"]}/">'
            f'{esc(o["firstname"])} {esc(o["lastname"])}</a></td></tr><tr><th>Email</th><td>{esc(o["email"])}</td></tr>'
            f'</tbody></table></section>{address_sections(ctx.conn, o["id"])}'
            '<section><h2>Payment &amp; Shipping Method</h2>'
            f'<p>{esc(o["payment_method"])}</p><p>Flat Rate - Fixed</p></section>'
            '<section><h2>Items Ordered</h2><table id="order-items"><thead><tr><th>Product</th><th>Price</th>'
            f'<th>Qty</th><th>Row Total</th></tr></thead><tbody>{items}</tbody></table></section>'
            f'<section><h2>Order Totals</h2><table><tbody><tr><th>Subtotal</th><td>{money(o["subtotal"])}</td></tr>'
            f'<tr><th>Shipping &amp; Handling</th><td>{money(o["shipping"])}</td></tr><tr><th>Grand Total</th>'
            f'<td id="grand-total">{money(o["grand_total"])}</td></tr></tbody></table></section>'
            '<section id="order_history_block" class="edit-order-comments"><h2>Notes for this Order</h2>'
            f'<form method="post" action="{PREFIX}/sales/order/addComment/order_id/{o["id"]}/">'
            '<div class="field"><label for="history_comment">Comment</label><textarea id="history_comment" '
            'name="history[comment]" rows="3" cols="50"></textarea></div><button type="submit">Submit Comment</button>'
            f'</form>{_history_list(ctx, o)}</section>')
    return admin_page(ctx, f'# {o["increment_id"]}', main)


def _history_list(ctx: AdminCtx, o: sqlite3.Row) -> str:
    """The order's comments, newest first: Magento's `.note-list` (`#order-history` for our own checks)."""
    history = ctx.conn.execute("SELECT * FROM shop_order_comments WHERE order_id = ? ORDER BY created_at DESC, id DESC",
                               (o["id"],)).fetchall()
    items = "".join(f'<li class="note-list-item"><span class="note-list-date">{long_date(h["created_at"])}</span> | '
                    f'<span class="note-list-status">{STATUS_LABELS[h["status"]]}</span> | '
                    f'<span class="note-comment note-list-comment">{esc(h["comment"])}</span></li>' for h in history)
    return f'<ul id="order-history" class="note-list">{items}</ul>'


# Order view tabs: active_tab -> label (Magento's `/sales/order/commentsHistory/order_id/<id>/active_tab/<tab>/`).
_ORDER_TABS = {"order_invoices": "Invoices", "order_creditmemos": "Credit Memos", "order_shipments": "Shipments",
               "order_history": "Comments History"}
_SHIPPED = ("complete", "closed")
CARRIERS = {"fedex": "Federal Express", "dhl": "DHL", "ups": "United Parcel Service",
            "usps": "United States Postal Service", "custom": "Custom Value"}
_TRACKING = re.compile(r"^[A-Za-z0-9-]{4,40}$")


def _order_tabs(o: sqlite3.Row) -> str:
    links = [f'<li><a href="{PREFIX}/sales/order/view/order_id/{o["id"]}/">Information</a></li>']
    links += [f'<li><a href="{PREFIX}/sales/order/commentsHistory/order_id/{o["id"]}/active_tab/{tab}/">{label}</a>'
              '</li>' for tab, label in _ORDER_TABS.items()]
    return f'<nav class="order-tabs" aria-label="Order View"><ul class="tabs">{"".join(links)}</ul></nav>'


def _tab_table(caption: str, head: list[str], rows: list[list[str]]) -> str:
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    body = body or f'<tr><td colspan="{len(head)}">We couldn\'t find any records.</td></tr>'
    return (f'<table class="data-grid"><caption>{caption}</caption><thead><tr>'
            + "".join(f"<th>{h}</th>" for h in head) + f'</tr></thead><tbody>{body}</tbody></table>')


@login_required
def _order_tab(ctx: AdminCtx, order_id: int, tab: str) -> Response:
    o = _order_row(ctx, order_id)
    if o is None:
        return not_found(ctx, "This order no longer exists.")
    if tab not in _ORDER_TABS:
        return redirect(f"{PREFIX}/sales/order/view/order_id/{o['id']}/")
    name = f'{esc(o["ship_firstname"])} {esc(o["ship_lastname"])}'
    qty = sum(i["qty"] for i in order_items(ctx.conn, o["id"]))
    shipped = o["status"] in _SHIPPED
    if tab == "order_invoices":
        rows = [[o["increment_id"], long_date(o["updated_at"]), name, "Paid", money(o["grand_total"])]] \
            if o["status"] in ("processing", *_SHIPPED) else []
        content = _tab_table("Invoices", ["Invoice", "Invoice Date", "Bill-to Name", "Status", "Amount"], rows)
    elif tab == "order_creditmemos":
        rows = [[o["increment_id"], long_date(o["updated_at"]), name, "Refunded", money(o["grand_total"])]] \
            if o["status"] == "closed" else []
        content = _tab_table("Credit Memos", ["Credit Memo", "Created", "Bill-to Name", "Status", "Refunded"], rows)
    elif tab == "order_shipments":
        rows = [[o["increment_id"], long_date(o["updated_at"]), name, str(qty)]] if shipped else []
        content = _tab_table("Shipments", ["Shipment", "Ship Date", "Ship-to Name", "Total Quantity"], rows)
        if shipped:
            options = "".join(f'<option value="{k}">{v}</option>' for k, v in CARRIERS.items())
            content += (f'<form method="post" action="{PREFIX}/sales/order/addTrack/order_id/{o["id"]}/">'
                        '<fieldset><legend>Add Tracking Number</legend><div class="field">'
                        '<label for="tracking_carrier">Carrier</label>'
                        f'<select id="tracking_carrier" name="tracking[carrier_code]">{options}</select>'
                        '</div><div class="field"><label for="tracking_number">Number</label><input '
                        'id="tracking_number" type="text" name="tracking[number]"></div>'
                        '<button type="submit">Add</button></fieldset></form>')
    else:
        content = ""
    main = (f'<div class="page-actions"><a href="{PREFIX}/sales/order/">Back</a></div>{_order_tabs(o)}'
            f'<section><h2>{_ORDER_TABS[tab]}</h2>{content}</section>'
            f'<section id="order_history_block"><h2>Notes for this Order</h2>{_history_list(ctx, o)}</section>')
    return admin_page(ctx, f'# {o["increment_id"]}', main)


@login_required
def _order_track(ctx: AdminCtx, order_id: int) -> Response:
    o = _order_row(ctx, order_id)
    if o is None:
        return not_found(ctx, "This order no longer exists.")
    carrier = CARRIERS.get(ctx.form.get("tracking[carrier_code]", ""))
    number = ctx.form.get("tracking[number]", "").strip()
    if o["status"] not in _SHIPPED:
        ctx.flash("Tracking numbers can be added once the order has shipped.", "error")
    elif carrier is None or not _TRACKING.match(number):
        ctx.flash("Please choose a carrier and enter a valid tracking number.", "error")
    else:
        ctx.conn.execute("INSERT INTO shop_order_comments (order_id, comment, status, created_at) VALUES (?, ?, ?, ?)",
                         (o["id"], f"Tracking number {number} for {carrier} assigned", o["status"],
                          site_now(ctx.conn)))
        ctx.flash("The tracking number has been added.")
    return redirect(f"{PREFIX}/sales/order/commentsHistory/order_id/{o['id']}/active_tab/order_shipments/")


@login_required
def _order_action(ctx: AdminCtx, action: str, order_id: int) -> Response:
    o = _order_row(ctx, order_id)
    if o is None or action not in ORDER_ACTIONS:
        return not_found(ctx, "This order no longer exists.")
    allowed, new_status, message = ORDER_ACTIONS[action]
    if o["status"] not in allowed:
        ctx.flash(f"You cannot {action} an order whose status is {STATUS_LABELS[o['status']]}.", "error")
    else:
        ctx.conn.execute("UPDATE shop_orders SET status = ?, updated_at = ? WHERE id = ?",
                         (new_status, site_now(ctx.conn), o["id"]))
        ctx.flash(message)
    return redirect(f"{PREFIX}/sales/order/view/order_id/{o['id']}/")


@login_required
def _order_comment(ctx: AdminCtx, order_id: int) -> Response:
    o = _order_row(ctx, order_id)
    if o is None:
        return not_found(ctx, "This order no longer exists.")
    comment = ctx.form.get("history[comment]", "").strip()
    if not comment:
        ctx.flash("Please enter a comment.", "error")
    else:
        ctx.conn.execute("INSERT INTO shop_order_comments (order_id, comment, status, created_at) VALUES (?, ?, ?, ?)",
                         (o["id"], comment, o["status"], site_now(ctx.conn)))
        ctx.flash("You added a comment to the order.")
    return redirect(f"{PREFIX}/sales/order/view/order_id/{o['id']}/")


@login_required
def _reviews(ctx: AdminCtx, pending_only: bool = False) -> Response:
    keyword = ctx.q.get("q", "").strip()
    sql = ("SELECT r.*, p.name AS product, p.sku FROM shop_reviews r JOIN shop_products p ON p.id = r.product_id "
           "WHERE 1 = 1")
    args: list[Any] = []
    if pending_only:
        sql += " AND r.status = 'pending'"
    if keyword:
        sql += " AND (p.name LIKE ? OR r.nickname LIKE ? OR r.title LIKE ? OR p.sku LIKE ?)"
        args = [like(keyword)] * 4
    rows = ctx.conn.execute(sql + " ORDER BY r.created_at DESC, r.id DESC", args).fetchall()
    path = "/review/product/pending/" if pending_only else "/review/product/"
    table = grid(ctx, path, rows, {"q": keyword or None},
                 ["ID", "Created", "Status", "Title", "Nickname", "Review", "Rating", "Product", "SKU", "Action"],
                 lambda r: (f'<tr><td>{r["id"]}</td><td>{short_date(r["created_at"])}</td>'
                            f'<td>{REVIEW_STATUS_LABELS[r["status"]]}</td><td>{esc(r["title"])}</td>'
                            f'<td>{esc(r["nickname"])}</td><td>{esc(r["detail"][:50])}...</td>'
                            f'<td>{r["rating_percent"] // 20} stars</td><td>{esc(r["product"])}</td>'
                            f'<td>{esc(r["sku"])}</td><td><a href="{PREFIX}/review/product/edit/id/{r["id"]}/" '
                            f'aria-label="Edit review {r["id"]}">Edit</a></td></tr>'),
                 "Pending Reviews" if pending_only else "Reviews")
    return admin_page(ctx, "Pending Reviews" if pending_only else "Reviews", search_form(path, keyword) + table)


@login_required
def _review_edit(ctx: AdminCtx, review_id: int) -> Response:
    r = ctx.conn.execute("SELECT r.*, p.name AS product, p.sku FROM shop_reviews r JOIN shop_products p ON "
                         "p.id = r.product_id WHERE r.id = ?", (review_id,)).fetchone()
    if r is None:
        return not_found(ctx, "This review no longer exists.")
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
    return admin_page(ctx, f'Edit Review "{r["title"]}"', main)


@login_required
def _review_save(ctx: AdminCtx, review_id: int) -> Response:
    r = ctx.conn.execute("SELECT * FROM shop_reviews WHERE id = ?", (review_id,)).fetchone()
    if r is None:
        return not_found(ctx, "This review no longer exists.")
    status = ctx.form.get("status", r["status"])
    if status not in REVIEW_STATUS_LABELS:
        status = r["status"]
    values = {k: ctx.form.get(k, r[k]).strip() or r[k] for k in ("nickname", "title", "detail")}
    ctx.conn.execute("UPDATE shop_reviews SET status = ?, nickname = ?, title = ?, detail = ? WHERE id = ?",
                     (status, values["nickname"], values["title"], values["detail"], r["id"]))
    ctx.flash("You saved the review.")
    return redirect(f"{PREFIX}/review/product/edit/id/{r['id']}/")


@login_required
def _review_delete(ctx: AdminCtx, review_id: int) -> Response:
    ctx.conn.execute("DELETE FROM shop_reviews WHERE id = ?", (review_id,))
    ctx.flash("The review has been deleted.")
    return redirect(f"{PREFIX}/review/product/")


@login_required
def _customers(ctx: AdminCtx) -> Response:
    keyword = ctx.q.get("q", "").strip()
    sql = ("SELECT c.*, a.telephone, a.postcode, a.region FROM shop_customers c LEFT JOIN shop_addresses a ON "
           "a.customer_id = c.id AND a.is_default = 1")
    args: list[Any] = []
    if keyword:
        sql += " WHERE c.firstname || ' ' || c.lastname LIKE ? OR c.email LIKE ?"
        args = [like(keyword)] * 2
    rows = ctx.conn.execute(sql + " ORDER BY c.id", args).fetchall()
    table = grid(ctx, "/customer/index/", rows, {"q": keyword or None},
                 ["ID", "Name", "Email", "Phone", "ZIP", "State/Province", "Customer Since", "Action"],
                 lambda c: (f'<tr><td>{c["id"]}</td><td>{esc(c["firstname"])} {esc(c["lastname"])}</td>'
                            f'<td>{esc(c["email"])}</td><td>{esc(c["telephone"] or "")}</td>'
                            f'<td>{esc(c["postcode"] or "")}</td><td>{esc(c["region"] or "")}</td>'
                            f'<td>{long_date(c["created_at"])}</td><td><a href="{PREFIX}/customer/index/edit/id/'
                            f'{c["id"]}/" aria-label="Edit {esc(c["firstname"])} {esc(c["lastname"])}">Edit</a>'
                            '</td></tr>'),
                 "Customers")
    return admin_page(ctx, "Customers", search_form("/customer/index/", keyword) + table)


@login_required
def _customer_view(ctx: AdminCtx, customer_id: int) -> Response:
    c = ctx.conn.execute("SELECT * FROM shop_customers WHERE id = ?", (customer_id,)).fetchone()
    if c is None:
        return not_found(ctx, "This customer no longer exists.")
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
            f'<tbody>{order_rows}</tbody></table></section>{newsletter_section(ctx, c["id"])}')
    return admin_page(ctx, f'{c["firstname"]} {c["lastname"]}', main)


# --- app ---------------------------------------------------------------------------------------------

def create_app(store: InstanceStore) -> Starlette:
    """The admin's Starlette app over `store`; mount it at `/admin` (its links carry that prefix)."""

    def bind(handler: Callable[..., Response], **fixed: Any) -> Callable:
        return page(store, AdminCtx, handler, **fixed)

    routes = [Route("/", bind(_index)), Route("/login", bind(_index), methods=["GET"]),
              Route("/login", bind(_login_post), methods=["POST"]),
              Route("/logout", bind(_logout), methods=["GET", "POST"])]
    table: list[tuple[str, Callable[..., Response], tuple[str, ...], dict[str, Any]]] = [
        ("/dashboard/", _dashboard, ("GET",), {}),
        ("/admin/dashboard/", _dashboard, ("GET",), {}),
        ("/sales/order/", _orders, ("GET",), {}),
        ("/sales/order/view/order_id/{order_id:int}/", _order_view, ("GET",), {}),
        ("/sales/order/commentsHistory/order_id/{order_id:int}/active_tab/{tab}/", _order_tab, ("GET",), {}),
        ("/sales/order/addComment/order_id/{order_id:int}/", _order_comment, ("POST",), {}),
        ("/sales/order/addTrack/order_id/{order_id:int}/", _order_track, ("POST",), {}),
        ("/review/product/", _reviews, ("GET",), {}),
        ("/review/product/pending/", _reviews, ("GET",), {"pending_only": True}),
        ("/review/product/edit/id/{review_id:int}/", _review_edit, ("GET",), {}),
        ("/review/product/save/id/{review_id:int}/", _review_save, ("POST",), {}),
        ("/review/product/delete/id/{review_id:int}/", _review_delete, ("POST",), {}),
        ("/customer/index/", _customers, ("GET",), {}),
        ("/customer/index/edit/id/{customer_id:int}/", _customer_view, ("GET",), {}),
        *[(f"/sales/order/{action}/order_id/{{order_id:int}}/", _order_action, ("POST",), {"action": action})
          for action in ORDER_ACTIONS],
        *admin_catalog.ROUTES, *admin_reports.ROUTES, *admin_marketing.ROUTES, *admin_content.ROUTES,
        *admin_search_terms.ROUTES, *admin_newsletter.ROUTES, *admin_order_address.ROUTES,
    ]
    for path, handler, methods, fixed in table:
        routes += slash_routes(path, bind(handler, **fixed), methods)
    return Starlette(routes=routes)
