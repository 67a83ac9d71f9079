"""Later task templates of the first three site kinds and their pairs, template ids 8000-8099.

Owns kinds of work the earlier modules (`shopping`, `admin`, `forum`, `cross`) do not cover, after
WebArena's own shopping / shopping_admin / reddit intents: reviews by star rating, buying an old
order again, wish-list and cart housekeeping, finding an order by its status, rating comparisons;
bulk order actions, deleting reviews by rating, report comparisons across months, customer totals,
filtered order grids, comparing the customers of a sign-up month; retracting votes, sharing links,
upvoting a user's posts, users' favourite forums; and two pairs (admin report -> store wish list,
store reviews -> forum).

It reuses the data helpers and locators the modules share (`templates.common`) and, like them,
reads the pristine seed, leaves out instances whose answer would be ambiguous (ties, substrings),
and picks state-changing targets whose pristine state fails the check. It does not own the sites
or the task file (`tasks.generate`).
"""
from __future__ import annotations

import calendar
import random
import sqlite3
from collections import Counter
from urllib.parse import urlencode

from agentenv_webarena.sites.forum.data import PRIMARY_USER
from agentenv_webarena.sites.shop import STATUS_LABELS, money, option_text, product_options, rating_summary
from agentenv_webarena.sites.shop.admin import bestsellers, sales_report
from agentenv_webarena.tasks.templates.base import (
    DONE,
    clear_and_type,
    click,
    goto,
    html_eval,
    month_label,
    pick,
    stop,
    string_eval,
    tab_focus,
    target,
    task,
    type_text,
    typeable,
    url_eval,
)
from agentenv_webarena.tasks.templates.common import (
    BASE_CUSTOMERS,
    BASE_PRODUCTS,
    CART_LOCATOR,
    CATEGORY_FORUM,
    EMMA,
    POST_URL_FUNC,
    REDDIT,
    STATUS_LOCATOR,
    TITLE_LOCATOR,
    VOTE_LOCATOR,
    approved_reviews,
    cart_product_ids,
    emma_orders,
    find_customer,
    forums_by_name,
    in_cart_locator,
    is_searchable_post,
    js_string,
    my_vote,
    open_post_via_search,
    open_product,
    order_history_steps,
    order_items,
    order_url,
    post_list,
    post_url,
    searchable_products,
    sellable_products,
    users_with_posts,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

S = "__SHOPPING__"
A = "__SHOPPING_ADMIN__"
N = 8  # instances per template (fewer when the data offer fewer)


# --- helpers -----------------------------------------------------------------------------------------

def _star_words(stars: int) -> str:
    return f"{stars}-star"


def _star_groups(db: sqlite3.Connection, product_id: int) -> list[tuple[int, list[sqlite3.Row]]]:
    """(stars, reviews) of the product's approved reviews per star level, where a level has 1-3 reviews and
    is not the only level (so "the N-star reviews" names a short, proper subset)."""
    reviews = approved_reviews(db, product_id)
    out = []
    for stars in range(1, 6):
        group = [r for r in reviews if r["rating_percent"] == stars * 20]
        if 1 <= len(group) <= 3 and len(group) < len(reviews):
            out.append((stars, group))
    return out


def _in_wishlist(name: str) -> str:
    """A locator answering "yes" when the wish list holds product `name`, else "no"."""
    return ("[...document.querySelectorAll('#wishlist-items li.wishlist-item')].some(li => "
            f"li.dataset.name === {js_string(name)}) ? 'yes' : 'no'")


def _report_steps(report: str, date_from: str, date_to: str, period: str) -> list[dict]:
    """Open an admin report (`Orders Report`, `Bestsellers Report`) for a date range, shown by `period`."""
    return [click("link", report), type_text("textbox", "From", date_from, enter=False),
            type_text("textbox", "To", date_to, enter=False), click("radio", period), click("button", "Show Report")]


def _month_range(interval: str) -> tuple[str, str]:
    """`2023-02` -> (`2023-02-01`, `2023-02-28`)."""
    last = calendar.monthrange(int(interval[:4]), int(interval[5:]))[1]
    return f"{interval}-01", f"{interval}-{last:02d}"


def _overlap(a: str, b: str) -> bool:
    """One name contains the other (an answer naming one would also match the other)."""
    return a.lower() in b.lower() or b.lower() in a.lower()


def _customers(db: sqlite3.Connection) -> list[sqlite3.Row]:
    return db.execute("SELECT * FROM shop_customers WHERE id <= ? ORDER BY id", (BASE_CUSTOMERS,)).fetchall()


def _full_name(c: sqlite3.Row) -> str:
    return f"{c['firstname']} {c['lastname']}"


# --- shopping: information seeking -------------------------------------------------------------------

def reviewers_by_stars(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for p in searchable_products(db, sellable_products(db)):
        for stars, group in _star_groups(db, p["id"]):
            names = [r["nickname"] for r in group]
            if len(set(names)) == len(names):
                cases.append((p, stars, names))
    out = []
    for p, stars, names in pick(rng, cases, N):
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="List the nicknames of the customers who gave {{product}} a {{stars}} review.",
                        values={"product": p["name"], "stars": _star_words(stars)},
                        eval=string_eval(must_include=names),
                        sequence=[*open_product(p), stop(", ".join(names))]))
    return out


_STATUS_WORDS = {"complete": "completed", "canceled": "canceled", "holded": "on-hold", "processing": "processing"}


def order_by_status(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    orders = emma_orders(db)  # newest first
    cases = []
    for status, word in _STATUS_WORDS.items():
        hits = [i for i, o in enumerate(orders) if o["status"] == status]
        if hits:
            cases.append(("most recent", word, hits[0]))
        if len(hits) > 1:
            cases.append(("earliest", word, hits[-1]))
    out = []
    for which, word, index in pick(rng, cases, N):
        o = orders[index]
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Open the page of my {{which}} {{status}} order.",
                        values={"which": which, "status": word},
                        eval=url_eval(f"{S}/sales/order/view/order_id/{o['id']}/"),
                        sequence=[*order_history_steps(index), click("link", f"View Order {o['increment_id']}"),
                                  stop(DONE)]))
    return out


def better_rated(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    by_category: dict[int, list[tuple[sqlite3.Row, int]]] = {}
    for p in searchable_products(db, sellable_products(db)):
        count, percent = rating_summary(db, p["id"])
        if count:
            by_category.setdefault(p["category_id"], []).append((p, percent))
    pairs = [(a, b) for group in by_category.values() for i, a in enumerate(group) for b in group[i + 1:]
             if a[1] != b[1] and not _overlap(a[0]["name"], b[0]["name"])]
    out = []
    for (a, pa), (b, pb) in pick(rng, pairs, N):
        winner = a if pa > pb else b
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Which has the higher customer rating in the store, {{product_a}} or "
                                        "{{product_b}}?",
                        values={"product_a": a["name"], "product_b": b["name"]},
                        eval=string_eval(must_include=[winner["name"]]),
                        sequence=[*open_product(a), *open_product(b), stop(winner["name"])]))
    return out


# --- shopping: state-changing ------------------------------------------------------------------------

def reorder(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    sellable = {p["id"]: p for p in searchable_products(db, sellable_products(db, options=False))}
    in_cart = cart_product_ids(db)
    cases = []
    for index, o in enumerate(emma_orders(db)):
        items = order_items(db, o["id"])
        ids = [i["product_id"] for i in items]
        if not 2 <= len(items) <= 4 or len(set(ids)) != len(ids):
            continue
        if any(i["product_id"] not in sellable or i["product_id"] in in_cart
               or sellable[i["product_id"]]["qty"] < i["qty"] for i in items):
            continue
        steps = [*order_history_steps(index), click("link", f"View Order {o['increment_id']}")]
        for i in items:
            steps += open_product(sellable[i["product_id"]])
            if i["qty"] > 1:
                steps += clear_and_type("spinbutton", "Qty", str(i["qty"]))
            steps.append(click("button", "Add to Cart"))
        if len(steps) < 29:
            cases.append((o, items, steps))
    out = []
    for o, items, steps in pick(rng, cases, N):
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Add every product of my order #{{order_number}} to my shopping cart again, "
                                        "in the same quantities.",
                        values={"order_number": o["increment_id"]},
                        eval=html_eval([target(f"{S}/checkout/cart/", CART_LOCATOR,
                                               must_include=[f"{i['name']} | Qty: {i['qty']}" for i in items])]),
                        sequence=[*steps, stop(DONE)]))
    return out


def _wishlist(db: sqlite3.Connection) -> list[sqlite3.Row]:
    return db.execute("SELECT p.* FROM shop_wishlist w JOIN shop_products p ON p.id = w.product_id "
                      "WHERE w.customer_id = ? ORDER BY w.id", (EMMA,)).fetchall()


def _cart_lines(db: sqlite3.Connection) -> list[sqlite3.Row]:
    return db.execute("SELECT p.* FROM shop_cart_items i JOIN shop_carts c ON c.id = i.cart_id JOIN shop_products p "
                      "ON p.id = i.product_id WHERE c.customer_id = ? ORDER BY i.id", (EMMA,)).fetchall()


def wishlist_to_cart(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    in_cart = cart_product_ids(db)
    cases = []
    for p in _wishlist(db):
        if not p["enabled"] or p["qty"] < 1 or p["id"] in in_cart:
            continue
        sizes, colors = product_options(p)
        if sizes and colors:  # one option to name keeps the intent short
            continue
        kind = "size" if sizes else "color"
        cases += [(p, kind, value) for value in sizes or colors] or [(p, "", "")]
    out = []
    for p, kind, value in pick(rng, cases, N):
        summary = p["name"] + (f" | {option_text(*((value, '') if kind == 'size' else ('', value)))}" if value else "")
        steps = [click("link", "My Wish List"), click("button", f"Add {p['name']} to Cart")]
        if value:  # the wish list sends a product with options to its page to choose them; the item stays listed
            steps += [click("radio", value), click("button", "Add to Cart"), click("link", "My Wish List"),
                      click("button", f"Remove {p['name']}")]
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Move {{product}}{{options}} from my wish list into my shopping cart.",
                        values={"product": p["name"], "options": f" in {kind} {value}" if value else ""},
                        eval=html_eval([target(f"{S}/checkout/cart/", CART_LOCATOR,
                                               must_include=[f"{summary} | Qty: 1"]),
                                        target(f"{S}/wishlist/", _in_wishlist(p["name"]), exact="no")]),
                        sequence=[*steps, stop(DONE)]))
    return out


def remove_from_list(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for where, lines, url, present, page in (
            ("shopping cart", _cart_lines(db), f"{S}/checkout/cart/", in_cart_locator,
             click("link", contains="My Cart")),
            ("wish list", _wishlist(db), f"{S}/wishlist/", _in_wishlist, click("link", "My Wish List"))):
        for p in lines:
            others = [q["name"] for q in lines if q["id"] != p["id"]]
            checks = [target(url, present(p["name"]), exact="no")]
            checks += [target(url, present(name), exact="yes") for name in others]
            cases.append((where, p, checks, page))
    out = []
    for where, p, checks, page in pick(rng, cases, N):
        out.append(task(sites=["shopping"], start_url=S,
                        intent_template="Remove {{product}} from my {{list}}, and keep everything else there.",
                        values={"product": p["name"], "list": where}, eval=html_eval(checks),
                        sequence=[page, click("button", f"Remove {p['name']}"), stop(DONE)]))
    return out


# --- shopping admin: information seeking -------------------------------------------------------------

def customer_complete_total(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for c in _customers(db):
        totals = [r["grand_total"] for r in db.execute("SELECT grand_total FROM shop_orders WHERE customer_id = ? "
                                                        "AND status = 'complete'", (c["id"],))]
        if len(totals) >= 2:
            cases.append((c, round(sum(totals), 2)))
    out = []
    for c, total in pick(rng, cases, N):
        name = _full_name(c)
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="What is the combined grand total of all completed orders of our customer "
                                        "{{customer}}?",
                        values={"customer": name}, eval=string_eval(must_include=[f"{total:.2f}"]),
                        sequence=[*find_customer(name), click("link", f"Edit {name}"), stop(money(total))]))
    return out


_MEASURES = {"orders": "number of orders", "items": "number of items sold", "total": "sales total"}


def report_extreme_month(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    report = sales_report(db, "month")
    cases = []
    for year in sorted({r["interval"][:4] for r in report}):
        months = [r for r in report if r["interval"].startswith(year)]
        for key, measure in _MEASURES.items():
            for extreme, best in (("highest", max), ("lowest", min)):
                value = best(r[key] for r in months)
                hits = [r for r in months if r[key] == value]
                if len(hits) == 1:
                    cases.append((year, measure, extreme, hits[0]))
    out = []
    for year, measure, extreme, row in pick(rng, cases, N):
        month = calendar.month_name[int(row["interval"][5:])]
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="According to the orders report, which month of {{year}} had the {{extreme}} "
                                        "{{measure}}?",
                        values={"year": year, "extreme": extreme, "measure": measure},
                        eval=string_eval(must_include=[month]),
                        sequence=[*_report_steps("Orders Report", f"{year}-01-01", f"{year}-12-31", "Month"),
                                  stop(f"{month} {year}")]))
    return out


def orders_grid_filter(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = [(c, status) for c in _customers(db) for (status,) in
             db.execute("SELECT DISTINCT status FROM shop_orders WHERE customer_id = ? ORDER BY status", (c["id"],))]
    out = []
    for c, status in pick(rng, cases, N):
        name = _full_name(c)
        label = STATUS_LABELS[status]
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="In the admin orders grid, show only {{customer}}'s orders with the status "
                                        "{{status}}.",
                        values={"customer": name, "status": label},
                        eval=url_eval(f"{A}/sales/order/?{urlencode({'status': status, 'q': name})}"),
                        sequence=[click("link", "Orders"), type_text("textbox", "Search by keyword", name),
                                  click("link", label), stop(DONE)]))
    return out


def top_customer_of_signup_month(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    by_month: dict[str, list[tuple[sqlite3.Row, int]]] = {}
    for c in _customers(db):
        n = db.execute("SELECT COUNT(*) FROM shop_orders WHERE customer_id = ?", (c["id"],)).fetchone()[0]
        by_month.setdefault(c["created_at"][:7], []).append((c, n))
    cases = []
    for month, group in sorted(by_month.items()):
        for extreme, best in (("most", max), ("fewest", min)):
            value = best(n for _, n in group)
            hits = [c for c, n in group if n == value]
            if len(group) >= 2 and len(hits) == 1:
                cases.append((month, extreme, hits[0], [c for c, _ in group]))
    out = []
    for month, extreme, c, group in pick(rng, cases, N):
        steps = [click("link", "All Customers")]
        for k, other in enumerate(group):
            steps.append(click("link", f"Edit {_full_name(other)}"))
            if k < len(group) - 1:
                steps.append(click("link", "Back"))
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Of the customers who signed up in {{month}}, who has placed the {{extreme}} "
                                        "orders?",
                        values={"month": month_label(month), "extreme": extreme},
                        eval=string_eval(must_include=[_full_name(c)]),
                        sequence=[*steps, stop(_full_name(c))]))
    return out


# --- shopping admin: state-changing ------------------------------------------------------------------

# order status -> (how the intent names the status, the action, its button, the status after it)
_BULK_ACTIONS = {
    "processing": ("still processing", "Ship", "Ship", "complete"),
    "holded": ("on hold", "Release", "Unhold", "processing"),
    "pending": ("pending", "Invoice", "Invoice", "processing"),
}


def bulk_order_action(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for c in _customers(db):
        for status in _BULK_ACTIONS:
            orders = db.execute("SELECT * FROM shop_orders WHERE customer_id = ? AND status = ? ORDER BY id",
                                (c["id"], status)).fetchall()
            if 1 <= len(orders) <= 3:
                cases.append((c, status, orders))
    # every kind of action first, then the rest, so a handful of instances still shows each button
    first = [next(case for case in cases if case[1] == status) for status in _BULK_ACTIONS]
    chosen = first + pick(rng, [case for case in cases if case not in first], N + 2 - len(first))
    out = []
    for c, status, orders in chosen:
        name = _full_name(c)
        words, verb, button, after = _BULK_ACTIONS[status]
        steps = [*find_customer(name), click("link", f"Edit {name}")]
        for k, o in enumerate(orders):
            steps += [click("link", f"View order {o['increment_id']}"), click("button", button)]
            if k < len(orders) - 1:
                steps.append(click("link", name))
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="{{action}} all of {{customer}}'s orders that are {{status}}.",
                        values={"action": verb, "customer": name, "status": words},
                        eval=html_eval([target(order_url(o), STATUS_LOCATOR, exact=STATUS_LABELS[after])
                                        for o in orders]),
                        sequence=[*steps, stop(DONE)]))
    rng.shuffle(out)
    return out


def _review_rows(name: str, stars: int | None = None) -> str:
    """A locator counting the reviews grid's rows of product `name` (rated `stars`, when given)."""
    rating = f" && r.cells[6].innerText.trim() === '{stars} stars'" if stars else ""
    return ("[...document.querySelectorAll('table.data-grid tbody tr')].filter(r => r.cells.length > 7 && "
            f"r.cells[7].innerText.trim() === {js_string(name)}{rating}).length + ''")


def delete_reviews_by_rating(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for p in db.execute("SELECT * FROM shop_products WHERE id <= ? ORDER BY id", (BASE_PRODUCTS,)).fetchall():
        matched = db.execute("SELECT COUNT(*) FROM shop_reviews r JOIN shop_products q ON q.id = r.product_id "
                             "WHERE q.name LIKE ?", (f"%{p['name']}%",)).fetchone()[0]
        reviews = db.execute("SELECT * FROM shop_reviews WHERE product_id = ? ORDER BY id", (p["id"],)).fetchall()
        if matched > 20 or matched != len(reviews):  # one grid page, only this product's reviews
            continue
        for stars in range(1, 6):
            doomed = [r for r in reviews if r["rating_percent"] == stars * 20]
            if 1 <= len(doomed) <= 3 and len(doomed) < len(reviews):
                cases.append((p, stars, doomed, len(reviews) - len(doomed)))
    out = []
    for p, stars, doomed, left in pick(rng, cases, N):
        grid = f"{A}/review/product/?{urlencode({'q': p['name']})}"
        steps = [click("link", "All Reviews")]
        for r in doomed:
            steps += [type_text("textbox", "Search by keyword", p["name"]), click("link", f"Edit review {r['id']}"),
                      click("button", "Delete Review")]
        out.append(task(sites=["shopping_admin"], start_url=A,
                        intent_template="Delete every {{stars}} review of {{product}}, and no other review of it.",
                        values={"stars": _star_words(stars), "product": p["name"]},
                        eval=html_eval([target(grid, _review_rows(p["name"], stars), exact="0"),
                                        target(grid, _review_rows(p["name"]), exact=str(left))]),
                        sequence=[*steps, stop(DONE)]))
    return out


# --- forum: information seeking ----------------------------------------------------------------------

def _to_user_submissions(db: sqlite3.Connection, user: str) -> list[dict] | None:
    """Search one of `user`'s posts, open its author's page, then their submissions (None: none is searchable)."""
    post = next((p for p in post_list(db, sort="new", author=user) if is_searchable_post(db, p)), None)
    if post is None:
        return None
    return [*open_post_via_search(post), click("link", user), click("link", "Submissions")]


def user_favourite_forum(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for u in users_with_posts(db):
        if u["username"] == PRIMARY_USER or u["n"] > 20:
            continue
        ranked = Counter(p["forum"] for p in post_list(db, author=u["username"])).most_common()
        steps = _to_user_submissions(db, u["username"])
        if steps and ranked[0][1] >= 2 and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
            cases.append((u["username"], ranked[0][0], steps))
    out = []
    for user, name, steps in pick(rng, cases, N):
        out.append(task(sites=["reddit"], start_url=REDDIT,
                        intent_template="In which forum has {{user}} submitted the most posts?",
                        values={"user": user}, eval=string_eval(must_include=[name]),
                        sequence=[*steps, stop(name)]))
    return out


# --- forum: state-changing ---------------------------------------------------------------------------

def retract_vote(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for p in post_list(db, sort="new"):
        vote = my_vote(db, p["id"])
        if vote and p["author"] != PRIMARY_USER and is_searchable_post(db, p):
            cases.append((p, vote))
    out = []
    for p, vote in pick(rng, cases, N):
        word = "upvote" if vote == 1 else "downvote"
        out.append(task(sites=["reddit"], start_url=REDDIT,
                        intent_template="Take back my {{vote}} on the post \"{{title}}\" without voting the other "
                                        "way.",
                        values={"vote": word, "title": p["title"]},
                        eval=html_eval([target(post_url(p), VOTE_LOCATOR, exact="vote")]),
                        sequence=[*open_post_via_search(p), click("button", f"Retract {word}"), stop(DONE)]))
    return out


_LINKS = [
    ("books", "Free classics from Project Gutenberg", "https://www.gutenberg.org/"),
    ("science", "NASA's image of the day", "https://www.nasa.gov/image-of-the-day/"),
    ("technology", "The Python 3 documentation", "https://docs.python.org/3/"),
    ("MachineLearning", "Papers with Code", "https://paperswithcode.com/"),
    ("space", "Live view from the ISS", "https://www.nasa.gov/live/"),
    ("history", "The British Museum collection online", "https://www.britishmuseum.org/collection"),
    ("food", "Serious Eats recipe index", "https://www.seriouseats.com/recipes"),
    ("Music", "Free scores at IMSLP", "https://imslp.org/"),
    ("gaming", "Steam's upcoming releases", "https://store.steampowered.com/explore/upcoming/"),
    ("pittsburgh", "Port Authority bus schedules", "https://www.rideprt.org/"),
    ("DIY", "Home repair guides on iFixit", "https://www.ifixit.com/Guide"),
    ("personalfinance", "Compound interest calculator", "https://www.investor.gov/financial-tools-calculators/"),
]


def share_link(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    known = {f["name"] for f in forums_by_name(db)}
    out = []
    for name, title, url in pick(rng, [link for link in _LINKS if link[0] in known], N):
        out.append(task(sites=["reddit"], start_url=REDDIT,
                        intent_template="Share the link {{url}} in the {{forum}} forum under the title \"{{title}}\".",
                        values={"url": url, "forum": name, "title": title},
                        eval=html_eval([target(POST_URL_FUNC, TITLE_LOCATOR, exact=title),
                                        target(POST_URL_FUNC,
                                               "document.querySelector('.submission__url a').getAttribute('href')",
                                               exact=url)],
                                       with_url=f"{REDDIT}/f/{name}"),
                        sequence=[click("link", "Forums"), click("link", name), click("link", "Submit a post"),
                                  type_text("textbox", "Title", title, enter=False),
                                  type_text("textbox", "URL", url, enter=False),
                                  click("button", "Create submission"), stop(DONE)]))
    return out


def upvote_user_posts_in_forum(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    cases = []
    for u in users_with_posts(db):
        if u["username"] == PRIMARY_USER or u["n"] > 20:
            continue
        posts = post_list(db, sort="new", author=u["username"])
        titles = [p["title"] for p in posts]
        for name in sorted({p["forum"] for p in posts}):
            mine = [p for p in posts if p["forum"] == name]
            if (2 <= len(mine) <= 3 and all(my_vote(db, p["id"]) != 1 for p in mine)
                    and all(titles.count(p["title"]) == 1 for p in mine)):
                cases.append((u["username"], name, mine))
    out = []
    for user, name, mine in pick(rng, cases, N):
        listing = f"{REDDIT}/user/{user}/submissions"
        steps = [goto(listing)]
        for k, p in enumerate(mine):
            steps += [click("link", p["title"]), click("button", "Upvote")]
            if k < len(mine) - 1:
                steps.append(goto(listing))
        out.append(task(sites=["reddit"], start_url=REDDIT,
                        intent_template="Upvote every post that {{user}} has submitted to the {{forum}} forum.",
                        values={"user": user, "forum": name},
                        eval=html_eval([target(post_url(p), VOTE_LOCATOR, must_include=["vote vote--user-upvoted"])
                                        for p in mine]),
                        sequence=[*steps, stop(DONE)]))
    return out


# --- pairs of sites ----------------------------------------------------------------------------------

def bestseller_to_wishlist(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    sellable = {p["name"]: p for p in searchable_products(db, sellable_products(db))}
    listed = {p["name"] for p in _wishlist(db)}
    by_month: dict[str, list[dict]] = {}
    for row in bestsellers(db, "month", limit=2):
        by_month.setdefault(row["interval"], []).append(row)
    cases = []
    for interval, ranked in sorted(by_month.items()):
        top = ranked[0]
        if (len(ranked) == 1 or ranked[1]["qty"] < top["qty"]) and top["name"] in sellable \
                and top["name"] not in listed:
            cases.append((interval, sellable[top["name"]]))
    out = []
    for interval, p in pick(rng, cases, N):
        out.append(task(sites=["shopping_admin", "shopping"], start_url=f"{A} |AND| {S}",
                        intent_template="Look up the best-selling product of {{month}} in the admin's bestsellers "
                                        "report (first tab), then add it to my wish list in the store (second tab).",
                        values={"month": month_label(interval)},
                        eval=html_eval([target(f"{S}/wishlist/", "", must_include=[p["name"]])]),
                        sequence=[*_report_steps("Bestsellers Report", *_month_range(interval), "Month"), tab_focus(1),
                                  *open_product(p), click("button", "Add to Wish List"), stop(DONE)]))
    return out


def review_summaries_to_forum(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    categories = {r["id"]: r["name"] for r in db.execute("SELECT * FROM shop_categories")}
    cases = []
    for p in searchable_products(db, sellable_products(db)):
        name = CATEGORY_FORUM.get(categories[p["category_id"]])
        if name is None or not typeable(p["name"]):
            continue
        for stars, group in _star_groups(db, p["id"]):
            titles = [r["title"] for r in group]
            if len(set(titles)) == len(titles) and all(typeable(t) for t in titles):
                cases.append((p, stars, name, titles))
    out = []
    for p, stars, name, titles in pick(rng, cases, N):
        title = f"Customer feedback on {p['name']}"
        out.append(task(sites=["shopping", "reddit"], start_url=f"{S} |AND| {REDDIT}/f/{name}",
                        intent_template="Collect the summaries of the {{stars}} reviews of {{product}} in the store "
                                        "and post them in the {{forum}} forum under the title \"Customer feedback on "
                                        "{{product}}\".",
                        values={"stars": _star_words(stars), "product": p["name"], "forum": name},
                        eval=html_eval([target(POST_URL_FUNC, TITLE_LOCATOR, exact=title),
                                        target(POST_URL_FUNC, "", must_include=titles)],
                                       with_url=f"{REDDIT}/f/{name}"),
                        sequence=[*open_product(p), tab_focus(1), click("link", "Submit a post"),
                                  type_text("textbox", "Title", title, enter=False),
                                  type_text("textbox", "Body", "; ".join(titles), enter=False),
                                  click("button", "Create submission"), stop(DONE)]))
    return out


TEMPLATES = [
    (8000, reviewers_by_stars),
    (8001, order_by_status),
    (8002, better_rated),
    (8003, reorder),
    (8004, wishlist_to_cart),
    (8005, remove_from_list),
    (8010, customer_complete_total),
    (8011, report_extreme_month),
    (8012, orders_grid_filter),
    (8013, top_customer_of_signup_month),
    (8014, bulk_order_action),
    (8015, delete_reviews_by_rating),
    (8020, user_favourite_forum),
    (8021, retract_vote),
    (8022, share_link),
    (8023, upvote_user_posts_in_forum),
    (8030, bestseller_to_wishlist),
    (8031, review_summaries_to_forum),
]

# Whole templates kept out of the training split (generalisation to unseen task kinds).
TEST_ONLY_TEMPLATES = {8002, 8013, 8015, 8020, 8031}
