"""Storefront and admin task families added later, template ids 9000-9099.

Owns kinds of work the earlier shop modules (`shopping`, `admin`, `classic`) do not cover, after WebArena's
own shopping / shopping_admin intents: creating a product, cart price rules, CMS pages, shipment tracking
numbers, refund, shipping and bestseller reports over a period, what Emma spent over a period, drafting a refund
request on Contact Us, the cheapest product of a sub-category in a price range, what unhappy reviewers say
(judge-scored), adding a size to a configurable product and a sub-category's listing filtered by price and
sorted. Intents describe their targets where the pages make them findable (a customer's order by its date, a
page by what it says), and a few instances ask for something that does not exist (answer "N/A").

Like the other modules it reads the pristine seed, leaves out instances whose answer would be ambiguous
(ties), and picks state-changing targets whose pristine state fails the check.
"""
from __future__ import annotations

import calendar
import random
import sqlite3

from agentenv_webarena.sites.shop import long_date, money, product_options
from agentenv_webarena.sites.shop.admin import bestsellers
from agentenv_webarena.sites.shop.admin_reports import refunds_report, shipping_report
from agentenv_webarena.sites.shop.catalog import price_buckets, price_label
from agentenv_webarena.sites.shop.model import next_product_id
from agentenv_webarena.tasks.templates.base import (
    DONE,
    clear_and_type,
    click,
    html_eval,
    pick,
    press,
    stop,
    string_eval,
    target,
    task,
    type_text,
    url_eval,
)
from agentenv_webarena.tasks.templates.common import (
    ADMIN,
    BASE_CATEGORIES,
    BASE_PRODUCTS,
    REVIEW_COMPLAINTS,
    approved_reviews,
    emma_orders,
    js_string,
    order_history_steps,
    order_items,
    order_url,
    searchable_products,
    sellable_products,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

A = ADMIN
S = "__SHOPPING__"
N = 10  # instances per template (fewer where the seed has fewer cases)
HISTORY_LOCATOR = "document.querySelector('#order-history').outerText"


def _value(selector: str) -> str:
    """A locator reading an input's value."""
    return f"document.querySelector({js_string(selector)}).value"


def _chosen(selector: str) -> str:
    """A locator reading the text of a select's chosen option(s), comma-separated."""
    return f"[...document.querySelector({js_string(selector)}).selectedOptions].map(o => o.text).join(', ')"


def _na(note: str) -> dict:
    return string_eval(fuzzy="N/A", note=note, raw="N/A")


# --- admin: a new simple product ----------------------------------------------------------------------

_ADJECTIVES = ["Trailblazer", "Harbor", "Meadow", "Granite", "Solstice", "Juniper", "Cobalt", "Maple Ridge"]
_NEW_PRODUCTS = [  # (noun, category, sizes, price range)
    ("Fleece Vest", "Clothing, Shoes & Jewelry", ["S", "M", "L", "XL"], (25, 60)),
    ("Rain Jacket", "Clothing, Shoes & Jewelry", ["XS", "S", "M", "L"], (40, 90)),
    ("Yoga Pants", "Sports & Outdoors", ["XS", "S", "M", "L"], (20, 45)),
    ("Trail Running Shoes", "Sports & Outdoors", ["7", "8", "9", "10", "11"], (60, 130)),
    ("Cotton Apron", "Home & Kitchen", ["M", "L"], (12, 30)),
    ("Compression Socks", "Health & Household", ["S", "M", "L"], (10, 25)),
]
_NEW_COLORS = ["Black", "Blue", "Green", "Gray", "Red", "Navy", "Beige"]


def new_simple_product(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    next_id = next_product_id(db)
    taken = {r[0] for r in db.execute("SELECT name FROM shop_products")}
    edit = f"{A}/catalog/product/edit/id/{next_id}/"
    out = []
    names = [(f"{a} {noun}", noun) for a in _ADJECTIVES for noun, *_ in _NEW_PRODUCTS]
    for name, noun in pick(rng, [n for n in names if n[0] not in taken], N):
        _, category, sizes, (low, high) = next(x for x in _NEW_PRODUCTS if x[0] == noun)
        size, color = rng.choice(sizes), rng.choice(_NEW_COLORS)
        price, qty = f"{rng.randint(low, high) - 0.01:.2f}", rng.choice([20, 35, 50, 80, 120])
        checks = [(_value("#product-name"), name), (_value("#product-price"), price),
                  (_value("#product-qty"), str(qty)), (_chosen("#product-category"), category),
                  (_chosen("#product-size"), size), (_chosen("#product-color"), color)]
        out.append(task(
            sites=["shopping_admin"], start_url=A,
            intent_template="We now sell the \"{{name}}\" in {{color}}, size {{size}}. Add it to the catalog as a "
                            "simple product under {{category}}, priced at ${{price}}, with {{qty}} units in stock.",
            values={"name": name, "color": color, "size": size, "category": category, "price": price, "qty": qty},
            eval=html_eval([target(edit, loc, exact=want) for loc, want in checks]),
            sequence=[click("link", "Products"), click("link", "Add Product"),
                      type_text("textbox", "Product Name", name, enter=False),
                      type_text("textbox", "Price", price, enter=False),
                      type_text("textbox", "Quantity", str(qty), enter=False),
                      type_text("combobox", "Categories", category, enter=False),
                      type_text("combobox", "Size", size, enter=False),
                      type_text("combobox", "Color", color, enter=False),
                      click("button", "Save"), stop(DONE)]))
    return out


# --- admin: cart price rules ---------------------------------------------------------------------------

# (how the intent words the customer groups, the grid's group labels, steps that select them)
_GROUPS = [
    ("every customer group", "NOT LOGGED IN, General, Wholesale, Retailer",
     [click("option", "NOT LOGGED IN"), press("Control+a")]),
    ("General and Wholesale customers", "General, Wholesale", [click("option", "General"), press("Shift+ArrowDown")]),
    ("Wholesale customers only", "Wholesale", [click("option", "Wholesale")]),
    ("Retailer customers only", "Retailer", [click("option", "Retailer")]),
]
# (intent wording with {amount}, action value, action label, amounts)
_DISCOUNTS = [
    ("{amount}% off the product price", "by_percent", "Percent of product price discount", [10, 15, 20, 25, 30]),
    ("${amount} off each item", "by_fixed", "Fixed amount discount", [3, 5, 8, 10]),
    ("${amount} off the whole cart", "cart_fixed", "Fixed amount discount for whole cart", [10, 15, 20, 25]),
]
_RULE_NAMES = ["Back to School Savings", "Holiday Cheer Discount", "Spring Cleaning Sale", "Loyal Shopper Reward",
               "Weekend Flash Deal", "Summer Kickoff Offer", "Wholesale Bulk Saver", "New Year Clearance",
               "Garden Season Promo", "Game Night Bundle Deal", "Fall Wardrobe Refresh", "Office Restock Discount"]


def cart_price_rule(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    next_id = db.execute("SELECT MAX(id) + 1 FROM shop_sales_rules").fetchone()[0]
    edit = f"{A}/sales_rule/promo_quote/edit/id/{next_id}/"
    out = []
    for name in pick(rng, _RULE_NAMES, N):
        groups, labels, select_groups = rng.choice(_GROUPS)
        wording, action, label, amounts = rng.choice(_DISCOUNTS)
        amount = rng.choice(amounts)
        discount = wording.format(amount=amount)
        out.append(task(
            sites=["shopping_admin"], start_url=A,
            intent_template="Set up a cart price rule named \"{{name}}\" on the main website for {{groups}} that "
                            "gives {{discount}}.",
            values={"name": name, "groups": groups, "discount": discount},
            eval=html_eval([target(edit, _value("#name"), exact=name),
                            target(edit, _chosen("#website_ids"), exact="Main Website"),
                            target(edit, _chosen("#customer_group_ids"), exact=labels),
                            target(edit, _chosen("#simple_action"), exact=label),
                            target(edit, _value("#discount_amount"), exact=str(amount))]),
            sequence=[click("link", "Cart Price Rules"), click("link", "Add New Rule"),
                      type_text("textbox", "Rule Name", name, enter=False), click("option", "Main Website"),
                      *select_groups, type_text("combobox", "Apply", label, enter=False),
                      type_text("textbox", "Discount Amount", str(amount), enter=False),
                      click("button", "Save"), stop(DONE)]))
    return out


# --- admin: CMS pages ----------------------------------------------------------------------------------

# page id -> how an intent describes the page without its title
_PAGE_DESCRIPTIONS = {
    3: "the page that asks visitors to turn on cookies",
    4: "the page explaining how the store protects customers' information",
    5: "the page telling visitors where the store ships from",
    6: "the page promising an answer within one business day",
}


def _cms_pages(db: sqlite3.Connection) -> list[sqlite3.Row]:
    return db.execute("SELECT * FROM shop_cms_pages WHERE id IN (%s) ORDER BY id"
                      % ",".join(str(i) for i in _PAGE_DESCRIPTIONS)).fetchall()


def _cms_edit(page: sqlite3.Row) -> str:
    return f"{A}/cms/page/edit/page_id/{page['id']}/"


def disable_cms_page(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for page in _cms_pages(db):
        if not page["is_active"]:
            continue
        out.append(task(
            sites=["shopping_admin"], start_url=A,
            intent_template="Take {{page}} offline: disable that content page.",
            values={"page": _PAGE_DESCRIPTIONS[page["id"]]},
            eval=html_eval([target(_cms_edit(page),
                                   "document.querySelector('input[name=\"is_active\"]').checked ? 'enabled' : "
                                   "'disabled'", exact="disabled")]),
            sequence=[click("link", "Pages"), click("link", f"Edit {page['title']}"),
                      click("checkbox", "Enable Page"), click("button", "Save"), stop(DONE)]))
    return out


_NEW_TITLES = {3: ["Cookie Settings", "Please Enable Cookies"], 4: ["Privacy Policy", "Your Privacy Matters"],
               5: ["Our Story", "About One Stop Market"], 6: ["Help Center", "Contact Our Support Team"]}


def retitle_cms_page(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for page in _cms_pages(db):
        for title in _NEW_TITLES[page["id"]]:
            out.append(task(
                sites=["shopping_admin"], start_url=A,
                intent_template="Rename {{page}}: its page title should become \"{{title}}\".",
                values={"page": _PAGE_DESCRIPTIONS[page["id"]], "title": title},
                eval=html_eval([target(_cms_edit(page), _value("#cms_title"), exact=title)]),
                sequence=[click("link", "Pages"), click("link", f"Edit {page['title']}"),
                          *clear_and_type("textbox", "Page Title", title), click("button", "Save"), stop(DONE)]))
    rng.shuffle(out)
    return out[:N]


# --- admin: tracking numbers ---------------------------------------------------------------------------

_CARRIERS = {"fedex": "Federal Express", "dhl": "DHL", "ups": "United Parcel Service",
             "usps": "United States Postal Service"}
_CARRIER_WORDS = {"fedex": "FedEx", "dhl": "DHL", "ups": "UPS", "usps": "USPS"}


def _tracking_number(rng: random.Random, carrier: str) -> str:
    if carrier == "ups":
        return "1Z" + "".join(rng.choice("0123456789ABCDEFGHJKLMNPRSTVWXY") for _ in range(16))
    return "".join(rng.choice("0123456789") for _ in range({"fedex": 12, "dhl": 10, "usps": 20}[carrier]))


def add_tracking_number(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    template = ("{{customer}}'s order placed on {{date}} has shipped. Add the {{carrier}} tracking number "
                "{{number}} to its shipment.")
    orders = db.execute("SELECT o.*, c.firstname || ' ' || c.lastname AS customer FROM shop_orders o JOIN "
                        "shop_customers c ON c.id = o.customer_id ORDER BY o.id").fetchall()
    keys = [(o["customer"], long_date(o["created_at"])) for o in orders]
    unique = [o for o, k in zip(orders, keys, strict=True) if keys.count(k) == 1]
    shipped = [o for o in unique if o["status"] in ("complete", "closed")]
    out = []
    for o in pick(rng, shipped, N - 1) + pick(rng, [o for o in unique if o["status"] == "processing"], 1):
        code = rng.choice(sorted(_CARRIERS))
        number = _tracking_number(rng, code)
        values = {"customer": o["customer"], "date": long_date(o["created_at"]), "carrier": _CARRIER_WORDS[code],
                  "number": number}
        steps = [click("link", "Orders"), type_text("textbox", "Search by keyword", o["customer"]),
                 click("link", f"View order {o['increment_id']}"), click("link", "Shipments")]
        if o["status"] == "processing":  # not shipped yet: there is no shipment to add it to
            out.append(task(sites=["shopping_admin"], start_url=A, intent_template=template, values=values,
                            eval=_na(f"Order #{o['increment_id']} has not shipped, so it has no shipment."),
                            sequence=[*steps, stop("N/A")]))
            continue
        out.append(task(
            sites=["shopping_admin"], start_url=A, intent_template=template, values=values,
            eval=html_eval([target(order_url(o), HISTORY_LOCATOR,
                                   must_include=[f"Tracking number {number} for {_CARRIERS[code]} assigned"])]),
            sequence=[*steps, type_text("combobox", "Carrier", _CARRIERS[code], enter=False),
                      type_text("textbox", "Number", number, enter=False), click("button", "Add"), stop(DONE)]))
    rng.shuffle(out)
    return out


# --- admin: reports over a period ----------------------------------------------------------------------

def _periods(years: list[str]) -> list[tuple[str, str, str]]:
    """(intent wording, first day, last day) of each year, half, quarter and month of `years`."""
    out = []
    for y in years:
        out.append((y, f"{y}-01-01", f"{y}-12-31"))
        for n, (first, last) in enumerate(((1, 6), (7, 12)), start=1):
            out.append((f"the {'first' if n == 1 else 'second'} half of {y}", f"{y}-{first:02d}-01",
                        f"{y}-{last:02d}-{calendar.monthrange(int(y), last)[1]}"))
        for n in range(4):
            last = 3 * n + 3
            out.append((f"the {('first', 'second', 'third', 'fourth')[n]} quarter of {y}", f"{y}-{3 * n + 1:02d}-01",
                        f"{y}-{last:02d}-{calendar.monthrange(int(y), last)[1]}"))
        for m in range(1, 13):
            out.append((f"{calendar.month_name[m]} {y}", f"{y}-{m:02d}-01",
                        f"{y}-{m:02d}-{calendar.monthrange(int(y), m)[1]}"))
    return out


def _month_spans(years: list[str], longest: int = 8) -> list[tuple[str, str, str]]:
    """(intent wording, first day, last day) of each span of 2 to `longest` months within `years`."""
    months = [(int(y), m) for y in years for m in range(1, 13)]
    out = []
    for i, (y1, m1) in enumerate(months):
        for y2, m2 in months[i + 1:i + longest]:
            start = calendar.month_name[m1] + ("" if y1 == y2 else f" {y1}")
            out.append((f"the months from {start} through {calendar.month_name[m2]} {y2}", f"{y1}-{m1:02d}-01",
                        f"{y2}-{m2:02d}-{calendar.monthrange(y2, m2)[1]}"))
    return out


def _report_steps(link: str, first: str, last: str, period: str) -> list[dict]:
    return [click("link", link), type_text("textbox", "From", first, enter=False),
            type_text("textbox", "To", last, enter=False), click("radio", period), click("button", "Show Report")]


def refunds_in_period(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for wording, first, last in _periods(["2022", "2023"]):
        rows = refunds_report(db, "year", first, last)
        if not rows:
            continue
        count, total = rows[0]["orders"], money(rows[0]["total"])
        out.append(task(
            sites=["shopping_admin"], start_url=A,
            intent_template="How many orders did we refund in {{period}}, and how much money did those refunds "
                            "come to?",
            values={"period": wording}, eval=string_eval(must_include=[str(count), total]),
            sequence=[click("link", "Orders Report"), *_report_steps("Refunds", first, last, "Year"),
                      stop(f"{count} orders, {total}")]))
    return pick(rng, out, N)


def bestseller_in_period(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    template = "Which product sold the most units in {{period}}?"
    out = []
    for wording, first, last in _periods(["2022", "2023"]):
        if wording[:1].isupper() or wording.isdigit():  # months and years: the admin module asks those
            continue
        ranked = bestsellers(db, "year", first, last, limit=2)
        if len(ranked) < 2 or ranked[0]["qty"] == ranked[1]["qty"]:
            continue
        name = ranked[0]["name"]
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=template,
                        values={"period": wording}, eval=string_eval(must_include=[name]),
                        sequence=[*_report_steps("Bestsellers Report", first, last, "Year"), stop(name)]))
    out = pick(rng, out, N - 1)
    wording, first, last = rng.choice([p for p in _periods(["2024"]) if "quarter" in p[0]])
    assert not bestsellers(db, "year", first, last)
    out.append(task(sites=["shopping_admin"], start_url=A, intent_template=template, values={"period": wording},
                    eval=_na(f"The store has no orders in {wording} yet, so nothing sold then."),
                    sequence=[*_report_steps("Bestsellers Report", first, last, "Year"), stop("N/A")]))
    rng.shuffle(out)
    return out


def shipping_in_period(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for wording, first, last in _periods(["2022", "2023"]):
        rows = shipping_report(db, "year", first, last)
        if not rows or wording.isdigit():
            continue
        total = money(rows[0]["total"])
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="How much did customers pay us for shipping in {{period}}?",
                        values={"period": wording}, eval=string_eval(must_include=[total]),
                        sequence=[click("link", "Orders Report"), *_report_steps("Shipping", first, last, "Year"),
                                  stop(total)]))
    return pick(rng, out, N)


# --- storefront: what Emma spent -----------------------------------------------------------------------

def spend_in_period(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    orders = emma_orders(db)
    out = []
    for wording, first, last in _periods(["2022", "2023"]) + _month_spans(["2022", "2023"]):
        inside = [(i, o) for i, o in enumerate(orders) if first <= o["created_at"][:10] <= last]
        if len(inside) < 2 or any(o["status"] != "complete" for _, o in inside):
            continue  # one order is a lookup, and whether canceled or held orders count is unclear
        total = f"{sum(o['grand_total'] for _, o in inside):.2f}"
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="How much did I spend on my orders in {{period}} altogether?",
                        values={"period": wording}, eval=string_eval(must_include=[total]),
                        sequence=[*order_history_steps(max(i for i, _ in inside)), stop(f"${total}")]))
    return pick(rng, out, N)


# --- storefront: a refund request drafted on Contact Us -----------------------------------------------

_REASONS = ["it stopped working after two days", "it arrived with a cracked case", "it is not the size I ordered",
            "the color is different from the photos", "it was missing parts", "it arrived damaged"]
CONTACT_LOCATOR = "document.querySelector('[title=\"What’s on your mind?\"]').value"


def draft_refund_request(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    orders = emma_orders(db)
    cases = []
    for i, o in enumerate(orders):
        if o["status"] != "complete":
            continue
        items = order_items(db, o["id"])
        for item in items:
            if item["qty"] != 1:  # "the price I paid" would be ambiguous
                continue
            bought = [it for oo in orders for it in order_items(db, oo["id"]) if it["product_id"] == item["product_id"]]
            if len(bought) == 1:  # the product identifies the order
                cases.append((i, o, item))
    template = ("Draft a refund request for the {{product}} I bought, using the store's Contact Us form: give the "
                "order number and the price I paid, and say that {{reason}}. Do not send it yet.")
    out = []
    for i, o, item in pick(rng, cases, N - 1):
        reason = rng.choice(_REASONS)
        number = str(int(o["increment_id"]))
        message = (f"Hello, I would like a refund for the {item['name']} from order #{o['increment_id']} "
                   f"({money(item['price'])}) because {reason}.")
        out.append(task(
            sites=["shopping"], start_url=S, intent_template=template,
            values={"product": item["name"], "reason": reason},
            eval=html_eval([target("last", CONTACT_LOCATOR,
                                   must_include=["refund", number, f"{item['price']:.2f}", reason])]),
            sequence=[*order_history_steps(i), click("link", "Contact Us"),
                      type_text("textbox", "What’s on your mind?", message, enter=False), stop(DONE)]))
    bought = {it["product_id"] for o in orders for it in order_items(db, o["id"])}
    never = rng.choice([p for p in sellable_products(db) if p["id"] not in bought])
    out.append(task(sites=["shopping"], start_url=S, intent_template=template,
                    values={"product": never["name"], "reason": rng.choice(_REASONS)},
                    eval=_na(f"None of my orders has the {never['name']}, so there is nothing to refund."),
                    sequence=[*order_history_steps(0), stop("N/A")]))
    rng.shuffle(out)
    return out


# --- storefront: the cheapest product of a sub-category in a price range ------------------------------

def _subcategories(db: sqlite3.Connection) -> list[tuple[dict, list[sqlite3.Row], list[dict]]]:
    """Each sub-category (with `department`, and `label`: its name, and its parent's where the name repeats), its
    enabled products, and the clicks from the home page to its listing."""
    subs = [dict(r) for r in db.execute("SELECT s.*, c.name AS department FROM shop_subcategories s JOIN "
                                        "shop_categories c ON c.id = s.category_id WHERE c.id <= ? ORDER BY s.id",
                                        (BASE_CATEGORIES,))]
    names = {s["id"]: s["name"] for s in subs}
    out = []
    for s in subs:
        prods = db.execute("SELECT p.* FROM shop_products p JOIN shop_subcategory_products l ON l.product_id = p.id "
                           "JOIN shop_subcategories t ON t.id = l.subcategory_id WHERE p.enabled = 1 AND "
                           "(t.url_path = ? OR t.url_path LIKE ? || '/%') ORDER BY p.id",
                           (s["url_path"], s["url_path"])).fetchall()
        repeated = sum(t["name"] == s["name"] and t["category_id"] == s["category_id"] for t in subs) > 1
        s["label"] = f"{s['name']} ({names[s['parent_id']]})" if repeated else s["name"]
        trail = [click("link", s["department"])]
        if s["parent_id"] is not None:
            trail.append(click("link", names[s["parent_id"]]))
        out.append((s, prods, [*trail, click("link", s["name"])]))
    return out


def _closed_ranges(prods: list[sqlite3.Row]) -> list[tuple[float, float, list[sqlite3.Row]]]:
    """The listing's price filter ranges with an upper bound: (from, to, products in it by price)."""
    return [(low, high, sorted((p for p in prods if low <= p["price"] < high), key=lambda p: p["price"]))
            for low, high, _ in price_buckets([p["price"] for p in prods]) if high is not None]


def _range_words(low: float, high: float) -> str:
    return f"under {money(high)}" if low == 0 else f"from {price_label((low, high)).replace(' - ', ' to ')}"


def cheapest_in_price_range(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    template = "What is the cheapest product in the {{sub}} section of {{department}} priced {{range}}?"
    feasible, infeasible = [], []
    for s, prods, trail in _subcategories(db):
        values = {"sub": s["label"], "department": s["department"]}
        for low, high, inside in _closed_ranges(prods):
            if len(inside) < 2 or inside[0]["price"] == inside[1]["price"]:
                continue
            feasible.append(task(
                sites=["shopping"], start_url=S, intent_template=template,
                values={**values, "range": _range_words(low, high)}, eval=string_eval(must_include=[inside[0]["name"]]),
                sequence=[*trail, click("link", price_label((low, high))), click("link", "Price"),
                          stop(inside[0]["name"])]))
        lowest = min((p["price"] for p in prods), default=0)
        if lowest >= 20:  # nothing under a quarter of the cheapest price
            under = money(round(lowest / 4))
            infeasible.append(task(
                sites=["shopping"], start_url=S, intent_template=template, values={**values, "range": f"under {under}"},
                eval=_na(f"No {s['label']} product costs less than {under}."),
                sequence=[*trail, click("link", "Price"), stop("N/A")]))
    out = pick(rng, feasible, N - 1) + pick(rng, infeasible, 1)
    rng.shuffle(out)
    return out


def sorted_price_listing(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for s, prods, trail in _subcategories(db):
        for low, high, inside in _closed_ranges(prods):
            if len(inside) < 3:
                continue
            url = f"{S}/{s['url_path']}.html?price={low:g}-{high:g}&product_list_order=price&product_list_dir=desc"
            out.append(task(
                sites=["shopping"], start_url=S,
                intent_template="Show me the {{sub}} products of {{department}} priced {{range}}, most expensive "
                                "first.",
                values={"sub": s["label"], "department": s["department"], "range": _range_words(low, high)},
                eval=url_eval(url),
                sequence=[*trail, click("link", price_label((low, high))), click("link", "Price"),
                          click("link", "Set Descending Direction"), stop(DONE)]))
    return pick(rng, out, N)


# --- storefront: what unhappy reviewers say (judge-scored) --------------------------------------------

def unhappy_reviewers(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    template = "What do the customers who gave {{product}} one or two stars complain about?"
    feasible = []
    for p in searchable_products(db, sellable_products(db)):
        low = [r for r in approved_reviews(db, p["id"]) if r["rating_percent"] <= 40]
        complaints = sorted({c for r in low for key, c in REVIEW_COMPLAINTS.items() if key in r["detail"]})
        if len(low) >= 2 and len(complaints) >= 2:
            feasible.append((p, complaints))
    out = []
    for p, complaints in pick(rng, feasible, N - 1):
        summary = f"They say {' and '.join(complaints)}."
        out.append(task(sites=["shopping"], start_url=S, intent_template=template, values={"product": p["name"]},
                        eval=string_eval(fuzzy=[summary]),
                        sequence=[type_text("searchbox", "Search", p["name"]), click("link", p["name"]),
                                  stop(summary)]))
    names = {r[0] for r in db.execute("SELECT name FROM shop_products")}
    brand, noun = feasible[0][0]["name"].split(" ", 1)[0], "Espresso Grinder"
    fake = f"{brand} {noun}"
    if fake not in names:
        out.append(task(sites=["shopping"], start_url=S, intent_template=template, values={"product": fake},
                        eval=_na(f"The store does not sell a product named {fake}."),
                        sequence=[type_text("searchbox", "Search", fake), stop("N/A")]))
    rng.shuffle(out)
    return out


# --- admin: a new size on a configurable product ------------------------------------------------------

_SIZE_STEPS = {"letters": ["XS", "S", "M", "L", "XL"], "numbers": ["6", "7", "8", "9", "10", "11"]}


def add_configurable_size(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for p in db.execute("SELECT * FROM shop_products WHERE id <= ? ORDER BY id", (BASE_PRODUCTS,)).fetchall():
        sizes, colors = product_options(p)
        if len(sizes) < 2:
            continue
        scale = _SIZE_STEPS["numbers" if sizes[0].isdigit() else "letters"]
        missing = [s for s in scale if s not in sizes]
        if missing:
            cases.append((p, sizes, colors, missing))
    out = []
    for p, sizes, colors, missing in pick(rng, cases, N):
        size = rng.choice(missing)
        variant_names = [f"{p['name']}-{size}-{c}" for c in colors] or [f"{p['name']}-{size}"]
        out.append(task(
            sites=["shopping_admin"], start_url=A,
            intent_template="Customers keep asking for {{product}} in size {{size}}. Add that size to the product's "
                            "configurations, keeping the sizes and colors it already has.",
            values={"product": p["name"], "size": size},
            eval=html_eval([target(f"{A}/catalog/product/edit/id/{p['id']}/",
                                   "[...document.querySelectorAll('[data-index=\"configurable\"] tbody tr')]"
                                   ".map(r => r.cells[0].innerText).join(' | ')",
                                   must_include=variant_names + [f"{p['name']}-{s}" for s in sizes])]),
            sequence=[click("link", "Products"), type_text("textbox", "Search by keyword", p["name"]),
                      click("link", f"Edit {p['name']}"),
                      *clear_and_type("textbox", "Sizes", ",".join(sizes + [size])), click("button", "Save"),
                      stop(DONE)]))
    return out


TEMPLATES = [
    (9000, new_simple_product),
    (9001, cart_price_rule),
    (9002, disable_cms_page),
    (9003, retitle_cms_page),
    (9004, add_tracking_number),
    (9005, refunds_in_period),
    (9006, bestseller_in_period),
    (9007, spend_in_period),
    (9008, draft_refund_request),
    (9009, cheapest_in_price_range),
    (9010, unhappy_reviewers),
    (9011, add_configurable_size),
    (9012, shipping_in_period),
    (9013, sorted_price_listing),
]

# Whole templates kept out of the training split; judge-scored answers (9010) only here.
TEST_ONLY_TEMPLATES = {9003, 9006, 9010, 9011}
