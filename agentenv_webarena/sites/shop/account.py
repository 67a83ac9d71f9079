"""The storefront's customer account: sign-in, dashboard, orders, account details, address book,
wish list and the customer's reviews.

Owns every page under `/customer/`, `/sales/order/`, `/wishlist/` and `/review/customer/`, and the
session cookie's sign-in and sign-out (a guest cart is merged into the customer's at sign-in).
"""
from __future__ import annotations

import math
import sqlite3
from typing import Optional

from starlette.responses import Response

from agentenv_webarena.sites.common import SignIn, esc, login_required, redirect, to_int
from agentenv_webarena.sites.shop.layout import (
    ADDRESS_FIELDS,
    Ctx,
    account_page,
    address_inputs,
    address_lines,
    default_address,
    not_found,
    render_page,
    star_text,
)
from agentenv_webarena.sites.shop.model import (
    ORDERS_PAGE_SIZE,
    REVIEW_STATUS_LABELS,
    STATUS_LABELS,
    hash_password,
    long_date,
    money,
    option_text,
    order_items,
    product_options,
    short_date,
    site_now,
)

__all__ = ["order_history", "order_view", "dashboard", "account_edit", "account_edit_post", "address_book",
           "address_edit", "address_save", "wishlist_page", "wishlist_add", "wishlist_remove", "wishlist_to_cart",
           "my_reviews", "newsletter_manage", "newsletter_save", "login_page", "login_post", "logout"]


def _order_table(orders: list[sqlite3.Row]) -> str:
    rows = "".join(
        f'<tr><td>{o["increment_id"]}</td><td>{short_date(o["created_at"])}</td>'
        f'<td>{esc(o["ship_firstname"])} {esc(o["ship_lastname"])}</td><td>{money(o["grand_total"])}</td>'
        f'<td>{STATUS_LABELS.get(o["status"], o["status"])}</td><td><a href="/sales/order/view/order_id/{o["id"]}/" '
        f'aria-label="View Order {o["increment_id"]}">View Order</a></td></tr>' for o in orders)
    return ('<table id="my-orders-table"><caption>Orders</caption><thead><tr><th>Order #</th><th>Date</th>'
            '<th>Ship To</th><th>Order Total</th><th>Status</th><th>Action</th></tr></thead>'
            f'<tbody>{rows}</tbody></table>')


@login_required
def order_history(ctx: Ctx) -> Response:
    """GET `/sales/order/history/`: the customer's orders, newest first, 10 a page."""
    orders = ctx.conn.execute("SELECT * FROM shop_orders WHERE customer_id = ? ORDER BY created_at DESC, id DESC",
                              (ctx.customer["id"],)).fetchall()
    if not orders:
        return account_page(ctx, "My Orders", "<p>You have placed no orders.</p>")
    pages = max(1, math.ceil(len(orders) / ORDERS_PAGE_SIZE))
    page = min(max(1, to_int(ctx.q.get("p"), 1)), pages)
    shown = orders[(page - 1) * ORDERS_PAGE_SIZE: page * ORDERS_PAGE_SIZE]
    links = []
    for n in range(1, pages + 1):
        links.append(f'<strong aria-current="page">Page {n}</strong>' if n == page
                     else f'<a href="/sales/order/history/?p={n}">Page {n}</a>')
    if page < pages:
        links.append(f'<a href="/sales/order/history/?p={page + 1}">Next</a>')
    pager = f'<nav class="pages" aria-label="Pages">{" ".join(links)}</nav>' if pages > 1 else ""
    amount = (f'<p class="toolbar-amount">Items {(page - 1) * ORDERS_PAGE_SIZE + 1} to '
              f'{(page - 1) * ORDERS_PAGE_SIZE + len(shown)} of {len(orders)} total</p>')
    return account_page(ctx, "My Orders", amount + _order_table(shown) + pager)


def _options_paragraph(item: sqlite3.Row) -> str:
    """`<p>Size: M | Color: Blue</p>` for an ordered item with options, else ""."""
    return f'<p>{esc(option_text(item["size"], item["color"]))}</p>' if item["size"] or item["color"] else ""


@login_required
def order_view(ctx: Ctx, order_id: int) -> Response:
    """GET `/sales/order/view/order_id/<id>/`: one of the customer's orders."""
    order = ctx.conn.execute("SELECT * FROM shop_orders WHERE id = ? AND customer_id = ?",
                             (order_id, ctx.customer["id"])).fetchone()
    if order is None:
        return not_found(ctx)
    rows = "".join(
        f'<tr><td>{esc(i["name"])}{_options_paragraph(i)}'
        f'</td><td>{esc(i["sku"])}</td><td>{money(i["price"])}</td><td>Ordered: {i["qty"]}</td>'
        f'<td>{money(i["price"] * i["qty"])}</td></tr>' for i in order_items(ctx.conn, order["id"]))
    main = (f'<p>Status: <span id="order-status">{STATUS_LABELS.get(order["status"], order["status"])}</span></p>'
            f'<p>Order Date: <span id="order-date">{long_date(order["created_at"])}</span></p>'
            '<div class="order-details-items ordered"><table id="order-items" class="data table table-order-items">'
            '<caption>Items Ordered</caption><thead><tr><th>Product Name</th><th>SKU</th>'
            f'<th>Price</th><th>Qty</th><th>Subtotal</th></tr></thead><tbody>{rows}</tbody></table>'
            f'<table class="order-totals"><tbody><tr><th>Subtotal</th><td>{money(order["subtotal"])}</td></tr>'
            f'<tr><th>Shipping &amp; Handling</th><td>{money(order["shipping"])}</td></tr><tr><th>Grand Total</th>'
            f'<td id="grand-total">{money(order["grand_total"])}</td></tr></tbody></table></div>'
            f'<section class="order-address"><h2>Shipping Address</h2><address>{address_lines(order, "ship_")}'
            f'</address></section><section><h2>Payment Method</h2><p>{esc(order["payment_method"])}</p></section>'
            '<p><a href="/sales/order/history/">Back to My Orders</a></p>')
    return account_page(ctx, f'Order # {order["increment_id"]}', main)


@login_required
def dashboard(ctx: Ctx) -> Response:
    """GET `/customer/account/`: contact information, newsletter subscription, default address and recent
    orders."""
    c = ctx.customer
    address = default_address(ctx)
    recent = ctx.conn.execute("SELECT * FROM shop_orders WHERE customer_id = ? ORDER BY created_at DESC, id DESC "
                              "LIMIT 5", (c["id"],)).fetchall()
    shipping = address_lines(address) if address else "You have not set a default shipping address."
    main = ('<section><h2>Account Information</h2>'
            + _box("information", "Contact Information", f'<p>{esc(c["firstname"])} {esc(c["lastname"])}<br>'
                   f'{esc(c["email"])}</p>', '<a href="/customer/account/edit/">Edit</a>')
            + _box("newsletter", "Newsletters", f"<p>{_newsletter_status(ctx)}</p>",
                   '<a href="/newsletter/manage/">Edit</a>')
            + '</section><section><h2>Address Book</h2>'
            + _box("address-shipping", "Default Shipping Address", f"<address>{shipping}</address>",
                   '<a href="/customer/address/">Manage Addresses</a>') + '</section>'
            f'<section><h2>Recent Orders</h2>{_order_table(recent) if recent else "<p>No orders yet.</p>"}'
            '<p><a href="/sales/order/history/">View All</a></p></section>')
    return account_page(ctx, "My Account", main)


def _subscribed(ctx: Ctx) -> bool:
    row = ctx.conn.execute("SELECT subscribed FROM shop_newsletter_subscribers WHERE customer_id = ?",
                           (ctx.customer["id"],)).fetchone()
    return bool(row and row["subscribed"])


def _newsletter_status(ctx: Ctx) -> str:
    return ('You are subscribed to "General Subscription".' if _subscribed(ctx)
            else "You aren't subscribed to our newsletter.")


@login_required
def newsletter_manage(ctx: Ctx) -> Response:
    """GET `/newsletter/manage/`: the newsletter subscription checkbox."""
    checked = " checked" if _subscribed(ctx) else ""
    main = ('<form class="form form-newsletter-manage" method="post" action="/newsletter/manage/save/"><fieldset '
            'class="fieldset"><legend>Subscription option</legend><div class="field choice"><input type="checkbox" '
            f'name="is_subscribed" id="subscription" value="1" title="General Subscription" class="checkbox"{checked}>'
            '<label for="subscription">General Subscription</label></div></fieldset><button type="submit">Save</button>'
            '</form>')
    return account_page(ctx, "Newsletter Subscription", main)


@login_required
def newsletter_save(ctx: Ctx) -> Response:
    """POST `/newsletter/manage/save/`: subscribe (`is_subscribed` = 1) or unsubscribe."""
    before, after = _subscribed(ctx), ctx.form.get("is_subscribed", "") not in ("", "0")
    ctx.conn.execute("INSERT INTO shop_newsletter_subscribers (customer_id, subscribed, changed_at) VALUES (?, ?, ?) "
                     "ON CONFLICT (customer_id) DO UPDATE SET subscribed = excluded.subscribed, "
                     "changed_at = excluded.changed_at", (ctx.customer["id"], int(after), site_now(ctx.conn)))
    ctx.flash("We have saved your subscription." if after and not before else
              "We have removed your newsletter subscription." if before and not after else
              "We have updated your subscription.")
    return redirect("/customer/account/")


@login_required
def account_edit(ctx: Ctx) -> Response:
    """GET `/customer/account/edit/`: the name and email form."""
    c = ctx.customer
    main = ('<form method="post" action="/customer/account/editPost/"><fieldset><legend>Account Information</legend>'
            f'<div class="field"><label for="firstname">First Name</label><input id="firstname" type="text" '
            f'name="firstname" value="{esc(c["firstname"])}"></div><div class="field"><label for="lastname">Last Name'
            f'</label><input id="lastname" type="text" name="lastname" value="{esc(c["lastname"])}"></div>'
            f'<div class="field"><label for="email">Email</label><input id="email" type="email" name="email" '
            f'value="{esc(c["email"])}"></div></fieldset><button type="submit">Save</button></form>')
    return account_page(ctx, "Edit Account Information", main)


@login_required
def account_edit_post(ctx: Ctx) -> Response:
    """POST `/customer/account/editPost/`: save the name and email."""
    first, last = ctx.form.get("firstname", "").strip(), ctx.form.get("lastname", "").strip()
    email = ctx.form.get("email", "").strip() or ctx.customer["email"]
    if not first or not last:
        ctx.flash("First Name and Last Name are required.", "error")
        return redirect("/customer/account/edit/")
    clash = ctx.conn.execute("SELECT id FROM shop_customers WHERE email = ? AND id != ?",
                             (email, ctx.customer["id"])).fetchone()
    if clash:
        ctx.flash("A customer with the same email address already exists.", "error")
        return redirect("/customer/account/edit/")
    ctx.conn.execute("UPDATE shop_customers SET firstname = ?, lastname = ?, email = ? WHERE id = ?",
                     (first, last, email, ctx.customer["id"]))
    ctx.flash("You saved the account information.")
    return redirect("/customer/account/")


@login_required
def address_book(ctx: Ctx) -> Response:
    """GET `/customer/address/`: the default billing and shipping address (one address is both, as in Magento
    when the customer has one)."""
    address = default_address(ctx)
    if address is None:
        return account_page(ctx, "Address Book", "<p>You have no addresses.</p>")
    edit = f'/customer/address/edit/id/{address["id"]}/'
    lines = f"<address>{address_lines(address)}</address>"
    boxes = "".join(_box(f"address-{kind.lower()}", f"Default {kind} Address", lines,
                         f'<a href="{edit}">Change {kind} Address</a>') for kind in ("Billing", "Shipping"))
    return account_page(ctx, "Address Book", f'<section class="block-addresses-default"><h2>Default Addresses</h2>'
                        f'{boxes}</section>')


def _box(kind: str, title: str, content: str, actions: str) -> str:
    """Luma's account box (`.box.box-<kind>`): its title, `.box-content` and actions."""
    return (f'<div class="box box-{kind}"><h3 class="box-title">{title}</h3><div class="box-content">{content}</div>'
            f'<div class="box-actions">{actions}</div></div>')


@login_required
def _owned_address(ctx: Ctx, address_id: int) -> "sqlite3.Row | Response":
    """The signed-in customer's address `address_id`, or the response to send instead (login / 404)."""
    address = ctx.conn.execute("SELECT * FROM shop_addresses WHERE id = ? AND customer_id = ?",
                               (address_id, ctx.customer["id"])).fetchone()
    return not_found(ctx) if address is None else address


@login_required
def address_edit(ctx: Ctx, address_id: int) -> Response:
    """GET `/customer/address/edit/id/<id>/`: the address form."""
    address = _owned_address(ctx, address_id)
    if not isinstance(address, sqlite3.Row):
        return address  # the login page or 404
    main = (f'<form method="post" action="/customer/address/formPost/id/{address_id}/"><fieldset><legend>'
            f'Contact Information and Address</legend>{address_inputs(address)}</fieldset>'
            '<button type="submit">Save Address</button></form>')
    return account_page(ctx, "Edit Address", main)


def address_save(ctx: Ctx, address_id: int) -> Response:
    """POST `/customer/address/formPost/id/<id>/`: save an address."""
    address = _owned_address(ctx, address_id)
    if not isinstance(address, sqlite3.Row):
        return address  # the login page or 404
    values = {key: ctx.form.get(key, "").strip() for key, _ in ADDRESS_FIELDS}
    missing = [label for key, label in ADDRESS_FIELDS if not values[key]]
    if missing:
        ctx.flash(f"Please fill in the required fields: {', '.join(missing)}.", "error")
        return redirect(f"/customer/address/edit/id/{address_id}/")
    ctx.conn.execute("UPDATE shop_addresses SET firstname = :firstname, lastname = :lastname, street = :street, "
                     "city = :city, region = :region, postcode = :postcode, country = :country, "
                     "telephone = :telephone WHERE id = :id", {**values, "id": address_id})
    ctx.flash("You saved the address.")
    return redirect("/customer/address/")


@login_required
def wishlist_page(ctx: Ctx) -> Response:
    """GET `/wishlist/`: the wish list."""
    rows = ctx.conn.execute("SELECT w.id AS item_id, p.* FROM shop_wishlist w JOIN shop_products p ON p.id = "
                            "w.product_id WHERE w.customer_id = ? ORDER BY w.id", (ctx.customer["id"],)).fetchall()
    if not rows:
        return account_page(ctx, "My Wish List", "<p>You have no items in your wish list.</p>")
    items = "".join(
        f'<li class="wishlist-item product-item" data-name="{esc(r["name"])}">'
        f'<a class="product-item-link" href="/{esc(r["slug"])}.html">'
        f'{esc(r["name"])}</a> <span class="price">{money(r["price"])}</span>'
        f'<form method="post" action="/wishlist/index/cart/"><input type="hidden" name="item" value="{r["item_id"]}">'
        f'<button type="submit" aria-label="Add {esc(r["name"])} to Cart">Add to Cart</button></form>'
        f'<form method="post" action="/wishlist/index/remove/"><input type="hidden" name="item" value="{r["item_id"]}">'
        f'<button type="submit" aria-label="Remove {esc(r["name"])}">Remove item</button></form></li>' for r in rows)
    return account_page(ctx, "My Wish List", '<div class="products-grid wishlist">'
                        f'<ol id="wishlist-items" class="product-items">{items}</ol></div>')


@login_required
def wishlist_add(ctx: Ctx) -> Response:
    """POST `/wishlist/index/add/`: add a product to the wish list."""
    product = ctx.conn.execute("SELECT * FROM shop_products WHERE id = ? AND enabled = 1",
                               (to_int(ctx.form.get("product")),)).fetchone()
    if product is None:
        return not_found(ctx)
    exists = ctx.conn.execute("SELECT 1 FROM shop_wishlist WHERE customer_id = ? AND product_id = ?",
                              (ctx.customer["id"], product["id"])).fetchone()
    if not exists:
        ctx.conn.execute("INSERT INTO shop_wishlist (customer_id, product_id, added_at) VALUES (?, ?, ?)",
                         (ctx.customer["id"], product["id"], site_now(ctx.conn)))
    ctx.flash(f"{product['name']} has been added to your Wish List.")
    return redirect("/wishlist/")


def _wishlist_item(ctx: Ctx) -> Optional[sqlite3.Row]:
    return ctx.conn.execute("SELECT w.id AS item_id, p.* FROM shop_wishlist w JOIN shop_products p ON p.id = "
                            "w.product_id WHERE w.id = ? AND w.customer_id = ?",
                            (to_int(ctx.form.get("item")), ctx.customer["id"])).fetchone()


@login_required
def wishlist_remove(ctx: Ctx) -> Response:
    """POST `/wishlist/index/remove/`: remove a wish-list item."""
    item = _wishlist_item(ctx)
    if item is not None:
        ctx.conn.execute("DELETE FROM shop_wishlist WHERE id = ?", (item["item_id"],))
        ctx.flash(f"{item['name']} has been removed from your Wish List.")
    return redirect("/wishlist/")


@login_required
def wishlist_to_cart(ctx: Ctx) -> Response:
    """POST `/wishlist/index/cart/`: move a wish-list item (without options) to the cart."""
    item = _wishlist_item(ctx)
    if item is None:
        return redirect("/wishlist/")
    if product_options(item) != ([], []):
        ctx.flash("You need to choose options for your item.", "error")
        return redirect(f'/{item["slug"]}.html')
    cart = ctx.cart_id(create=True)
    ctx.conn.execute("INSERT INTO shop_cart_items (cart_id, product_id, qty) VALUES (?, ?, 1)", (cart, item["id"]))
    ctx.conn.execute("DELETE FROM shop_wishlist WHERE id = ?", (item["item_id"],))
    ctx.flash(f"You added {item['name']} to your shopping cart.")
    return redirect("/checkout/cart/")


@login_required
def my_reviews(ctx: Ctx) -> Response:
    """GET `/review/customer/`: the customer's reviews, any status, newest first (summary and full text)."""
    rows = ctx.conn.execute("SELECT r.*, p.name, p.slug FROM shop_reviews r JOIN shop_products p "
                            "ON p.id = r.product_id WHERE r.customer_id = ? ORDER BY r.created_at DESC, r.id DESC",
                            (ctx.customer["id"],)).fetchall()
    if not rows:
        return account_page(ctx, "My Product Reviews", "<p>You have submitted no reviews.</p>")
    body = "".join(f'<tr id="my-review-{r["id"]}"><td>{short_date(r["created_at"])}</td><td><a href="/'
                   f'{esc(r["slug"])}.html">{esc(r["name"])}</a></td><td>{star_text(r["rating_percent"])}</td>'
                   f'<td class="review-title">{esc(r["title"])}</td><td class="review-detail">{esc(r["detail"])}</td>'
                   f'<td>{REVIEW_STATUS_LABELS[r["status"]]}</td></tr>' for r in rows)
    return account_page(ctx, "My Product Reviews", '<table id="my-reviews-table"><thead><tr><th>Created</th>'
                        '<th>Product Name</th><th>Rating</th><th>Summary</th><th>Review</th><th>Status</th></tr>'
                        f'</thead><tbody>{body}</tbody></table>')


def _refused(ctx: Ctx) -> None:
    ctx.flash("The account sign-in was incorrect or your account is disabled temporarily. Please wait and try "
              "again later.", "error")


# WebArena's login recipe posts `login[username]` (the email) and `login[password]` to `loginPost`.
SIGN_IN = SignIn(action="/customer/account/loginPost/", user_field="login[username]", password_field="login[password]",
                 account_sql="SELECT * FROM shop_customers WHERE email = ? COLLATE NOCASE",
                 signed_in_url="/customer/account/", refused_url="/customer/account/login/",
                 hash_password=hash_password, on_refused=_refused, user_label="Email", user_id="email",
                 user_type="email", password_id="pass", button="Sign In", magento=True)


def login_page(ctx: Ctx) -> Response:
    """GET `/customer/account/login/`: the sign-in form."""
    if ctx.customer is not None:
        return redirect("/customer/account/")
    main = ('<h1>Customer Login</h1><section><h2>Registered Customers</h2><p>If you have an account, sign in with your '
            f'email address.</p>{SIGN_IN.form()}</section>')
    return render_page(ctx, "Customer Login", main)


def login_post(ctx: Ctx) -> Response:
    """POST `/customer/account/loginPost/`: sign in, merging the guest cart into the customer's (`Ctx.sign_in`)."""
    return SIGN_IN.post(ctx)


def logout(ctx: Ctx) -> Response:
    """GET or POST `/customer/account/logout/`: sign out."""
    if ctx.token:
        ctx.conn.execute("UPDATE shop_sessions SET customer_id = NULL WHERE token = ?", (ctx.token,))
        ctx.account = None
    return render_page(ctx, "You are signed out", "<h1>You are signed out</h1><p>You have signed out and will go "
                       'to our homepage.</p><p><a href="/">Continue Shopping</a></p>')
