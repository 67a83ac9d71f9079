"""The embedded shopping storefront: a Magento-like shop (WebArena's `shopping` site, "One Stop Market").

Owns the shop's tables (`shop_*`, also used by the admin side in `sites.admin`), their
deterministic seed and the storefront's Starlette app with the Magento REST subset WebArena's
evaluators call. It does not own instances or resets (`store.InstanceStore`), the control
endpoints (`apps`) or the env's logins (`tasks.auth`, whose recipe this site answers).

URLs (Magento's shapes, so WebArena-style URL checks carry over):

| Method & path                                   | Page / effect                                              |
|-------------------------------------------------|------------------------------------------------------------|
| GET  `/`                                        | home: categories and a product showcase                    |
| GET  `/catalogsearch/result/` (also `.../index/`) | search `?q=`; sort `product_list_order` = relevance, name, price; `product_list_dir` = asc, desc; page `p` (12 a page) |
| GET  `/<category-slug>.html`                    | a category's products, same sort and page parameters (default order: position) |
| GET  `/<product-slug>.html`                     | product page: price, SKU, stock, options, add-to-cart and wish-list forms, reviews, review form |
| POST `/checkout/cart/add/`                      | add to cart: `product` (id), `qty`, `size`, `color`         |
| GET  `/checkout/cart/`                          | cart table; POST `/checkout/cart/updatePost/` (`cart[<item>][qty]`), `/checkout/cart/delete/` (`item_id`) |
| GET  `/checkout/`; POST `/checkout/placeOrder/` | shipping address form and order summary; place the order   |
| GET  `/checkout/onepage/success/`               | "Thank you for your purchase!" with the new order number   |
| GET  `/sales/order/history/`                    | my orders (10 a page, `?p=`)                               |
| GET  `/sales/order/view/order_id/<id>/`         | one of my orders                                           |
| GET  `/customer/account/`                       | account dashboard                                          |
| GET/POST `/customer/account/edit/`, POST `/customer/account/editPost/` | name and email               |
| GET  `/customer/address/`; GET `/customer/address/edit/id/<id>/`; POST `/customer/address/formPost/id/<id>/` | address book |
| GET  `/wishlist/`; POST `/wishlist/index/add/` (`product`), `/wishlist/index/remove/` (`item`), `/wishlist/index/cart/` (`item`) | wish list |
| GET  `/review/customer/`                        | my product reviews                                         |
| POST `/review/product/post/id/<product id>/`    | review: `rating` 1-5, `nickname`, `title`, `detail` (stored pending, as Magento) |
| GET  `/customer/account/login/`; POST `/customer/account/loginPost/` (`login[username]`, `login[password]`); GET `/customer/account/logout/` | session cookie `shop_session` |

Magento REST subset (JSON; `/rest/V1/...` and `/rest/default/V1/...` are the same):

- `POST /rest/default/V1/integration/admin/token` with `{"username", "password"}` of the admin account
  answers the bearer token as a JSON string;
- `GET /rest/V1/orders` with `searchCriteria[sortOrders][0][field|direction]`, `searchCriteria[pageSize]`,
  `searchCriteria[currentPage]` and `searchCriteria[filterGroups][g][filters][f][field|value|condition_type]`
  answers `{"items": [...], "search_criteria": ..., "total_count"}`;
- `GET /rest/V1/products/<sku>/reviews` answers the product's reviews (any status), oldest first, each
  with `nickname`, `title`, `detail`, `ratings: [{"percent", "value", ...}]`;
- `GET /rest/V1/products/<sku>` answers the product.

CSS hooks for `program_html` locators: `#shopping-cart-table tbody tr.cart-item` (attribute
`data-summary` = "<name> | Size: M | Color: Blue", input `.qty`), `#order-items` and `#order-status`
on an order page, `#wishlist-items li.wishlist-item`, `.box-address-shipping` on the address book,
`.box-information` on the account page, `#product-price` / `#product-sku` on a product page.

Ratings are stored as Magento stores votes: percent = stars * 20. New orders, reviews and comments
get the site clock: one minute after the newest stored timestamp, so runs stay deterministic.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import random
import re
import sqlite3
from typing import Any, Callable, Iterable, Optional

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from agentenv_webarena.sites import shop_data
from agentenv_webarena.sites.common import (RequestContext, db, esc, form_fields, html_page, json_error, new_token,
                                            query_url, redirect)
from agentenv_webarena.sites.store import InstanceStore

__all__ = [
    "SCHEMA", "seed", "create_app", "COOKIE", "SEED", "STATUS_LABELS", "money", "short_date", "long_date",
    "slugify", "product_options", "rating_summary", "search_index", "search_products", "site_now",
    "hash_password",
]

COOKIE = "shop_session"
SEED = 7770  # WebArena's shopping port
PAGE_SIZE = 12
ORDERS_PAGE_SIZE = 10
SHIPPING_PER_ITEM = 5.0
STATUS_LABELS = {"pending": "Pending", "processing": "Processing", "complete": "Complete", "canceled": "Canceled",
                 "holded": "On Hold", "closed": "Closed"}
REVIEW_STATUS = {"approved": 1, "pending": 2, "not_approved": 3}
REVIEW_STATUS_LABELS = {"approved": "Approved", "pending": "Pending", "not_approved": "Not Approved"}

SCHEMA = """
CREATE TABLE shop_categories (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, slug TEXT NOT NULL UNIQUE, position INTEGER NOT NULL);
CREATE TABLE shop_products (
    id INTEGER PRIMARY KEY, sku TEXT NOT NULL UNIQUE, name TEXT NOT NULL, slug TEXT NOT NULL UNIQUE,
    price REAL NOT NULL, description TEXT NOT NULL, category_id INTEGER NOT NULL REFERENCES shop_categories(id),
    sizes TEXT NOT NULL DEFAULT '', colors TEXT NOT NULL DEFAULT '', qty INTEGER NOT NULL DEFAULT 0,
    enabled INTEGER NOT NULL DEFAULT 1, position INTEGER NOT NULL DEFAULT 0);
CREATE TABLE shop_customers (
    id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL, firstname TEXT NOT NULL,
    lastname TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE shop_addresses (
    id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES shop_customers(id), firstname TEXT NOT NULL,
    lastname TEXT NOT NULL, street TEXT NOT NULL, city TEXT NOT NULL, region TEXT NOT NULL, postcode TEXT NOT NULL,
    country TEXT NOT NULL, telephone TEXT NOT NULL, is_default INTEGER NOT NULL DEFAULT 0);
CREATE TABLE shop_sessions (
    token TEXT PRIMARY KEY, customer_id INTEGER REFERENCES shop_customers(id), flash TEXT NOT NULL DEFAULT '',
    flash_kind TEXT NOT NULL DEFAULT 'success', last_order_id INTEGER);
CREATE TABLE shop_carts (
    id INTEGER PRIMARY KEY, customer_id INTEGER UNIQUE REFERENCES shop_customers(id), session_token TEXT UNIQUE);
CREATE TABLE shop_cart_items (
    id INTEGER PRIMARY KEY, cart_id INTEGER NOT NULL REFERENCES shop_carts(id),
    product_id INTEGER NOT NULL REFERENCES shop_products(id), qty INTEGER NOT NULL,
    size TEXT NOT NULL DEFAULT '', color TEXT NOT NULL DEFAULT '');
CREATE TABLE shop_orders (
    id INTEGER PRIMARY KEY, increment_id TEXT NOT NULL UNIQUE, customer_id INTEGER NOT NULL REFERENCES shop_customers(id),
    status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, subtotal REAL NOT NULL,
    shipping REAL NOT NULL, grand_total REAL NOT NULL, ship_firstname TEXT NOT NULL, ship_lastname TEXT NOT NULL,
    ship_street TEXT NOT NULL, ship_city TEXT NOT NULL, ship_region TEXT NOT NULL, ship_postcode TEXT NOT NULL,
    ship_country TEXT NOT NULL, ship_telephone TEXT NOT NULL, payment_method TEXT NOT NULL);
CREATE TABLE shop_order_items (
    id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES shop_orders(id),
    product_id INTEGER NOT NULL REFERENCES shop_products(id), sku TEXT NOT NULL, name TEXT NOT NULL,
    price REAL NOT NULL, qty INTEGER NOT NULL, size TEXT NOT NULL DEFAULT '', color TEXT NOT NULL DEFAULT '');
CREATE TABLE shop_order_comments (
    id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES shop_orders(id), comment TEXT NOT NULL,
    status TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE shop_reviews (
    id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL REFERENCES shop_products(id),
    customer_id INTEGER REFERENCES shop_customers(id), nickname TEXT NOT NULL, title TEXT NOT NULL,
    detail TEXT NOT NULL, rating_percent INTEGER NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE shop_wishlist (
    id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES shop_customers(id),
    product_id INTEGER NOT NULL REFERENCES shop_products(id), added_at TEXT NOT NULL);
CREATE TABLE shop_admin_users (
    id INTEGER PRIMARY KEY, username TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL, firstname TEXT NOT NULL,
    lastname TEXT NOT NULL, email TEXT NOT NULL);
CREATE TABLE shop_admin_sessions (
    token TEXT PRIMARY KEY, admin_id INTEGER NOT NULL REFERENCES shop_admin_users(id), flash TEXT NOT NULL DEFAULT '',
    flash_kind TEXT NOT NULL DEFAULT 'success');
CREATE TABLE shop_admin_tokens (
    token TEXT PRIMARY KEY, admin_id INTEGER NOT NULL REFERENCES shop_admin_users(id));
CREATE INDEX shop_reviews_product ON shop_reviews(product_id);
CREATE INDEX shop_order_items_order ON shop_order_items(order_id);
CREATE INDEX shop_orders_customer ON shop_orders(customer_id);
"""


# --- small helpers -----------------------------------------------------------------------------------

def hash_password(password: str) -> str:
    """Salted SHA-256 of a password (the seed must not store plain passwords)."""
    return hashlib.sha256(("onestopmarket:" + password).encode()).hexdigest()


def money(value: float) -> str:
    """Magento's price format: `$1,234.50`."""
    return f"${value:,.2f}"


def _parse_ts(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S")


def _ts(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def short_date(ts: str) -> str:
    """`2022-03-05 ...` -> `3/5/22` (Magento's grid date)."""
    t = _parse_ts(ts)
    return f"{t.month}/{t.day}/{t.year % 100:02d}"


def long_date(ts: str) -> str:
    """`2022-03-05 ...` -> `March 5, 2022`."""
    t = _parse_ts(ts)
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
    base = _parse_ts(latest) if latest else dt.datetime(2024, 1, 1)
    return _ts(base + dt.timedelta(minutes=1))


def product_options(product: Any) -> tuple[list[str], list[str]]:
    """(sizes, colors) a product offers; empty lists when it has none."""
    sizes = [s for s in product["sizes"].split(",") if s]
    colors = [c for c in product["colors"].split(",") if c]
    return sizes, colors


def option_text(size: str, color: str) -> str:
    """`Size: M | Color: Blue` (only the options that are set)."""
    parts = ([f"Size: {size}"] if size else []) + ([f"Color: {color}"] if color else [])
    return " | ".join(parts)


def rating_summary(conn: sqlite3.Connection, product_id: int) -> tuple[int, int]:
    """(approved review count, mean rating percent rounded) of a product; (0, 0) without reviews."""
    row = conn.execute("SELECT COUNT(*), AVG(rating_percent) FROM shop_reviews WHERE product_id = ? AND "
                       "status = 'approved'", (product_id,)).fetchone()
    return int(row[0]), int(round(row[1] or 0))


_STOP = {"the", "a", "an", "and", "of", "for", "with", "in", "on", "to"}


def _tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in _STOP]


def search_index(conn: sqlite3.Connection) -> list[tuple[sqlite3.Row, set, set, set, str]]:
    """Enabled products with their name / category / description word sets, in catalog order."""
    rows = conn.execute("SELECT p.*, c.name AS category_name FROM shop_products p JOIN shop_categories c "
                        "ON c.id = p.category_id WHERE p.enabled = 1 ORDER BY p.position, p.id").fetchall()
    return [(row, set(_tokens(row["name"])), set(_tokens(row["category_name"])), set(_tokens(row["description"])),
             " ".join(re.findall(r"[a-z0-9]+", row["name"].lower()))) for row in rows]


def search_products(conn: sqlite3.Connection, q: str,
                    index: Optional[list[tuple[sqlite3.Row, set, set, set, str]]] = None
                    ) -> list[tuple[float, sqlite3.Row]]:
    """Enabled products matching query `q`, best first: (score, row).

    Score: 10 per query word in the name, 2 in the category, 1 in the description, +50 when the
    name contains the whole query; products scoring 0 are left out. Ties keep catalog order.
    `index` (from `search_index`) saves rebuilding the word sets when searching many times.
    """
    words = _tokens(q)
    if not words:
        return []
    phrase = " ".join(re.findall(r"[a-z0-9]+", q.lower()))
    scored = []
    for row, name, cat, desc, name_phrase in (search_index(conn) if index is None else index):
        score = sum(10 * (w in name) + 2 * (w in cat) + 1 * (w in desc) for w in words)
        if phrase and phrase in name_phrase:
            score += 50
        if score > 0:
            scored.append((score, row))
    scored.sort(key=lambda pair: -pair[0])
    return scored


def sort_products(rows: list[sqlite3.Row], order: str, direction: str) -> list[sqlite3.Row]:
    """Sort a listing: `order` name / price / position / relevance (rows already by relevance)."""
    rows = list(rows)
    if order == "name":
        rows.sort(key=lambda r: r["name"].lower())
    elif order == "price":
        rows.sort(key=lambda r: (r["price"], r["name"].lower()))
    if direction == "desc":
        rows.reverse()
    return rows


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


# --- seed --------------------------------------------------------------------------------------------

def _sku(rng: random.Random, used: set[str]) -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
    while True:
        sku = "B0" + "".join(rng.choice(alphabet) for _ in range(8))
        if sku not in used:
            used.add(sku)
            return sku


def _price(rng: random.Random, base: float) -> float:
    value = base * rng.uniform(0.7, 1.45)
    return round(math.floor(value) + rng.choice([0.99, 0.49, 0.95, 0.0, 0.99, 0.79]), 2) or 0.99


def _seed_products(conn: sqlite3.Connection, rng: random.Random) -> list[dict]:
    products: list[dict] = []
    used_skus: set[str] = set()
    pid = 0
    for position, (cat_name, cat_slug, brands, adjectives, nouns) in enumerate(shop_data.CATEGORIES, start=1):
        conn.execute("INSERT INTO shop_categories (id, name, slug, position) VALUES (?, ?, ?, ?)",
                     (position, cat_name, cat_slug, position))
        for noun, base, size_kind, color_kind in nouns:
            pairs = rng.sample([(b, a) for b in brands for a in adjectives], 2)
            for brand, adjective in pairs:
                pid += 1
                name = f"{brand} {adjective} {noun}"
                sizes = ""
                if size_kind == "S":
                    start = rng.randint(0, 1)
                    sizes = ",".join(shop_data.CLOTHING_SIZES[start:start + rng.randint(3, 4)])
                elif size_kind == "N":
                    start = rng.randint(0, 2)
                    sizes = ",".join(shop_data.SHOE_SIZES[start:start + 4])
                colors = ",".join(rng.sample(shop_data.COLORS, rng.randint(2, 4))) if color_kind else ""
                material = rng.choice(["quality materials", "a sturdy build", "a sleek design", "everyday comfort",
                                       "long-lasting performance", "easy cleaning"])
                description = (f"The {name} from {brand} is a {adjective.lower()} {noun.lower()} made for "
                               f"{material}. {rng.choice(['Ships in 1-2 business days.', 'Backed by a 1-year warranty.', 'A customer favorite.', 'Great as a gift.'])}")
                product = {
                    "id": pid, "sku": _sku(rng, used_skus), "name": name, "slug": slugify(name),
                    "price": _price(rng, base), "description": description, "category_id": position,
                    "sizes": sizes, "colors": colors, "qty": rng.choice([0] + [rng.randint(5, 400)] * 24),
                    "enabled": 0 if rng.random() < 0.02 else 1, "position": pid, "noun": noun,
                }
                products.append(product)
                conn.execute(
                    "INSERT INTO shop_products (id, sku, name, slug, price, description, category_id, sizes, colors, "
                    "qty, enabled, position) VALUES (:id, :sku, :name, :slug, :price, :description, :category_id, "
                    ":sizes, :colors, :qty, :enabled, :position)", product)
    return products


def _rand_ts(rng: random.Random, start: dt.datetime, end: dt.datetime) -> dt.datetime:
    seconds = int((end - start).total_seconds())
    return start + dt.timedelta(seconds=rng.randint(0, seconds))


def _seed_customers(conn: sqlite3.Connection, rng: random.Random) -> None:
    for cid, (first, last, email, street, city, region, postcode, phone) in enumerate(shop_data.CUSTOMERS, start=1):
        password = "Password.123" if cid == 1 else f"{first}.{last}!{rng.randint(100, 999)}"
        since = _rand_ts(rng, dt.datetime(2021, 1, 1), dt.datetime(2021, 12, 31))
        conn.execute("INSERT INTO shop_customers (id, email, password_hash, firstname, lastname, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?)", (cid, email, hash_password(password), first, last, _ts(since)))
        conn.execute("INSERT INTO shop_addresses (customer_id, firstname, lastname, street, city, region, postcode, "
                     "country, telephone, is_default) VALUES (?, ?, ?, ?, ?, ?, ?, 'United States', ?, 1)",
                     (cid, first, last, street, city, region, postcode, phone))
    admin = shop_data.ADMIN
    conn.execute("INSERT INTO shop_admin_users (id, username, password_hash, firstname, lastname, email) "
                 "VALUES (1, ?, ?, ?, ?, ?)", (admin["username"], hash_password(admin["password"]),
                                                 admin["firstname"], admin["lastname"], admin["email"]))


def _status_for(rng: random.Random, when: dt.datetime) -> str:
    if when >= dt.datetime(2023, 10, 15):
        return rng.choice(["pending", "pending", "pending", "processing", "processing", "holded", "complete"])
    return rng.choices(["complete", "canceled", "closed", "processing"], weights=[74, 16, 4, 6])[0]


def _seed_orders(conn: sqlite3.Connection, rng: random.Random, products: list[dict]) -> None:
    sellable = [p for p in products if p["enabled"]]
    popular = rng.sample(sellable, 25)  # best sellers show up in reports
    plans: list[tuple[dt.datetime, int]] = []
    for cid in range(1, len(shop_data.CUSTOMERS) + 1):
        count = 15 if cid == 1 else rng.randint(3, 8)
        for _ in range(count):
            plans.append((_rand_ts(rng, dt.datetime(2022, 1, 3), dt.datetime(2023, 12, 28, 18)), cid))
    plans.sort()
    for oid, (when, cid) in enumerate(plans, start=1):
        address = conn.execute("SELECT * FROM shop_addresses WHERE customer_id = ? AND is_default = 1",
                               (cid,)).fetchone()
        chosen: list[dict] = []
        for _ in range(rng.choices([1, 2, 3, 4], weights=[45, 30, 17, 8])[0]):
            pool = popular if rng.random() < 0.45 else sellable
            product = rng.choice(pool)
            if product not in chosen:
                chosen.append(product)
        subtotal = 0.0
        qty_total = 0
        items = []
        for product in chosen:
            qty = rng.choices([1, 2, 3], weights=[75, 18, 7])[0]
            sizes, colors = product_options(product)
            size = rng.choice(sizes) if sizes else ""
            color = rng.choice(colors) if colors else ""
            subtotal += product["price"] * qty
            qty_total += qty
            items.append((oid, product["id"], product["sku"], product["name"], product["price"], qty, size, color))
        shipping = SHIPPING_PER_ITEM * qty_total
        status = _status_for(rng, when)
        created = _ts(when)
        updated = _ts(when + dt.timedelta(days=rng.randint(0, 6), hours=rng.randint(1, 20))) \
            if status in ("complete", "canceled", "closed") else created
        conn.execute(
            "INSERT INTO shop_orders (id, increment_id, customer_id, status, created_at, updated_at, subtotal, shipping,"
            " grand_total, ship_firstname, ship_lastname, ship_street, ship_city, ship_region, ship_postcode, "
            "ship_country, ship_telephone, payment_method) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "'Check / Money order')",
            (oid, f"{oid:09d}", cid, status, created, updated, round(subtotal, 2), shipping,
             round(subtotal + shipping, 2), address["firstname"], address["lastname"], address["street"],
             address["city"], address["region"], address["postcode"], address["country"], address["telephone"]))
        conn.executemany("INSERT INTO shop_order_items (order_id, product_id, sku, name, price, qty, size, color) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", items)


def _seed_reviews(conn: sqlite3.Connection, rng: random.Random, products: list[dict]) -> None:
    customers = [(cid, c[0]) for cid, c in enumerate(shop_data.CUSTOMERS, start=1)]
    rows = []
    for product in products:
        count = rng.choices([0, 1, 2, 3, 4, 5, 6, 7], weights=[14, 16, 18, 16, 13, 10, 8, 5])[0]
        bias = rng.choice([5, 4, 4, 3, 2])  # each product has a typical rating
        authors: set[str] = set()
        for _ in range(count):
            if rng.random() < 0.25:
                customer_id, nickname = rng.choice(customers)
            else:
                customer_id, nickname = None, rng.choice(shop_data.NICKNAMES)
            if nickname in authors:
                continue
            authors.add(nickname)
            stars = max(1, min(5, bias + rng.choice([-2, -1, 0, 0, 0, 1, 1])))
            status = rng.choices(["approved", "pending", "not_approved"], weights=[90, 7, 3])[0]
            when = _rand_ts(rng, dt.datetime(2021, 3, 1), dt.datetime(2023, 12, 20))
            noun = product["noun"].lower()
            rows.append((product["id"], customer_id, nickname, rng.choice(shop_data.REVIEW_TITLES[stars]),
                         rng.choice(shop_data.REVIEW_DETAILS[stars]).format(noun=noun), stars * 20, status, _ts(when)))
    rows.sort(key=lambda r: r[7])  # ids follow time, as in Magento
    conn.executemany("INSERT INTO shop_reviews (product_id, customer_id, nickname, title, detail, rating_percent, "
                     "status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)


def _seed_lists(conn: sqlite3.Connection, rng: random.Random, products: list[dict]) -> None:
    sellable = [p for p in products if p["enabled"] and p["qty"] > 0]
    for i, product in enumerate(rng.sample(sellable, 3)):
        conn.execute("INSERT INTO shop_wishlist (customer_id, product_id, added_at) VALUES (1, ?, ?)",
                     (product["id"], f"2023-0{i + 4}-1{i} 10:00:00"))
    conn.execute("INSERT INTO shop_carts (id, customer_id) VALUES (1, 1)")
    for product in rng.sample(sellable, 2):
        sizes, colors = product_options(product)
        conn.execute("INSERT INTO shop_cart_items (cart_id, product_id, qty, size, color) VALUES (1, ?, ?, ?, ?)",
                     (product["id"], rng.randint(1, 2), sizes[0] if sizes else "", colors[0] if colors else ""))


def seed(conn: sqlite3.Connection) -> None:
    """Insert the shop's deterministic data (fixed RNG, fixed timestamps; no clock)."""
    rng = random.Random(SEED)
    products = _seed_products(conn, rng)
    _seed_customers(conn, rng)
    _seed_orders(conn, rng, products)
    _seed_reviews(conn, rng, products)
    _seed_lists(conn, rng, products)


# --- request context and layout ----------------------------------------------------------------------

_CSS = (
    ".page-header{display:flex;flex-wrap:wrap;gap:1em;align-items:center;padding:.5em 0;border-bottom:1px solid #ccc}"
    ".page-header form{margin:0}.logo{font-weight:bold;font-size:1.3em}.header-links{display:flex;gap:1em;"
    "list-style:none;margin:0;padding:0}.nav-sections ul{display:flex;flex-wrap:wrap;gap:.4em 1.2em;list-style:none;"
    "padding:0;margin:.5em 0}.products{display:grid;grid-template-columns:repeat(4,1fr);gap:1em;list-style:none;"
    "padding:0}.product-item{border:1px solid #eee;padding:.5em}.price{font-weight:bold}.message{padding:.4em;"
    "margin:.5em 0}.message-success{background:#e5efe5}.message-error{background:#fae5e5}table{border-collapse:"
    "collapse}td,th{padding:.3em .7em;text-align:left;border-bottom:1px solid #eee}label{margin-right:.4em}"
    ".field{margin:.4em 0}.toolbar{display:flex;gap:2em;align-items:center}.pages{display:flex;gap:1em}"
    "fieldset{border:1px solid #ddd;margin:.5em 0}.layout{display:flex;gap:2em}.sidebar{width:14em}"
    ".column-main{flex:1;min-width:0}.review-item{margin:.6em 0;border-bottom:1px solid #eee}"
)


class _Ctx(RequestContext):
    """One request: its instance DB, form fields, session and logged-in customer (or None)."""

    def __init__(self, request: Request, conn: sqlite3.Connection, form: dict[str, str]):
        super().__init__(request, conn, form, COOKIE)
        self.session: Optional[sqlite3.Row] = None
        self.customer: Optional[sqlite3.Row] = None
        self.set_cookie = False
        if self.token:
            self.session = conn.execute("SELECT * FROM shop_sessions WHERE token = ?", (self.token,)).fetchone()
            if self.session is None:
                self.token = None
            elif self.session["customer_id"] is not None:
                self.customer = conn.execute("SELECT * FROM shop_customers WHERE id = ?",
                                             (self.session["customer_id"],)).fetchone()

    @property
    def q(self):
        return self.request.query_params

    def ensure_session(self) -> str:
        """The session token, creating a guest session (and its cookie) when there is none."""
        if self.token is None:
            self.token = new_token()
            self.conn.execute("INSERT INTO shop_sessions (token) VALUES (?)", (self.token,))
            self.set_cookie = True
        return self.token

    def flash(self, message: str, kind: str = "success") -> None:
        self.ensure_session()
        self.conn.execute("UPDATE shop_sessions SET flash = ?, flash_kind = ? WHERE token = ?",
                          (message, kind, self.token))

    def take_flash(self) -> str:
        if self.token is None:
            return ""
        row = self.conn.execute("SELECT flash, flash_kind FROM shop_sessions WHERE token = ?", (self.token,)).fetchone()
        if not row or not row["flash"]:
            return ""
        self.conn.execute("UPDATE shop_sessions SET flash = '' WHERE token = ?", (self.token,))
        return (f'<div class="message message-{esc(row["flash_kind"])}" role="alert">'
                f'{esc(row["flash"])}</div>')

    def cart_id(self, create: bool = False) -> Optional[int]:
        """The visitor's cart: the customer's when logged in, else the guest session's."""
        if self.customer is not None:
            row = self.conn.execute("SELECT id FROM shop_carts WHERE customer_id = ?", (self.customer["id"],)).fetchone()
            if row is None and create:
                return self.conn.execute("INSERT INTO shop_carts (customer_id) VALUES (?)",
                                         (self.customer["id"],)).lastrowid
        else:
            if self.token is None and not create:
                return None
            token = self.ensure_session()
            row = self.conn.execute("SELECT id FROM shop_carts WHERE session_token = ?", (token,)).fetchone()
            if row is None and create:
                return self.conn.execute("INSERT INTO shop_carts (session_token) VALUES (?)", (token,)).lastrowid
        return row["id"] if row else None


def cart_lines(conn: sqlite3.Connection, cart_id: Optional[int]) -> list[sqlite3.Row]:
    """The cart's items joined with their products, in the order they were added."""
    if cart_id is None:
        return []
    return conn.execute("SELECT i.id AS item_id, i.qty, i.size, i.color, p.* FROM shop_cart_items i JOIN "
                        "shop_products p ON p.id = i.product_id WHERE i.cart_id = ? ORDER BY i.id",
                        (cart_id,)).fetchall()


def _header(ctx: _Ctx) -> str:
    count = sum(line["qty"] for line in cart_lines(ctx.conn, ctx.cart_id()))
    if ctx.customer is not None:
        who = f'{esc(ctx.customer["firstname"])} {esc(ctx.customer["lastname"])}'
        links = (f'<li>Welcome, {who}!</li><li><a href="/customer/account/">My Account</a></li>'
                 '<li><a href="/wishlist/">My Wish List</a></li><li><a href="/customer/account/logout/">Sign Out</a></li>')
    else:
        links = '<li>Default welcome msg!</li><li><a href="/customer/account/login/">Sign In</a></li>'
    value = esc(ctx.q.get("q", "")) if ctx.request.url.path.startswith("/catalogsearch") else ""
    categories = ctx.conn.execute("SELECT name, slug FROM shop_categories ORDER BY position").fetchall()
    nav = "".join(f'<li><a href="/{esc(c["slug"])}.html">{esc(c["name"])}</a></li>' for c in categories)
    return ('<header class="page-header"><a class="logo" href="/">One Stop Market</a>'
            '<form class="minisearch" role="search" action="/catalogsearch/result/" method="get">'
            '<label for="search">Search</label>'
            f'<input id="search" type="search" name="q" value="{value}" placeholder="Search entire store here...">'
            '<button type="submit">Search</button></form>'
            f'<ul class="header-links">{links}</ul>'
            f'<a class="showcart" href="/checkout/cart/">My Cart ({count})</a></header>'
            f'<nav class="nav-sections" aria-label="Categories"><ul>{nav}</ul></nav>')


def _page(ctx: _Ctx, title: str, main: str, status_code: int = 200) -> HTMLResponse:
    body = f'{_header(ctx)}<main id="maincontent">{ctx.take_flash()}{main}</main>' \
           '<footer><p>Copyright 2013-present Magento, Inc. All rights reserved.</p></footer>'
    return html_page(title, body, status_code=status_code, css=_CSS)


def _account_page(ctx: _Ctx, title: str, main: str) -> HTMLResponse:
    nav = "".join(f'<li><a href="{href}">{label}</a></li>' for href, label in (
        ("/customer/account/", "My Account"), ("/sales/order/history/", "My Orders"),
        ("/wishlist/", "My Wish List"), ("/customer/address/", "Address Book"),
        ("/customer/account/edit/", "Account Information"), ("/review/customer/", "My Product Reviews")))
    return _page(ctx, title, f'<div class="layout"><nav class="sidebar" aria-label="My account"><ul>{nav}</ul></nav>'
                             f'<div class="column-main"><h1>{esc(title)}</h1>{main}</div></div>')


def _not_found(ctx: _Ctx) -> HTMLResponse:
    return _page(ctx, "404 Not Found", "<h1>Whoops, our bad...</h1><p>The page you requested was not found.</p>",
                 status_code=404)


def _login_required(ctx: _Ctx) -> Optional[Response]:
    if ctx.customer is None:
        return redirect("/customer/account/login/")
    return None


def _stars(percent: int) -> str:
    return f"{percent // 20} out of 5 stars"


# --- catalog pages -----------------------------------------------------------------------------------

def _product_item(ctx: _Ctx, p: sqlite3.Row) -> str:
    count, percent = rating_summary(ctx.conn, p["id"])
    reviews = (f'<div class="product-reviews-summary">Rating: {percent}% <a href="/{esc(p["slug"])}.html#reviews">'
               f'{count} {"Review" if count == 1 else "Reviews"}</a></div>') if count else ""
    return (f'<li class="product-item"><a class="product-item-link" href="/{esc(p["slug"])}.html">{esc(p["name"])}</a>'
            f'{reviews}<div class="price">{money(p["price"])}</div>'
            '<form method="post" action="/checkout/cart/add/">'
            f'<input type="hidden" name="product" value="{p["id"]}"><button type="submit">Add to Cart</button>'
            '</form></li>')


def _listing(ctx: _Ctx, path: str, rows: list[sqlite3.Row], params: dict[str, Any], orders: list[tuple[str, str]],
             default_order: str) -> str:
    order = ctx.q.get("product_list_order", default_order)
    if order not in {key for key, _ in orders}:
        order = default_order
    direction = "desc" if ctx.q.get("product_list_dir") == "desc" else "asc"
    if order == "relevance" and "product_list_dir" not in ctx.q:
        direction = "asc"  # relevance order is best first; "desc" reverses it
    rows = sort_products(rows, order, direction)
    total = len(rows)
    pages = max(1, math.ceil(total / PAGE_SIZE))
    page = min(max(1, _int(ctx.q.get("p"), 1)), pages)
    shown = rows[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    keep = dict(params)
    if "product_list_order" in ctx.q:
        keep["product_list_order"] = order
    if "product_list_dir" in ctx.q:
        keep["product_list_dir"] = direction
    if not total:
        return '<div class="message message-notice" role="status">Your search returned no results.</div>'
    sort_links = []
    for key, label in orders:
        if key == order:
            sort_links.append(f'<strong aria-current="true">{label}</strong>')
        else:
            sort_links.append(f'<a href="{esc(query_url(path, **{**params, "product_list_order": key}))}">{label}</a>')
    flip = "asc" if direction == "desc" else "desc"
    flip_label = "Set Ascending Direction" if direction == "desc" else "Set Descending Direction"
    flip_href = query_url(path, **{**params, "product_list_order": order, "product_list_dir": flip})
    toolbar = (f'<div class="toolbar"><p class="toolbar-amount">Items {(page - 1) * PAGE_SIZE + 1}-'
               f'{(page - 1) * PAGE_SIZE + len(shown)} of {total}</p><nav class="sorter" aria-label="Sort By">'
               f'Sort By: {" ".join(sort_links)} <a href="{esc(flip_href)}">{flip_label}</a></nav></div>')
    links = []
    if page > 1:
        links.append(f'<a href="{esc(query_url(path, **{**keep, "p": page - 1}))}">Previous</a>')
    for n in range(1, pages + 1):
        if n == page:
            links.append(f'<strong aria-current="page">Page {n}</strong>')
        else:
            links.append(f'<a href="{esc(query_url(path, **{**keep, "p": n}))}">Page {n}</a>')
    if page < pages:
        links.append(f'<a href="{esc(query_url(path, **{**keep, "p": page + 1}))}">Next</a>')
    pager = f'<nav class="pages" aria-label="Pages">{" ".join(links)}</nav>' if pages > 1 else ""
    items = "".join(_product_item(ctx, p) for p in shown)
    return f'{toolbar}<ol class="products">{items}</ol>{pager}'


def _home(ctx: _Ctx) -> Response:
    rows = ctx.conn.execute("SELECT * FROM shop_products WHERE enabled = 1 AND id % 25 = 3 ORDER BY id").fetchall()
    items = "".join(_product_item(ctx, p) for p in rows[:8])
    return _page(ctx, "One Stop Market", '<h1>One Stop Market</h1><p>Welcome to One Stop Market: thousands of '
                 'products across every department.</p><h2>Product Showcases</h2>'
                 f'<ol class="products">{items}</ol>')


def _search(ctx: _Ctx) -> Response:
    q = ctx.q.get("q", "").strip()
    if not q:
        return _page(ctx, "Search results", "<h1>Search results</h1>"
                     '<div class="message message-notice" role="status">Please enter a search term.</div>')
    rows = [row for _, row in search_products(ctx.conn, q)]
    listing = _listing(ctx, "/catalogsearch/result/index/", rows, {"q": q},
                       [("relevance", "Relevance"), ("name", "Product Name"), ("price", "Price")], "relevance")
    return _page(ctx, f"Search results for: '{q}'", f"<h1>Search results for: '{esc(q)}'</h1>{listing}")


def _category(ctx: _Ctx, category: sqlite3.Row) -> Response:
    rows = ctx.conn.execute("SELECT * FROM shop_products WHERE category_id = ? AND enabled = 1 ORDER BY position, id",
                            (category["id"],)).fetchall()
    listing = _listing(ctx, f'/{category["slug"]}.html', rows, {},
                       [("position", "Position"), ("name", "Product Name"), ("price", "Price")], "position")
    return _page(ctx, category["name"], f'<h1>{esc(category["name"])}</h1>{listing}')


def _product(ctx: _Ctx, p: sqlite3.Row) -> Response:
    count, percent = rating_summary(ctx.conn, p["id"])
    category = ctx.conn.execute("SELECT * FROM shop_categories WHERE id = ?", (p["category_id"],)).fetchone()
    summary = (f'Rating: {percent}% <a href="#reviews">{count} {"Review" if count == 1 else "Reviews"}</a> '
               if count else "Be the first to review this product ") + '<a href="#review-form">Add Your Review</a>'
    sizes, colors = product_options(p)
    options = ""
    for legend, field, values in (("Size", "size", sizes), ("Color", "color", colors)):
        if values:
            radios = "".join(f'<label><input type="radio" name="{field}" value="{esc(v)}"> {esc(v)}</label>'
                             for v in values)
            options += f'<fieldset class="swatch-attribute {field}"><legend>{legend}</legend>{radios}</fieldset>'
    stock = "In stock" if p["qty"] > 0 else "Out of stock"
    buy = ('<div class="field"><label for="qty">Qty</label><input id="qty" type="number" name="qty" value="1" min="1">'
           '</div><button type="submit">Add to Cart</button>') if p["qty"] > 0 else ""
    reviews = ctx.conn.execute("SELECT * FROM shop_reviews WHERE product_id = ? AND status = 'approved' "
                               "ORDER BY created_at, id", (p["id"],)).fetchall()
    review_items = "".join(
        f'<li class="review-item" id="review-{r["id"]}"><h3 class="review-title">{esc(r["title"])}</h3>'
        f'<p class="review-ratings">Rating: {_stars(r["rating_percent"])} ({r["rating_percent"]}%)</p>'
        f'<p class="review-content">{esc(r["detail"])}</p><p class="review-details">Review by '
        f'<strong class="review-author">{esc(r["nickname"])}</strong> Posted on '
        f'<time datetime="{r["created_at"][:10]}">{short_date(r["created_at"])}</time></p></li>' for r in reviews)
    review_list = f'<ol class="review-items">{review_items}</ol>' if reviews else "<p>No reviews yet.</p>"
    nickname = esc(ctx.customer["firstname"]) if ctx.customer is not None else ""
    stars = "".join(f'<label><input type="radio" name="rating" value="{n}"> {n} {"star" if n == 1 else "stars"}'
                    '</label>' for n in range(1, 6))
    main = (f'<nav class="breadcrumbs" aria-label="Breadcrumb"><a href="/">Home</a> / '
            f'<a href="/{esc(category["slug"])}.html">{esc(category["name"])}</a></nav>'
            f'<h1 class="page-title">{esc(p["name"])}</h1><div class="product-reviews-summary">{summary}</div>'
            f'<div class="price" id="product-price">{money(p["price"])}</div>'
            f'<p class="stock">{stock}</p><p>SKU: <span id="product-sku">{esc(p["sku"])}</span></p>'
            f'<form id="product_addtocart_form" method="post" action="/checkout/cart/add/">'
            f'<input type="hidden" name="product" value="{p["id"]}">{options}{buy}</form>'
            f'<form method="post" action="/wishlist/index/add/"><input type="hidden" name="product" value="{p["id"]}">'
            '<button type="submit">Add to Wish List</button></form>'
            f'<section id="description"><h2>Details</h2><p>{esc(p["description"])}</p></section>'
            f'<section id="reviews"><h2>Customer Reviews</h2>{review_list}</section>'
            f'<section id="review-form"><h2>Write Your Own Review</h2>'
            f'<form method="post" action="/review/product/post/id/{p["id"]}/"><p>You\'re reviewing: '
            f'<strong>{esc(p["name"])}</strong></p><fieldset><legend>Your Rating</legend>{stars}</fieldset>'
            f'<div class="field"><label for="nickname_field">Nickname</label><input id="nickname_field" type="text" '
            f'name="nickname" value="{nickname}"></div><div class="field"><label for="summary_field">Summary</label>'
            '<input id="summary_field" type="text" name="title"></div><div class="field"><label for="review_field">'
            'Review</label><textarea id="review_field" name="detail" rows="3" cols="50"></textarea></div>'
            '<button type="submit">Submit Review</button></form></section>')
    return _page(ctx, p["name"], main)


def _slug_page(ctx: _Ctx, slug: str) -> Response:
    category = ctx.conn.execute("SELECT * FROM shop_categories WHERE slug = ?", (slug,)).fetchone()
    if category is not None:
        return _category(ctx, category)
    product = ctx.conn.execute("SELECT * FROM shop_products WHERE slug = ? AND enabled = 1", (slug,)).fetchone()
    if product is not None:
        return _product(ctx, product)
    return _not_found(ctx)


# --- cart and checkout -------------------------------------------------------------------------------

def _back_to_product(product: sqlite3.Row) -> Response:
    return redirect(f'/{product["slug"]}.html')


def _cart_add(ctx: _Ctx) -> Response:
    product = ctx.conn.execute("SELECT * FROM shop_products WHERE id = ? AND enabled = 1",
                               (_int(ctx.form.get("product")),)).fetchone()
    if product is None:
        ctx.flash("The product does not exist.", "error")
        return redirect("/checkout/cart/")
    sizes, colors = product_options(product)
    size, color = ctx.form.get("size", ""), ctx.form.get("color", "")
    if (sizes and size not in sizes) or (colors and color not in colors):
        missing = [label for label, values, value in (("Size", sizes, size), ("Color", colors, color))
                   if values and value not in values]
        ctx.flash(f"You need to choose options for your item: {' and '.join(missing)}.", "error")
        return _back_to_product(product)
    qty = _int(ctx.form.get("qty"), 1)
    if qty < 1:
        ctx.flash("Please enter a quantity greater than 0.", "error")
        return _back_to_product(product)
    if product["qty"] <= 0:
        ctx.flash("This product is out of stock.", "error")
        return _back_to_product(product)
    cart = ctx.cart_id(create=True)
    existing = ctx.conn.execute("SELECT id FROM shop_cart_items WHERE cart_id = ? AND product_id = ? AND size = ? "
                                "AND color = ?", (cart, product["id"], size, color)).fetchone()
    if existing:
        ctx.conn.execute("UPDATE shop_cart_items SET qty = qty + ? WHERE id = ?", (qty, existing["id"]))
    else:
        ctx.conn.execute("INSERT INTO shop_cart_items (cart_id, product_id, qty, size, color) VALUES (?, ?, ?, ?, ?)",
                         (cart, product["id"], qty, size, color))
    ctx.flash(f"You added {product['name']} to your shopping cart.")
    return _back_to_product(product)


def _cart_page(ctx: _Ctx) -> Response:
    lines = cart_lines(ctx.conn, ctx.cart_id())
    if not lines:
        return _page(ctx, "Shopping Cart", "<h1>Shopping Cart</h1><p>You have no items in your shopping cart.</p>"
                     '<p><a href="/">Continue Shopping</a></p>')
    rows = []
    subtotal = 0.0
    for line in lines:
        opts = option_text(line["size"], line["color"])
        summary = line["name"] + (f" | {opts}" if opts else "")
        subtotal += line["price"] * line["qty"]
        options = f'<p class="item-options">{esc(opts)}</p>' if opts else ""
        rows.append(
            f'<tr class="cart-item" data-summary="{esc(summary)}" data-sku="{esc(line["sku"])}">'
            f'<td><a class="product-item-name" href="/{esc(line["slug"])}.html">{esc(line["name"])}</a>{options}</td>'
            f'<td>{money(line["price"])}</td><td><input class="qty" type="number" min="0" '
            f'name="cart[{line["item_id"]}][qty]" value="{line["qty"]}" aria-label="Qty of {esc(line["name"])}"></td>'
            f'<td>{money(line["price"] * line["qty"])}</td><td><button type="submit" formaction="/checkout/cart/delete/" '
            f'name="item_id" value="{line["item_id"]}" aria-label="Remove {esc(line["name"])}">Remove item</button>'
            '</td></tr>')
    main = ('<h1>Shopping Cart</h1><form method="post" action="/checkout/cart/updatePost/">'
            '<table id="shopping-cart-table"><caption>Shopping Cart Items</caption><thead><tr><th>Item</th>'
            '<th>Price</th><th>Qty</th><th>Subtotal</th><th>Action</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table><button type="submit">Update Shopping Cart</button></form>'
            f'<section class="cart-summary"><h2>Summary</h2><p>Subtotal: {money(subtotal)}</p>'
            '<p><a href="/checkout/">Proceed to Checkout</a></p></section>')
    return _page(ctx, "Shopping Cart", main)


def _cart_update(ctx: _Ctx) -> Response:
    cart = ctx.cart_id()
    for key, value in ctx.form.items():
        match = re.fullmatch(r"cart\[(\d+)\]\[qty\]", key)
        if not match or cart is None:
            continue
        qty = _int(value, -1)
        if qty == 0:
            ctx.conn.execute("DELETE FROM shop_cart_items WHERE id = ? AND cart_id = ?", (int(match[1]), cart))
        elif qty > 0:
            ctx.conn.execute("UPDATE shop_cart_items SET qty = ? WHERE id = ? AND cart_id = ?",
                             (qty, int(match[1]), cart))
    return redirect("/checkout/cart/")


def _cart_delete(ctx: _Ctx) -> Response:
    cart = ctx.cart_id()
    if cart is not None:
        ctx.conn.execute("DELETE FROM shop_cart_items WHERE id = ? AND cart_id = ?",
                         (_int(ctx.form.get("item_id")), cart))
    return redirect("/checkout/cart/")


_ADDRESS_FIELDS = (("firstname", "First Name"), ("lastname", "Last Name"), ("street", "Street Address"),
                   ("city", "City"), ("region", "State/Province"), ("postcode", "Zip/Postal Code"),
                   ("country", "Country"), ("telephone", "Phone Number"))


def _address_inputs(values: Any) -> str:
    return "".join(f'<div class="field"><label for="addr-{key}">{label}</label><input id="addr-{key}" type="text" '
                   f'name="{key}" value="{esc(values[key] if values else "")}"></div>' for key, label in _ADDRESS_FIELDS)


def _address_lines(a: Any, prefix: str = "") -> str:
    get = (lambda k: a[prefix + k])
    return (f'{esc(get("firstname"))} {esc(get("lastname"))}<br>{esc(get("street"))}<br>{esc(get("city"))}, '
            f'{esc(get("region"))}, {esc(get("postcode"))}<br>{esc(get("country"))}<br>T: {esc(get("telephone"))}')


def _default_address(ctx: _Ctx) -> Optional[sqlite3.Row]:
    return ctx.conn.execute("SELECT * FROM shop_addresses WHERE customer_id = ? ORDER BY is_default DESC, id LIMIT 1",
                            (ctx.customer["id"],)).fetchone()


def _checkout(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    lines = cart_lines(ctx.conn, ctx.cart_id())
    if not lines:
        return redirect("/checkout/cart/")
    qty = sum(line["qty"] for line in lines)
    subtotal = sum(line["price"] * line["qty"] for line in lines)
    items = "".join(f'<li>{esc(line["name"])} {esc(option_text(line["size"], line["color"]))} &times; {line["qty"]}: '
                    f'{money(line["price"] * line["qty"])}</li>' for line in lines)
    main = ('<h1>Checkout</h1><form method="post" action="/checkout/placeOrder/"><fieldset><legend>Shipping Address'
            f'</legend>{_address_inputs(_default_address(ctx))}</fieldset><fieldset><legend>Shipping Methods</legend>'
            f'<p>Flat Rate: Fixed {money(SHIPPING_PER_ITEM)} per item</p></fieldset><fieldset><legend>Payment Method'
            '</legend><p>Check / Money order</p></fieldset><section class="order-summary"><h2>Order Summary</h2>'
            f'<ul>{items}</ul><p>Cart Subtotal: {money(subtotal)}</p><p>Shipping: {money(SHIPPING_PER_ITEM * qty)}</p>'
            f'<p>Order Total: {money(subtotal + SHIPPING_PER_ITEM * qty)}</p></section>'
            '<button type="submit">Place Order</button></form>')
    return _page(ctx, "Checkout", main)


def _place_order(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    lines = cart_lines(ctx.conn, ctx.cart_id())
    if not lines:
        return redirect("/checkout/cart/")
    address = {key: ctx.form.get(key, "").strip() for key, _ in _ADDRESS_FIELDS}
    missing = [label for key, label in _ADDRESS_FIELDS if not address[key]]
    if missing:
        ctx.flash(f"Please fill in the required fields: {', '.join(missing)}.", "error")
        return redirect("/checkout/")
    qty = sum(line["qty"] for line in lines)
    subtotal = round(sum(line["price"] * line["qty"] for line in lines), 2)
    shipping = SHIPPING_PER_ITEM * qty
    now = site_now(ctx.conn)
    order_id = (ctx.conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM shop_orders").fetchone()[0])
    ctx.conn.execute(
        "INSERT INTO shop_orders (id, increment_id, customer_id, status, created_at, updated_at, subtotal, shipping, "
        "grand_total, ship_firstname, ship_lastname, ship_street, ship_city, ship_region, ship_postcode, ship_country, "
        "ship_telephone, payment_method) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "'Check / Money order')",
        (order_id, f"{order_id:09d}", ctx.customer["id"], now, now, subtotal, shipping, round(subtotal + shipping, 2),
         *(address[k] for k, _ in _ADDRESS_FIELDS)))
    for line in lines:
        ctx.conn.execute("INSERT INTO shop_order_items (order_id, product_id, sku, name, price, qty, size, color) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (order_id, line["id"], line["sku"], line["name"],
                                                             line["price"], line["qty"], line["size"], line["color"]))
        ctx.conn.execute("UPDATE shop_products SET qty = MAX(0, qty - ?) WHERE id = ?", (line["qty"], line["id"]))
    ctx.conn.execute("DELETE FROM shop_cart_items WHERE cart_id = ?", (ctx.cart_id(),))
    ctx.conn.execute("UPDATE shop_sessions SET last_order_id = ? WHERE token = ?", (order_id, ctx.token))
    return redirect("/checkout/onepage/success/")


def _success(ctx: _Ctx) -> Response:
    row = ctx.conn.execute("SELECT last_order_id FROM shop_sessions WHERE token = ?", (ctx.token,)).fetchone() \
        if ctx.token else None
    if not row or row["last_order_id"] is None:
        return redirect("/checkout/cart/")
    order = ctx.conn.execute("SELECT * FROM shop_orders WHERE id = ?", (row["last_order_id"],)).fetchone()
    main = ('<h1>Thank you for your purchase!</h1><p>Your order number is: '
            f'<a href="/sales/order/view/order_id/{order["id"]}/">{order["increment_id"]}</a>.</p>'
            "<p>We'll email you an order confirmation with details and tracking info.</p>"
            '<p><a href="/">Continue Shopping</a></p>')
    return _page(ctx, "Success Page", main)


# --- account pages -----------------------------------------------------------------------------------

def _order_table(orders: list[sqlite3.Row]) -> str:
    rows = "".join(
        f'<tr><td>{o["increment_id"]}</td><td>{short_date(o["created_at"])}</td>'
        f'<td>{esc(o["ship_firstname"])} {esc(o["ship_lastname"])}</td><td>{money(o["grand_total"])}</td>'
        f'<td>{STATUS_LABELS.get(o["status"], o["status"])}</td><td><a href="/sales/order/view/order_id/{o["id"]}/" '
        f'aria-label="View Order {o["increment_id"]}">View Order</a></td></tr>' for o in orders)
    return ('<table id="my-orders-table"><caption>Orders</caption><thead><tr><th>Order #</th><th>Date</th>'
            f'<th>Ship To</th><th>Order Total</th><th>Status</th><th>Action</th></tr></thead><tbody>{rows}</tbody></table>')


def _history(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    orders = ctx.conn.execute("SELECT * FROM shop_orders WHERE customer_id = ? ORDER BY created_at DESC, id DESC",
                              (ctx.customer["id"],)).fetchall()
    if not orders:
        return _account_page(ctx, "My Orders", "<p>You have placed no orders.</p>")
    pages = max(1, math.ceil(len(orders) / ORDERS_PAGE_SIZE))
    page = min(max(1, _int(ctx.q.get("p"), 1)), pages)
    shown = orders[(page - 1) * ORDERS_PAGE_SIZE: page * ORDERS_PAGE_SIZE]
    links = []
    for n in range(1, pages + 1):
        links.append(f'<strong aria-current="page">Page {n}</strong>' if n == page
                     else f'<a href="/sales/order/history/?p={n}">Page {n}</a>')
    if page < pages:
        links.append(f'<a href="/sales/order/history/?p={page + 1}">Next</a>')
    pager = f'<nav class="pages" aria-label="Pages">{" ".join(links)}</nav>' if pages > 1 else ""
    amount = (f'<p class="toolbar-amount">Items {(page - 1) * ORDERS_PAGE_SIZE + 1} to '
              f'{(page - 1) * ORDERS_PAGE_SIZE + len(shown)} of {len(orders)} total</p>')
    return _account_page(ctx, "My Orders", amount + _order_table(shown) + pager)


def order_items(conn: sqlite3.Connection, order_id: int) -> list[sqlite3.Row]:
    """An order's items in the order they were added."""
    return conn.execute("SELECT * FROM shop_order_items WHERE order_id = ? ORDER BY id", (order_id,)).fetchall()


def _order_view(ctx: _Ctx, order_id: int) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    order = ctx.conn.execute("SELECT * FROM shop_orders WHERE id = ? AND customer_id = ?",
                             (order_id, ctx.customer["id"])).fetchone()
    if order is None:
        return _not_found(ctx)
    rows = "".join(
        f'<tr><td>{esc(i["name"])}{"<p>" + esc(option_text(i["size"], i["color"])) + "</p>" if i["size"] or i["color"] else ""}'
        f'</td><td>{esc(i["sku"])}</td><td>{money(i["price"])}</td><td>Ordered: {i["qty"]}</td>'
        f'<td>{money(i["price"] * i["qty"])}</td></tr>' for i in order_items(ctx.conn, order["id"]))
    main = (f'<p>Status: <span id="order-status">{STATUS_LABELS.get(order["status"], order["status"])}</span></p>'
            f'<p>Order Date: <span id="order-date">{long_date(order["created_at"])}</span></p>'
            '<table id="order-items"><caption>Items Ordered</caption><thead><tr><th>Product Name</th><th>SKU</th>'
            f'<th>Price</th><th>Qty</th><th>Subtotal</th></tr></thead><tbody>{rows}</tbody></table>'
            f'<table class="order-totals"><tbody><tr><th>Subtotal</th><td>{money(order["subtotal"])}</td></tr>'
            f'<tr><th>Shipping &amp; Handling</th><td>{money(order["shipping"])}</td></tr><tr><th>Grand Total</th>'
            f'<td id="grand-total">{money(order["grand_total"])}</td></tr></tbody></table>'
            f'<section class="order-address"><h2>Shipping Address</h2><address>{_address_lines(order, "ship_")}'
            f'</address></section><section><h2>Payment Method</h2><p>{esc(order["payment_method"])}</p></section>'
            '<p><a href="/sales/order/history/">Back to My Orders</a></p>')
    return _account_page(ctx, f'Order # {order["increment_id"]}', main)


def _account(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    c = ctx.customer
    address = _default_address(ctx)
    recent = ctx.conn.execute("SELECT * FROM shop_orders WHERE customer_id = ? ORDER BY created_at DESC, id DESC "
                              "LIMIT 5", (c["id"],)).fetchall()
    main = ('<section><h2>Account Information</h2><div class="box-information"><h3>Contact Information</h3>'
            f'<p>{esc(c["firstname"])} {esc(c["lastname"])}<br>{esc(c["email"])}</p>'
            '<a href="/customer/account/edit/">Edit</a></div></section>'
            '<section><h2>Address Book</h2><div class="box-address-shipping"><h3>Default Shipping Address</h3>'
            f'<address>{_address_lines(address) if address else "You have not set a default shipping address."}'
            '</address><a href="/customer/address/">Manage Addresses</a></div></section>'
            f'<section><h2>Recent Orders</h2>{_order_table(recent) if recent else "<p>No orders yet.</p>"}'
            '<p><a href="/sales/order/history/">View All</a></p></section>')
    return _account_page(ctx, "My Account", main)


def _account_edit(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    c = ctx.customer
    main = ('<form method="post" action="/customer/account/editPost/"><fieldset><legend>Account Information</legend>'
            f'<div class="field"><label for="firstname">First Name</label><input id="firstname" type="text" '
            f'name="firstname" value="{esc(c["firstname"])}"></div><div class="field"><label for="lastname">Last Name'
            f'</label><input id="lastname" type="text" name="lastname" value="{esc(c["lastname"])}"></div>'
            f'<div class="field"><label for="email">Email</label><input id="email" type="email" name="email" '
            f'value="{esc(c["email"])}"></div></fieldset><button type="submit">Save</button></form>')
    return _account_page(ctx, "Edit Account Information", main)


def _account_edit_post(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    first, last = ctx.form.get("firstname", "").strip(), ctx.form.get("lastname", "").strip()
    email = ctx.form.get("email", "").strip() or ctx.customer["email"]
    if not first or not last:
        ctx.flash("First Name and Last Name are required.", "error")
        return redirect("/customer/account/edit/")
    clash = ctx.conn.execute("SELECT id FROM shop_customers WHERE email = ? AND id != ?",
                             (email, ctx.customer["id"])).fetchone()
    if clash:
        ctx.flash("A customer with the same email address already exists.", "error")
        return redirect("/customer/account/edit/")
    ctx.conn.execute("UPDATE shop_customers SET firstname = ?, lastname = ?, email = ? WHERE id = ?",
                     (first, last, email, ctx.customer["id"]))
    ctx.flash("You saved the account information.")
    return redirect("/customer/account/")


def _address_book(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    address = _default_address(ctx)
    if address is None:
        return _account_page(ctx, "Address Book", "<p>You have no addresses.</p>")
    main = ('<section><h2>Default Addresses</h2><div class="box-address-shipping"><h3>Default Shipping Address</h3>'
            f'<address>{_address_lines(address)}</address><a href="/customer/address/edit/id/{address["id"]}/">'
            'Change Shipping Address</a></div></section>')
    return _account_page(ctx, "Address Book", main)


def _owned_address(ctx: _Ctx, address_id: int) -> "sqlite3.Row | Response":
    """The signed-in customer's address `address_id`, or the response to send instead (login / 404)."""
    denied = _login_required(ctx)
    if denied:
        return denied
    address = ctx.conn.execute("SELECT * FROM shop_addresses WHERE id = ? AND customer_id = ?",
                               (address_id, ctx.customer["id"])).fetchone()
    return _not_found(ctx) if address is None else address


def _address_edit(ctx: _Ctx, address_id: int) -> Response:
    address = _owned_address(ctx, address_id)
    if not isinstance(address, sqlite3.Row):
        return address  # the login page or 404
    main = (f'<form method="post" action="/customer/address/formPost/id/{address_id}/"><fieldset><legend>'
            f'Contact Information and Address</legend>{_address_inputs(address)}</fieldset>'
            '<button type="submit">Save Address</button></form>')
    return _account_page(ctx, "Edit Address", main)


def _address_save(ctx: _Ctx, address_id: int) -> Response:
    address = _owned_address(ctx, address_id)
    if not isinstance(address, sqlite3.Row):
        return address  # the login page or 404
    values = {key: ctx.form.get(key, "").strip() for key, _ in _ADDRESS_FIELDS}
    missing = [label for key, label in _ADDRESS_FIELDS if not values[key]]
    if missing:
        ctx.flash(f"Please fill in the required fields: {', '.join(missing)}.", "error")
        return redirect(f"/customer/address/edit/id/{address_id}/")
    ctx.conn.execute("UPDATE shop_addresses SET firstname = :firstname, lastname = :lastname, street = :street, "
                     "city = :city, region = :region, postcode = :postcode, country = :country, "
                     "telephone = :telephone WHERE id = :id", {**values, "id": address_id})
    ctx.flash("You saved the address.")
    return redirect("/customer/address/")


def _wishlist(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    rows = ctx.conn.execute("SELECT w.id AS item_id, p.* FROM shop_wishlist w JOIN shop_products p ON p.id = "
                            "w.product_id WHERE w.customer_id = ? ORDER BY w.id", (ctx.customer["id"],)).fetchall()
    if not rows:
        return _account_page(ctx, "My Wish List", "<p>You have no items in your wish list.</p>")
    items = "".join(
        f'<li class="wishlist-item" data-name="{esc(r["name"])}"><a class="product-item-link" href="/{esc(r["slug"])}.html">'
        f'{esc(r["name"])}</a> <span class="price">{money(r["price"])}</span>'
        f'<form method="post" action="/wishlist/index/cart/"><input type="hidden" name="item" value="{r["item_id"]}">'
        f'<button type="submit" aria-label="Add {esc(r["name"])} to Cart">Add to Cart</button></form>'
        f'<form method="post" action="/wishlist/index/remove/"><input type="hidden" name="item" value="{r["item_id"]}">'
        f'<button type="submit" aria-label="Remove {esc(r["name"])}">Remove item</button></form></li>' for r in rows)
    return _account_page(ctx, "My Wish List", f'<ol id="wishlist-items">{items}</ol>')


def _wishlist_add(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    product = ctx.conn.execute("SELECT * FROM shop_products WHERE id = ? AND enabled = 1",
                               (_int(ctx.form.get("product")),)).fetchone()
    if product is None:
        return _not_found(ctx)
    exists = ctx.conn.execute("SELECT 1 FROM shop_wishlist WHERE customer_id = ? AND product_id = ?",
                              (ctx.customer["id"], product["id"])).fetchone()
    if not exists:
        ctx.conn.execute("INSERT INTO shop_wishlist (customer_id, product_id, added_at) VALUES (?, ?, ?)",
                         (ctx.customer["id"], product["id"], site_now(ctx.conn)))
    ctx.flash(f"{product['name']} has been added to your Wish List.")
    return redirect("/wishlist/")


def _wishlist_item(ctx: _Ctx) -> Optional[sqlite3.Row]:
    return ctx.conn.execute("SELECT w.id AS item_id, p.* FROM shop_wishlist w JOIN shop_products p ON p.id = "
                            "w.product_id WHERE w.id = ? AND w.customer_id = ?",
                            (_int(ctx.form.get("item")), ctx.customer["id"])).fetchone()


def _wishlist_remove(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    item = _wishlist_item(ctx)
    if item is not None:
        ctx.conn.execute("DELETE FROM shop_wishlist WHERE id = ?", (item["item_id"],))
        ctx.flash(f"{item['name']} has been removed from your Wish List.")
    return redirect("/wishlist/")


def _wishlist_cart(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    item = _wishlist_item(ctx)
    if item is None:
        return redirect("/wishlist/")
    if product_options(item) != ([], []):
        ctx.flash("You need to choose options for your item.", "error")
        return redirect(f'/{item["slug"]}.html')
    cart = ctx.cart_id(create=True)
    ctx.conn.execute("INSERT INTO shop_cart_items (cart_id, product_id, qty) VALUES (?, ?, 1)", (cart, item["id"]))
    ctx.conn.execute("DELETE FROM shop_wishlist WHERE id = ?", (item["item_id"],))
    ctx.flash(f"You added {item['name']} to your shopping cart.")
    return redirect("/checkout/cart/")


def _my_reviews(ctx: _Ctx) -> Response:
    denied = _login_required(ctx)
    if denied:
        return denied
    rows = ctx.conn.execute("SELECT r.*, p.name, p.slug FROM shop_reviews r JOIN shop_products p ON p.id = r.product_id "
                            "WHERE r.customer_id = ? ORDER BY r.created_at DESC, r.id DESC", (ctx.customer["id"],)).fetchall()
    if not rows:
        return _account_page(ctx, "My Product Reviews", "<p>You have submitted no reviews.</p>")
    body = "".join(f'<tr><td>{short_date(r["created_at"])}</td><td><a href="/{esc(r["slug"])}.html">{esc(r["name"])}'
                   f'</a></td><td>{_stars(r["rating_percent"])}</td><td>{esc(r["title"])}</td>'
                   f'<td>{REVIEW_STATUS_LABELS[r["status"]]}</td></tr>' for r in rows)
    return _account_page(ctx, "My Product Reviews", '<table id="my-reviews-table"><thead><tr><th>Created</th>'
                         '<th>Product Name</th><th>Rating</th><th>Review</th><th>Status</th></tr></thead>'
                         f'<tbody>{body}</tbody></table>')


def _review_post(ctx: _Ctx, product_id: int) -> Response:
    product = ctx.conn.execute("SELECT * FROM shop_products WHERE id = ? AND enabled = 1", (product_id,)).fetchone()
    if product is None:
        return _not_found(ctx)
    rating = _int(ctx.form.get("rating"))
    fields = {key: ctx.form.get(key, "").strip() for key in ("nickname", "title", "detail")}
    if not 1 <= rating <= 5 or not all(fields.values()):
        ctx.flash("Please select a rating and fill in Nickname, Summary and Review.", "error")
        return _back_to_product(product)
    ctx.conn.execute("INSERT INTO shop_reviews (product_id, customer_id, nickname, title, detail, rating_percent, "
                     "status, created_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
                     (product_id, ctx.customer["id"] if ctx.customer is not None else None, fields["nickname"],
                      fields["title"], fields["detail"], rating * 20, site_now(ctx.conn)))
    ctx.flash("You submitted your review for moderation.")
    return _back_to_product(product)


def _login_page(ctx: _Ctx) -> Response:
    if ctx.customer is not None:
        return redirect("/customer/account/")
    main = ('<h1>Customer Login</h1><section><h2>Registered Customers</h2><p>If you have an account, sign in with your '
            'email address.</p><form method="post" action="/customer/account/loginPost/"><div class="field">'
            '<label for="email">Email</label><input id="email" type="email" name="login[username]"></div>'
            '<div class="field"><label for="pass">Password</label><input id="pass" type="password" '
            'name="login[password]"></div><button type="submit">Sign In</button></form></section>')
    return _page(ctx, "Customer Login", main)


def _login_post(ctx: _Ctx) -> Response:
    email = ctx.form.get("login[username]", "").strip()
    password = ctx.form.get("login[password]", "")
    customer = ctx.conn.execute("SELECT * FROM shop_customers WHERE email = ? COLLATE NOCASE", (email,)).fetchone()
    if customer is None or customer["password_hash"] != hash_password(password):
        ctx.flash("The account sign-in was incorrect or your account is disabled temporarily. Please wait and try "
                  "again later.", "error")
        return redirect("/customer/account/login/")
    guest_cart = ctx.cart_id() if ctx.customer is None and ctx.token else None
    ctx.ensure_session()
    ctx.conn.execute("UPDATE shop_sessions SET customer_id = ? WHERE token = ?", (customer["id"], ctx.token))
    ctx.customer = customer
    if guest_cart is not None:  # Magento merges the guest cart into the customer's
        mine = ctx.cart_id(create=True)
        ctx.conn.execute("UPDATE shop_cart_items SET cart_id = ? WHERE cart_id = ?", (mine, guest_cart))
        ctx.conn.execute("DELETE FROM shop_carts WHERE id = ?", (guest_cart,))
    return redirect("/customer/account/")


def _logout(ctx: _Ctx) -> Response:
    if ctx.token:
        ctx.conn.execute("UPDATE shop_sessions SET customer_id = NULL WHERE token = ?", (ctx.token,))
        ctx.customer = None
    return _page(ctx, "You are signed out", "<h1>You are signed out</h1><p>You have signed out and will go to our "
                 'homepage.</p><p><a href="/">Continue Shopping</a></p>')


# --- Magento REST subset -----------------------------------------------------------------------------

def _rest_admin(conn: sqlite3.Connection, request: Request) -> Optional[sqlite3.Row]:
    auth = request.headers.get("authorization", "")
    if not auth.lower().startswith("bearer "):
        return None
    return conn.execute("SELECT u.* FROM shop_admin_tokens t JOIN shop_admin_users u ON u.id = t.admin_id "
                        "WHERE t.token = ?", (auth[7:].strip(),)).fetchone()


def _rest_token(conn: sqlite3.Connection, body: bytes) -> Response:
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        return json_error(400, "Decoding error: the request body is not JSON.")
    if not isinstance(data, dict):
        return json_error(400, 'The request body must be a JSON object {"username": ..., "password": ...}.')
    user = conn.execute("SELECT * FROM shop_admin_users WHERE username = ?", (str(data.get("username", "")),)).fetchone()
    if user is None or user["password_hash"] != hash_password(str(data.get("password", ""))):
        return json_error(401, "The account sign-in was incorrect or your account is disabled temporarily. "
                               "Please wait and try again later.")
    token = new_token()
    conn.execute("INSERT INTO shop_admin_tokens (token, admin_id) VALUES (?, ?)", (token, user["id"]))
    return JSONResponse(token)


_ORDER_FIELDS = {"entity_id": "o.id", "increment_id": "o.increment_id", "created_at": "o.created_at",
                 "updated_at": "o.updated_at", "status": "o.status", "grand_total": "o.grand_total",
                 "subtotal": "o.subtotal", "customer_id": "o.customer_id", "customer_email": "c.email",
                 "customer_firstname": "c.firstname", "customer_lastname": "c.lastname"}
_CONDITIONS = {"eq": "=", "neq": "!=", "gt": ">", "gteq": ">=", "lt": "<", "lteq": "<=", "like": "LIKE"}


def _order_json(conn: sqlite3.Connection, o: sqlite3.Row) -> dict:
    items = [{"item_id": i["id"], "order_id": o["id"], "product_id": i["product_id"], "sku": i["sku"],
              "name": i["name"], "price": i["price"], "qty_ordered": i["qty"], "row_total": round(i["price"] * i["qty"], 2),
              "product_options": {k: v for k, v in (("size", i["size"]), ("color", i["color"])) if v}}
             for i in order_items(conn, o["id"])]
    state = {"holded": "holded", "pending": "new"}.get(o["status"], o["status"])
    return {
        "entity_id": o["id"], "increment_id": o["increment_id"], "created_at": o["created_at"],
        "updated_at": o["updated_at"], "status": o["status"], "state": state, "grand_total": o["grand_total"],
        "base_grand_total": o["grand_total"], "subtotal": o["subtotal"], "shipping_amount": o["shipping"],
        "total_qty_ordered": sum(i["qty_ordered"] for i in items), "customer_id": o["customer_id"],
        "customer_email": o["email"], "customer_firstname": o["firstname"], "customer_lastname": o["lastname"],
        "order_currency_code": "USD", "store_id": 1, "items": items,
        "billing_address": {"firstname": o["ship_firstname"], "lastname": o["ship_lastname"],
                            "street": [o["ship_street"]], "city": o["ship_city"], "region": o["ship_region"],
                            "postcode": o["ship_postcode"], "country_id": "US", "telephone": o["ship_telephone"]},
        "payment": {"method": "checkmo", "additional_information": [o["payment_method"]]},
    }


def _rest_orders(conn: sqlite3.Connection, request: Request) -> Response:
    params = request.query_params
    where, args = [], []
    groups: dict[tuple[str, str], dict[str, str]] = {}
    for key, value in params.multi_items():
        m = re.fullmatch(r"searchCriteria\[filter_?[gG]roups\]\[(\d+)\]\[filters\]\[(\d+)\]\[(\w+)\]", key)
        if m:
            groups.setdefault((m[1], m[2]), {})[m[3]] = value
    for spec in groups.values():
        column = _ORDER_FIELDS.get(spec.get("field", ""))
        if column is None:
            return json_error(400, f'"{spec.get("field")}" is not a filterable order field; use one of '
                                   f'{sorted(_ORDER_FIELDS)}.')
        op = _CONDITIONS.get(spec.get("condition_type", spec.get("conditionType", "eq")), "=")
        where.append(f"{column} {op} ?")
        args.append(spec.get("value", ""))
    sort_field = params.get("searchCriteria[sortOrders][0][field]", "entity_id")
    if sort_field not in _ORDER_FIELDS:
        return json_error(400, f'"{sort_field}" is not a sortable order field; use one of {sorted(_ORDER_FIELDS)}.')
    direction = "DESC" if params.get("searchCriteria[sortOrders][0][direction]", "ASC").upper() == "DESC" else "ASC"
    page_size = _int(params.get("searchCriteria[pageSize]"), 0)
    current = max(1, _int(params.get("searchCriteria[currentPage]"), 1))
    sql = ("SELECT o.*, c.email, c.firstname, c.lastname FROM shop_orders o JOIN shop_customers c ON c.id = "
           f"o.customer_id {'WHERE ' + ' AND '.join(where) if where else ''} ORDER BY {_ORDER_FIELDS[sort_field]} "
           f"{direction}, o.id {direction}")
    rows = conn.execute(sql, args).fetchall()
    total = len(rows)
    if page_size > 0:
        rows = rows[(current - 1) * page_size: current * page_size]
    criteria = {"sort_orders": [{"field": sort_field, "direction": direction}], "page_size": page_size or None,
                "current_page": current}
    return JSONResponse({"items": [_order_json(conn, o) for o in rows], "search_criteria": criteria,
                         "total_count": total})


def _rest_reviews(conn: sqlite3.Connection, sku: str) -> Response:
    product = conn.execute("SELECT * FROM shop_products WHERE sku = ?", (sku,)).fetchone()
    if product is None:
        return json_error(404, "The product that was requested doesn't exist. Verify the product and try again.")
    rows = conn.execute("SELECT * FROM shop_reviews WHERE product_id = ? ORDER BY created_at, id",
                        (product["id"],)).fetchall()
    return JSONResponse([{
        "id": r["id"], "title": r["title"], "detail": r["detail"], "nickname": r["nickname"],
        "ratings": [{"vote_id": r["id"], "rating_id": 4, "rating_name": "Rating", "percent": r["rating_percent"],
                     "value": r["rating_percent"] // 20}],
        "review_entity": "product", "review_type": 2 if r["customer_id"] is None else 1,
        "review_status": REVIEW_STATUS[r["status"]], "created_at": r["created_at"], "entity_pk_value": product["id"],
        "store_id": 1, "stores": [1]} for r in rows])


def _rest_product(conn: sqlite3.Connection, sku: str) -> Response:
    p = conn.execute("SELECT * FROM shop_products WHERE sku = ?", (sku,)).fetchone()
    if p is None:
        return json_error(404, "The product that was requested doesn't exist. Verify the product and try again.")
    return JSONResponse({"id": p["id"], "sku": p["sku"], "name": p["name"], "price": p["price"],
                         "status": 1 if p["enabled"] else 2, "type_id": "simple",
                         "extension_attributes": {"stock_item": {"qty": p["qty"], "is_in_stock": p["qty"] > 0}},
                         "custom_attributes": [{"attribute_code": "url_key", "value": p["slug"]},
                                               {"attribute_code": "description", "value": p["description"]}]})


# --- app ---------------------------------------------------------------------------------------------

def create_app(store: InstanceStore) -> Starlette:
    """The storefront's Starlette app over `store` (each request uses its `X-Webarena-Instance` DB)."""

    def page(handler: Callable[..., Response], methods: Iterable[str] = ("GET",)) -> Callable:
        async def endpoint(request: Request) -> Response:
            form = form_fields(await request.body()) if request.method == "POST" else {}
            with db(store, request) as conn:
                ctx = _Ctx(request, conn, form)
                response = handler(ctx, **request.path_params)
                token, set_cookie = ctx.token, ctx.set_cookie
            if set_cookie and token:
                response.set_cookie(COOKIE, token, httponly=True, samesite="lax", path="/")
            return response
        return endpoint

    def rest(handler: Callable[..., Response], auth: bool = True) -> Callable:
        async def endpoint(request: Request) -> Response:
            body = await request.body()
            with db(store, request) as conn:
                if not auth:
                    return handler(conn, body)
                if _rest_admin(conn, request) is None:
                    return json_error(401, 'The consumer isn\'t authorized to access %resources.')
                return handler(conn, request, **request.path_params)
        return endpoint

    def both(path: str, endpoint: Callable, methods: tuple[str, ...] = ("GET",)) -> list[Route]:
        """The path with and without its trailing slash (Magento answers both)."""
        other = path[:-1] if path.endswith("/") else path + "/"
        return [Route(path, endpoint, methods=list(methods)), Route(other, endpoint, methods=list(methods))]

    routes = [Route("/", page(_home))]
    for path, handler, methods in (
        ("/catalogsearch/result/", _search, ("GET",)),
        ("/catalogsearch/result/index/", _search, ("GET",)),
        ("/checkout/cart/", _cart_page, ("GET",)),
        ("/checkout/cart/add/", _cart_add, ("POST",)),
        ("/checkout/cart/updatePost/", _cart_update, ("POST",)),
        ("/checkout/cart/delete/", _cart_delete, ("POST",)),
        ("/checkout/", _checkout, ("GET",)),
        ("/checkout/placeOrder/", _place_order, ("POST",)),
        ("/checkout/onepage/success/", _success, ("GET",)),
        ("/sales/order/history/", _history, ("GET",)),
        ("/sales/order/view/order_id/{order_id:int}/", _order_view, ("GET",)),
        ("/customer/account/", _account, ("GET",)),
        ("/customer/account/index/", _account, ("GET",)),
        ("/customer/account/edit/", _account_edit, ("GET",)),
        ("/customer/account/editPost/", _account_edit_post, ("POST",)),
        ("/customer/address/", _address_book, ("GET",)),
        ("/customer/address/edit/id/{address_id:int}/", _address_edit, ("GET",)),
        ("/customer/address/formPost/id/{address_id:int}/", _address_save, ("POST",)),
        ("/wishlist/", _wishlist, ("GET",)),
        ("/wishlist/index/add/", _wishlist_add, ("POST",)),
        ("/wishlist/index/remove/", _wishlist_remove, ("POST",)),
        ("/wishlist/index/cart/", _wishlist_cart, ("POST",)),
        ("/review/customer/", _my_reviews, ("GET",)),
        ("/review/product/post/id/{product_id:int}/", _review_post, ("POST",)),
        ("/customer/account/login/", _login_page, ("GET",)),
        ("/customer/account/loginPost/", _login_post, ("POST",)),
        ("/customer/account/logout/", _logout, ("GET", "POST")),
    ):
        routes += both(path, page(handler), methods)
    for prefix in ("/rest/V1", "/rest/default/V1", "/rest/all/V1"):
        routes += [
            Route(f"{prefix}/integration/admin/token", rest(_rest_token, auth=False), methods=["POST"]),
            Route(f"{prefix}/orders", rest(_rest_orders), methods=["GET"]),
            Route(f"{prefix}/products/{{sku}}/reviews", rest(lambda conn, request, sku: _rest_reviews(conn, sku)),
                  methods=["GET"]),
            Route(f"{prefix}/products/{{sku}}", rest(lambda conn, request, sku: _rest_product(conn, sku)),
                  methods=["GET"]),
        ]
    routes.append(Route("/{slug}.html", page(_slug_page)))
    return Starlette(routes=routes)
