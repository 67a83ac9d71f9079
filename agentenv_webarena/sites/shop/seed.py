"""The shop's tables (`schema.sql`) and their deterministic seed: catalog, customers, orders, reviews.

Owns how the pristine shop data is made: a fixed `random.Random(SEED)` draws from the vocabulary
in `data`, timestamps are fixed (no clock), so every build yields the same rows and ids.
"""
from __future__ import annotations

import datetime as dt
import math
import random
import sqlite3
from pathlib import Path

from agentenv_webarena.sites.shop import data as shop_data
from agentenv_webarena.sites.shop.catalog import search_index, search_products
from agentenv_webarena.sites.shop.entities import seed_entities
from agentenv_webarena.sites.shop.model import SHIPPING_PER_ITEM, format_ts, hash_password, product_options, slugify

__all__ = ["SCHEMA", "SEED", "seed"]

SCHEMA = (Path(__file__).parent / "schema.sql").read_text(encoding="utf-8")
SEED = 7770  # WebArena's shopping port


_PRODUCT_NOTES = ['Ships in 1-2 business days.', 'Backed by a 1-year warranty.', 'A customer favorite.',
                  'Great as a gift.']


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
            pairs = rng.sample([(b, a) for b in brands for a in adjectives], shop_data.PRODUCTS_PER_NOUN)
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
                               f"{material}. {rng.choice(_PRODUCT_NOTES)}")
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
                     "VALUES (?, ?, ?, ?, ?, ?)", (cid, email, hash_password(password), first, last, format_ts(since)))
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
        created = format_ts(when)
        updated = format_ts(when + dt.timedelta(days=rng.randint(0, 6), hours=rng.randint(1, 20))) \
            if status in ("complete", "canceled", "closed") else created
        conn.execute(
            "INSERT INTO shop_orders (id, increment_id, customer_id, status, created_at, updated_at, subtotal, "
            "shipping, grand_total, ship_firstname, ship_lastname, ship_street, ship_city, ship_region, ship_postcode, "
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
                         rng.choice(shop_data.REVIEW_DETAILS[stars]).format(noun=noun), stars * 20, status,
                         format_ts(when)))
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


def _seed_subcategories(conn: sqlite3.Connection, products: list[dict]) -> None:
    """Magento's category tree below the top categories, and each product's leaf (no RNG: the data fixes it)."""
    ids: dict[str, int] = {}
    position = 0
    for category_id, (_, slug, _, _, _) in enumerate(shop_data.CATEGORIES, start=1):
        nodes, leaves = shop_data.CATEGORY_TREE[slug]
        for path, name in nodes:
            position += 1
            parent = ids.get(f"{slug}/{path.rpartition('/')[0]}") if "/" in path else None
            ids[f"{slug}/{path}"] = conn.execute(
                "INSERT INTO shop_subcategories (category_id, parent_id, name, url_path, position) "
                "VALUES (?, ?, ?, ?, ?)",
                (category_id, parent, name, f"{slug}/{path}", position)).lastrowid
        seen: dict[str, int] = {}
        for product in (p for p in products if p["category_id"] == category_id):
            paths = leaves[product["noun"]]
            nth = seen[product["noun"]] = seen.get(product["noun"], -1) + 1
            conn.execute("INSERT INTO shop_subcategory_products (subcategory_id, product_id) VALUES (?, ?)",
                         (ids[f"{slug}/{paths[nth % len(paths)]}"], product["id"]))

def _seed_admin(conn: sqlite3.Connection) -> None:
    """The back office's own rows: stock status (out of stock at qty 0, as Magento sets it), notes on held
    orders (dated when the order was placed), content pages and cart price rules. No RNG draws."""
    conn.execute("UPDATE shop_products SET stock_status = 0 WHERE qty = 0")
    conn.execute("INSERT INTO shop_order_comments (order_id, comment, status, created_at) SELECT id, "
                 "'Customer asked us to hold the order until further notice.', status, created_at FROM shop_orders "
                 "WHERE status = 'holded' ORDER BY id")
    for page_id, (title, identifier, heading, content, active) in enumerate(shop_data.CMS_PAGES, start=1):
        conn.execute("INSERT INTO shop_cms_pages (id, title, identifier, content_heading, content, is_active, "
                     "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, '2022-01-03 09:00:00', '2022-01-03 09:00:00')",
                     (page_id, title, identifier, heading, content, active))
    for name, description, active, coupon, action, amount, groups in shop_data.SALES_RULES:
        conn.execute("INSERT INTO shop_sales_rules (name, description, is_active, website_ids, customer_group_ids, "
                     "coupon_code, simple_action, discount_amount) VALUES (?, ?, ?, '1', ?, ?, ?, ?)",
                     (name, description, active, groups, coupon, action, amount))


def _seed_marketing(conn: sqlite3.Connection) -> None:
    """Search terms (how often each query was typed, what it found) and newsletter subscribers, drawn from their
    own RNG so the rest of the seed does not move. Emma (customer 1) is not subscribed."""
    rng = random.Random(SEED + 1)
    index = search_index(conn)
    uses = rng.sample(range(2, 400), len(shop_data.SEARCH_QUERIES))
    for query, popularity in zip(shop_data.SEARCH_QUERIES, uses, strict=True):
        when = _rand_ts(rng, dt.datetime(2023, 1, 1), dt.datetime(2023, 12, 20))
        conn.execute("INSERT INTO shop_search_terms (query_text, num_results, popularity, updated_at) "
                     "VALUES (?, ?, ?, ?)", (query, len(search_products(conn, query, index)), popularity,
                                             format_ts(when)))
    for cid in range(2, len(shop_data.CUSTOMERS) + 1):
        draw = rng.random()
        if draw < 0.55:
            when = _rand_ts(rng, dt.datetime(2022, 1, 1), dt.datetime(2023, 12, 20))
            conn.execute("INSERT INTO shop_newsletter_subscribers (customer_id, subscribed, changed_at) "
                         "VALUES (?, ?, ?)", (cid, int(draw < 0.42), format_ts(when)))


def seed(conn: sqlite3.Connection) -> None:
    """Insert the shop's deterministic data (fixed RNG, fixed timestamps; no clock)."""
    rng = random.Random(SEED)
    products = _seed_products(conn, rng)
    _seed_customers(conn, rng)
    _seed_orders(conn, rng, products)
    _seed_reviews(conn, rng, products)
    _seed_lists(conn, rng, products)
    _seed_subcategories(conn, products)
    _seed_admin(conn)
    _seed_marketing(conn)
    seed_entities(conn)
