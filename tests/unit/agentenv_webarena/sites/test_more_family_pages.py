"""The pages the later task families need, through Starlette's TestClient: the shop admin's search terms, newsletter
subscribers, order addresses and special prices (with the storefront's price), the code host's project templates
and the map's US states. Each test uses its own instance of the pristine seed."""
from __future__ import annotations

import re

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites import gitlab, shop
from agentenv_webarena.sites import map as map_site
from agentenv_webarena.sites.apps import _control_routes
from agentenv_webarena.sites.gitlab.project_templates import PROJECT_TEMPLATES
from agentenv_webarena.sites.map.states import STATES, borders, state_by_name, state_for_query, state_id
from agentenv_webarena.sites.shop import admin
from agentenv_webarena.sites.shop.admin_order_address import address_id
from agentenv_webarena.sites.store import INSTANCE_HEADER
from agentenv_webarena.tasks import auth


@pytest.fixture(scope="module")
def shop_app(store):
    return Starlette(routes=[*_control_routes(store), Mount("/admin", app=admin.create_app(store)),
                             Mount("/", app=shop.create_app(store))])


def _instance(request) -> str:
    return "m-" + re.sub(r"[^A-Za-z0-9]", "", request.node.name)[:40]


@pytest.fixture
def client(shop_app, request):
    c = TestClient(shop_app, headers={INSTANCE_HEADER: _instance(request)})
    c.post("/__control/reset", params={"instance": _instance(request)})
    account = auth.ACCOUNTS["shopping_admin"]
    c.post("/admin/login", data={"login[username]": account["username"], "login[password]": account["password"]})
    return c


def _value(html: str, ident: str) -> str:
    return re.search(rf'id="{re.escape(ident)}" type="text" name="[^"]*" value="([^"]*)"', html).group(1)


# --- search terms ---------------------------------------------------------------------------------------

def _grid_terms(html: str) -> list[tuple[str, int, int]]:
    return [(q, int(r), int(u)) for q, r, u in re.findall(
        r'<td class="col-query">([^<]*)</td>.*?<td class="col-results">(\d+)</td><td class="col-uses">(\d+)</td>',
        html)]


def test_search_terms_grid_sorts_by_uses_and_filters(client, store):
    seeded = store.pristine().execute("SELECT query_text, num_results, popularity FROM shop_search_terms "
                                      "ORDER BY popularity DESC").fetchall()
    html = client.get("/admin/search/term/index/").text
    assert f"{len(seeded)} records found" in html
    assert _grid_terms(html) == [tuple(r) for r in seeded[:20]]  # 20 a page, most used first
    ascending = _grid_terms(client.get("/admin/search/term/index/?sort=num_results&dir=asc").text)
    assert [r for _, r, _ in ascending] == sorted(r for _, r, _ in ascending)
    assert [q for q, _, _ in _grid_terms(client.get("/admin/search/term/index/?q=mug").text)] == ["coffee mug"]


def test_search_term_redirect_is_saved_and_a_bad_one_refused(client, store):
    term = store.pristine().execute("SELECT * FROM shop_search_terms ORDER BY id LIMIT 1").fetchone()
    form = {"query_text": term["query_text"], "num_results": str(term["num_results"]),
            "popularity": str(term["popularity"]), "display_in_terms": "1"}
    bad = client.post(f"/admin/search/term/save/id/{term['id']}/", data={**form, "redirect": "electronics"})
    assert bad.status_code == 422 and "Redirect URL must start" in bad.text
    client.post(f"/admin/search/term/save/id/{term['id']}/", data={**form, "redirect": "/electronics.html"})
    assert _value(client.get(f"/admin/search/term/edit/id/{term['id']}/").text, "redirect") == "/electronics.html"


def test_deleting_a_search_term_removes_its_row(client, store):
    term = store.pristine().execute("SELECT * FROM shop_search_terms ORDER BY popularity DESC LIMIT 1").fetchone()
    client.post(f"/admin/search/term/delete/id/{term['id']}/")
    assert term["query_text"] not in [q for q, _, _ in _grid_terms(client.get("/admin/search/term/index/").text)]
    assert client.get(f"/admin/search/term/edit/id/{term['id']}/").status_code == 404


# --- newsletter -----------------------------------------------------------------------------------------

def test_emma_is_not_subscribed_and_others_are_seeded(store):
    db = store.pristine()
    assert db.execute("SELECT COUNT(*) FROM shop_newsletter_subscribers WHERE customer_id = 1").fetchone()[0] == 0
    states = {r[0] for r in db.execute("SELECT subscribed FROM shop_newsletter_subscribers")}
    assert states == {0, 1}


def test_unsubscribing_a_customer_in_the_admin(client, store):
    cid = store.pristine().execute("SELECT customer_id FROM shop_newsletter_subscribers WHERE subscribed = 1 "
                                   "ORDER BY customer_id LIMIT 1").fetchone()[0]
    page = client.get(f"/admin/customer/index/edit/id/{cid}/").text
    assert 'title="Newsletter Subscription" checked' in page
    client.post(f"/admin/customer/index/newsletter/id/{cid}/", data={})
    page = client.get(f"/admin/customer/index/edit/id/{cid}/").text
    assert 'title="Newsletter Subscription">' in page and re.search(r'id="newsletter-status">Unsubscribed', page)
    grid = client.get("/admin/newsletter/subscriber/?status=1").text
    assert f"<td>{cid}</td>" not in grid


def test_storefront_subscription_shows_in_the_admin_grid(client):
    client.post("/customer/account/loginPost/", data={"login[username]": "emma.lopez@gmail.com",
                                                      "login[password]": "Password.123"})
    client.post("/newsletter/manage/save/", data={"is_subscribed": "1"})
    row = re.search(r'data-email="emma.lopez@gmail.com">.*?<td class="col-status">(\w+)</td>',
                    client.get("/admin/newsletter/subscriber/").text)
    assert row and row.group(1) == "Subscribed"


# --- order addresses --------------------------------------------------------------------------------------

def _box(html: str, kind: str) -> str:
    return re.search(rf'order-{kind}-address">.*?<address[^>]*>(.*?)</address>', html, re.S).group(1)


def test_billing_edit_leaves_shipping_and_shipping_edit_leaves_billing(client, store):
    o = store.pristine().execute("SELECT * FROM shop_orders ORDER BY id LIMIT 1").fetchone()
    view = f"/admin/sales/order/view/order_id/{o['id']}/"
    assert _box(client.get(view).text, "billing") == _box(client.get(view).text, "shipping")
    form = {"firstname": "Ada", "lastname": "Park", "street[0]": "19 Orchard Lane", "street[1]": "Unit 7",
            "city": "Burlington", "region": "VT", "postcode": "05401", "country_id": "United States",
            "telephone": "8025550100"}
    client.post(f"/admin/sales/order/addressSave/address_id/{address_id(o['id'], 'billing')}/", data=form)
    html = client.get(view).text
    assert "19 Orchard Lane, Unit 7" in _box(html, "billing") and o["ship_street"] in _box(html, "shipping")
    client.post(f"/admin/sales/order/addressSave/address_id/{address_id(o['id'], 'shipping')}/",
                data={**form, "street[0]": "61 Beacon Hill Way", "street[1]": "", "postcode": "04101"})
    html = client.get(view).text
    assert "61 Beacon Hill Way" in _box(html, "shipping") and "19 Orchard Lane" in _box(html, "billing")


def test_address_form_refuses_a_missing_field(client, store):
    o = store.pristine().execute("SELECT * FROM shop_orders ORDER BY id LIMIT 1").fetchone()
    edit = client.get(f"/admin/sales/order_address/edit/address_id/{address_id(o['id'], 'shipping')}/").text
    assert _value(edit, "street0") == o["ship_street"]
    answer = client.post(f"/admin/sales/order/addressSave/address_id/{address_id(o['id'], 'shipping')}/",
                         data={"firstname": "A", "lastname": "B", "street[0]": "1 Main St", "city": "",
                               "region": "PA", "postcode": "15213", "country_id": "US", "telephone": "1"})
    assert answer.status_code == 422 and "City" in answer.text


# --- special prices ---------------------------------------------------------------------------------------

def _product(store):
    return store.pristine().execute("SELECT * FROM shop_products WHERE enabled = 1 AND qty > 0 AND sizes = '' "
                                    "AND colors = '' ORDER BY id LIMIT 1").fetchone()


def _product_form(p, **extra) -> dict:
    return {"product[name]": p["name"], "product[sku]": p["sku"], "product[price]": f"{p['price']:.2f}",
            "product[quantity_and_stock_status][qty]": str(p["qty"]), "product[status]": "1",
            "product[quantity_and_stock_status][is_in_stock]": "1", "product[category_ids]": str(p["category_id"]),
            **extra}


def _store_price(client, p) -> str:
    return re.search(r'id="product-price">([^<]*)<', client.get(f"/{p['slug']}.html").text).group(1)


def test_special_price_shows_in_the_store_only_while_it_applies(client, store):
    p = _product(store)
    special = f"{p['price'] - 1:.2f}"
    client.post(f"/admin/catalog/product/save/id/{p['id']}/", data=_product_form(p, **{
        "product[special_price]": special, "product[special_to_date]": "12/31/2023"}))
    edit = client.get(f"/admin/catalog/product/edit/id/{p['id']}/").text
    assert (_value(edit, "product-special-price"), _value(edit, "product-special-to")) == (special, "12/31/2023")
    assert _value(edit, "product-price") == f"{p['price']:.2f}"
    assert _store_price(client, p) == f"${special}"  # the shop clock is in December 2023
    client.post(f"/admin/catalog/product/save/id/{p['id']}/", data=_product_form(p, **{
        "product[special_price]": special, "product[special_from_date]": "01/01/2024",
        "product[special_to_date]": ""}))
    assert _store_price(client, p) == shop.money(p["price"])


def test_special_price_refuses_bad_values(client, store):
    p = _product(store)
    page = client.post(f"/admin/catalog/product/save/id/{p['id']}/", data=_product_form(p, **{
        "product[special_price]": "cheap", "product[special_from_date]": "03/05/2024",
        "product[special_to_date]": "03/01/2024"})).text  # the edit page again, with the flash
    assert "Special Price field" in page and "must not be after" in page
    assert _value(page, "product-special-price") == ""


# --- code host: project templates ------------------------------------------------------------------------

def test_project_from_template_commits_its_files_once(store, request):
    app = Starlette(routes=[*_control_routes(store), Mount("/", app=gitlab.create_app(store))])
    c = TestClient(app, headers={INSTANCE_HEADER: _instance(request)})
    c.post("/__control/reset", params={"instance": _instance(request)})
    account = auth.ACCOUNTS["gitlab"]
    c.post("/users/sign_in", data={"user[login]": account["username"], "user[password]": account["password"]})
    assert "Use template NodeJS Express" in c.get("/projects/new").text
    assert 'name="project[template_name]" value="express"' in c.get("/projects/new?template_name=express").text
    c.post("/projects/new", data={"project[name]": "site_demo", "project[visibility]": "internal",
                                  "project[template_name]": "express"})
    commits = c.get("/byteblaze/site_demo/-/commits").text
    assert commits.count("Initialized from &#x27;NodeJS Express&#x27; project template") == 1
    assert "package.json" in c.get("/byteblaze/site_demo").text
    bad = c.post("/projects/new", data={"project[name]": "x2", "project[template_name]": "django"})
    assert bad.status_code == 422 and "django" in bad.text
    assert set(PROJECT_TEMPLATES) >= {"rails", "spring", "express"}


# --- map: US states ----------------------------------------------------------------------------------------

def test_state_borders_are_symmetric_and_match_known_facts():
    for s in STATES:
        for n in s.neighbours:
            assert n not in {t.name for t in STATES} or s.name in state_by_name(n).neighbours
    assert state_by_name("Pennsylvania").neighbours == ("Delaware", "Maryland", "New Jersey", "New York", "Ohio",
                                                        "West Virginia")
    assert borders("Connecticut", "Rhode Island") and not borders("Maine", "Vermont")
    assert state_for_query("state of ohio").name == "Ohio" and state_for_query("US-NY").name == "New York"
    assert state_for_query("Pittsburgh") is None


def test_state_page_and_search(store, request):
    app = Starlette(routes=[*_control_routes(store), Mount("/", app=map_site.create_app(store))])
    c = TestClient(app, headers={INSTANCE_HEADER: _instance(request)})
    c.post("/__control/reset", params={"instance": _instance(request)})
    wv = state_by_name("West Virginia")
    results = c.get("/search", params={"query": "West Virginia"}).text
    assert results.index(f'/relation/{state_id(wv)}') < results.index("Morgantown") if "Morgantown" in results \
        else f'/relation/{state_id(wv)}' in results
    page = c.get(f"/relation/{state_id(wv)}").text
    assert re.findall(r'<li data-state="([^"]+)">', page) == list(wv.neighbours)
    assert "Morgantown" in page and "US-WV" in page
    assert c.get("/relation/162001").status_code == 404
