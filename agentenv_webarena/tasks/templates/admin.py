"""Task templates on the embedded shop admin (`sites.shop.admin`), template ids 2000-2099.

Each template reads the pristine seed (`db`) and returns its instances (`templates.base.task`).
Report answers come from the same functions the report pages use (`sites.shop.admin.bestsellers`,
`sales_report`); instances whose answer would be ambiguous (ties) are left out. State-changing
tasks pick targets whose pristine state fails the check, so doing nothing scores 0.
"""
from __future__ import annotations

import calendar
import random
import sqlite3

from agentenv_webarena.sites.shop import ORDERS_PAGE_SIZE, long_date, money
from agentenv_webarena.sites.shop.admin import bestsellers, sales_report
from agentenv_webarena.sites.shop.data import CUSTOMERS
from agentenv_webarena.tasks.templates.base import (
    DONE,
    clear_and_type,
    click,
    html_eval,
    month_label,
    pick,
    stop,
    string_eval,
    tab_focus,
    target,
    task,
    type_text,
    url_eval,
)
from agentenv_webarena.tasks.templates.common import (
    BASE_CUSTOMERS,
    BASE_PRODUCTS,
    EMMA,
    STATUS_LOCATOR,
    find_customer,
    find_order,
    find_product,
    order_url,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

A = "__SHOPPING_ADMIN__"
S = "__SHOPPING__"
N = 12  # instances per template
HISTORY_LOCATOR = "document.querySelector('#order-history').outerText"


def _products(db: sqlite3.Connection, *, enabled_only: bool = False) -> list[sqlite3.Row]:
    sql = "SELECT * FROM shop_products WHERE id <= ?" + (" AND enabled = 1" if enabled_only else "") + " ORDER BY id"
    return db.execute(sql, (BASE_PRODUCTS,)).fetchall()


def _orders(db: sqlite3.Connection, statuses: tuple[str, ...] = ()) -> list[sqlite3.Row]:
    sql = "SELECT o.*, c.firstname, c.lastname FROM shop_orders o JOIN shop_customers c ON c.id = o.customer_id"
    if statuses:
        sql += f" WHERE o.status IN ({','.join('?' * len(statuses))})"
    return db.execute(sql + " ORDER BY o.id", statuses).fetchall()


def _edit_url(p: sqlite3.Row) -> str:
    return f"{A}/catalog/product/edit/id/{p['id']}/"


# --- information seeking -----------------------------------------------------------------------------

def top_bestseller(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    def unique_ranks(rows: list[dict]) -> dict[tuple[str, int], dict]:
        out = {}
        by_interval: dict[str, list[dict]] = {}
        for row in rows:
            by_interval.setdefault(row["interval"], []).append(row)
        for interval, ranked in by_interval.items():
            for i, row in enumerate(ranked[:5]):
                neighbours = [r["qty"] for j, r in enumerate(ranked) if abs(j - i) == 1]
                if row["qty"] not in neighbours:
                    out[(interval, row["rank"])] = row
        return out

    yearly = unique_ranks(bestsellers(db, "year", limit=1000))
    monthly = {k: v for k, v in unique_ranks(bestsellers(db, "month", limit=1000)).items() if k[1] == 1}
    cases = pick(rng, sorted(yearly.items()), N // 2)
    cases += pick(rng, sorted(monthly.items()), N - len(cases))
    out = []
    for (interval, n), row in cases:
        steps = [click("link", "Bestsellers Report")]
        if len(interval) == 7:
            last = calendar.monthrange(int(interval[:4]), int(interval[5:]))[1]
            steps += [type_text("textbox", "From", f"{interval}-01", enter=False),
                      type_text("textbox", "To", f"{interval}-{last:02d}", enter=False),
                      click("radio", "Month"), click("button", "Show Report")]
        period = interval if len(interval) == 4 else month_label(interval)
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="What is the top-{{n}} best-selling product in {{period}}?",
                        values={"n": n, "period": period}, eval=string_eval(must_include=[row["name"]]),
                        sequence=[*steps, stop(row["name"])]))
    return out


def _month_report(interval: str) -> list[dict]:
    """Orders Report filtered to one month (`YYYY-MM`), shown by month."""
    last = calendar.monthrange(int(interval[:4]), int(interval[5:]))[1]
    return [click("link", "Orders Report"), type_text("textbox", "From", f"{interval}-01", enter=False),
            type_text("textbox", "To", f"{interval}-{last:02d}", enter=False), click("radio", "Month"),
            click("button", "Show Report")]


def orders_in_month(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for row in pick(rng, sales_report(db, "month"), N):
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="According to the orders report, how many orders were placed in {{month}}?",
                        values={"month": month_label(row["interval"])},
                        eval=string_eval(must_include=[str(row["orders"])]),
                        sequence=[*_month_report(row["interval"]), stop(str(row["orders"]))]))
    return out


def sales_total_in_month(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for row in pick(rng, sales_report(db, "month"), N):
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="What was the sales total in {{month}} according to the orders report?",
                        values={"month": month_label(row["interval"])}, eval=string_eval(exact=money(row["total"])),
                        sequence=[*_month_report(row["interval"]), stop(money(row["total"]))]))
    return out


def customer_of_order(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for o in pick(rng, _orders(db), N):
        name = f"{o['firstname']} {o['lastname']}"
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Which customer placed order #{{order_number}}?",
                        values={"order_number": o["increment_id"]}, eval=string_eval(must_include=[name]),
                        sequence=[*find_order(o), stop(name)]))
    return out


def customer_email(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    rows = db.execute("SELECT * FROM shop_customers WHERE id != ? AND id <= ? ORDER BY id",
                      (EMMA, BASE_CUSTOMERS)).fetchall()
    out = []
    for c in pick(rng, rows, N):
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="What is the email address of our customer {{customer}}?",
                        values={"customer": f"{c['firstname']} {c['lastname']}"},
                        eval=string_eval(must_include=[c["email"]]),
                        sequence=[*find_customer(f"{c['firstname']} {c['lastname']}"), stop(c["email"])]))
    return out


def customer_phone(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    template = "What is the phone number of our customer {{customer}}?"
    rows = db.execute("SELECT c.*, a.telephone FROM shop_customers c JOIN shop_addresses a ON a.customer_id = c.id "
                      "AND a.is_default = 1 WHERE c.id <= ? ORDER BY c.id", (BASE_CUSTOMERS,)).fetchall()
    out = []
    for c in pick(rng, rows, N - 4):
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=template,
                        values={"customer": f"{c['firstname']} {c['lastname']}"},
                        eval=string_eval(must_include=[c["telephone"]]),
                        sequence=[*find_customer(f"{c['firstname']} {c['lastname']}"), stop(c["telephone"])]))
    known = {(c[0], c[1]) for c in CUSTOMERS}
    firsts, lasts = [c[0] for c in CUSTOMERS], [c[1] for c in CUSTOMERS]
    fakes: list[str] = []
    while len(fakes) < 4:
        first, last = rng.choice(firsts), rng.choice(lasts)
        if (first, last) not in known and f"{first} {last}" not in fakes:
            fakes.append(f"{first} {last}")
    for name in fakes:
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=template, values={"customer": name},
                        eval=string_eval(fuzzy="N/A", note=f"There is no customer named {name}.", raw="N/A"),
                        sequence=[*find_customer(name), stop("N/A")]))
    rng.shuffle(out)
    return out


def customer_order_count(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    rows = db.execute("SELECT c.*, (SELECT COUNT(*) FROM shop_orders WHERE customer_id = c.id) AS n FROM "
                      "shop_customers c WHERE c.id <= ? ORDER BY c.id", (BASE_CUSTOMERS,)).fetchall()
    out = []
    for c in pick(rng, rows, N):
        name = f"{c['firstname']} {c['lastname']}"
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="How many orders has {{customer}} placed?",
                        values={"customer": name}, eval=string_eval(must_include=[str(c["n"])]),
                        sequence=[*find_customer(name), click("link", f"Edit {name}"), stop(str(c["n"]))]))
    return out


def stock_quantity(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for p in pick(rng, _products(db), N):
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="How many units of {{product}} are left in stock?",
                        values={"product": p["name"]}, eval=string_eval(must_include=[str(p["qty"])]),
                        sequence=[click("link", "Products"), type_text("textbox", "Search by keyword", p["name"]),
                                  stop(str(p["qty"]))]))
    return out


def open_product_edit_page(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for p in pick(rng, _products(db), N):
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Open the admin edit page of the product {{product}}.",
                        values={"product": p["name"]}, eval=url_eval(_edit_url(p)),
                        sequence=[*find_product(p), stop(DONE)]))
    return out


# --- state-changing ----------------------------------------------------------------------------------

def _order_status_task(db: sqlite3.Connection, rng: random.Random, *, template: str, button: str,
                       label: str) -> list[dict]:
    out = []
    for o in pick(rng, _orders(db, ("pending", "processing")), N):
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=template,
                        values={"order_number": o["increment_id"]},
                        eval=html_eval([target(order_url(o), STATUS_LOCATOR, exact=label)]),
                        sequence=[*find_order(o), click("button", button), stop(DONE)]))
    return out


def cancel_order(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    return _order_status_task(db, rng, template="Cancel order #{{order_number}}.", button="Cancel", label="Canceled")


def hold_order(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    return _order_status_task(db, rng, template="Put order #{{order_number}} on hold.", button="Hold", label="On Hold")


def change_price(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for p in pick(rng, _products(db), N):
        new = f"{max(1.0, round(p['price'] * rng.choice([0.8, 0.85, 0.9, 1.1, 1.15, 1.25]), 0) - 0.01):.2f}"
        if new == f"{p['price']:.2f}":
            new = f"{p['price'] + 1:.2f}"
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Change the price of {{product}} to ${{price}}.",
                        values={"product": p["name"], "price": new},
                        eval=html_eval([target(_edit_url(p),
                                               "document.querySelector('input[name=\"product[price]\"]').value",
                                               exact=new)]),
                        sequence=[*find_product(p), *clear_and_type("textbox", "Price", new), click("button", "Save"),
                                  stop(DONE)]))
    return out


def disable_product(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for p in pick(rng, _products(db, enabled_only=True), N):
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Disable the product {{product}} so that it no longer shows in the store.",
                        values={"product": p["name"]},
                        eval=html_eval([
                            target(_edit_url(p),
                                   "document.querySelector('input[name=\"product[status]\"]').checked"
                                   " ? 'enabled' : 'disabled'",
                                   exact="disabled"),
                            target(f"{S}/{p['slug']}.html", "document.querySelector('h1').outerText",
                                   exact="Whoops, our bad..."),
                        ]),
                        sequence=[*find_product(p), click("checkbox", "Enable Product"), click("button", "Save"),
                                  stop(DONE)]))
    return out


def update_stock(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for p in pick(rng, _products(db), N):
        qty = rng.choice([q for q in (0, 25, 50, 75, 100, 150, 200, 250, 500) if q != p["qty"]])
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Set the stock quantity of {{product}} to {{quantity}}.",
                        values={"product": p["name"], "quantity": qty},
                        eval=html_eval([target(_edit_url(p),
                                               "document.querySelector('input[name=\"product[quantity_and_stock_status][qty]\"]').value",
                                               exact=str(qty))]),
                        sequence=[*find_product(p), *clear_and_type("textbox", "Quantity", str(qty)),
                                  click("button", "Save"), stop(DONE)]))
    return out


_DESCRIPTIONS = [
    "Now available in a new eco-friendly package.",
    "Limited edition: only available this season.",
    "Best seller of the month with free gift wrapping.",
    "Made from 100% recycled materials.",
    "Includes a two-year manufacturer warranty.",
    "Back in stock with an improved design.",
    "Ships free on orders over $50.",
    "Award-winning design loved by our customers.",
]


def change_description(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for p in pick(rng, _products(db), N):
        text = rng.choice(_DESCRIPTIONS)
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Replace the description of {{product}} with \"{{text}}\".",
                        values={"product": p["name"], "text": text},
                        eval=html_eval([target(_edit_url(p), "document.querySelector('#product-content').outerText",
                                               must_include=[f"Current description: {text}"],
                                               prep_actions=[
                                                   "document.querySelector('#product-content').open = true",
                                               ])]),
                        sequence=[*find_product(p), click("DisclosureTriangle", "Content"),
                                  *clear_and_type("textbox", "Description", text), click("button", "Save"),
                                  stop(DONE)]))
    return out


def approve_review(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    rows = db.execute("SELECT r.*, p.name AS product FROM shop_reviews r JOIN shop_products p ON p.id = r.product_id "
                      "WHERE r.status = 'pending' ORDER BY r.id").fetchall()
    out = []
    for r in pick(rng, rows, N):
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Approve the pending review of {{product}} written by {{nickname}}.",
                        values={"product": r["product"], "nickname": r["nickname"]},
                        eval=html_eval([target(f"{A}/review/product/edit/id/{r['id']}/",
                                               "document.querySelector('#review-status').outerText",
                                               exact="Approved")]),
                        sequence=[click("link", "Pending Reviews"),
                                  type_text("textbox", "Search by keyword", r["product"]),
                                  click("link", f"Edit review {r['id']}"), click("radio", "Approved"),
                                  click("button", "Save Review"), stop(DONE)]))
    return out


def delete_latest_review(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for p in _products(db):
        reviews = db.execute("SELECT * FROM shop_reviews WHERE product_id = ? ORDER BY created_at DESC, id DESC",
                             (p["id"],)).fetchall()
        if len(reviews) >= 2:
            cases.append((p, reviews[0], reviews[1]))
    out = []
    for p, latest, previous in pick(rng, cases, N):
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Delete the most recent review of {{product}}.",
                        values={"product": p["name"]},
                        eval=html_eval([target("last", f"func:shopping_get_sku_latest_review_author('{p['sku']}')",
                                               exact=previous["nickname"])]),
                        sequence=[click("link", "All Reviews"), type_text("textbox", "Search by keyword", p["name"]),
                                  click("link", f"Edit review {latest['id']}"), click("button", "Delete Review"),
                                  stop(DONE)]))
    return out


_COMMENTS = [
    "Customer called to confirm the delivery address.",
    "Gift wrap requested by the customer.",
    "Please ship with the next available carrier.",
    "Customer asked for a paper invoice.",
    "Delivery delayed due to weather.",
    "Leave the package at the front desk.",
    "Verified payment by phone.",
    "Customer requested a call before delivery.",
]


def add_order_comment(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for o in pick(rng, _orders(db), N):
        comment = rng.choice(_COMMENTS)
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Add the comment \"{{comment}}\" to order #{{order_number}}.",
                        values={"comment": comment, "order_number": o["increment_id"]},
                        eval=html_eval([target(order_url(o), "", must_include=[comment])]),
                        sequence=[*find_order(o), type_text("textbox", "Comment", comment, enter=False),
                                  click("button", "Submit Comment"), stop(DONE)]))
    return out


def comment_on_my_order_two_tabs(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    orders = db.execute("SELECT * FROM shop_orders WHERE customer_id = ? ORDER BY created_at DESC, id DESC",
                        (EMMA,)).fetchall()
    dates = [long_date(o["created_at"]) for o in orders]
    out = []
    for index in sorted(pick(rng, [i for i, d in enumerate(dates) if dates.count(d) == 1], N)):
        o = orders[index]
        comment = rng.choice(_COMMENTS)
        page = index // ORDERS_PAGE_SIZE + 1
        steps = [click("link", f"Page {page}")] if page > 1 else []
        steps += [tab_focus(1), type_text("textbox", "Search by keyword", o["increment_id"]),
                  click("link", f"View order {o['increment_id']}"),
                  type_text("textbox", "Comment", comment, enter=False), click("button", "Submit Comment")]
        out.append(task(sites=["shopping", "shopping_admin"],
                        start_url=f"{S}/sales/order/history/ |AND| {A}/sales/order/",
                        intent_template="The first tab shows Emma Lopez's orders in the store. "
                                        "Find her order placed on {{date}} and add the comment \"{{comment}}\" "
                                        "to it in the admin panel (second tab).",
                        values={"date": dates[index], "comment": comment},
                        eval=html_eval([target(order_url(o), HISTORY_LOCATOR, must_include=[comment])]),
                        sequence=[*steps, stop(DONE)]))
    return out


TEMPLATES = [
    (2000, top_bestseller),
    (2001, orders_in_month),
    (2002, customer_of_order),
    (2003, customer_email),
    (2004, sales_total_in_month),
    (2005, customer_phone),
    (2006, open_product_edit_page),
    (2007, cancel_order),
    (2008, hold_order),
    (2009, change_price),
    (2010, disable_product),
    (2011, update_stock),
    (2012, change_description),
    (2013, approve_review),
    (2014, delete_latest_review),
    (2015, add_order_comment),
    (2016, comment_on_my_order_two_tabs),
    (2017, customer_order_count),
    (2018, stock_quantity),
]

# Whole templates kept out of the training split (generalisation to unseen task kinds).
TEST_ONLY_TEMPLATES = {2005, 2012, 2014, 2016, 2017}
