"""The storefront's catalog: product search and sorting, and the home, search, category and product pages.

Owns how products are found (`search_products`: a word-scored search, also read by the task
templates) and listed (sort orders, 12 a page), the product page with its options, reviews and
review form, and the review POST. Carts and orders live in `checkout`, accounts in `account`.
"""
from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter
from typing import Any, Callable, Optional

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, query_url, to_int
from agentenv_webarena.sites.shop.layout import Ctx, back_to_product, not_found, render_page, star_text
from agentenv_webarena.sites.shop.model import (
    PAGE_SIZE,
    in_stock,
    money,
    product_options,
    rating_summary,
    short_date,
    site_now,
    special_price,
)

__all__ = ["search_index", "search_products", "sort_products", "home", "search_results", "slug_page", "review_post"]

HOME_SHOWCASE = 20  # products on the home page (Luma's showcase runs well below the fold)
PAGE_LIMITS = (12, 24, 36)  # Luma's "Show N per page" choices for the grid (12: PAGE_SIZE)
_STOP = {"the", "a", "an", "and", "of", "for", "with", "in", "on", "to"}


def _tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in _STOP]


def search_index(conn: sqlite3.Connection) -> list[tuple[sqlite3.Row, set, set, set, str]]:
    """Enabled products the search lists (visibility "Search" or "Catalog, Search") with their name / category /
    description word sets, in catalog order."""
    rows = conn.execute("SELECT p.*, c.name AS category_name FROM shop_products p JOIN shop_categories c "
                        "ON c.id = p.category_id WHERE p.enabled = 1 AND p.visibility IN (3, 4) "
                        "ORDER BY p.position, p.id").fetchall()
    return [(row, set(_tokens(row["name"])), set(_tokens(row["category_name"])), set(_tokens(row["description"])),
             " ".join(re.findall(r"[a-z0-9]+", row["name"].lower()))) for row in rows]


def search_products(conn: sqlite3.Connection, q: str,
                    index: Optional[list[tuple[sqlite3.Row, set, set, set, str]]] = None
                    ) -> list[tuple[float, sqlite3.Row]]:
    """Enabled products matching query `q`, best first: (score, row).

    Score: 10 per query word in the name, 2 in the category, 1 in the description, +50 when the
    name contains the whole query; products scoring 0 are left out. Ties keep catalog order.
    `index` (from `search_index`) saves rebuilding the word sets when searching many times.
    """
    words = _tokens(q)
    if not words:
        return []
    phrase = " ".join(re.findall(r"[a-z0-9]+", q.lower()))
    scored = []
    for row, name, cat, desc, name_phrase in (search_index(conn) if index is None else index):
        score = sum(10 * (w in name) + 2 * (w in cat) + 1 * (w in desc) for w in words)
        if phrase and phrase in name_phrase:
            score += 50
        if score > 0:
            scored.append((score, row))
    scored.sort(key=lambda pair: -pair[0])
    return scored


def sort_products(rows: list[sqlite3.Row], order: str, direction: str) -> list[sqlite3.Row]:
    """Sort a listing: `order` name / price / position / relevance (rows already by relevance)."""
    rows = list(rows)
    if order == "name":
        rows.sort(key=lambda r: r["name"].lower())
    elif order == "price":
        rows.sort(key=lambda r: (r["price"], r["name"].lower()))
    if direction == "desc":
        rows.reverse()
    return rows


def price_range(value: Optional[str]) -> Optional[tuple[float, Optional[float]]]:
    """Magento's layered-navigation price filter: `10-20` is 10 <= price < 20, `100-` 100 and above (`-20`:
    from 0); None when `value` is not such a range (Magento then ignores it)."""
    match = re.fullmatch(r"\s*(\d*(?:\.\d+)?)-(\d*(?:\.\d+)?)\s*", value or "")
    if not match or not (match[1] or match[2]):
        return None
    low, high = float(match[1] or 0), (float(match[2]) if match[2] else None)
    return None if high is not None and high <= low else (low, high)


def in_price_range(price: float, bounds: tuple[float, Optional[float]]) -> bool:
    """Whether `price` lies in a `price_range`."""
    low, high = bounds
    return price >= low and (high is None or price < high)


def price_label(bounds: tuple[float, Optional[float]]) -> str:
    """`(10, 20)` -> `$10.00 - $19.99`; `(100, None)` -> `$100.00 and above` (Luma's filter labels)."""
    low, high = bounds
    return f"{money(low)} and above" if high is None else f"{money(low)} - {money(max(low, high - 0.01))}"


def price_buckets(prices: list[float]) -> list[tuple[float, Optional[float], int]]:
    """Magento's automatic price steps: (from, to, count) ranges of a power of ten (the largest that gives two
    or more ranges, but not under 10), the last one open ("and above"); [] without prices."""
    if not prices:
        return []
    step = 10 ** (len(str(int(max(prices)))) - 1)
    counts = Counter(int(p // step) for p in prices)
    while step > 10 and len(counts) < 2:
        step //= 10
        counts = Counter(int(p // step) for p in prices)
    keys = sorted(counts)
    return [(k * step, None if k == keys[-1] else (k + 1) * step, counts[k]) for k in keys]


def _price_value(bounds: tuple[float, Optional[float]]) -> str:
    low, high = bounds
    return f"{low:g}-" + ("" if high is None else f"{high:g}")


def _product_item(ctx: Ctx, p: sqlite3.Row) -> str:
    count, percent = rating_summary(ctx.conn, p["id"])
    reviews = (f'<div class="product-reviews-summary">Rating: {percent}% <a href="/{esc(p["slug"])}.html#reviews">'
               f'{count} {"Review" if count == 1 else "Reviews"}</a></div>') if count else ""
    return (f'<li class="item product product-item"><a class="product-item-link" href="/{esc(p["slug"])}.html">'
            f'{esc(p["name"])}</a>{reviews}<div class="price">{money(p["price"])}</div>'
            '<form method="post" action="/checkout/cart/add/">'
            f'<input type="hidden" name="product" value="{p["id"]}"><button type="submit">Add to Cart</button>'
            '</form></li>')


def _product_grid(ctx: Ctx, rows: list[sqlite3.Row]) -> str:
    """Luma's product grid of `rows`."""
    items = "".join(_product_item(ctx, p) for p in rows)
    return ('<div class="products wrapper grid products-grid"><ol class="products list items product-items">'
            f'{items}</ol></div>')


# A layered-navigation option: (label, href, product count).
FilterOption = tuple[str, str, int]


def _filter_block(title: str, options: list[FilterOption]) -> str:
    items = "".join(f'<li class="item"><a href="{esc(href)}">{esc(label)}</a> <span class="count">({count})</span></li>'
                    for label, href, count in options)
    return (f'<dt role="heading" aria-level="3" class="filter-options-title">{title}</dt>'
            f'<dd class="filter-options-content"><ol class="items">{items}</ol></dd>')


def _layered_nav(current: list[tuple[str, str, str]], clear_href: str, blocks: list[tuple[str, list[FilterOption]]]
                 ) -> str:
    """Luma's "Shop By" block: the filters applied (`current`: (filter, value label, href without it)) and the
    filter options (`blocks`: (title, options); empty ones are left out)."""
    now = ""
    if current:
        items = "".join(f'<li class="item"><span class="filter-label">{esc(name)}</span> <span class="filter-value">'
                        f'{esc(value)}</span> <a class="action remove" href="{esc(href)}" '
                        f'aria-label="Remove {esc(name)} {esc(value)}">Remove This Item</a></li>'
                        for name, value, href in current)
        now = (f'<div class="filter-current"><strong class="block-subtitle filter-current-subtitle" role="heading" '
               f'aria-level="2">Now Shopping by</strong><ol class="items">{items}</ol></div><div class="block-actions '
               f'filter-actions"><a class="action clear filter-clear" href="{esc(clear_href)}">Clear All</a></div>')
    options = "".join(_filter_block(title, opts) for title, opts in blocks if opts)
    if options:
        options = ('<strong role="heading" aria-level="2" class="block-subtitle filter-subtitle">Shopping Options'
                   f'</strong><dl class="filter-options" id="narrow-by-list">{options}</dl>')
    return ('<div class="block filter" id="layered-filter-block"><div class="block-title filter-title"><strong>Shop By'
            f'</strong></div><div class="block-content filter-content">{now}{options}</div></div>')


def _listing(ctx: Ctx, path: str, rows: list[sqlite3.Row], params: dict[str, Any], orders: list[tuple[str, str]],
             default_order: str, *, filters: Optional[list[tuple[str, str, str]]] = None,
             category_options: Optional[Callable[[list[sqlite3.Row], dict[str, Any]], list[FilterOption]]] = None,
             empty: str = "Your search returned no results.") -> str:
    """A product listing as Magento's catalog and search pages show it: the toolbar (sort, direction, pages,
    `product_list_limit`), the grid and the layered navigation (`price=` ranges; `category_options(rows,
    params)` for the category filter). `params` are the listing's own (the query, a category filter),
    `filters` the applied ones among them: (name, value label, parameter)."""
    state = dict(params)
    bounds = price_range(ctx.q.get("price"))
    applied = list(filters or [])
    if bounds is not None:
        state["price"] = ctx.q["price"]
        applied.append(("Price", price_label(bounds), "price"))
    limit = to_int(ctx.q.get("product_list_limit"), PAGE_SIZE)
    if limit not in PAGE_LIMITS:
        limit = PAGE_SIZE
    elif "product_list_limit" in ctx.q:
        state["product_list_limit"] = limit
    current = [(name, label, query_url(path, **{k: v for k, v in state.items() if k != key}))
               for name, label, key in applied]
    order = ctx.q.get("product_list_order", default_order)
    if order not in {key for key, _ in orders}:
        order = default_order
    direction = "desc" if ctx.q.get("product_list_dir") == "desc" else "asc"
    if order == "relevance" and "product_list_dir" not in ctx.q:
        direction = "asc"  # relevance order is best first; "desc" reverses it
    if not rows and not current:
        return f'<div class="message message-notice" role="status">{empty}</div>'
    matching = [r for r in rows if bounds is None or in_price_range(r["price"], bounds)]
    blocks = [("Category", category_options(matching, state) if category_options else []),
              ("Price", [] if bounds is not None else
               [(price_label((low, high)), query_url(path, **{**state, "price": _price_value((low, high))}), n)
                for low, high, n in price_buckets([r["price"] for r in matching])])]
    nav = _layered_nav(current, query_url(path, **{k: v for k, v in params.items() if k == "q"}), blocks)
    if not matching:
        return (f'<div class="message message-notice" role="status">We can\'t find products matching the selection.'
                f'</div>{nav}')
    matching = sort_products(matching, order, direction)
    total = len(matching)
    pages = max(1, math.ceil(total / limit))
    page = min(max(1, to_int(ctx.q.get("p"), 1)), pages)
    shown = matching[(page - 1) * limit: page * limit]
    keep = dict(state)
    if "product_list_order" in ctx.q:
        keep["product_list_order"] = order
    if "product_list_dir" in ctx.q:
        keep["product_list_dir"] = direction
    sort_links = []
    for key, label in orders:
        if key == order:
            sort_links.append(f'<strong aria-current="true">{label}</strong>')
        else:
            sort_links.append(f'<a href="{esc(query_url(path, **{**state, "product_list_order": key}))}">{label}</a>')
    flip = "asc" if direction == "desc" else "desc"
    flip_label = "Set Ascending Direction" if direction == "desc" else "Set Descending Direction"
    flip_href = query_url(path, **{**state, "product_list_order": order, "product_list_dir": flip})
    toolbar = (f'<div class="toolbar toolbar-products"><p class="toolbar-amount">Items {(page - 1) * limit + 1}-'
               f'{(page - 1) * limit + len(shown)} of {total}</p><nav class="sorter" aria-label="Sort By">'
               f'Sort By: {" ".join(sort_links)} <a href="{esc(flip_href)}">{flip_label}</a></nav></div>')
    links = []
    if page > 1:
        links.append(f'<a href="{esc(query_url(path, **{**keep, "p": page - 1}))}">Previous</a>')
    for n in range(1, pages + 1):
        if n == page:
            links.append(f'<strong aria-current="page">Page {n}</strong>')
        else:
            links.append(f'<a href="{esc(query_url(path, **{**keep, "p": n}))}">Page {n}</a>')
    if page < pages:
        links.append(f'<a href="{esc(query_url(path, **{**keep, "p": page + 1}))}">Next</a>')
    pager = f'<nav class="pages" aria-label="Pages">{" ".join(links)}</nav>' if pages > 1 else ""
    sizes = " ".join(f'<strong aria-current="true">{n}</strong>' if n == limit else
                     f'<a href="{esc(query_url(path, **{**keep, "product_list_limit": n}))}">{n}</a>'
                     for n in PAGE_LIMITS)
    limiter = f'<nav class="limiter" aria-label="Show per page">Show {sizes} per page</nav>'
    return (f'<div class="columns"><div class="column main">{toolbar}{_product_grid(ctx, shown)}{pager}{limiter}'
            f'</div><div class="sidebar sidebar-main">{nav}</div></div>')


def home(ctx: Ctx) -> Response:
    """GET `/`: the home page with a product showcase."""
    rows = ctx.conn.execute("SELECT * FROM shop_products WHERE enabled = 1 AND id % 10 = 3 ORDER BY id").fetchall()
    return render_page(ctx, "One Stop Market", '<h1>One Stop Market</h1><p>Welcome to One Stop Market: thousands of '
                       'products across every department.</p><h2>Product Showcases</h2>'
                       f'{_product_grid(ctx, rows[:HOME_SHOWCASE])}')


def search_results(ctx: Ctx) -> Response:
    """GET `/catalogsearch/result/`: products matching `?q=`, filtered (`cat` = a top category's id, `price`),
    sorted and paged."""
    q = ctx.q.get("q", "").strip()
    if not q:
        return render_page(ctx, "Search results", "<h1>Search results</h1>"
                           '<div class="message message-notice" role="status">Please enter a search term.</div>')
    path = "/catalogsearch/result/index/"
    rows = [row for _, row in search_products(ctx.conn, q)]
    names = {c["id"]: c["name"] for c in ctx.conn.execute("SELECT * FROM shop_categories ORDER BY position")}
    params: dict[str, Any] = {"q": q}
    filters = []
    cat = to_int(ctx.q.get("cat"), 0)
    if cat in names:
        rows = [r for r in rows if r["category_id"] == cat]
        params["cat"] = cat
        filters.append(("Category", names[cat], "cat"))

    def categories(matching: list[sqlite3.Row], state: dict[str, Any]) -> list[FilterOption]:
        if "cat" in state:
            return []
        counts = Counter(r["category_id"] for r in matching)
        return [(name, query_url(path, **{**state, "cat": cid}), counts[cid]) for cid, name in names.items()
                if counts[cid]]

    listing = _listing(ctx, path, rows, params,
                       [("relevance", "Relevance"), ("name", "Product Name"), ("price", "Price")], "relevance",
                       filters=filters, category_options=categories)
    return render_page(ctx, f"Search results for: '{q}'", f"<h1>Search results for: '{esc(q)}'</h1>{listing}")


def _breadcrumbs(trail: list[tuple[str, Optional[str]]]) -> str:
    """Home / ... links; an entry without a href (the current page) is plain text."""
    parts = [f'<a href="{esc(href)}">{esc(label)}</a>' if href else f"<strong>{esc(label)}</strong>"
             for label, href in [("Home", "/"), *trail]]
    return f'<nav class="breadcrumbs" aria-label="Breadcrumb">{" / ".join(parts)}</nav>'


def _category_page(ctx: Ctx, top: sqlite3.Row, node: Optional[sqlite3.Row]) -> Response:
    """A category's listing (`node` None: the top category `top`, else its sub-category `node`): the products
    of the category and of every category below it, as Magento's anchor categories list them."""
    path = f'/{node["url_path"] if node else top["slug"]}.html'
    leaves = {r["product_id"]: r["url_path"] for r in ctx.conn.execute(
        "SELECT l.product_id, s.url_path FROM shop_subcategory_products l JOIN shop_subcategories s "
        "ON s.id = l.subcategory_id WHERE s.category_id = ?", (top["id"],))}
    rows = ctx.conn.execute("SELECT * FROM shop_products WHERE category_id = ? AND enabled = 1 AND visibility IN "
                            "(2, 4) ORDER BY position, id", (top["id"],)).fetchall()
    if node is not None:
        rows = [r for r in rows if _below(leaves.get(r["id"]), node["url_path"])]
    children = ctx.conn.execute("SELECT * FROM shop_subcategories WHERE category_id = ? AND parent_id IS ? "
                                "ORDER BY position", (top["id"], node["id"] if node else None)).fetchall()

    def categories(matching: list[sqlite3.Row], state: dict[str, Any]) -> list[FilterOption]:
        options = [(c["name"], query_url(f'/{c["url_path"]}.html', **state),
                    sum(_below(leaves.get(r["id"]), c["url_path"]) for r in matching)) for c in children]
        return [option for option in options if option[2]]

    trail: list[tuple[str, Optional[str]]] = [(top["name"], f'/{top["slug"]}.html' if node else None)]
    if node is not None:
        ancestors = ctx.conn.execute(
            "SELECT * FROM shop_subcategories WHERE ? LIKE url_path || '/%' ORDER BY length(url_path)",
            (node["url_path"],)).fetchall()
        trail += [(a["name"], f'/{a["url_path"]}.html') for a in ancestors] + [(node["name"], None)]
    name = node["name"] if node else top["name"]
    listing = _listing(ctx, path, rows, {}, [("position", "Position"), ("name", "Product Name"), ("price", "Price")],
                       "position", category_options=categories,
                       empty="We can't find products matching the selection.")
    return render_page(ctx, name, f'{_breadcrumbs(trail)}<h1 class="page-title">{esc(name)}</h1>{listing}')


def _below(leaf: Optional[str], url_path: str) -> bool:
    """Whether the category `leaf` is `url_path` or below it."""
    return leaf is not None and (leaf == url_path or leaf.startswith(url_path + "/"))


def _price_box(ctx: Ctx, p: sqlite3.Row) -> str:
    """The product page's price: `#product-price` is what it costs today (Luma's `.special-price` beside the
    `.old-price` while a special price applies)."""
    special = special_price(ctx.conn, p)
    if special is None:
        return f'<div class="price" id="product-price">{money(p["price"])}</div>'
    return (f'<div class="price-box"><span class="special-price">Special Price <span class="price" id="product-price">'
            f'{money(special)}</span></span> <span class="old-price">Regular Price <span class="price">'
            f'{money(p["price"])}</span></span></div>')


def _product(ctx: Ctx, p: sqlite3.Row) -> Response:
    count, percent = rating_summary(ctx.conn, p["id"])
    category = ctx.conn.execute("SELECT * FROM shop_categories WHERE id = ?", (p["category_id"],)).fetchone()
    summary = (f'Rating: {percent}% <a href="#reviews">{count} {"Review" if count == 1 else "Reviews"}</a> '
               if count else "Be the first to review this product ") + '<a href="#review-form">Add Your Review</a>'
    sizes, colors = product_options(p)
    options = ""
    for legend, field, values in (("Size", "size", sizes), ("Color", "color", colors)):
        if values:
            radios = "".join(f'<label><input type="radio" name="{field}" value="{esc(v)}"> {esc(v)}</label>'
                             for v in values)
            options += f'<fieldset class="swatch-attribute {field}"><legend>{legend}</legend>{radios}</fieldset>'
    stock = "In stock" if in_stock(p) else "Out of stock"
    buy = ('<div class="field"><label for="qty">Qty</label><input id="qty" type="number" name="qty" value="1" min="1">'
           '</div><button type="submit">Add to Cart</button>') if in_stock(p) else ""
    reviews = ctx.conn.execute("SELECT * FROM shop_reviews WHERE product_id = ? AND status = 'approved' "
                               "ORDER BY created_at, id", (p["id"],)).fetchall()
    review_items = "".join(
        f'<li class="review-item" id="review-{r["id"]}"><h3 class="review-title">{esc(r["title"])}</h3>'
        f'<p class="review-ratings">Rating: {star_text(r["rating_percent"])} ({r["rating_percent"]}%)</p>'
        f'<p class="review-content">{esc(r["detail"])}</p><p class="review-details">Review by '
        f'<strong class="review-author">{esc(r["nickname"])}</strong> Posted on '
        f'<time datetime="{r["created_at"][:10]}">{short_date(r["created_at"])}</time></p></li>' for r in reviews)
    review_list = f'<ol class="review-items">{review_items}</ol>' if reviews else "<p>No reviews yet.</p>"
    nickname = esc(ctx.customer["firstname"]) if ctx.customer is not None else ""
    stars = "".join(f'<label><input type="radio" name="rating" value="{n}"> {n} {"star" if n == 1 else "stars"}'
                    '</label>' for n in range(1, 6))
    main = (f'<nav class="breadcrumbs" aria-label="Breadcrumb"><a href="/">Home</a> / '
            f'<a href="/{esc(category["slug"])}.html">{esc(category["name"])}</a></nav>'
            f'<h1 class="page-title">{esc(p["name"])}</h1><div class="product-reviews-summary">{summary}</div>'
            f'{_price_box(ctx, p)}'
            f'<p class="stock">{stock}</p><p>SKU: <span id="product-sku">{esc(p["sku"])}</span></p>'
            f'<form id="product_addtocart_form" method="post" action="/checkout/cart/add/">'
            f'<input type="hidden" name="product" value="{p["id"]}">{options}{buy}</form>'
            f'<form method="post" action="/wishlist/index/add/"><input type="hidden" name="product" value="{p["id"]}">'
            '<button type="submit">Add to Wish List</button></form>'
            '<div class="product info detailed"><div class="product data items">'
            '<section class="data item content" id="description"><h2 class="data item title">Details</h2>'
            f'<div class="product attribute description"><p class="value">{esc(p["description"])}</p></div></section>'
            '<section class="data item content" id="reviews"><h2 class="data item title">Customer Reviews</h2>'
            f'{review_list}</section></div></div>'
            f'<section id="review-form"><h2>Write Your Own Review</h2>'
            f'<form method="post" action="/review/product/post/id/{p["id"]}/"><p>You\'re reviewing: '
            f'<strong>{esc(p["name"])}</strong></p><fieldset><legend>Your Rating</legend>{stars}</fieldset>'
            f'<div class="field"><label for="nickname_field">Nickname</label><input id="nickname_field" type="text" '
            f'name="nickname" value="{nickname}"></div><div class="field"><label for="summary_field">Summary</label>'
            '<input id="summary_field" type="text" name="title"></div><div class="field"><label for="review_field">'
            'Review</label><textarea id="review_field" name="detail" rows="3" cols="50"></textarea></div>'
            '<button type="submit">Submit Review</button></form></section>')
    return render_page(ctx, p["name"], main)


def slug_page(ctx: Ctx, slug: str) -> Response:
    """GET `/<slug>.html`: a category's listing (`slug` a category's URL path, e.g. `electronics/headphones`) or
    a product's page (404 for neither)."""
    top = ctx.conn.execute("SELECT * FROM shop_categories WHERE slug = ?", (slug.partition("/")[0],)).fetchone()
    if top is not None and "/" not in slug:
        return _category_page(ctx, top, None)
    if top is not None:
        node = ctx.conn.execute("SELECT * FROM shop_subcategories WHERE url_path = ?", (slug,)).fetchone()
        return _category_page(ctx, top, node) if node is not None else not_found(ctx)
    product = ctx.conn.execute("SELECT * FROM shop_products WHERE slug = ? AND enabled = 1 AND visibility != 1",
                               (slug,)).fetchone()
    if product is not None:
        return _product(ctx, product)
    return not_found(ctx)


def review_post(ctx: Ctx, product_id: int) -> Response:
    """POST `/review/product/post/id/<id>/`: store a review, pending moderation as in Magento."""
    product = ctx.conn.execute("SELECT * FROM shop_products WHERE id = ? AND enabled = 1", (product_id,)).fetchone()
    if product is None:
        return not_found(ctx)
    rating = to_int(ctx.form.get("rating"))
    fields = {key: ctx.form.get(key, "").strip() for key in ("nickname", "title", "detail")}
    if not 1 <= rating <= 5 or not all(fields.values()):
        ctx.flash("Please select a rating and fill in Nickname, Summary and Review.", "error")
        return back_to_product(product)
    ctx.conn.execute("INSERT INTO shop_reviews (product_id, customer_id, nickname, title, detail, rating_percent, "
                     "status, created_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
                     (product_id, ctx.customer["id"] if ctx.customer is not None else None, fields["nickname"],
                      fields["title"], fields["detail"], rating * 20, site_now(ctx.conn)))
    ctx.flash("You submitted your review for moderation.")
    return back_to_product(product)
