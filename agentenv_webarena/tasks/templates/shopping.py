"""Task templates on the embedded storefront (`sites.shop`), template ids 1000-1099.

Each template reads the pristine seed (`db`) and returns its instances (`templates.base.task`).
Answers come from the same data the pages show, and every reference sequence uses the element
names our pages give Chromium's accessibility tree. State-changing tasks pick targets whose
pristine state fails the check (a product not yet in the cart, a review not yet written, ...), so
doing nothing scores 0.
"""
from __future__ import annotations

import random
import sqlite3
from urllib.parse import urlencode

from agentenv_webarena.sites.shop import (
    STATUS_LABELS,
    long_date,
    money,
    option_text,
    product_options,
    rating_summary,
    search_index,
    search_products,
)
from agentenv_webarena.sites.shop.data import CATEGORIES
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
    BASE_CATEGORIES,
    CART_LOCATOR,
    EMMA,
    approved_reviews,
    cart_product_ids,
    emma_orders,
    in_cart_locator,
    js_string,
    open_product,
    order_history_steps,
    order_items,
    searchable_products,
    sellable_products,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

S = "__SHOPPING__"
N = 12  # instances per template
ORDER_ITEMS_LOCATOR = "document.querySelector('#order-items').outerText"
# The newest row of "My Product Reviews" (newest first): its summary, full text and product.
MY_LATEST_REVIEW_SUMMARY = "document.querySelector('#my-reviews-table tbody tr .review-title').outerText"
MY_LATEST_REVIEW_TEXT = "document.querySelector('#my-reviews-table tbody tr .review-detail').outerText"
MY_LATEST_REVIEW_PRODUCT = "document.querySelector('#my-reviews-table tbody tr td:nth-child(2)').outerText"


# --- data helpers ------------------------------------------------------------------------------------


def _ordered_qty(name: str) -> str:
    """A locator reading the Qty cell ("Ordered: 2") of product `name`'s rows on an order page."""
    return ("[...document.querySelectorAll('#order-items tbody tr')].filter(r => "
            f"r.cells[0].innerText.split('\\n')[0].trim() === {js_string(name)})"
            ".map(r => r.cells[3].innerText).join(' ; ')")


def _fake_products(db: sqlite3.Connection, rng: random.Random, k: int) -> list[str]:
    """Plausible product names the catalog does not have (brand of one department, noun of another)."""
    names = {r[0].lower() for r in db.execute("SELECT name FROM shop_products")}
    out: list[str] = []
    while len(out) < k:
        a, b = rng.sample(CATEGORIES, 2)
        name = f"{rng.choice(a[2])} {rng.choice(a[3])} {rng.choice(b[4])[0]}"
        if name.lower() not in names and name not in out:
            out.append(name)
    return out


def _default_address(db: sqlite3.Connection) -> sqlite3.Row:
    return db.execute("SELECT * FROM shop_addresses WHERE customer_id = ? AND is_default = 1", (EMMA,)).fetchone()


def _sort_label(key: str) -> str:
    return {"name": "Product Name", "price": "Price"}[key]


# --- information seeking -----------------------------------------------------------------------------

def price_of_product(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for p in pick(rng, searchable_products(db, sellable_products(db)), N):
        out.append(task(sites=["shopping"], start_url=S, intent_template="What is the price of {{product}}?",
                        values={"product": p["name"]}, eval=string_eval(must_include=[f"{p['price']:.2f}"]),
                        sequence=[*open_product(p), stop(money(p["price"]))]))
    return out


def sku_of_product(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    template = "What is the SKU of the {{product}}?"
    out = []
    for p in pick(rng, searchable_products(db, sellable_products(db)), N - 4):
        out.append(task(sites=["shopping"], start_url=S, intent_template=template, values={"product": p["name"]},
                        eval=string_eval(exact=p["sku"]), sequence=[*open_product(p), stop(p["sku"])]))
    for name in _fake_products(db, rng, 4):
        out.append(task(sites=["shopping"], start_url=S, intent_template=template, values={"product": name},
                        eval=string_eval(fuzzy="N/A", note=f"The store does not sell a product named {name}.",
                                         raw="N/A"),
                        sequence=[type_text("searchbox", "Search", name), stop("N/A")]))
    rng.shuffle(out)
    return out


def order_total(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    orders = emma_orders(db)
    out = []
    for index in sorted(pick(rng, range(len(orders)), N)):
        o = orders[index]
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="How much did I pay in total for my order #{{order_number}}?",
                        values={"order_number": o["increment_id"]}, eval=string_eval(exact=money(o["grand_total"])),
                        sequence=[*order_history_steps(index), click("link", f"View Order {o['increment_id']}"),
                                  stop(money(o["grand_total"]))]))
    return out


def products_in_order_on_date(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    orders = emma_orders(db)
    dates = [long_date(o["created_at"]) for o in orders]
    out = []
    for index in sorted(pick(rng, [i for i, d in enumerate(dates) if dates.count(d) == 1], N)):
        o = orders[index]
        names = [i["name"] for i in order_items(db, o["id"])]
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Which products did I buy in the order I placed on {{date}}?",
                        values={"date": dates[index]}, eval=string_eval(must_include=names),
                        sequence=[*order_history_steps(index), click("link", f"View Order {o['increment_id']}"),
                                  stop("; ".join(names))]))
    return out


def order_status(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    orders = emma_orders(db)
    out = []
    for index in sorted(pick(rng, range(len(orders)), N)):
        o = orders[index]
        label = STATUS_LABELS[o["status"]]
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="What is the status of my order #{{order_number}}?",
                        values={"order_number": o["increment_id"]}, eval=string_eval(must_include=[label]),
                        sequence=[*order_history_steps(index), stop(label)]))
    return out


def orders_between_months(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    orders = emma_orders(db)
    months = [f"{y}-{m:02d}" for y in (2022, 2023) for m in range(1, 13)]
    seen: set[tuple[str, str]] = set()
    out = []
    while len(out) < N:
        a, b = sorted(rng.sample(range(len(months)), 2))
        start, end = months[a], months[b]
        if (start, end) in seen or b - a < 2:
            continue
        seen.add((start, end))
        hits = [i for i, o in enumerate(orders) if start <= o["created_at"][:7] <= end]
        if not hits:
            continue
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="How many orders did I place from {{start_month}} through {{end_month}}?",
                        values={"start_month": month_label(start), "end_month": month_label(end)},
                        eval=string_eval(must_include=[str(len(hits))]),
                        sequence=[*order_history_steps(max(hits)), stop(str(len(hits)))]))
    return out


def review_count(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    candidates = [p for p in searchable_products(db, sellable_products(db)) if rating_summary(db, p["id"])[0] >= 1]
    out = []
    for p in pick(rng, candidates, N):
        count = rating_summary(db, p["id"])[0]
        out.append(task(sites=["shopping"], start_url=S, intent_template="How many reviews does {{product}} have?",
                        values={"product": p["name"]}, eval=string_eval(must_include=[str(count)]),
                        sequence=[*open_product(p), stop(str(count))]))
    return out


def review_text(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    pairs = [(p, r) for p in searchable_products(db, sellable_products(db)) for r in approved_reviews(db, p["id"])]
    out = []
    for p, r in pick(rng, pairs, N):
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="What did {{nickname}} say about the {{product}} in their review?",
                        values={"nickname": r["nickname"], "product": p["name"]}, eval=string_eval(fuzzy=[r["detail"]]),
                        sequence=[*open_product(p), stop(r["detail"])]))
    return out


def lowest_rating_reviewer(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    candidates = []
    for p in searchable_products(db, sellable_products(db)):
        reviews = approved_reviews(db, p["id"])
        low = min((r["rating_percent"] for r in reviews), default=None)
        if len(reviews) >= 2 and [r["rating_percent"] for r in reviews].count(low) == 1:
            candidates.append((p, next(r for r in reviews if r["rating_percent"] == low)))
    out = []
    for p, r in pick(rng, candidates, N):
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Who gave the lowest rating among the reviews of {{product}}? Tell me the "
                                        "reviewer's nickname.",
                        values={"product": p["name"]}, eval=string_eval(must_include=[r["nickname"]]),
                        sequence=[*open_product(p), stop(r["nickname"])]))
    return out


def category_extreme_price(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for c in db.execute("SELECT * FROM shop_categories WHERE id <= ? ORDER BY position", (BASE_CATEGORIES,)):
        rows = db.execute("SELECT * FROM shop_products WHERE category_id = ? AND enabled = 1", (c["id"],)).fetchall()
        prices = sorted(r["price"] for r in rows)
        for extreme, value, desc in (("cheapest", prices[0], False), ("most expensive", prices[-1], True)):
            if prices.count(value) == 1:
                cases.append((c, extreme, next(r for r in rows if r["price"] == value), desc))
    out = []
    for c, extreme, p, desc in pick(rng, cases, N):
        steps = [click("link", c["name"]), click("link", "Price")]
        if desc:
            steps.append(click("link", "Set Descending Direction"))
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="What is the {{extreme}} product in the {{category}} category?",
                        values={"extreme": extreme, "category": c["name"]}, eval=string_eval(must_include=[p["name"]]),
                        sequence=[*steps, stop(p["name"])]))
    return out


def available_options(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for p in searchable_products(db, sellable_products(db, options=True)):
        sizes, colors = product_options(p)
        if sizes:
            cases.append((p, "size", sizes))
        if colors:
            cases.append((p, "color", colors))
    out = []
    for p, kind, values in pick(rng, cases, N):
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Which {{option}} options are available for the {{product}}?",
                        values={"option": kind, "product": p["name"]}, eval=string_eval(must_include=values),
                        sequence=[*open_product(p), stop(", ".join(values))]))
    return out


def search_sorted_by_price(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    queries = [noun.lower() for _, _, _, _, nouns in CATEGORIES for noun, *_ in nouns]
    index = search_index(db)
    queries = [q for q in queries if len(search_products(db, q, index)) >= 2]
    out = []
    for q in pick(rng, queries, N):
        desc = rng.random() < 0.5
        params = {"q": q, "product_list_order": "price", **({"product_list_dir": "desc"} if desc else {})}
        steps = [type_text("searchbox", "Search", q), click("link", "Price")]
        if desc:
            steps.append(click("link", "Set Descending Direction"))
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Show me the search results for \"{{query}}\" sorted by price from {{order}}.",
                        values={"query": q, "order": "high to low" if desc else "low to high"},
                        eval=url_eval(f"{S}/catalogsearch/result/?{urlencode(params)}"),
                        sequence=[*steps, stop(DONE)]))
    return out


def category_sorted(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = [(c, key)
             for c in db.execute("SELECT * FROM shop_categories WHERE id <= ? ORDER BY position", (BASE_CATEGORIES,))
             for key in ("name", "price")]
    out = []
    for c, key in pick(rng, cases, N):
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Browse the {{category}} category with its products sorted by {{sort}}.",
                        values={"category": c["name"], "sort": "product name" if key == "name" else "price"},
                        eval=url_eval(f"{S}/{c['slug']}.html?product_list_order={key}"),
                        sequence=[click("link", c["name"]), click("link", _sort_label(key)), stop(DONE)]))
    return out


# --- state-changing ----------------------------------------------------------------------------------

def add_to_cart(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    in_cart = cart_product_ids(db)
    with_options = [p for p in searchable_products(db, sellable_products(db, options=True)) if p["id"] not in in_cart]
    without = [p for p in searchable_products(db, sellable_products(db, options=False)) if p["id"] not in in_cart]
    out = []
    for p in pick(rng, with_options, N - 3) + pick(rng, without, 3):
        sizes, colors = product_options(p)
        size = rng.choice(sizes) if sizes else ""
        color = rng.choice(colors) if colors else ""
        qty = rng.choice([1, 1, 2, 3])
        words = ([f"size {size}"] if size else []) + ([f"color {color}"] if color else [])
        options = f" in {' and '.join(words)}" if words else ""
        steps = open_product(p)
        steps += [click("radio", size)] if size else []
        steps += [click("radio", color)] if color else []
        if qty > 1:
            steps += clear_and_type("spinbutton", "Qty", str(qty))
        summary = p["name"] + (f" | {option_text(size, color)}" if size or color else "") + f" | Qty: {qty}"
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Add {{quantity}} {{product}}{{options}} to my shopping cart.",
                        values={"quantity": qty, "product": p["name"], "options": options},
                        eval=html_eval([target(f"{S}/checkout/cart/", CART_LOCATOR, must_include=[summary])]),
                        sequence=[*steps, click("button", "Add to Cart"), stop(DONE)]))
    rng.shuffle(out)
    return out


def place_order(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    latest = db.execute("SELECT id FROM shop_orders ORDER BY created_at DESC, id DESC LIMIT 1").fetchone()["id"]
    exclude = {i["product_id"] for i in order_items(db, latest)}
    candidates = [p for p in searchable_products(db, sellable_products(db, options=False)) if p["id"] not in exclude]
    home = _default_address(db)
    address = [home["street"], f"{home['city']}, {home['region']}, {home['postcode']}"]
    latest_order = "func:shopping_get_latest_order_url()"
    out = []
    for p in pick(rng, candidates, N):
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Buy one {{product}} for me and check out with my default shipping address.",
                        values={"product": p["name"]},
                        eval=html_eval([target(latest_order, ORDER_ITEMS_LOCATOR, must_include=[p["name"]]),
                                        target(latest_order, _ordered_qty(p["name"]), exact="Ordered: 1"),
                                        target(latest_order, "", must_include=address)]),
                        sequence=[*open_product(p), click("button", "Add to Cart"), click("link", contains="My Cart"),
                                  click("link", "Proceed to Checkout"), click("button", "Place Order"), stop(DONE)]))
    return out


_REVIEW_TEXTS = [
    ("Great value", "Works exactly as advertised and arrived on time."),
    ("Not worth it", "The quality is much lower than I expected for this price."),
    ("Pretty good", "Does the job well, but the packaging could be better."),
    ("Just okay", "It is fine for occasional use, nothing more."),
    ("Fantastic", "I use it every day and it still looks brand new."),
    ("Would not buy again", "It stopped working after two weeks of light use."),
    ("Solid choice", "Good build quality and easy to use right out of the box."),
    ("Love the design", "Looks great in my home and my family loves it."),
]


def write_review(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    candidates = []
    for p in searchable_products(db, sellable_products(db)):
        last = db.execute("SELECT nickname FROM shop_reviews WHERE product_id = ? ORDER BY created_at DESC, id DESC "
                          "LIMIT 1", (p["id"],)).fetchone()
        if last is None or last["nickname"] != "Emma":
            candidates.append(p)
    out = []
    for p in pick(rng, candidates, N):
        stars = rng.randint(1, 5)
        title, text = rng.choice(_REVIEW_TEXTS)
        sku = p["sku"]
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Write a {{stars}}-star review of {{product}} with the summary \"{{title}}\" "
                                        "and the review text \"{{text}}\".",
                        values={"stars": stars, "product": p["name"], "title": title, "text": text},
                        eval=html_eval([target("last", f"func:shopping_get_sku_latest_review_rating('{sku}')",
                                               exact=str(stars * 20)),
                                        target("last", f"func:shopping_get_sku_latest_review_author('{sku}')",
                                               exact="Emma"),
                                        target(f"{S}/review/customer/", MY_LATEST_REVIEW_SUMMARY, exact=title),
                                        target(f"{S}/review/customer/", MY_LATEST_REVIEW_TEXT, exact=text),
                                        target(f"{S}/review/customer/", MY_LATEST_REVIEW_PRODUCT,
                                               exact=p["name"])]),
                        sequence=[*open_product(p), click("radio", f"{stars} star" + ("" if stars == 1 else "s")),
                                  type_text("textbox", "Summary", title, enter=False),
                                  type_text("textbox", "Review", text, enter=False),
                                  click("button", "Submit Review"), stop(DONE)]))
    return out


_NEW_ADDRESSES = [
    ("250 Grand Ave", "Oakland", "California", "94610"), ("18 Beacon St", "Boston", "Massachusetts", "02108"),
    ("4400 Walnut St", "Philadelphia", "Pennsylvania", "19104"), ("72 Lake Shore Dr", "Madison", "Wisconsin", "53703"),
    ("905 Elm Ave", "Raleigh", "North Carolina", "27601"), ("1350 Pearl St", "Boulder", "Colorado", "80302"),
    ("66 Harbor View Rd", "San Diego", "California", "92101"), ("3021 Oak Lane", "Austin", "Texas", "78704"),
    ("12 Riverside Dr", "Albany", "New York", "12207"), ("480 Magnolia Blvd", "Burbank", "California", "91502"),
    ("77 Forest Hill Rd", "Richmond", "Virginia", "23225"), ("5100 Sunset Blvd", "Los Angeles", "California", "90027"),
    ("210 Summit Ave", "St Paul", "Minnesota", "55102"), ("839 King St", "Charleston", "South Carolina", "29403"),
]


def edit_address(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    out = []
    for street, city, region, postcode in pick(rng, _NEW_ADDRESSES, N):
        steps = [click("link", "My Account"), click("link", "Address Book"), click("link", "Change Shipping Address")]
        for label, value in (("Street Address", street), ("City", city), ("State/Province", region),
                             ("Zip/Postal Code", postcode)):
            steps += clear_and_type("textbox", label, value)
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Update my default shipping address to {{street}}, {{city}}, {{state}} "
                                        "{{zip}}.",
                        values={"street": street, "city": city, "state": region, "zip": postcode},
                        eval=html_eval([target(f"{S}/customer/address/",
                                               "document.querySelector('.box-address-shipping').outerText",
                                               must_include=[street, f"{city}, {region}, {postcode}"])]),
                        sequence=[*steps, click("button", "Save Address"), stop(DONE)]))
    return out


def add_to_wishlist(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    listed = {r[0] for r in db.execute("SELECT product_id FROM shop_wishlist WHERE customer_id = ?", (EMMA,))}
    candidates = [p for p in searchable_products(db, sellable_products(db)) if p["id"] not in listed]
    out = []
    for p in pick(rng, candidates, N):
        out.append(task(sites=["shopping"], start_url=S, intent_template="Add {{product}} to my wish list.",
                        values={"product": p["name"]},
                        eval=html_eval([target(f"{S}/wishlist/", "", must_include=[p["name"]])]),
                        sequence=[*open_product(p), click("button", "Add to Wish List"), stop(DONE)]))
    return out


def add_cheaper_of_two_tabs(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    in_cart = cart_product_ids(db)
    nouns = sorted((noun for _, _, _, _, items in CATEGORIES for noun, *_ in items), key=len, reverse=True)
    by_noun: dict[str, list[sqlite3.Row]] = {}
    for p in sellable_products(db, options=False):
        if p["id"] not in in_cart:
            by_noun.setdefault(next(n for n in nouns if p["name"].endswith(n)), []).append(p)
    pairs = [(a, b) for group in by_noun.values() for i, a in enumerate(group) for b in group[i + 1:]
             if a["price"] != b["price"]]
    out = []
    for a, b in pick(rng, pairs, N):
        if rng.random() < 0.5:
            a, b = b, a
        cheaper_first = a["price"] < b["price"]
        cheaper, dearer = (a, b) if cheaper_first else (b, a)
        steps = [tab_focus(1)] + ([tab_focus(0)] if cheaper_first else [])
        out.append(task(sites=["shopping"], start_url=f"{S}/{a['slug']}.html |AND| {S}/{b['slug']}.html",
                        intent_template="I have {{product_a}} and {{product_b}} open in two tabs. Add the cheaper "
                                        "one to my shopping cart.",
                        values={"product_a": a["name"], "product_b": b["name"]},
                        eval=html_eval([target(f"{S}/checkout/cart/", CART_LOCATOR,
                                               must_include=[f"{cheaper['name']} | Qty: 1"]),
                                        target(f"{S}/checkout/cart/", in_cart_locator(dearer["name"]), exact="no")]),
                        sequence=[*steps, click("button", "Add to Cart"), stop(DONE)]))
    return out


def update_cart_quantity(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    lines = db.execute("SELECT i.*, p.name FROM shop_cart_items i JOIN shop_carts c ON c.id = i.cart_id JOIN "
                       "shop_products p ON p.id = i.product_id WHERE c.customer_id = ? ORDER BY i.id",
                       (EMMA,)).fetchall()
    cases = [(line, q) for line in lines for q in range(2, 9) if q != line["qty"]]
    out = []
    for line, qty in pick(rng, cases, N):
        opts = option_text(line["size"], line["color"])
        summary = line["name"] + (f" | {opts}" if opts else "") + f" | Qty: {qty}"
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Change the quantity of {{product}} in my shopping cart to {{quantity}}.",
                        values={"product": line["name"], "quantity": qty},
                        eval=html_eval([target(f"{S}/checkout/cart/", CART_LOCATOR, must_include=[summary])]),
                        sequence=[click("link", contains="My Cart"),
                                  *clear_and_type("spinbutton", f"Qty of {line['name']}", str(qty)),
                                  click("button", "Update Shopping Cart"), stop(DONE)]))
    return out


_LAST_NAMES = ["Martinez", "Chen", "Okafor", "Schmidt", "Rossi", "Nakamura", "Dubois", "Kowalski", "Haddad",
               "Silva", "Johansson", "O'Brien", "Novak", "Fischer", "Moreau"]


def change_last_name(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    first = db.execute("SELECT firstname FROM shop_customers WHERE id = ?", (EMMA,)).fetchone()["firstname"]
    out = []
    for last in pick(rng, _LAST_NAMES, N):
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Change the last name on my account to {{last_name}}.",
                        values={"last_name": last},
                        eval=html_eval([target(f"{S}/customer/account/", "", must_include=[f"{first} {last}"])]),
                        sequence=[click("link", "My Account"), click("link", "Account Information"),
                                  *clear_and_type("textbox", "Last Name", last), click("button", "Save"), stop(DONE)]))
    return out


TEMPLATES = [
    (1000, price_of_product),
    (1001, sku_of_product),
    (1002, order_total),
    (1003, products_in_order_on_date),
    (1004, order_status),
    (1005, orders_between_months),
    (1006, search_sorted_by_price),
    (1007, category_sorted),
    (1008, add_to_cart),
    (1009, place_order),
    (1010, write_review),
    (1011, edit_address),
    (1012, add_to_wishlist),
    (1013, add_cheaper_of_two_tabs),
    (1014, review_count),
    (1015, review_text),
    (1016, lowest_rating_reviewer),
    (1017, category_extreme_price),
    (1018, available_options),
    (1019, update_cart_quantity),
    (1020, change_last_name),
]

# Whole templates kept out of the training split (generalisation to unseen task kinds).
TEST_ONLY_TEMPLATES = {1005, 1013, 1015, 1017, 1020}
