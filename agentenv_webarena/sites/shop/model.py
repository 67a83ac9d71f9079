"""The shop's constants, value formats and the queries several of its pages (and the task templates) share.

Owns what the storefront, the admin side and the REST subset agree on: the session cookie, page
sizes, order and review status labels, money and date formats, the shop clock (`site_now`),
product options, rating summaries, cart lines and order items. It renders no pages.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
import sqlite3
from typing import Any, Optional

__all__ = [
    "COOKIE", "PAGE_SIZE", "ORDERS_PAGE_SIZE", "SHIPPING_PER_ITEM", "STATUS_LABELS", "REVIEW_STATUS",
    "REVIEW_STATUS_LABELS", "hash_password", "money", "parse_ts", "format_ts", "short_date", "long_date", "slugify",
    "site_now", "product_options", "option_text", "rating_summary", "cart_lines", "order_items", "in_stock",
    "special_price", "next_product_id",
]

COOKIE = "shop_session"
PAGE_SIZE = 12
ORDERS_PAGE_SIZE = 10
SHIPPING_PER_ITEM = 5.0
STATUS_LABELS = {"pending": "Pending", "processing": "Processing", "complete": "Complete", "canceled": "Canceled",
                 "holded": "On Hold", "closed": "Closed", "fraud": "Suspected Fraud"}
REVIEW_STATUS = {"approved": 1, "pending": 2, "not_approved": 3}
REVIEW_STATUS_LABELS = {"approved": "Approved", "pending": "Pending", "not_approved": "Not Approved"}


def hash_password(password: str) -> str:
    """Salted SHA-256 of a password (the seed must not store plain passwords)."""
    return hashlib.sha256(("onestopmarket:" + password).encode()).hexdigest()


def money(value: float) -> str:
    """Magento's price format: `$1,234.50`."""
    return f"${value:,.2f}"


def parse_ts(text: str) -> dt.datetime:
    """A stored `YYYY-MM-DD HH:MM:SS` timestamp as a datetime."""
    return dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S")


def format_ts(t: dt.datetime) -> str:
    """A datetime as a stored `YYYY-MM-DD HH:MM:SS` timestamp."""
    return t.strftime("%Y-%m-%d %H:%M:%S")


def short_date(ts: str) -> str:
    """`2022-03-05 ...` -> `3/5/22` (Magento's grid date)."""
    t = parse_ts(ts)
    return f"{t.month}/{t.day}/{t.year % 100:02d}"


def long_date(ts: str) -> str:
    """`2022-03-05 ...` -> `March 5, 2022`."""
    t = parse_ts(ts)
    return f"{t.strftime('%B')} {t.day}, {t.year}"


def slugify(text: str) -> str:
    """URL key of a name: lower case, runs of other characters become one "-"."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def site_now(conn: sqlite3.Connection) -> str:
    """The shop clock: one minute after the newest order, review or order comment."""
    latest = conn.execute(
        "SELECT MAX(t) FROM (SELECT MAX(created_at) AS t FROM shop_orders UNION ALL SELECT MAX(updated_at) "
        "FROM shop_orders UNION ALL SELECT MAX(created_at) FROM shop_reviews UNION ALL "
        "SELECT MAX(created_at) FROM shop_order_comments)").fetchone()[0]
    base = parse_ts(latest) if latest else dt.datetime(2024, 1, 1)
    return format_ts(base + dt.timedelta(minutes=1))


def next_product_id(conn: sqlite3.Connection) -> int:
    """The id a product created in the admin gets: the lowest free one (the base catalog's ids run 1..200 without a
    gap, and WebArena's catalog entities keep WebArena's higher ids, so the first new product is 201)."""
    return conn.execute("SELECT COALESCE(MIN(id + 1), 1) FROM shop_products p WHERE NOT EXISTS "
                        "(SELECT 1 FROM shop_products q WHERE q.id = p.id + 1)").fetchone()[0]


def special_price(conn: sqlite3.Connection, product: Any) -> Optional[float]:
    """The product's special price when it applies today (the shop clock's date within its from/to dates), else
    None."""
    price = product["special_price"]
    if price is None:
        return None
    today = site_now(conn)[:10]
    if (product["special_from"] and today < product["special_from"]) or (product["special_to"]
                                                                         and today > product["special_to"]):
        return None
    return price


def product_options(product: Any) -> tuple[list[str], list[str]]:
    """(sizes, colors) a product offers; empty lists when it has none."""
    sizes = [s for s in product["sizes"].split(",") if s]
    colors = [c for c in product["colors"].split(",") if c]
    return sizes, colors


def in_stock(product: Any) -> bool:
    """Whether a product can be bought: quantity left and its stock status "In Stock" (the admin sets both)."""
    return product["qty"] > 0 and bool(product["stock_status"])


def option_text(size: str, color: str) -> str:
    """`Size: M | Color: Blue` (only the options that are set)."""
    parts = ([f"Size: {size}"] if size else []) + ([f"Color: {color}"] if color else [])
    return " | ".join(parts)


def rating_summary(conn: sqlite3.Connection, product_id: int) -> tuple[int, int]:
    """(approved review count, mean rating percent rounded) of a product; (0, 0) without reviews."""
    row = conn.execute("SELECT COUNT(*), AVG(rating_percent) FROM shop_reviews WHERE product_id = ? AND "
                       "status = 'approved'", (product_id,)).fetchone()
    return int(row[0]), int(round(row[1] or 0))


def cart_lines(conn: sqlite3.Connection, cart_id: Optional[int]) -> list[sqlite3.Row]:
    """The cart's items joined with their products, in the order they were added."""
    if cart_id is None:
        return []
    return conn.execute("SELECT i.id AS item_id, i.qty, i.size, i.color, p.* FROM shop_cart_items i JOIN "
                        "shop_products p ON p.id = i.product_id WHERE i.cart_id = ? ORDER BY i.id",
                        (cart_id,)).fetchall()


def order_items(conn: sqlite3.Connection, order_id: int) -> list[sqlite3.Row]:
    """An order's items in the order they were added."""
    return conn.execute("SELECT * FROM shop_order_items WHERE order_id = ? ORDER BY id", (order_id,)).fetchall()
