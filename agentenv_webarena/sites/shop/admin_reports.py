"""The shop admin's reports (Magento's Reports menu): orders, bestsellers, refunds, shipping, tax, coupons, views.

Every report page has Magento's filter form: `#sales_report_from` / `#sales_report_to` (`from`, `to`: a
date as `YYYY-MM-DD` or Magento's `M/D/YY`, `M/D/YYYY`, kept as typed) and the period (`period`: day,
month, year), then "Show Report". Reports count every order except canceled ones (Magento's default
"Order Status: Any" minus canceled); refunds are the closed orders (a credit memo closes an order).
The shop charges no tax, takes no coupons and does not log product views, so those reports list no
records. `sales_report` and `bestsellers` are also read by the task templates.
"""
from __future__ import annotations

import datetime as dt
import re
import sqlite3
from typing import Callable, Iterable

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required
from agentenv_webarena.sites.shop.admin_layout import PREFIX, AdminCtx, admin_page
from agentenv_webarena.sites.shop.model import money

__all__ = ["sales_report", "bestsellers", "refunds_report", "shipping_report", "parse_report_date", "ROUTES"]


def _period_key(created_at: str, period: str) -> str:
    return {"day": created_at[:10], "month": created_at[:7], "year": created_at[:4]}[period]


def _in_range(day: str, date_from: str, date_to: str) -> bool:
    return not ((date_from and day < date_from) or (date_to and day > date_to))


def sales_report(conn: sqlite3.Connection, period: str = "month", date_from: str = "", date_to: str = "") -> list[dict]:
    """Orders report rows, oldest interval first: interval, orders, items, sales total (canceled excluded)."""
    rows = conn.execute("SELECT o.*, (SELECT SUM(qty) FROM shop_order_items WHERE order_id = o.id) AS items "
                        "FROM shop_orders o WHERE status != 'canceled' ORDER BY created_at").fetchall()
    out: dict[str, dict] = {}
    for o in rows:
        if not _in_range(o["created_at"][:10], date_from, date_to):
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
        if not _in_range(r["created_at"][:10], date_from, date_to):
            continue
        bucket = per.setdefault(_period_key(r["created_at"], period), {})
        entry = bucket.setdefault(r["product_id"], {"name": r["name"], "price": r["price"], "qty": 0})
        entry["qty"] += r["qty"]
    out = []
    for key in sorted(per):
        ranked = sorted(per[key].values(), key=lambda e: (-e["qty"], e["name"]))[:limit]
        out += [{"interval": key, "rank": n, **e} for n, e in enumerate(ranked, start=1)]
    return out


def _order_totals(conn: sqlite3.Connection, where: str, period: str, date_from: str, date_to: str,
                  column: str) -> list[dict]:
    rows = conn.execute(f"SELECT created_at, {column} AS amount FROM shop_orders WHERE {where} "
                        "ORDER BY created_at").fetchall()
    out: dict[str, dict] = {}
    for o in rows:
        if not _in_range(o["created_at"][:10], date_from, date_to):
            continue
        key = _period_key(o["created_at"], period)
        entry = out.setdefault(key, {"interval": key, "orders": 0, "total": 0.0})
        entry["orders"] += 1
        entry["total"] = round(entry["total"] + o["amount"], 2)
    return list(out.values())


def refunds_report(conn: sqlite3.Connection, period: str = "day", date_from: str = "",
                   date_to: str = "") -> list[dict]:
    """Refunds per interval: interval, refunded orders, total refunded (closed orders' grand totals)."""
    return _order_totals(conn, "status = 'closed'", period, date_from, date_to, "grand_total")


def shipping_report(conn: sqlite3.Connection, period: str = "day", date_from: str = "",
                    date_to: str = "") -> list[dict]:
    """Shipping per interval: interval, orders, total shipping charged (canceled orders excluded)."""
    return _order_totals(conn, "status != 'canceled'", period, date_from, date_to, "shipping")


_ISO = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
_US = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})$")


def parse_report_date(text: str) -> str:
    """`2023-02-01`, `2/1/23` or `2/1/2023` -> `2023-02-01`; "" when `text` is not a date."""
    text = text.strip()
    if m := _ISO.match(text):
        year, month, day = int(m[1]), int(m[2]), int(m[3])
    elif m := _US.match(text):
        month, day, year = int(m[1]), int(m[2]), int(m[3])
        year += 2000 if year < 100 else 0
    else:
        return ""
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return ""


def _report_filters(ctx: AdminCtx, path: str, periods: Iterable[str], default: str) -> tuple[str, str, str, str]:
    period = ctx.q.get("period", default)
    periods = list(periods)
    if period not in periods:
        period = default
    typed = {key: ctx.q.get(key, "").strip() for key in ("from", "to")}
    dates = {key: parse_report_date(value) for key, value in typed.items()}
    shown = {key: typed[key] if dates[key] else "" for key in typed}
    bad = [label for key, label in (("from", "From"), ("to", "To")) if typed[key] and not dates[key]]
    error = (f'<div class="message message-error" role="alert">Please enter a valid date in the {" and ".join(bad)} '
             'field (for example 1/31/23).</div>') if bad else ""
    radios = "".join(f'<label><input type="radio" name="period" value="{p}"{" checked" if p == period else ""}> '
                     f'{p.capitalize()}</label>' for p in periods)
    form = (f'{error}<form class="report-filter" id="filter_form" method="get" action="{PREFIX}{path}"><fieldset>'
            '<legend>Filter</legend><div class="field"><label for="sales_report_from">From</label>'
            '<input id="sales_report_from" type="text" name="from" placeholder="YYYY-MM-DD" '
            f'value="{esc(shown["from"])}"></div><div class="field"><label for="sales_report_to">To</label>'
            f'<input id="sales_report_to" type="text" name="to" placeholder="YYYY-MM-DD" value="{esc(shown["to"])}">'
            f'</div><fieldset><legend>Period</legend>{radios}</fieldset></fieldset>'
            '<button type="submit">Show Report</button></form>')
    return form, period, dates["from"], dates["to"]


# path -> (title, periods, default period, column heads, rows(conn, period, from, to), row cells, total row?)
_Cells = Callable[[dict], list[str]]
_REPORTS: dict[str, tuple[str, tuple[str, ...], str, list[str], Callable[..., list[dict]], _Cells, bool]] = {
    "/reports/report_sales/sales/": (
        "Orders Report", ("day", "month", "year"), "day", ["Interval", "Orders", "Sales Items", "Sales Total"],
        sales_report, lambda r: [r["interval"], str(r["orders"]), str(r["items"]), money(r["total"])], True),
    "/reports/report_sales/bestsellers/": (
        "Bestsellers Report", ("month", "year"), "year", ["Interval", "Rank", "Product", "Price", "Order Quantity"],
        bestsellers, lambda r: [r["interval"], str(r["rank"]), esc(r["name"]), money(r["price"]), str(r["qty"])],
        False),
    "/reports/report_sales/refunded/": (
        "Refunds Report", ("day", "month", "year"), "day", ["Interval", "Refunded Orders", "Total Refunded"],
        refunds_report, lambda r: [r["interval"], str(r["orders"]), money(r["total"])], True),
    "/reports/report_sales/shipping/": (
        "Shipping Report", ("day", "month", "year"), "day",
        ["Interval", "Carrier/Warehouse", "Number of Orders", "Total Shipping"], shipping_report,
        lambda r: [r["interval"], "Flat Rate - Fixed", str(r["orders"]), money(r["total"])], False),
    "/reports/report_sales/tax/": (
        "Tax Report", ("day", "month", "year"), "day", ["Interval", "Tax", "Rate", "Number of Orders", "Tax Amount"],
        lambda *_: [], lambda r: [], False),
    "/reports/report_sales/coupons/": (
        "Coupons Report", ("day", "month", "year"), "day",
        ["Interval", "Coupon Code", "Price Rule", "Uses", "Sales Total", "Discount"], lambda *_: [], lambda r: [],
        False),
    "/reports/report_product/viewed/": (
        "Product Views Report", ("day", "month", "year"), "day", ["Interval", "Product", "Price", "Views"],
        lambda *_: [], lambda r: [], False),
}


# Magento's Reports menu, shown on every report page: the reports the admin header does not link.
_REPORTS_NAV = '<nav class="reports-menu" aria-label="Reports"><ul>' + "".join(
    f'<li><a href="{PREFIX}{path}">{label}</a></li>' for path, label in (
        ("/reports/report_sales/refunded/", "Refunds"), ("/reports/report_sales/shipping/", "Shipping"),
        ("/reports/report_sales/tax/", "Tax"), ("/reports/report_sales/coupons/", "Coupons"),
        ("/reports/report_product/viewed/", "Product Views"))) + "</ul></nav>"


@login_required
def _report(ctx: AdminCtx, path: str) -> Response:
    title, periods, default, head, rows_of, cells, with_total = _REPORTS[path]
    form, period, date_from, date_to = _report_filters(ctx, path, periods, default)
    rows = rows_of(ctx.conn, period, date_from, date_to)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in cells(r)) + "</tr>" for r in rows)
    body = body or f'<tr><td colspan="{len(head)}">We couldn\'t find any records.</td></tr>'
    foot = ""
    if with_total and rows:
        sums = [sum(r[k] for r in rows) for k in rows[0] if k != "interval"]
        foot = "<tfoot><tr><th>Total</th>" + "".join(
            f"<td>{money(v) if isinstance(v, float) else v}</td>" for v in sums) + "</tr></tfoot>"
    head_html = "".join(f"<th>{h}</th>" for h in head)
    table = (f'<table id="report-table"><caption>{title}</caption><thead><tr>{head_html}</tr></thead>'
             f'<tbody>{body}</tbody>{foot}</table>')
    return admin_page(ctx, title, _REPORTS_NAV + form + table)


ROUTES = [(path, _report, ("GET",), {"path": path}) for path in _REPORTS]
