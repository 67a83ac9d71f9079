"""WebArena's catalog entities on the shop (`sites.shop.entities`).

They are seeded deterministically after the base rows, leave every base row and every search of the base
catalog as it was, answer at WebArena's and Luma's URLs, make the new departments' listings and the admin grids
paginate, and the task templates never draw from them.
"""
from __future__ import annotations

import importlib
import re
import sqlite3

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites import shop
from agentenv_webarena.sites.apps import _control_routes
from agentenv_webarena.sites.shop import admin, entities
from agentenv_webarena.sites.shop import data as shop_data
from agentenv_webarena.sites.shop.catalog import search_index, search_products
from agentenv_webarena.sites.shop.model import next_product_id
from agentenv_webarena.sites.store import INSTANCE_HEADER
from agentenv_webarena.tasks import auth
from agentenv_webarena.tasks.templates import common

shop_seed = importlib.import_module("agentenv_webarena.sites.shop.seed")  # the module (`shop.seed` is its function)
_TABLES = ("shop_categories", "shop_subcategories", "shop_subcategory_products", "shop_products", "shop_customers",
           "shop_addresses", "shop_reviews", "shop_orders", "shop_order_items", "shop_search_terms",
           "shop_newsletter_subscribers", "shop_wishlist", "shop_cart_items")


def _shop_db(*, with_entities: bool = True, monkeypatch: pytest.MonkeyPatch | None = None) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.executescript(shop.SCHEMA)
    if not with_entities:
        monkeypatch.setattr(shop_seed, "seed_entities", lambda _conn: None)
    shop.seed(conn)
    return conn


def _rows(conn: sqlite3.Connection, table: str) -> list[tuple]:
    return [tuple(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY rowid")]


@pytest.fixture(scope="module")
def db() -> sqlite3.Connection:
    return _shop_db()


@pytest.fixture(scope="module")
def base_db() -> sqlite3.Connection:
    with pytest.MonkeyPatch.context() as mp:
        return _shop_db(with_entities=False, monkeypatch=mp)


def test_entities_are_deterministic(db):
    other = _shop_db()
    for table in _TABLES:
        assert _rows(db, table) == _rows(other, table), table


def test_base_rows_do_not_move(db, base_db):
    """Every base row is where it was; the entities only add rows after them (and no orders at all)."""
    for table in _TABLES:
        base = _rows(base_db, table)
        assert _rows(db, table)[:len(base)] == base, table
    for table in ("shop_orders", "shop_order_items", "shop_search_terms", "shop_newsletter_subscribers"):
        assert len(_rows(db, table)) == len(_rows(base_db, table)), table
    assert shop.site_now(db) == shop.site_now(base_db)
    assert next_product_id(db) == next_product_id(base_db) == shop_data.BASE_PRODUCTS + 1


def test_scale_and_webarena_names(db):
    count = lambda sql, *a: db.execute(sql, a).fetchone()[0]  # noqa: E731
    assert count("SELECT COUNT(*) FROM shop_products") >= 2 * shop_data.BASE_PRODUCTS
    assert count("SELECT COUNT(*) FROM shop_customers") == len(shop_data.CUSTOMERS) + entities.ENTITY_CUSTOMERS
    assert count("SELECT COUNT(*) FROM shop_reviews r WHERE r.product_id > ?", shop_data.BASE_PRODUCTS) >= 500
    named = {r["id"]: r["name"] for r in db.execute("SELECT id, name FROM shop_products WHERE id IN (350, 1108, 1840)")}
    assert named == {350: "Taurus Elements Shell", 1108: "Selene Yoga Hoodie", 1840: "Cora Parachute Pant"}
    for _, name, *_ in entities.NAMED_PRODUCTS:
        assert count("SELECT COUNT(*) FROM shop_products WHERE name = ?", name) == 1, name
    luma = db.execute("SELECT sizes, colors FROM shop_products WHERE name = 'Antonia Racer Tank'").fetchone()
    assert luma["sizes"] == "XS,S,M,L,XL" and len(luma["colors"].split(",")) == 3
    # varied review text: many distinct details, every star rating, dated before the site clock
    details = [r[0] for r in db.execute("SELECT detail FROM shop_reviews WHERE product_id > ?",
                                        (shop_data.BASE_PRODUCTS,))]
    assert len(set(details)) > 0.8 * len(details)
    assert {r[0] for r in db.execute("SELECT DISTINCT rating_percent FROM shop_reviews WHERE product_id > ?",
                                     (shop_data.BASE_PRODUCTS,))} == {20, 40, 60, 80, 100}


def test_new_names_stay_out_of_base_searches_and_names(db, base_db):
    """No searchable new product uses a word of the base catalog or a search term, so every search of a base
    product's name or of a seeded term finds what it found before; Luma's products are not searchable."""
    words = entities.search_words(db)
    for row in db.execute("SELECT p.name, p.description, c.name AS dept FROM shop_products p JOIN shop_categories c "
                          "ON c.id = p.category_id WHERE p.id > ? AND p.visibility IN (3, 4)",
                          (shop_data.BASE_PRODUCTS,)):
        used = set(re.findall(r"[a-z0-9]+", f"{row['name']} {row['description']} {row['dept']}".lower()))
        assert not used & words, (row["name"], used & words)
    index, base_index = search_index(db), search_index(base_db)
    queries = [r[0] for r in base_db.execute("SELECT name FROM shop_products")] + shop_data.SEARCH_QUERIES
    for q in queries:
        assert [r["id"] for _, r in search_products(db, q, index)] == \
               [r["id"] for _, r in search_products(base_db, q, base_index)], q
    assert not search_products(db, "Antonia Racer Tank", index)
    first, last = {c[0] for c in shop_data.CUSTOMERS}, {c[1] for c in shop_data.CUSTOMERS}
    assert not first & set(entities.CUSTOMER_FIRST_NAMES) and not last & set(entities.CUSTOMER_LAST_NAMES)
    nicknames = {r[0] for r in base_db.execute("SELECT DISTINCT nickname FROM shop_reviews")}
    assert not nicknames & {r[0] for r in db.execute("SELECT nickname FROM shop_reviews WHERE product_id > ?",
                                                     (shop_data.BASE_PRODUCTS,))}


def test_templates_draw_from_the_base_rows(db):
    assert all(p["id"] <= common.BASE_PRODUCTS for p in common.sellable_products(db))
    assert common.BASE_CATEGORIES == len(shop_data.CATEGORIES)
    assert db.execute("SELECT MIN(id) FROM shop_categories WHERE slug IN ('women', 'tools-home-improvement')"
                      ).fetchone()[0] > common.BASE_CATEGORIES
    assert db.execute("SELECT MIN(id) FROM shop_products WHERE id > ?", (common.BASE_PRODUCTS,)).fetchone()[0] > 230


# --- pages --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def storefront(store):
    app = Starlette(routes=[*_control_routes(store), Mount("/", app=shop.create_app(store))])
    client = TestClient(app, headers={INSTANCE_HEADER: "entities-shop"})
    client.post("/__control/reset", params={"instance": "entities-shop"})
    return client


@pytest.fixture
def back_office(store, request):
    app = Starlette(routes=[*_control_routes(store), Mount("/admin", app=admin.create_app(store))])
    instance = "entities-admin-" + re.sub(r"[^A-Za-z0-9]", "", request.node.name)[:30]
    client = TestClient(app, headers={INSTANCE_HEADER: instance})
    client.post("/__control/reset", params={"instance": instance})
    account = auth.ACCOUNTS["shopping_admin"]
    client.post("/admin/login", data={"login[username]": account["username"], "login[password]": account["password"]})
    return client


def test_new_departments_are_in_the_bar_and_paginate(storefront, db):
    home = storefront.get("/").text
    nav = re.search(r'<nav class="nav-sections".*?</nav>', home, re.S).group(0)
    assert "Tools &amp; Home Improvement" in nav and "Cell Phones &amp; Accessories" in nav
    assert ">Women<" not in nav and ">Gear<" not in nav  # Luma's store is not in One Stop Market's menu
    n = db.execute("SELECT COUNT(*) FROM shop_products p JOIN shop_categories c ON c.id = p.category_id "
                   "WHERE c.slug = 'tools-home-improvement'").fetchone()[0]
    page = storefront.get("/tools-home-improvement.html").text
    assert f"Items 1-12 of {n}" in page and "Page 2" in page and "Power &amp; Hand Tools" in page
    last = -(-n // 12)
    assert f"Items {12 * (last - 1) + 1}-{n} of {n}" in storefront.get("/tools-home-improvement.html",
                                                                      params={"p": last}).text
    sub = storefront.get("/cell-phones-accessories/cases-holsters-sleeves.html")
    assert sub.status_code == 200 and "Phone Cover" in sub.text
    found = storefront.get("/catalogsearch/result/", params={"q": "deadbolt"}).text
    assert "Deadbolt" in found and "Tools &amp; Home Improvement" in found


@pytest.mark.parametrize("path, name", [
    ("/women.html", "Women"), ("/women/tops-women/jackets-women.html", "Jackets"),
    ("/women/tops-women/tanks-women.html", "Bras &amp; Tanks"), ("/men/bottoms-men/pants-men.html", "Pants"),
    ("/gear/bags.html", "Bags"), ("/training/training-video.html", "Video Download"),
    ("/antonia-racer-tank.html", "Antonia Racer Tank"), ("/selene-yoga-hoodie.html", "Selene Yoga Hoodie"),
    ("/affirm-water-bottle.html", "Affirm Water Bottle"),
])
def test_luma_urls_answer(storefront, path, name):
    r = storefront.get(path)
    assert r.status_code == 200 and f'<h1 class="page-title">{name}</h1>' in r.text


def test_admin_grids_and_next_product(back_office):
    grid = back_office.get("/admin/catalog/product/").text
    total = int(re.search(r"(\d+) records found", grid).group(1))
    assert total > 500 and f"Page 1 of {-(-total // 20)}" in grid
    edit = back_office.get("/admin/catalog/product/edit/id/1108/").text
    assert 'value="Selene Yoga Hoodie"' in edit
    customers = back_office.get("/admin/customer/index/").text
    assert int(re.search(r"(\d+) records found", customers).group(1)) == 20 + entities.ENTITY_CUSTOMERS
    r = back_office.post("/admin/catalog/product/save/", data={
        "product[name]": "Entity Check Apron", "product[sku]": "", "product[price]": "20",
        "product[quantity_and_stock_status][qty]": "5", "product[quantity_and_stock_status][is_in_stock]": "1",
        "product[category_ids]": "4", "product[status]": "1"})
    assert str(r.url).endswith(f"/admin/catalog/product/edit/id/{shop_data.BASE_PRODUCTS + 1}/")
