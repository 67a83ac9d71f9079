"""The shop admin's newsletter: Marketing > Newsletter Subscribers and a customer's subscription on their page.

Paths (under `/admin`, Magento's): GET `/newsletter/subscriber/` (also `.../index/`): the subscribers grid (every
customer who ever subscribed; `q` keyword on email or name, `status` = 1 Subscribed / 3 Unsubscribed, `p` page),
rows `tr.data-row[data-email]` with `td.col-status`; POST `/customer/index/newsletter/id/<id>/` (`subscription` = 1
or absent): the Newsletter section of the customer's page (`newsletter_section`), checkbox
`[title="Newsletter Subscription"]`, status text `#newsletter-status`. The storefront's own form
(`/newsletter/manage/`) writes the same table.
"""
from __future__ import annotations

from typing import Any

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, query_url, redirect
from agentenv_webarena.sites.shop.admin_layout import (
    PREFIX,
    AdminCtx,
    active_filters,
    admin_page,
    grid,
    like,
    not_found,
    search_form,
)
from agentenv_webarena.sites.shop.model import long_date, site_now

__all__ = ["ROUTES", "GRID_PATH", "STATUSES", "newsletter_section"]

GRID_PATH = "/newsletter/subscriber/"
STATUSES = {"1": "Subscribed", "3": "Unsubscribed"}  # Magento's subscriber_status values


def _status(subscribed: Any) -> str:
    return STATUSES["1" if subscribed else "3"]


@login_required
def _subscribers(ctx: AdminCtx) -> Response:
    keyword = ctx.q.get("q", "").strip()
    status = ctx.q.get("status", "") if ctx.q.get("status") in STATUSES else ""
    sql = ("SELECT n.*, c.email, c.firstname, c.lastname FROM shop_newsletter_subscribers n JOIN shop_customers c "
           "ON c.id = n.customer_id WHERE 1 = 1")
    args: list[Any] = []
    if status:
        sql += " AND n.subscribed = ?"
        args.append(int(status == "1"))
    if keyword:
        sql += " AND (c.email LIKE ? OR c.firstname || ' ' || c.lastname LIKE ?)"
        args += [like(keyword)] * 2
    rows = ctx.conn.execute(sql + " ORDER BY n.customer_id", args).fetchall()
    filters = [f'<a href="{PREFIX}{GRID_PATH}">Any status</a>' if status else "<strong>Any status</strong>"]
    for key, label in STATUSES.items():
        href = query_url(PREFIX + GRID_PATH, status=key, q=keyword or None)
        filters.append(f"<strong>{label}</strong>" if key == status else f'<a href="{esc(href)}">{label}</a>')
    table = grid(ctx, GRID_PATH, rows, {"q": keyword or None, "status": status or None},
                 ["ID", "Email", "Type", "Customer First Name", "Customer Last Name", "Status", "Web Site",
                  "Store View", "Changed"],
                 lambda n: (f'<tr class="data-row" data-email="{esc(n["email"])}"><td>{n["customer_id"]}</td>'
                            f'<td>{esc(n["email"])}</td><td>Customer</td><td>{esc(n["firstname"])}</td>'
                            f'<td>{esc(n["lastname"])}</td><td class="col-status">{_status(n["subscribed"])}</td>'
                            f'<td>Main Website</td><td>Default Store View</td><td>{long_date(n["changed_at"])}</td>'
                            '</tr>'),
                 "Newsletter Subscribers")
    main = (search_form(GRID_PATH, keyword, {"status": status})
            + f'<nav class="filters" aria-label="Subscriber status">{" ".join(filters)}</nav>'
            + active_filters(GRID_PATH, [("Status", STATUSES.get(status, "")), ("Keyword", keyword)]) + table)
    return admin_page(ctx, "Newsletter Subscribers", main)


def newsletter_section(ctx: AdminCtx, customer_id: int) -> str:
    """The Newsletter section of an admin customer page: the status and the subscription checkbox."""
    row = ctx.conn.execute("SELECT * FROM shop_newsletter_subscribers WHERE customer_id = ?",
                           (customer_id,)).fetchone()
    subscribed = bool(row and row["subscribed"])
    status = (f"{_status(subscribed)} since {long_date(row['changed_at'])}" if row
              else "Never subscribed")
    return ('<section class="customer-newsletter"><h2>Newsletter</h2>'
            f'<p id="newsletter-status">{esc(status)}</p>'
            f'<form method="post" action="{PREFIX}/customer/index/newsletter/id/{customer_id}/"><div class="field">'
            '<input type="checkbox" id="subscription" name="subscription" value="1" title="Newsletter Subscription"'
            f'{" checked" if subscribed else ""}><label for="subscription">Newsletter Subscription</label></div>'
            '<button type="submit">Save Customer</button></form></section>')


@login_required
def _save(ctx: AdminCtx, customer_id: int) -> Response:
    if ctx.conn.execute("SELECT 1 FROM shop_customers WHERE id = ?", (customer_id,)).fetchone() is None:
        return not_found(ctx, "This customer no longer exists.")
    subscribed = int(ctx.form.get("subscription", "") not in ("", "0"))
    before = ctx.conn.execute("SELECT subscribed FROM shop_newsletter_subscribers WHERE customer_id = ?",
                              (customer_id,)).fetchone()
    if (before["subscribed"] if before else 0) != subscribed:  # a save that changes nothing records nothing
        ctx.conn.execute("INSERT INTO shop_newsletter_subscribers (customer_id, subscribed, changed_at) VALUES "
                         "(?, ?, ?) ON CONFLICT (customer_id) DO UPDATE SET subscribed = excluded.subscribed, "
                         "changed_at = excluded.changed_at", (customer_id, subscribed, site_now(ctx.conn)))
    ctx.flash("You saved the customer.")
    return redirect(f"{PREFIX}/customer/index/edit/id/{customer_id}/")


ROUTES = [
    (GRID_PATH, _subscribers, ("GET",), {}),
    (f"{GRID_PATH}index/", _subscribers, ("GET",), {}),
    ("/customer/index/newsletter/id/{customer_id:int}/", _save, ("POST",), {}),
]
