"""Cross-site task templates (intent_template_id 4000-4099): the shop and the forum in one task.

The agent reads something on the shop (an order of the shop's account, a product's price) and acts
on the forum (a post, a comment, the biography), as WebArena's multi-site tasks do. Several start
with two tabs (`start_url` "A |AND| B"); the reference sequences switch with `tab_focus`. Dict
shape: `templates.base.task`; facts come from the pristine seed of both sites.
"""
from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Optional

from agentenv_webarena.sites import forum
from agentenv_webarena.sites.forum.data import PRIMARY_USER
from agentenv_webarena.sites.shop import money, search_products
from agentenv_webarena.tasks.auth import ACCOUNTS
from agentenv_webarena.tasks.templates.base import (
    DONE,
    click,
    goto,
    html_eval,
    pick,
    stop,
    string_eval,
    tab_focus,
    target,
    task,
    type_text,
    typeable,
)
from agentenv_webarena.tasks.templates.common import (
    ALL_COMMENT_BODIES,
    BASE_PRODUCTS,
    CATEGORY_FORUM,
    MINE_ONLY,
    POST_URL_FUNC,
    REDDIT,
    TITLE_LOCATOR,
    edit_bio_steps,
    rows,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

SHOPPING = "__SHOPPING__"
SITES = ["shopping", "reddit"]
HISTORY = f"{SHOPPING}/sales/order/history/"
INSTANCES = 10  # instances per template (fewer when the data offer fewer)
HISTORY_PAGE_SIZE = 10  # the shop's order history shows 10 orders a page


def _task(intent_template: str, values: dict, start_url: str, ev: dict, sequence: list) -> dict:
    return task(sites=SITES, start_url=start_url, intent_template=intent_template, values=values, eval=ev,
                sequence=sequence)


def _month(ts: str) -> str:
    return dt.datetime.strptime(ts[:10], "%Y-%m-%d").strftime("%B %Y")


def _my_orders(db: sqlite3.Connection) -> list[dict]:
    """The shop account's orders as its history page lists them, with `page`, `month` and `items`."""
    orders = rows(db, "SELECT o.* FROM shop_orders o JOIN shop_customers c ON c.id = o.customer_id "
                      "WHERE c.email = ? ORDER BY o.created_at DESC, o.id DESC", (ACCOUNTS["shopping"]["username"],))
    for i, order in enumerate(orders):
        order["page"] = i // HISTORY_PAGE_SIZE + 1
        order["month"] = _month(order["created_at"])
        order["items"] = rows(db, "SELECT i.*, c.name AS category FROM shop_order_items i JOIN shop_products p "
                                  "ON p.id = i.product_id JOIN shop_categories c ON c.id = p.category_id "
                                  "WHERE i.order_id = ? ORDER BY i.id", (order["id"],))
    return orders


def _one_per_month(db: sqlite3.Connection) -> list[dict]:
    """Orders that are the only order of their month (so "my order from May 2023" names one)."""
    orders = _my_orders(db)
    months = [o["month"] for o in orders]
    return [o for o in orders if months.count(o["month"]) == 1]


def _priciest(order: dict) -> Optional[dict]:
    """The item with the highest unit price, when exactly one has it."""
    ranked = sorted(order["items"], key=lambda i: -i["price"])
    if len(ranked) > 1 and ranked[0]["price"] == ranked[1]["price"]:
        return None
    return ranked[0]


def _open_order(order: dict) -> list[dict]:
    """From the order history's first page, open the order's page."""
    steps = [click("link", f"Page {order['page']}")] if order["page"] > 1 else []
    return steps + [click("link", f"View Order {order['increment_id']}")]


def _to_history_row(order: dict) -> list[dict]:
    """Make the order's history row visible (its page of the history)."""
    return [click("link", f"Page {order['page']}")] if order["page"] > 1 else []


def t4000_post_about_purchase(db, rng):
    tpl = ('Find the most expensive item of my shop order from {{month}} and post about it in the {{forum}} forum, '
           'titled "Just bought: " followed by the product name.')
    out = []
    for order in _one_per_month(db):
        item = _priciest(order)
        if item is None or not typeable(item["name"]):
            continue
        name = CATEGORY_FORUM.get(item["category"], "AskReddit")
        title = f"Just bought: {item['name']}"
        ev = html_eval([target(POST_URL_FUNC, TITLE_LOCATOR, exact=title)], with_url=f"{REDDIT}/f/{name}")
        seq = _open_order(order) + [tab_focus(1), click("link", "Submit a post"),
                                    type_text("textbox", "Title", title, enter=False),
                                    click("button", "Create submission"), stop(DONE)]
        out.append(_task(tpl, {"month": order["month"], "forum": name}, f"{HISTORY} |AND| {REDDIT}/f/{name}", ev, seq))
    return pick(rng, out, INSTANCES)


def t4001_ask_if_worth_price(db, rng):
    tpl = ('Look up the price of "{{product}}" on the shop, then ask in the {{forum}} forum whether it is worth the '
           'money; the post title must include the price.')
    products = rows(db, "SELECT p.id, p.name, p.price, c.name AS category FROM shop_products p JOIN shop_categories c "
                        "ON c.id = p.category_id WHERE p.enabled = 1 AND p.id <= ? ORDER BY p.id", (BASE_PRODUCTS,))
    out = []
    for p in products:
        name = CATEGORY_FORUM.get(p["category"])
        hits = search_products(db, p["name"])
        if name is None or not hits or hits[0][1]["id"] != p["id"] or not typeable(p["name"]):
            continue
        price = money(p["price"])
        ev = html_eval([target(POST_URL_FUNC, TITLE_LOCATOR, must_include=[price])], with_url=f"{REDDIT}/f/{name}")
        seq = [type_text("searchbox", "Search", p["name"], enter=True), tab_focus(1), click("link", "Submit a post"),
               type_text("textbox", "Title", f"Is the {p['name']} worth {price}?", enter=False),
               click("button", "Create submission"), stop(DONE)]
        out.append(_task(tpl, {"product": p["name"], "forum": name}, f"{SHOPPING} |AND| {REDDIT}/f/{name}", ev, seq))
    return pick(rng, out, INSTANCES)


def t4002_ask_about_order_total(db, rng):
    tpl = ("Find the grand total of my shop order from {{month}} and ask in the personalfinance forum whether that was "
           "too much to spend; put the amount in the post title.")
    out = []
    for order in _one_per_month(db):
        total = money(order["grand_total"])
        ev = html_eval([target(POST_URL_FUNC, TITLE_LOCATOR, must_include=[total])],
                       with_url=f"{REDDIT}/f/personalfinance")
        seq = _to_history_row(order) + [goto(f"{REDDIT}/f/personalfinance"), click("link", "Submit a post"),
                                         type_text("textbox", "Title", f"Did I overspend? {total} on one order",
                                                   enter=False),
                                         click("button", "Create submission"), stop(DONE)]
        out.append(_task(tpl, {"month": order["month"]}, HISTORY, ev, seq))
    return pick(rng, out, INSTANCES)


def t4003_bio_from_purchase(db, rng):
    tpl = ('Set my forum biography to "Proud owner of <product>", where <product> is the most expensive item of my '
           "shop order from {{month}}.")
    out = []
    for order in _one_per_month(db):
        item = _priciest(order)
        if item is None or not typeable(item["name"]):
            continue
        bio = f"Proud owner of {item['name']}"
        ev = html_eval([target(f"{REDDIT}/user/{PRIMARY_USER}", "document.querySelector('.user-bio').outerText",
                               exact=bio)])
        seq = ([tab_focus(1)] + _open_order(order) +
               [tab_focus(0)] + edit_bio_steps(db, bio) + [click("button", "Save"), stop(DONE)])
        out.append(_task(tpl, {"month": order["month"]}, f"{REDDIT}/user/{PRIMARY_USER} |AND| {HISTORY}", ev, seq))
    return pick(rng, out, INSTANCES)


def t4004_comment_order_number(db, rng):
    tpl = 'Comment on my forum post "{{title}}" with the order number of my shop order from {{month}}.'
    posts = [p for p in forum.submission_list(db, sort="new", author=PRIMARY_USER) if typeable(p["title"])]
    orders = _one_per_month(db)
    out = []
    for post, order in zip(pick(rng, posts, len(posts)), pick(rng, orders, len(orders)), strict=False):
        url = REDDIT + forum.post_path(post["forum"], post["id"], post["title"])
        ev = html_eval([target(url, ALL_COMMENT_BODIES, must_include=[order["increment_id"]],
                               prep_actions=[MINE_ONLY])])
        seq = ([goto(HISTORY)] + _to_history_row(order) +
               [goto(url),
                type_text("textbox", "Comment", f"My order number was {order['increment_id']}.", enter=False),
                click("button", "Post"), stop(DONE)])
        out.append(_task(tpl, {"title": post["title"], "month": order["month"]}, url, ev, seq))
    return out[:INSTANCES]


def t4005_post_order_number(db, rng):
    tpl = "Post the {{what}} of my shop order from {{month}} in the {{forum}} forum."
    note = "The shop shows no tracking numbers for orders, so there is nothing to post."
    orders = pick(rng, _one_per_month(db), INSTANCES)
    out = []
    for i, order in enumerate(orders):
        name = CATEGORY_FORUM.get(order["items"][0]["category"], "AskReddit")
        start = f"{HISTORY} |AND| {REDDIT}/f/{name}"
        if i < 4:  # infeasible: the shop has no tracking numbers
            out.append(_task(tpl, {"what": "tracking number", "month": order["month"], "forum": name}, start,
                             string_eval(fuzzy="N/A", note=note), _open_order(order) + [stop("N/A")]))
            continue
        number = order["increment_id"]
        ev = html_eval([target(POST_URL_FUNC, "", must_include=[number])], with_url=f"{REDDIT}/f/{name}")
        seq = _to_history_row(order) + [tab_focus(1), click("link", "Submit a post"),
                                        type_text("textbox", "Title", f"My order number is {number}", enter=False),
                                        click("button", "Create submission"), stop(DONE)]
        out.append(_task(tpl, {"what": "order number", "month": order["month"], "forum": name}, start, ev, seq))
    rng.shuffle(out)
    return out


# Held out: every instance of these goes to the test split (templates never seen in training).
TEST_ONLY_TEMPLATES = {4003, 4004}

TEMPLATES = [
    (4000, t4000_post_about_purchase),
    (4001, t4001_ask_if_worth_price),
    (4002, t4002_ask_about_order_total),
    (4003, t4003_bio_from_purchase),
    (4004, t4004_comment_order_number),
    (4005, t4005_post_order_number),
]
