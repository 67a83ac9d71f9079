"""The storefront's catalog: product search and sorting, and the home, search, category and product pages.

Owns how products are found (`search_products`: a word-scored search, also read by the task
templates) and listed (sort orders, 12 a page), the product page with its options, reviews and
review form, and the review POST. Carts and orders live in `checkout`, accounts in `account`.
"""
from __future__ import annotations

import math
import re
import sqlite3
from typing import Any, Optional

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, query_url, to_int
from agentenv_webarena.sites.shop.layout import Ctx, back_to_product, not_found, render_page, star_text
from agentenv_webarena.sites.shop.model import PAGE_SIZE, money, product_options, rating_summary, short_date, site_now

__all__ = ["search_index", "search_products", "sort_products", "home", "search_results", "slug_page", "review_post"]

HOME_SHOWCASE = 20  # products on the home page (Luma's showcase runs well below the fold)
_STOP = {"the", "a", "an", "and", "of", "for", "with", "in", "on", "to"}


def _tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in _STOP]


def search_index(conn: sqlite3.Connection) -> list[tuple[sqlite3.Row, set, set, set, str]]:
    """Enabled products with their name / category / description word sets, in catalog order."""
    rows = conn.execute("SELECT p.*, c.name AS category_name FROM shop_products p JOIN shop_categories c "
                        "ON c.id = p.category_id WHERE p.enabled = 1 ORDER BY p.position, p.id").fetchall()
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


def _product_item(ctx: Ctx, p: sqlite3.Row) -> str:
    count, percent = rating_summary(ctx.conn, p["id"])
    reviews = (f'<div class="product-reviews-summary">Rating: {percent}% <a href="/{esc(p["slug"])}.html#reviews">'
               f'{count} {"Review" if count == 1 else "Reviews"}</a></div>') if count else ""
    return (f'<li class="product-item"><a class="product-item-link" href="/{esc(p["slug"])}.html">{esc(p["name"])}</a>'
            f'{reviews}<div class="price">{money(p["price"])}</div>'
            '<form method="post" action="/checkout/cart/add/">'
            f'<input type="hidden" name="product" value="{p["id"]}"><button type="submit">Add to Cart</button>'
            '</form></li>')


def _listing(ctx: Ctx, path: str, rows: list[sqlite3.Row], params: dict[str, Any], orders: list[tuple[str, str]],
             default_order: str) -> str:
    order = ctx.q.get("product_list_order", default_order)
    if order not in {key for key, _ in orders}:
        order = default_order
    direction = "desc" if ctx.q.get("product_list_dir") == "desc" else "asc"
    if order == "relevance" and "product_list_dir" not in ctx.q:
        direction = "asc"  # relevance order is best first; "desc" reverses it
    rows = sort_products(rows, order, direction)
    total = len(rows)
    pages = max(1, math.ceil(total / PAGE_SIZE))
    page = min(max(1, to_int(ctx.q.get("p"), 1)), pages)
    shown = rows[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    keep = dict(params)
    if "product_list_order" in ctx.q:
        keep["product_list_order"] = order
    if "product_list_dir" in ctx.q:
        keep["product_list_dir"] = direction
    if not total:
        return '<div class="message message-notice" role="status">Your search returned no results.</div>'
    sort_links = []
    for key, label in orders:
        if key == order:
            sort_links.append(f'<strong aria-current="true">{label}</strong>')
        else:
            sort_links.append(f'<a href="{esc(query_url(path, **{**params, "product_list_order": key}))}">{label}</a>')
    flip = "asc" if direction == "desc" else "desc"
    flip_label = "Set Ascending Direction" if direction == "desc" else "Set Descending Direction"
    flip_href = query_url(path, **{**params, "product_list_order": order, "product_list_dir": flip})
    toolbar = (f'<div class="toolbar"><p class="toolbar-amount">Items {(page - 1) * PAGE_SIZE + 1}-'
               f'{(page - 1) * PAGE_SIZE + len(shown)} of {total}</p><nav class="sorter" aria-label="Sort By">'
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
    items = "".join(_product_item(ctx, p) for p in shown)
    return f'{toolbar}<ol class="products">{items}</ol>{pager}'


def home(ctx: Ctx) -> Response:
    """GET `/`: the home page with a product showcase."""
    rows = ctx.conn.execute("SELECT * FROM shop_products WHERE enabled = 1 AND id % 10 = 3 ORDER BY id").fetchall()
    items = "".join(_product_item(ctx, p) for p in rows[:HOME_SHOWCASE])
    return render_page(ctx, "One Stop Market", '<h1>One Stop Market</h1><p>Welcome to One Stop Market: thousands of '
                       'products across every department.</p><h2>Product Showcases</h2>'
                       f'<ol class="products">{items}</ol>')


def search_results(ctx: Ctx) -> Response:
    """GET `/catalogsearch/result/`: products matching `?q=`, sorted and paged."""
    q = ctx.q.get("q", "").strip()
    if not q:
        return render_page(ctx, "Search results", "<h1>Search results</h1>"
                           '<div class="message message-notice" role="status">Please enter a search term.</div>')
    rows = [row for _, row in search_products(ctx.conn, q)]
    listing = _listing(ctx, "/catalogsearch/result/index/", rows, {"q": q},
                       [("relevance", "Relevance"), ("name", "Product Name"), ("price", "Price")], "relevance")
    return render_page(ctx, f"Search results for: '{q}'", f"<h1>Search results for: '{esc(q)}'</h1>{listing}")


def _category(ctx: Ctx, category: sqlite3.Row) -> Response:
    rows = ctx.conn.execute("SELECT * FROM shop_products WHERE category_id = ? AND enabled = 1 ORDER BY position, id",
                            (category["id"],)).fetchall()
    listing = _listing(ctx, f'/{category["slug"]}.html', rows, {},
                       [("position", "Position"), ("name", "Product Name"), ("price", "Price")], "position")
    return render_page(ctx, category["name"], f'<h1>{esc(category["name"])}</h1>{listing}')


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
    stock = "In stock" if p["qty"] > 0 else "Out of stock"
    buy = ('<div class="field"><label for="qty">Qty</label><input id="qty" type="number" name="qty" value="1" min="1">'
           '</div><button type="submit">Add to Cart</button>') if p["qty"] > 0 else ""
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
            f'<div class="price" id="product-price">{money(p["price"])}</div>'
            f'<p class="stock">{stock}</p><p>SKU: <span id="product-sku">{esc(p["sku"])}</span></p>'
            f'<form id="product_addtocart_form" method="post" action="/checkout/cart/add/">'
            f'<input type="hidden" name="product" value="{p["id"]}">{options}{buy}</form>'
            f'<form method="post" action="/wishlist/index/add/"><input type="hidden" name="product" value="{p["id"]}">'
            '<button type="submit">Add to Wish List</button></form>'
            f'<section id="description"><h2>Details</h2><p>{esc(p["description"])}</p></section>'
            f'<section id="reviews"><h2>Customer Reviews</h2>{review_list}</section>'
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
    """GET `/<slug>.html`: a category's listing or a product's page (404 for neither)."""
    category = ctx.conn.execute("SELECT * FROM shop_categories WHERE slug = ?", (slug,)).fetchone()
    if category is not None:
        return _category(ctx, category)
    product = ctx.conn.execute("SELECT * FROM shop_products WHERE slug = ? AND enabled = 1", (slug,)).fetchone()
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
