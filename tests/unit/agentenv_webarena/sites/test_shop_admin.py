"""The shop admin's Magento-shaped pages (`sites.shop.admin*`) through Starlette's TestClient: the product form
(new and edit), order tabs and tracking numbers, the orders grid's active filters, reports' date filters,
cart price rules, CMS pages and themes. Each test uses its own instance of the pristine seed."""
from __future__ import annotations

import re

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites.apps import _control_routes
from agentenv_webarena.sites.shop import admin, admin_reports, product_options
from agentenv_webarena.sites.store import INSTANCE_HEADER
from agentenv_webarena.tasks import auth


@pytest.fixture(scope="module")
def app(store):
    return Starlette(routes=[*_control_routes(store), Mount("/admin", app=admin.create_app(store))])


@pytest.fixture
def client(app, request):
    instance = "t-" + re.sub(r"[^A-Za-z0-9]", "", request.node.name)[:40]
    c = TestClient(app, headers={INSTANCE_HEADER: instance})
    c.post("/__control/reset", params={"instance": instance})
    account = auth.ACCOUNTS["shopping_admin"]
    c.post("/admin/login", data={"login[username]": account["username"], "login[password]": account["password"]})
    return c


def _value(html: str, name: str) -> str:
    return re.search(rf'name="{re.escape(name)}" value="([^"]*)"', html).group(1)


def _selected(html: str, name: str) -> list[str]:
    select = re.search(rf'<select[^>]*name="{re.escape(name)}"[^>]*>(.*?)</select>', html, re.S).group(1)
    return re.findall(r'<option value="([^"]*)" selected', select)


def _form(p, **changes) -> dict:
    data = {"product[name]": p["name"], "product[sku]": p["sku"], "product[price]": f'{p["price"]:.2f}',
            "product[quantity_and_stock_status][qty]": str(p["qty"]), "product[status]": "1",
            "product[quantity_and_stock_status][is_in_stock]": "1", "product[category_ids]": str(p["category_id"])}
    data.update(changes)
    return data


def test_product_edit_page_has_magentos_fields(client, store):
    db = store.pristine()
    simple = db.execute("SELECT * FROM shop_products WHERE sizes = '' AND colors = '' AND enabled = 1 AND qty > 0"
                        ).fetchone()
    html = client.get(f"/admin/catalog/product/edit/id/{simple['id']}/").text
    assert _value(html, "product[status]") == "1" and _value(html, "product[sale]") == "0"
    assert _value(html, "product[quantity_and_stock_status][qty]") == str(simple["qty"])
    assert _selected(html, "product[quantity_and_stock_status][is_in_stock]") == ["1"]
    category = db.execute("SELECT name FROM shop_categories WHERE id = ?", (simple["category_id"],)).fetchone()[0]
    selected = re.search(r'data-index="category_ids".*?data-role="selected-option">([^<]*)<', html, re.S).group(1)
    assert selected == category.replace("&", "&amp;")
    assert 'data-index="configurable"' in html and 'name="product[size]"' in html
    both = next(p for p in db.execute("SELECT * FROM shop_products ORDER BY id")
                if len(product_options(p)[0]) > 1 and len(product_options(p)[1]) > 1)
    html = client.get(f"/admin/catalog/product/edit/id/{both['id']}/").text
    sizes, colors = product_options(both)
    assert f"<td>{both['name']}-{sizes[0]}-{colors[0]}</td>" in html and 'name="product[size]"' not in html


def test_product_save_stock_status_sale_and_configurations(client, store):
    p = next(p for p in store.pristine().execute("SELECT * FROM shop_products WHERE qty > 0 ORDER BY id")
             if len(product_options(p)[0]) > 1)
    sizes, colors = product_options(p)
    r = client.post(f"/admin/catalog/product/save/id/{p['id']}/", data=_form(
        p, **{"product[quantity_and_stock_status][is_in_stock]": "0", "product[sale]": "1",
              "product[configurable][sizes]": ",".join(sizes), "product[configurable][colors]": "brown"}))
    assert "You saved the product." in r.text
    assert _selected(r.text, "product[quantity_and_stock_status][is_in_stock]") == ["0"]
    assert _value(r.text, "product[quantity_and_stock_status][qty]") == str(p["qty"])  # quantity kept
    assert _value(r.text, "product[sale]") == "1"
    assert f"<td>{p['name']}-{sizes[0]}-Brown</td>" in r.text
    r = client.post(f"/admin/catalog/product/save/id/{p['id']}/", data=_form(p, **{"product[price]": "cheap"}))
    assert "valid number" in r.text and _value(r.text, "product[price]") == f"{p['price']:.2f}"


def test_new_product_is_validated_then_created(client, store):
    html = client.get("/admin/catalog/product/new/set/4/type/simple/").text
    assert _value(html, "product[name]") == "" and 'data-role="selected-option">Select...<' in html
    r = client.post("/admin/catalog/product/save/", data={"product[name]": "", "product[price]": "10",
                                                          "product[quantity_and_stock_status][qty]": "5"})
    assert r.status_code == 422 and "Product Name field is required" in r.text and "select a category" in r.text
    r = client.post("/admin/catalog/product/save/", data={
        "product[name]": "Energy-Bulk Women Shirt", "product[sku]": "", "product[price]": "60",
        "product[quantity_and_stock_status][qty]": "50", "product[quantity_and_stock_status][is_in_stock]": "1",
        "product[category_ids]": "3", "product[size]": "167", "product[color]": "50", "product[status]": "1"})
    assert re.search(r"/admin/catalog/product/edit/id/\d+/$", str(r.url))
    assert _value(r.text, "product[price]") == "60.00" and _selected(r.text, "product[size]") == ["167"]
    assert _selected(r.text, "product[color]") == ["50"] and _value(r.text, "product[sku]") == "Energy-Bulk Women Shirt"
    assert client.get("/admin/catalog/product/", params={"q": "Energy-Bulk"}).text.count("1 records found") == 1
    assert client.get("/admin/catalog/product/new/set/4/type/bundle/").status_code == 404


def test_orders_grid_active_filters(client):
    assert '<div class="admin__data-grid-filters-current" hidden></div>' in client.get("/admin/sales/order/").text
    html = client.get("/admin/sales/order/", params={"status": "fraud"}).text
    bar = re.search(r'<div class="admin__data-grid-filters-current _show">(.*?)</div>', html).group(1)
    assert "Suspected Fraud" in bar and "0 records found" in html
    html = client.get("/admin/sales/order/", params={"status": "processing", "q": "Emma"}).text
    bar = re.search(r'<div class="admin__data-grid-filters-current _show">(.*?)</div>', html).group(1)
    assert "Processing" in bar and "Emma" in bar


def test_order_history_tabs_and_tracking_numbers(client, store):
    db = store.pristine()
    held = db.execute("SELECT id FROM shop_orders WHERE status = 'holded' ORDER BY id").fetchone()["id"]
    html = client.get(f"/admin/sales/order/view/order_id/{held}/").text
    assert '<span id="order_status"><span id="order-status">On Hold</span>' in html
    client.post(f"/admin/sales/order/addComment/order_id/{held}/", data={"history[comment]": "Newest note"})
    html = client.get(f"/admin/sales/order/view/order_id/{held}/").text
    notes = re.search(r'id="order_history_block".*?<ul id="order-history" class="note-list">(.*?)</ul>', html, re.S)
    assert re.search(r'<li class="note-list-item">.*?class="note-comment note-list-comment">([^<]*)<',
                     notes.group(1)).group(1) == "Newest note"
    shipped = db.execute("SELECT id FROM shop_orders WHERE status = 'complete' ORDER BY id").fetchone()["id"]
    tab = f"/admin/sales/order/commentsHistory/order_id/{shipped}/active_tab/order_shipments/"
    assert "Add Tracking Number" in client.get(tab).text
    r = client.post(f"/admin/sales/order/addTrack/order_id/{shipped}/",
                    data={"tracking[carrier_code]": "fedex", "tracking[number]": "8974568499"})
    assert str(r.url).endswith(tab) and "Tracking number 8974568499 for Federal Express assigned" in r.text
    r = client.post(f"/admin/sales/order/addTrack/order_id/{shipped}/",
                    data={"tracking[carrier_code]": "fedex", "tracking[number]": "no!"})
    assert "valid tracking number" in r.text
    r = client.post(f"/admin/sales/order/addTrack/order_id/{held}/",
                    data={"tracking[carrier_code]": "dhl", "tracking[number]": "12345678"})
    assert "once the order has shipped" in r.text and "Tracking number 12345678" not in r.text


def test_report_date_filters(client, store):
    assert admin_reports.parse_report_date("2/1/23") == "2023-02-01" == admin_reports.parse_report_date("2023-2-1")
    assert admin_reports.parse_report_date("2/30/2023") == ""
    html = client.get("/admin/reports/report_sales/sales/", params={"from": "2/1/23", "to": "2/28/23",
                                                                     "period": "month"}).text
    assert 'id="sales_report_from" type="text" name="from" placeholder="YYYY-MM-DD" value="2/1/23"' in html
    row = admin_reports.sales_report(store.pristine(), "month", "2023-02-01", "2023-02-28")[0]
    assert f"<td>{row['interval']}</td><td>{row['orders']}</td>" in html and "<td>2023-03</td>" not in html
    assert "valid date in the From field" in client.get("/admin/reports/report_sales/sales/",
                                                         params={"from": "13/45/23"}).text
    closed = store.pristine().execute("SELECT COUNT(*) FROM shop_orders WHERE status = 'closed'").fetchone()[0]
    refunds = admin_reports.refunds_report(store.pristine(), "year")
    assert sum(r["orders"] for r in refunds) == closed
    html = client.get("/admin/reports/report_sales/refunded/", params={"period": "year"}).text
    assert all(f"<td>{r['interval']}</td><td>{r['orders']}</td>" in html for r in refunds)
    for path in ("shipping", "tax", "coupons"):
        assert 'id="sales_report_to"' in client.get(f"/admin/reports/report_sales/{path}/").text
    assert "Product Views Report" in client.get("/admin/reports/report_product/viewed/").text
    assert '<a href="/admin/reports/report_sales/refunded/">Refunds</a>' in html  # every report links the others


def test_cart_price_rule_is_validated_and_saved(client):
    html = client.get("/admin/sales_rule/promo_quote/new/").text
    for name in ('name="name"', 'name="website_ids" multiple size="2"', 'name="customer_group_ids" multiple',
                 'name="simple_action"', 'name="discount_amount"'):
        assert name in html
    r = client.post("/admin/sales_rule/promo_quote/save/", data={"name": "", "simple_action": "by_percent",
                                                                 "discount_amount": "120"})
    assert r.status_code == 422
    for message in ("Rule Name field is required", "select a website", "at least one customer group",
                    "at most 100"):
        assert message in r.text
    r = client.post("/admin/sales_rule/promo_quote/save/", data={
        "is_active": "1", "name": "spring sale", "website_ids": "1", "customer_group_ids": ["0", "1"],
        "simple_action": "by_percent", "discount_amount": "20", "priority": "0"})
    assert "You saved the rule." in r.text and "spring sale" in r.text
    rule_id = re.findall(r'/admin/sales_rule/promo_quote/edit/id/(\d+)/" aria-label="Edit spring sale"', r.text)[0]
    html = client.get(f"/admin/sales_rule/promo_quote/edit/id/{rule_id}/").text
    assert _selected(html, "customer_group_ids") == ["0", "1"] and _selected(html, "simple_action") == ["by_percent"]


def test_cms_page_title_and_themes(client):
    r = client.post("/admin/cms/page/save/page_id/1/", data={"title": "Bruh bro you clicked the wrong page",
                                                             "identifier": "no-route", "content": "x",
                                                             "content_heading": "", "is_active": "1"})
    assert _value(r.text, "title") == "Bruh bro you clicked the wrong page" and "You saved the page." in r.text
    r = client.post("/admin/cms/page/save/page_id/1/", data={"title": "Other", "identifier": "home"})
    assert r.status_code == 422 and "already exists" in r.text
    assert "Bruh bro" in client.get("/admin/cms/page/").text
    assert "Magento Luma" in client.get("/admin/admin/system_design_theme/edit/id/3/key/").text
    assert "Magento Blank" in client.get("/admin/admin/system_design_theme/edit/id/1").text
    assert client.get("/admin/admin/system_design_theme/edit/id/9/").status_code == 404
