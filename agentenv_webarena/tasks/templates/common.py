"""Helpers that several template modules use: site data queries, URLs, locators and reference steps.

Template modules import these from here and never from one another (`base` holds the task's building
blocks). Sections follow the site they read.
"""
from __future__ import annotations

import functools
import json
import sqlite3
from typing import Any, Optional

from agentenv_webarena.sites import forum, world
from agentenv_webarena.sites.forum import data as forum_data
from agentenv_webarena.sites.forum.data import PRIMARY_USER
from agentenv_webarena.sites.forum.entities import ENTITY_FORUMS, NAMED_POSTS
from agentenv_webarena.sites.gitlab import data as gitlab_data
from agentenv_webarena.sites.gitlab.entities import SCALED_PROJECTS
from agentenv_webarena.sites.gitlab.model import project_list
from agentenv_webarena.sites.map import MODE_LINKS, route
from agentenv_webarena.sites.map.roads import ENGINES, Route, node_key
from agentenv_webarena.sites.map.search import Located, lookup
from agentenv_webarena.sites.shop import ORDERS_PAGE_SIZE, PAGE_SIZE, product_options, search_index, search_products
from agentenv_webarena.sites.shop import data as shop_data
from agentenv_webarena.tasks.templates.base import clear_and_type, click, html_eval, target, type_text, typeable

__all__ = [
    "EMMA", "BASE_PRODUCTS", "BASE_CATEGORIES", "BASE_CUSTOMERS", "REVIEW_COMPLAINTS",
    "CART_LOCATOR", "ADMIN", "STATUS_LOCATOR", "REDDIT", "VOTE_LOCATOR", "POST_URL_FUNC", "MINE_ONLY",
    "ALL_COMMENT_BODIES", "TITLE_LOCATOR", "CATEGORY_FORUM", "GITLAB", "ME", "TITLE", "MAP", "ENGINE_OF", "BY",
    "BASE_GITLAB_USERS", "BASE_GITLAB_GROUPS", "BASE_FORUMS", "BASE_FORUM_USERS",
    "SELECTED_ENGINE", "ROUTE_FROM", "ROUTE_TO", "MY_PLACES", "primary_biography", "edit_bio_steps",
    "sellable_products", "searchable_products",
    "open_product", "in_cart_locator", "cart_product_ids", "emma_orders", "order_history_steps", "order_items",
    "approved_reviews", "js_string", "find_order", "find_customer", "find_product", "order_url", "rows",
    "forums_by_name",
    "post_list", "post_url", "my_vote", "open_post_via_search", "is_searchable_post", "users_with_posts",
    "visible_projects", "full_path", "project_url", "findable", "local_places", "landmarks", "route_between",
    "directions_steps", "two_routes_steps", "route_on_screen",
]

# ---------------------------------------------------------------- storefront (`__SHOPPING__`)
EMMA = 1  # customer id of WebArena's shopping account

# Templates draw from the base seed's catalog and customers; WebArena's catalog entities and the customers and
# reviews that come with them (`sites.shop.entities`) come after them, so adding those never moves a task.
BASE_PRODUCTS = shop_data.BASE_PRODUCTS  # ids 1..BASE_PRODUCTS
BASE_CATEGORIES = len(shop_data.CATEGORIES)  # top categories 1..BASE_CATEGORIES (their sub-categories too)
BASE_CUSTOMERS = len(shop_data.CUSTOMERS)
# The complaint each low-rating review text of the shop's seed makes (`sites.shop.data.REVIEW_DETAILS`): a fragment
# of the text -> the clause an answer uses.
REVIEW_COMPLAINTS = {
    "stopped working properly after a month": "it stopped working after about a month",
    "feels cheap and the finish started peeling": "it feels cheap and the finish peels",
    "Smaller than the pictures suggest": "it is smaller than the pictures suggest",
    "broke the first time I used it": "it broke on first use and customer service did not help",
    "arrived damaged and I had to return it": "it arrived damaged and had to be returned",
    "looks nothing like the description": "it looks nothing like the description",
}

CART_LOCATOR = ("[...document.querySelectorAll('#shopping-cart-table tr.cart-item')].map(r => r.dataset.summary + "
                "' | Qty: ' + r.querySelector('input.qty').value).join(' ; ')")


def sellable_products(db: sqlite3.Connection, *, options: bool | None = None) -> list[sqlite3.Row]:
    """Enabled, in-stock base products, optionally only those with (True) or without (False) options."""
    rows = db.execute("SELECT p.*, c.name AS category, c.slug AS category_slug FROM shop_products p JOIN "
                      "shop_categories c ON c.id = p.category_id WHERE p.enabled = 1 AND p.qty > 0 AND p.id <= ? "
                      "ORDER BY p.id", (BASE_PRODUCTS,)).fetchall()
    if options is None:
        return rows
    return [p for p in rows if (product_options(p) != ([], [])) == options]


def searchable_products(db: sqlite3.Connection, rows: list[sqlite3.Row]) -> list[sqlite3.Row]:
    """Products that appear on the first results page when their full name is searched."""
    index = search_index(db)
    out = []
    for p in rows:
        ranked = [r["id"] for _, r in search_products(db, p["name"], index)]
        if p["id"] in ranked[:PAGE_SIZE]:
            out.append(p)
    return out


def open_product(p: sqlite3.Row) -> list[dict]:
    """Steps that search for product `p` by its name and open its page."""
    return [type_text("searchbox", "Search", p["name"]), click("link", p["name"])]


def in_cart_locator(name: str) -> str:
    """A locator answering "yes" when a cart line is product `name` (any options), else "no"."""
    return ("[...document.querySelectorAll('#shopping-cart-table tr.cart-item')].some(r => "
            f"r.dataset.summary.split(' | ')[0] === {js_string(name)}) ? 'yes' : 'no'")


def cart_product_ids(db: sqlite3.Connection) -> set[int]:
    """Ids of the products in Emma's cart."""
    return {r[0] for r in db.execute("SELECT i.product_id FROM shop_cart_items i JOIN shop_carts c ON c.id = i.cart_id "
                                     "WHERE c.customer_id = ?", (EMMA,))}


def emma_orders(db: sqlite3.Connection) -> list[sqlite3.Row]:
    """Emma's orders as the history page lists them (newest first)."""
    return db.execute("SELECT * FROM shop_orders WHERE customer_id = ? ORDER BY created_at DESC, id DESC",
                      (EMMA,)).fetchall()


def order_history_steps(index: int) -> list[dict]:
    """From anywhere: My Account -> My Orders -> the page holding the `index`-th order (0-based)."""
    steps = [click("link", "My Account"), click("link", "My Orders")]
    page = index // ORDERS_PAGE_SIZE + 1
    if page > 1:
        steps.append(click("link", f"Page {page}"))
    return steps


def order_items(db: sqlite3.Connection, order_id: int) -> list[sqlite3.Row]:
    """The line items of order `order_id`, in id order."""
    return db.execute("SELECT * FROM shop_order_items WHERE order_id = ? ORDER BY id", (order_id,)).fetchall()


def approved_reviews(db: sqlite3.Connection, product_id: int) -> list[sqlite3.Row]:
    """Product `product_id`'s approved reviews, oldest first."""
    return db.execute("SELECT * FROM shop_reviews WHERE product_id = ? AND status = 'approved' ORDER BY created_at, id",
                      (product_id,)).fetchall()


def js_string(text: str) -> str:
    """`text` as a JavaScript string literal (for a locator)."""
    return json.dumps(text)


# ---------------------------------------------------------------- shop admin (`__SHOPPING_ADMIN__`)
ADMIN = "__SHOPPING_ADMIN__"
STATUS_LOCATOR = "document.querySelector('#order-status').outerText"


def find_order(o: sqlite3.Row) -> list[dict]:
    """Orders grid -> keyword search by order number -> the order view."""
    return [click("link", "Orders"), type_text("textbox", "Search by keyword", o["increment_id"]),
            click("link", f"View order {o['increment_id']}")]


def find_product(p: sqlite3.Row) -> list[dict]:
    """Products grid -> keyword search -> the product's edit page."""
    return [click("link", "Products"), type_text("textbox", "Search by keyword", p["name"]),
            click("link", f"Edit {p['name']}")]


def find_customer(name: str) -> list[dict]:
    """Customers grid -> keyword search by full name."""
    return [click("link", "All Customers"), type_text("textbox", "Search by keyword", name)]


def order_url(o: sqlite3.Row) -> str:
    """The admin order-view URL of order `o`."""
    return f"{ADMIN}/sales/order/view/order_id/{o['id']}/"


# ---------------------------------------------------------------- forum (`__REDDIT__`)
REDDIT = "__REDDIT__"

VOTE_LOCATOR = "document.querySelector('div.submission__vote').querySelector('form').getAttribute('class')"

POST_URL_FUNC = "func:reddit_get_post_url('__last_url__')"


def rows(db: sqlite3.Connection, sql: str, args: tuple = ()) -> list[dict]:
    """Query results as dicts (whatever the connection's row_factory)."""
    cur = db.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


# Templates draw from the base seed's forums, users and posts; WebArena's named forums and their posts
# (`sites.forum.entities`) come after them, so adding those never moves an existing task.
BASE_FORUMS = len(forum_data.FORUMS)  # ids 1..BASE_FORUMS
BASE_FORUM_USERS = len(forum_data.USERS)
_ENTITY_FORUMS = {f.name.lower() for f in ENTITY_FORUMS}
_NAMED_POSTS = {pid for _, pid, _ in NAMED_POSTS}  # some are in base forums


def forums_by_name(db: sqlite3.Connection) -> list[dict]:
    """Every base forum (id, name, title, description and its post count `posts`), by name, case-insensitively."""
    return rows(db, "SELECT f.id, f.name, f.title, f.description, "
                    "(SELECT COUNT(*) FROM forum_submissions s WHERE s.forum_id = f.id) AS posts "
                    "FROM forum_forums f WHERE f.id <= ? ORDER BY f.name COLLATE NOCASE", (BASE_FORUMS,))


def post_list(db: sqlite3.Connection, **kw: Any) -> list[dict]:
    """Base posts as `forum.submission_list` lists them, filtered and sorted by `kw` (`limit` and
    `offset` count base posts)."""
    limit, offset = kw.pop("limit", None), kw.pop("offset", 0)
    kept = [p for p in forum.submission_list(db, **kw)
            if p["forum"].lower() not in _ENTITY_FORUMS and p["id"] not in _NAMED_POSTS]
    return kept[offset:None if limit is None else offset + limit]


def post_url(post: dict) -> str:
    """The full URL of `post`'s page on the forum."""
    return REDDIT + forum.post_path(post["forum"], post["id"], post["title"])


def my_vote(db: sqlite3.Connection, submission_id: int) -> int:
    """The primary user's vote on submission `submission_id`: 1 (up), -1 (down) or 0 (none)."""
    r = rows(db, "SELECT v.choice FROM forum_submission_votes v JOIN forum_users u ON u.id = v.user_id "
                 "WHERE u.username = ? AND v.submission_id = ?", (PRIMARY_USER, submission_id))
    return r[0]["choice"] if r else 0


def open_post_via_search(post: dict) -> list[dict]:
    """Find a post through the search box and open it."""
    return [type_text("searchbox", "Search", post["title"], enter=True),
            click("link", post["title"])]


def is_searchable_post(db: sqlite3.Connection, post: dict) -> bool:
    """The post's own title link is among the first page of search results for its title."""
    hits = forum.submission_list(db, sort="new", search=post["title"], limit=forum.PAGE_SIZE)
    return any(h["id"] == post["id"] for h in hits) and typeable(post["title"])


MINE_ONLY = ("document.querySelectorAll('.comment').forEach(c => { if (c.querySelector('.comment__author').outerText "
              f"!== '{PRIMARY_USER}') c.querySelector('.comment__body').remove(); }})")

ALL_COMMENT_BODIES = "[...document.querySelectorAll('.comment__body')].map(e => e.outerText).join(' | ')"


def users_with_posts(db: sqlite3.Connection) -> list[dict]:
    """Base users with at least one post, each with their post count `n`, in user-id order."""
    return rows(db, "SELECT u.username, COUNT(s.id) AS n FROM forum_users u "
                    "JOIN forum_submissions s ON s.user_id = u.id WHERE u.id <= ? "
                    "GROUP BY u.id ORDER BY u.id", (BASE_FORUM_USERS,))


# ---------------------------------------------------------------- forum posts about shop purchases (`cross`)
TITLE_LOCATOR = "document.querySelector('.submission__title').outerText"

# Where a purchase of each shop category would be talked about on the forum.
CATEGORY_FORUM = {
    "Electronics": "technology", "Office Products": "technology", "Video Games": "gaming",
    "Grocery & Gourmet Food": "food", "Home & Kitchen": "DIY", "Patio, Lawn & Garden": "DIY",
}


# ---------------------------------------------------------------- code host (`__GITLAB__`)
GITLAB = "__GITLAB__"

ME = 1  # byteblaze's user id (the first seeded user)

TITLE = "document.querySelector('h1.title').outerText"


# Templates draw from the base seed's users and projects; WebArena's named entities (`sites.gitlab.entities`)
# come after them, so adding those never moves an existing task.
BASE_GITLAB_USERS = len(gitlab_data.USERS)  # ids 1..BASE_GITLAB_USERS
BASE_GITLAB_GROUPS = len(gitlab_data.GROUPS)
_ENTITY_PROJECTS = {(s.project.namespace.lower(), s.project.path.lower()) for s in SCALED_PROJECTS}


def visible_projects(db: sqlite3.Connection) -> list[sqlite3.Row]:
    """Projects of the base seed byteblaze can see, in id order."""
    return sorted((p for p in project_list(db, viewer_id=ME)
                   if (p["namespace"].lower(), p["path"].lower()) not in _ENTITY_PROJECTS), key=lambda p: p["id"])


def full_path(p: Any) -> str:
    """Project `p`'s full path, "namespace/path"."""
    return f"{p['namespace']}/{p['path']}"


def project_url(p: Any, suffix: str = "") -> str:
    """The URL of project `p`'s page, followed by `suffix` (e.g. "/-/issues")."""
    return f"{GITLAB}/{p['namespace']}/{p['path']}{suffix}"


# ---------------------------------------------------------------- map (`__MAP__`)
MAP = "__MAP__"

ENGINE_OF = {"car": "fossgis_osrm_car", "bicycle": "fossgis_osrm_bike", "foot": "fossgis_osrm_foot"}

BY = {"car": "by car", "bicycle": "by bicycle", "foot": "on foot"}

SELECTED_ENGINE = 'document.querySelector("div#content select.routing_engines").selectedIndex'

ROUTE_FROM = "document.querySelector('[name=\"route_from\"]').value"

ROUTE_TO = "document.querySelector('[name=\"route_to\"]').value"

MY_PLACES = "document.querySelector('#my_places').outerText"


def findable(obj: Located) -> bool:
    """Typing the name into the search box or a directions field finds exactly this place or town."""
    return lookup(obj.name) is obj and typeable(obj.name)


@functools.lru_cache(maxsize=None)
def _local_places() -> tuple[world.Place, ...]:
    near = {t.name for t in world.TOWNS if world.distance_km(t, world.town_by_name("Pittsburgh")) < 40}
    return tuple(p for p in world.PLACES if p.town in near and findable(p))


def local_places(category: Optional[str] = None) -> list[world.Place]:
    """Findable places in Pittsburgh and its neighbouring towns (not the far cities), in world order."""
    return [p for p in _local_places() if category is None or p.category == category]


def landmarks() -> list[world.Place]:
    """Local places of the categories people ask directions to (not generic shops)."""
    keep = {"university", "museum", "park", "hospital", "stadium", "airport", "landmark", "theatre", "zoo",
            "train_station", "library", "city_hall"}
    return [p for p in local_places() if p.category in keep]


def route_between(a: Located, b: Located, mode: str) -> Route:
    """The `mode` route from `a` to `b` (the graph is connected, so there always is one)."""
    found = route(node_key(a), node_key(b), mode)
    assert found is not None, (a.name, b.name, mode)  # the graph is connected for every mode (unit-tested)
    return found


def directions_steps(a: Located, b: Located, mode: str) -> list[dict]:
    """Fill the directions form (car by default), then switch mode with the mode links."""
    steps = [click("link", "Directions"), type_text("textbox", "From", a.name, enter=False),
             type_text("textbox", "To", b.name, enter=True)]
    return steps + ([click("link", MODE_LINKS[ENGINE_OF[mode]])] if mode != "car" else [])


def two_routes_steps(origin: Located, x: Located, y: Located) -> list[dict]:
    """Directions origin -> x by car, then the same form with y as the destination."""
    return directions_steps(origin, x, "car") + clear_and_type("textbox", "To", y.name, enter=True)


def route_on_screen(a: Located, b: Located, mode: str) -> dict:
    """The last page shows directions a -> b with `mode` selected (WebArena's OSM checks)."""
    index = str(list(ENGINES).index(ENGINE_OF[mode]))
    return html_eval([target("last", SELECTED_ENGINE, exact=index),
                      target("last", ROUTE_FROM, must_include=[a.name]),
                      target("last", ROUTE_TO, must_include=[b.name])])


def primary_biography(db: sqlite3.Connection) -> str:
    """The forum's primary user's biography ("" when unset)."""
    return rows(db, "SELECT biography FROM forum_users WHERE username = ?", (PRIMARY_USER,))[0]["biography"]


def edit_bio_steps(db: sqlite3.Connection, bio: str) -> list[dict]:
    """On the primary user's page: open "Edit biography" and replace the biography (pre-filled when set) with `bio`."""
    typing = (clear_and_type("textbox", "Biography", bio) if primary_biography(db) else
              [type_text("textbox", "Biography", bio, enter=False)])
    return [click("link", "Edit biography")] + typing
