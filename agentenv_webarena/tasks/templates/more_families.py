"""More task families after WebArena's own, template ids 9200-9299.

Shop admin: special prices (Advanced Pricing, optionally dated, read back on the edit page and the storefront),
an order's shipping or billing address, the search terms grid (counts, top terms, deleting, redirecting), customers'
newsletter subscriptions and previewing a theme; storefront: subscribing to the newsletter; code host: a project
made from a built-in template; map: the states a US state borders (and the state a place is in); a storefront +
admin task that starts on the storefront. Dict shape: `templates.base.task`; facts come from the pristine seed
and the sites' own data, so pages and answers agree. State-changing tasks pick targets whose pristine state fails
the check; a few instances ask for what does not exist (answer "N/A").
"""
from __future__ import annotations

import sqlite3
from typing import Any

from agentenv_webarena.sites import world
from agentenv_webarena.sites.gitlab.model import slugify
from agentenv_webarena.sites.gitlab.project_templates import PROJECT_TEMPLATES
from agentenv_webarena.sites.map.search import lookup
from agentenv_webarena.sites.map.states import STATES, borders, state_by_name
from agentenv_webarena.sites.shop import long_date, money, site_now
from agentenv_webarena.sites.shop.admin_content import THEMES
from agentenv_webarena.tasks.templates.base import (
    DONE,
    clear_and_type,
    click,
    goto,
    html_eval,
    pick,
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
    BASE_CUSTOMERS,
    GITLAB,
    MAP,
    find_customer,
    find_order,
    find_product,
    findable,
    js_string,
    landmarks,
    open_product,
    order_url,
    rows,
    searchable_products,
    sellable_products,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

A = ADMIN
S = "__SHOPPING__"
N = 8  # instances per template (fewer where the data offer fewer)


def _na(note: str) -> dict:
    return string_eval(fuzzy="N/A", note=note, raw="N/A")


def _value(selector: str) -> str:
    """A locator reading an input's value."""
    return f"document.querySelector({js_string(selector)}).value"


def _text(selector: str) -> str:
    """A locator reading an element's text."""
    return f"document.querySelector({js_string(selector)}).outerText"


# --- admin: special prices ----------------------------------------------------------------------------

PRICE_SHOWN = _text("#product-price")


def _special_products(db: sqlite3.Connection) -> list[sqlite3.Row]:
    return searchable_products(db, [p for p in sellable_products(db) if p["price"] >= 10])


def _set_special(price: str, start: str = "", end: str = "") -> list[dict]:
    steps = [click("DisclosureTriangle", "Advanced Pricing"), type_text("textbox", "Special Price", price, enter=False)]
    if start:
        steps.append(type_text("textbox", "Special Price From", start, enter=False))
    if end:
        steps.append(type_text("textbox", "Special Price To", end, enter=False))
    return steps + [click("button", "Save")]


def _special_checks(p: sqlite3.Row, special: str, *, shown: str, start: str = "", end: str = "") -> list[dict]:
    """The edit page keeps the regular price and holds the special one (and dates); the storefront shows `shown`."""
    edit = f"{A}/catalog/product/edit/id/{p['id']}/"
    return [target(edit, _value("#product-special-price"), exact=special),
            target(edit, _value("#product-price"), exact=f"{p['price']:.2f}"),
            target(edit, _value("#product-special-from"), exact=start),
            target(edit, _value("#product-special-to"), exact=end),
            target(f"{S}/{p['slug']}.html", PRICE_SHOWN, exact=shown)]


def t9200_special_price_markdown(db, rng):
    tpl = "Mark {{product}} down by {{percent}}% with a special price, leaving its regular price as it is."
    out = []
    for p in pick(rng, _special_products(db), N):
        percent = rng.choice([10, 15, 20, 25, 30, 40])
        special = f"{round(p['price'] * (100 - percent) / 100, 2):.2f}"
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl,
                        values={"product": p["name"], "percent": percent},
                        eval=html_eval(_special_checks(p, special, shown=f"${special}")),
                        sequence=[*find_product(p), *_set_special(special), stop(DONE)]))
    return out


def _us(iso: str) -> str:
    return f"{iso[5:7]}/{iso[8:10]}/{iso[:4]}"


def t9201_dated_special_price(db, rng):
    tpl = "Run a special price of ${{price}} on {{product}} {{period}}."
    year = int(site_now(db)[:4])
    periods = [(f"through the end of {year}", "", f"{year}-12-31"),
               (f"for the first week of January {year + 1}", f"{year + 1}-01-01", f"{year + 1}-01-07"),
               (f"during February {year + 1}", f"{year + 1}-02-01", f"{year + 1}-02-29" if (year + 1) % 4 == 0
                else f"{year + 1}-02-28"),
               (f"from March 10 to March 20, {year + 1}", f"{year + 1}-03-10", f"{year + 1}-03-20")]
    today = site_now(db)[:10]
    out = []
    for p in pick(rng, _special_products(db), N):
        wording, start, end = rng.choice(periods)
        special = f"{p['price'] * rng.choice([0.7, 0.75, 0.8, 0.85]):.2f}"
        active = (not start or start <= today) and today <= end
        shown = f"${special}" if active else money(p["price"])
        start_us, end_us = (_us(start) if start else ""), _us(end)
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl,
                        values={"price": special, "product": p["name"], "period": wording},
                        eval=html_eval(_special_checks(p, special, shown=shown, start=start_us, end=end_us)),
                        sequence=[*find_product(p), *_set_special(special, start_us, end_us), stop(DONE)]))
    return out


def t9221_special_below_store_price(db, rng):
    tpl = ("Look up what {{product}} sells for in our storefront, then give it a special price {{discount}} below "
           "that in the admin.")
    out = []
    for p in pick(rng, _special_products(db), N):
        off = rng.choice([2, 3, 5])
        special = f"{p['price'] - off:.2f}"
        out.append(task(sites=["shopping", "shopping_admin"], start_url=S, intent_template=tpl,
                        values={"product": p["name"], "discount": f"${off}"},
                        eval=html_eval(_special_checks(p, special, shown=f"${special}")),
                        sequence=[*open_product(p), goto(A), *find_product(p), *_set_special(special),
                                  stop(DONE)]))
    return out


# --- admin: an order's addresses ----------------------------------------------------------------------

# (street, second line, city, state code, ZIP)
_ADDRESSES = [("4000 Forbes Ave", "Suite 210", "Pittsburgh", "PA", "15213"),
              ("88 Lakeview Terrace", "", "Madison", "WI", "53703"),
              ("1207 Cedar Hollow Rd", "Apt 4C", "Austin", "TX", "78704"),
              ("350 Harbor Point Blvd", "", "Baltimore", "MD", "21230"),
              ("19 Orchard Lane", "Unit 7", "Burlington", "VT", "05401"),
              ("742 Sunset Ridge Dr", "", "Boise", "ID", "83702"),
              ("2250 Prairie Wind Ct", "Apt 12", "Omaha", "NE", "68102"),
              ("61 Beacon Hill Way", "", "Portland", "ME", "04101"),
              ("905 Magnolia Bend", "Suite 300", "Savannah", "GA", "31401"),
              ("1330 Red Rock Pkwy", "", "Tucson", "AZ", "85701")]


def _address_words(a: tuple) -> str:
    return ", ".join(x for x in a if x)


def _address_steps(order: sqlite3.Row, a: tuple) -> list[dict]:
    """On the order address form (pre-filled with `order`'s shipping address): type address `a`."""
    street, line2, city, region, postcode = a
    steps = [*clear_and_type("textbox", "Street Address", street)]
    if line2:
        steps.append(type_text("textbox", "Street Address: Line 2", line2, enter=False))
    return (steps + clear_and_type("textbox", "City", city) + clear_and_type("textbox", "State/Province", region)
            + clear_and_type("textbox", "Zip/Postal Code", postcode) + [click("button", "Save Order Address")])


def _box(kind: str) -> str:
    return _text(f".order-{kind}-address address")


def _orders_with_customer(db: sqlite3.Connection) -> list[sqlite3.Row]:
    return db.execute("SELECT o.*, c.firstname || ' ' || c.lastname AS customer FROM shop_orders o JOIN "
                      "shop_customers c ON c.id = o.customer_id WHERE o.status IN ('pending', 'processing', 'holded') "
                      "AND o.ship_street NOT LIKE '%,%' ORDER BY o.id").fetchall()


def t9202_shipping_address(db, rng):
    tpl = "Change the shipping address of order #{{order_number}} to {{address}}."
    out = []
    for o in pick(rng, _orders_with_customer(db), N):
        a = rng.choice(_ADDRESSES)
        want = [x for x in (a[0], a[1], a[2], a[4]) if x]
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl,
                        values={"order_number": o["increment_id"], "address": _address_words(a)},
                        eval=html_eval([target(order_url(o), _box("shipping"), must_include=want)]),
                        sequence=[*find_order(o), click("link", "Edit Shipping Address"), *_address_steps(o, a),
                                  stop(DONE)]))
    last = db.execute("SELECT MAX(CAST(increment_id AS INTEGER)) FROM shop_orders").fetchone()[0]
    missing = f"{last + 40:09d}"
    out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl,
                    values={"order_number": missing, "address": _address_words(rng.choice(_ADDRESSES))},
                    eval=_na(f"There is no order #{missing}."),
                    sequence=[click("link", "Orders"), type_text("textbox", "Search by keyword", missing),
                              stop("N/A")]))
    rng.shuffle(out)
    return out


def t9203_billing_address(db, rng):
    tpl = ("{{customer}} says the billing address on their order from {{date}} is wrong: it should be {{address}}. "
           "Fix it, but leave where the order ships to alone.")
    orders = _orders_with_customer(db)
    keys = [(o["customer"], long_date(o["created_at"])) for o in orders]
    unique = [o for o, k in zip(orders, keys, strict=True) if keys.count(k) == 1]
    out = []
    for o in pick(rng, unique, N):
        a = rng.choice(_ADDRESSES)
        want = [x for x in (a[0], a[1], a[2], a[4]) if x]
        ev = html_eval([target(order_url(o), _box("billing"), must_include=want),
                        target(order_url(o), _box("shipping"), must_include=[o["ship_street"], o["ship_postcode"]])])
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl,
                        values={"customer": o["customer"], "date": long_date(o["created_at"]),
                                "address": _address_words(a)}, eval=ev,
                        sequence=[click("link", "Orders"), type_text("textbox", "Search by keyword", o["customer"]),
                                  click("link", f"View order {o['increment_id']}"),
                                  click("link", "Edit Billing Address"), *_address_steps(o, a), stop(DONE)]))
    return out


# --- admin: search terms ------------------------------------------------------------------------------

TERMS_GRID = f"{A}/search/term/index/"


def _terms(db: sqlite3.Connection) -> list[dict]:
    """The seeded search terms, most used first."""
    return rows(db, "SELECT * FROM shop_search_terms ORDER BY popularity DESC, id")


def _term_row_count(query: str) -> str:
    return f"document.querySelectorAll({js_string(f'tr.data-row[data-term={json_attr(query)}]')}).length.toString()"


def json_attr(text: str) -> str:
    """`text` as a double-quoted CSS attribute value."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _open_term(query: str) -> list[dict]:
    return [click("link", "Search Terms"), type_text("textbox", "Search by keyword", query)]


def t9204_search_term_uses(db, rng):
    tpl = "How many times have shoppers searched our store for \"{{query}}\"?"
    out = []
    for t in pick(rng, _terms(db), N):
        n = str(t["popularity"])
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl, values={"query": t["query_text"]},
                        eval=string_eval(exact=n), sequence=[*_open_term(t["query_text"]), stop(n)]))
    return out


def t9205_top_search_terms(db, rng):
    tpl = "List the top {{n}} search terms in my store."
    terms = _terms(db)
    out = []
    for n in range(1, 6):
        top = [t["query_text"] for t in terms[:n]]
        ev = string_eval(exact=top[0]) if n == 1 else string_eval(must_include=top)
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl, values={"n": n}, eval=ev,
                        sequence=[click("link", "Search Terms"), stop(", ".join(top))]))
    return out


def t9206_most_used_with_results(db, rng):
    tpl = "Of the search terms that found exactly {{k}} {{products}}, which one have shoppers used the most?"
    terms = _terms(db)
    out = []
    for k in sorted({t["num_results"] for t in terms}):
        group = [t for t in terms if t["num_results"] == k]
        if len(group) < 2 or group[0]["popularity"] == group[1]["popularity"]:
            continue
        answer = group[0]["query_text"]
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl,
                        values={"k": k, "products": "product" if k == 1 else "products"},
                        eval=string_eval(exact=answer),
                        sequence=[click("link", "Search Terms"), click("link", "Sort by Results"),
                                  click("link", "Sort by Results (descending)"), stop(answer)]))
    return pick(rng, out, N)


def t9207_delete_search_term(db, rng):
    tpl = "Remove the search term \"{{query}}\" from the store's search terms."
    terms = _terms(db)
    out = []
    for t in pick(rng, terms, N - 1):
        ev = html_eval([target(f"{TERMS_GRID}?q={t['query_text'].replace(' ', '+')}", _term_row_count(t["query_text"]),
                               exact="0"),
                        target(TERMS_GRID, _text("#records-found"), exact=f"{len(terms) - 1} records found")])
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl, values={"query": t["query_text"]},
                        eval=ev, sequence=[*_open_term(t["query_text"]), click("link", f"Edit {t['query_text']}"),
                                           click("button", "Delete Search"), stop(DONE)]))
    missing = "paddle board"
    assert all(t["query_text"] != missing for t in terms)
    out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl, values={"query": missing},
                    eval=_na(f"Nobody searched for {missing!r}: there is no such search term to remove."),
                    sequence=[*_open_term(missing), stop("N/A")]))
    rng.shuffle(out)
    return out


def t9208_search_term_redirect(db, rng):
    tpl = ("Shoppers who search for \"{{query}}\" should land straight on our {{category}} category page "
           "({{path}}). Set that up.")
    cats = rows(db, "SELECT name, slug FROM shop_categories WHERE id <= ? ORDER BY id", (BASE_CATEGORIES,))
    out = []
    for t in pick(rng, [t for t in _terms(db) if t["num_results"] > 0], N):
        c = rng.choice(cats)
        path = f"/{c['slug']}.html"
        ev = html_eval([target(f"{A}/search/term/edit/id/{t['id']}/", _value("#redirect"), exact=path)])
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl,
                        values={"query": t["query_text"], "category": c["name"], "path": path}, eval=ev,
                        sequence=[*_open_term(t["query_text"]), click("link", f"Edit {t['query_text']}"),
                                  type_text("textbox", "Redirect URL", path, enter=False),
                                  click("button", "Save Search"), stop(DONE)]))
    return out


# --- newsletter ---------------------------------------------------------------------------------------

SUBSCRIBED_BOX = "document.querySelector('[title=\"Newsletter Subscription\"]').checked.toString()"


def _customers(db: sqlite3.Connection) -> list[dict]:
    """Customers other than Emma with their newsletter state: `subscribed` 1, 0 (unsubscribed) or None (never)."""
    return rows(db, "SELECT c.id, c.firstname || ' ' || c.lastname AS name, n.subscribed FROM shop_customers c "
                    "LEFT JOIN shop_newsletter_subscribers n ON n.customer_id = c.id WHERE c.id != 1 AND c.id <= ? "
                    "ORDER BY c.id", (BASE_CUSTOMERS,))


def _customer_page(c: dict) -> str:
    return f"{A}/customer/index/edit/id/{c['id']}/"


def _toggle_newsletter(c: dict) -> list[dict]:
    return [*find_customer(c["name"]), click("link", f"Edit {c['name']}"), click("checkbox", "Newsletter Subscription"),
            click("button", "Save Customer")]


def t9209_storefront_subscribe(db, rng):
    tpl = "Sign me up for the store's {{what}}."
    out = []
    for what in ("newsletter", "General Subscription newsletter"):
        ev = html_eval([target(f"{S}/newsletter/manage/",
                               "document.querySelector('[title=\"General Subscription\"]').checked.toString()",
                               exact="true"),
                        target(f"{S}/customer/account/", _text(".box-newsletter"),
                               must_include=['subscribed to "General Subscription"'])])
        out.append(task(sites=["shopping"], start_url=S, intent_template=tpl, values={"what": what}, eval=ev,
                        sequence=[click("link", "My Account"), click("link", "Edit", nth=1),
                                  click("checkbox", "General Subscription"), click("button", "Save"), stop(DONE)]))
    return out


def t9210_unsubscribe_customer(db, rng):
    tpl = "Our customer {{customer}} asked to stop getting our newsletter. Take care of it."
    out = []
    for c in pick(rng, [c for c in _customers(db) if c["subscribed"] == 1], N):
        ev = html_eval([target(_customer_page(c), SUBSCRIBED_BOX, exact="false"),
                        target(_customer_page(c), _text("#newsletter-status"), must_include=["Unsubscribed"])])
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl, values={"customer": c["name"]},
                        eval=ev, sequence=[*_toggle_newsletter(c), stop(DONE)]))
    stranger = "Priya Castellano"
    assert all(c["name"] != stranger for c in _customers(db))
    out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl, values={"customer": stranger},
                    eval=_na(f"{stranger} is not one of our customers."),
                    sequence=[*find_customer(stranger), stop("N/A")]))
    rng.shuffle(out)
    return out


def t9211_subscribe_customer(db, rng):
    tpl = "{{customer}} told us on the phone they want our newsletter after all. Subscribe them."
    out = []
    for c in pick(rng, [c for c in _customers(db) if c["subscribed"] != 1], N):
        ev = html_eval([target(_customer_page(c), SUBSCRIBED_BOX, exact="true"),
                        target(f"{A}/newsletter/subscriber/?q={c['name'].replace(' ', '+')}",
                               _text("td.col-status"), exact="Subscribed")])
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl, values={"customer": c["name"]},
                        eval=ev, sequence=[*_toggle_newsletter(c), stop(DONE)]))
    return out


def t9212_is_subscribed(db, rng):
    tpl = "Is {{customer}} currently subscribed to our newsletter? Answer yes or no."
    out = []
    for c in pick(rng, _customers(db), N):
        answer = "yes" if c["subscribed"] == 1 else "no"
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl, values={"customer": c["name"]},
                        eval=string_eval(exact=answer),
                        sequence=[click("link", "Newsletter Subscribers"),
                                  type_text("textbox", "Search by keyword", c["name"]), stop(answer)]))
    return out


# --- admin: themes ------------------------------------------------------------------------------------

def t9219_preview_theme(db, rng):
    tpl = "Preview {{theme}} for my shop."
    grid_themes = {tid: t for tid, t in THEMES.items() if t[3] == "frontend"}
    out = []
    for tid, (title, _, parent, _) in grid_themes.items():
        out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl,
                        values={"theme": f"the {title} theme"},
                        eval=url_eval(f"{A}/admin/system_design_theme/edit/id/{tid}"),
                        sequence=[click("link", "Themes"), click("link", f"Edit {title}"), stop(DONE)]))
        if parent is not None:
            base = THEMES[parent][0]
            out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl,
                            values={"theme": f"the theme that {title} is built on"},
                            eval=url_eval(f"{A}/admin/system_design_theme/edit/id/{parent}"),
                            sequence=[click("link", "Themes"), click("link", f"Edit {base}"), stop(DONE)]))
    out.append(task(sites=["shopping_admin"], start_url=A, intent_template=tpl,
                    values={"theme": "the Magento Hyva theme"},
                    eval=_na("The store has no Hyva theme installed: only Magento Blank and Magento Luma."),
                    sequence=[click("link", "Themes"), stop("N/A")]))
    return out


# --- code host: a project from a built-in template ----------------------------------------------------

def _visibility_check(path: str, visibility: str) -> dict:
    return target(f"{GITLAB}/byteblaze/{path}", "document.querySelector('.visibility-icon').getAttribute('title')",
                  must_include=[visibility])


def _from_template_steps(title: str, name: str, visibility: str) -> list[dict]:
    return [click("link", "New project"), click("link", "Create from template"),
            click("link", f"Use template {title}"), type_text("textbox", "Project name", name, enter=False),
            click("radio", visibility), click("button", "Create project")]


_PROJECT_NAMES = ["web_agent_demo", "shop_backend", "trip_planner", "recipe_box", "agent_dashboard", "field_notes",
                  "habit_tracker", "budget_buddy", "study_buddy", "pixel_gallery"]


def _free_names(db: sqlite3.Connection) -> list[str]:
    taken = {r["path"].lower() for r in rows(db, "SELECT path FROM gitlab_projects WHERE namespace = 'byteblaze'")}
    return [n for n in _PROJECT_NAMES if slugify(n) not in taken]


def _template_eval(name: str, title: str, visibility: str) -> dict:
    path = slugify(name)
    return html_eval([_visibility_check(path, visibility),
                      target(f"{GITLAB}/byteblaze/{path}/-/commits", "",
                             must_include=[f"Initialized from '{title}' project template"])])


def t9213_project_from_template(db, rng):
    tpl = "Start a {{visibility}} project {{name}} with the {{template}} template."
    out = []
    titles = [t.title for t in PROJECT_TEMPLATES.values()]
    for name, title in zip(pick(rng, _free_names(db), N), pick(rng, titles, N), strict=False):
        visibility = rng.choice(["Private", "Internal", "Public"])
        out.append(task(sites=["gitlab"], start_url=GITLAB, intent_template=tpl,
                        values={"visibility": visibility.lower(), "name": name, "template": title},
                        eval=_template_eval(name, title, visibility),
                        sequence=[*_from_template_steps(title, name, visibility), stop(DONE)]))
    return out


# what the project is for -> the template that fits (None: no built-in template fits)
_GOALS = [("build a Java web service with Spring Boot", "spring"),
          ("write a web server in Node with Express", "express"),
          ("start an Android app", "android"), ("publish a static website written in plain HTML", "plainhtml"),
          ("build a Ruby web application with an MVC layout", "rails"), ("run a blog generated by Jekyll", "jekyll"),
          ("write an iPhone app in Swift", "iosswift"), ("start a C# console program", "dotnetcore"),
          ("build a Django web application", None)]


def t9214_right_template(db, rng):
    tpl = "Create a {{visibility}} repository called \"{{name}}\" using the right template to {{goal}}."
    out = []
    names = _free_names(db)
    rng.shuffle(names)
    for (goal, key), name in zip(_GOALS, names + names, strict=False):
        visibility = rng.choice(["Private", "Public"])
        values = {"visibility": visibility.lower(), "name": name, "goal": goal}
        if key is None:
            out.append(task(sites=["gitlab"], start_url=GITLAB, intent_template=tpl, values=values,
                            eval=_na("There is no built-in Django template to start from."),
                            sequence=[click("link", "New project"), click("link", "Create from template"),
                                      stop("N/A")]))
            continue
        title = PROJECT_TEMPLATES[key].title
        out.append(task(sites=["gitlab"], start_url=GITLAB, intent_template=tpl, values=values,
                        eval=_template_eval(name, title, visibility),
                        sequence=[*_from_template_steps(title, name, visibility), stop(DONE)]))
    return out


# --- map: US states -----------------------------------------------------------------------------------

def _open_state(name: str) -> list[dict]:
    return [type_text("searchbox", "Search", name), click("link", name)]


def t9216_state_borders(db, rng):
    tpl = "Which US states border {{state}}?"
    out = []
    for s in pick(rng, list(STATES), N + 2):
        answer = ", ".join(s.neighbours)
        out.append(task(sites=["map"], start_url=MAP, intent_template=tpl, values={"state": s.name},
                        eval=string_eval(must_include=list(s.neighbours)),
                        sequence=[*_open_state(s.name), stop(answer)]))
    return out


def _located() -> list[Any]:
    """Towns (not neighbourhoods) and landmarks the search finds, in a state the map has a page for."""
    known = {s.name for s in STATES}
    towns = [t for t in world.TOWNS if not t.parent and t.state in known and findable(t)]
    return towns + [p for p in landmarks() if p.state in known]


def t9217_borders_of_state_of(db, rng):
    tpl = "Which states border the state that {{place}} is in?"
    cands = _located()
    by_state: dict[str, list[Any]] = {}
    for obj in cands:
        by_state.setdefault(obj.state, []).append(obj)
    chosen = [rng.choice(objs) for _, objs in sorted(by_state.items())]
    chosen += pick(rng, [o for o in cands if o not in chosen], N - 1 - len(chosen))
    out = []
    for obj in chosen:
        s = state_by_name(obj.state)
        out.append(task(sites=["map"], start_url=MAP, intent_template=tpl, values={"place": obj.name},
                        eval=string_eval(must_include=list(s.neighbours)),
                        sequence=[type_text("searchbox", "Search", obj.name), click("link", obj.name, nth=0),
                                  *_open_state(s.name), stop(", ".join(s.neighbours))]))
    fake = "Lakeshore Maritime Aquarium"
    assert lookup(fake) is None or lookup(fake).name != fake
    out.append(task(sites=["map"], start_url=MAP, intent_template=tpl, values={"place": fake},
                    eval=_na(f"The map has no place called {fake}."),
                    sequence=[type_text("searchbox", "Search", fake), stop("N/A")]))
    rng.shuffle(out)
    return out


def t9218_share_border(db, rng):
    tpl = "Do {{a}} and {{b}} share a border? Answer yes or no."
    names = [s.name for s in STATES]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    yes = [p for p in pairs if borders(*p)]
    no = [p for p in pairs if not borders(*p)]
    out = []
    for (a, b), answer in [(p, "yes") for p in pick(rng, yes, N // 2)] + [(p, "no") for p in pick(rng, no, N // 2)]:
        out.append(task(sites=["map"], start_url=MAP, intent_template=tpl, values={"a": a, "b": b},
                        eval=string_eval(exact=answer), sequence=[*_open_state(a), stop(answer)]))
    rng.shuffle(out)
    return out


# Held out: every instance of these goes to the test split (templates never seen in training).
TEST_ONLY_TEMPLATES = {9201, 9203, 9206, 9208, 9211, 9214, 9217, 9221}

# Every `t92NN_*` function above, in id order.
TEMPLATES = [(int(name[1:5]), fn) for name, fn in sorted(globals().items()) if name.startswith("t92") and callable(fn)]
