"""The storefront's cart and checkout: add, update and remove cart lines, place an order, the success page.

Owns the cart pages and the order a checkout writes (Magento's flat-rate shipping per item,
"Check / Money order" payment, stock decremented). Past orders are shown by `account`.
"""
from __future__ import annotations

import re

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, redirect, to_int
from agentenv_webarena.sites.shop.layout import (
    ADDRESS_FIELDS,
    Ctx,
    address_inputs,
    back_to_product,
    default_address,
    render_page,
)
from agentenv_webarena.sites.shop.model import (
    SHIPPING_PER_ITEM,
    cart_lines,
    in_stock,
    money,
    option_text,
    product_options,
    site_now,
)

__all__ = ["cart_add", "cart_page", "cart_update", "cart_delete", "checkout_page", "place_order", "success_page"]


@login_required
def cart_add(ctx: Ctx) -> Response:
    """POST `/checkout/cart/add/`: add a product (with its options and quantity) to the cart."""
    product = ctx.conn.execute("SELECT * FROM shop_products WHERE id = ? AND enabled = 1",
                               (to_int(ctx.form.get("product")),)).fetchone()
    if product is None:
        ctx.flash("The product does not exist.", "error")
        return redirect("/checkout/cart/")
    sizes, colors = product_options(product)
    size, color = ctx.form.get("size", ""), ctx.form.get("color", "")
    if (sizes and size not in sizes) or (colors and color not in colors):
        missing = [label for label, values, value in (("Size", sizes, size), ("Color", colors, color))
                   if values and value not in values]
        ctx.flash(f"You need to choose options for your item: {' and '.join(missing)}.", "error")
        return back_to_product(product)
    qty = to_int(ctx.form.get("qty"), 1)
    if qty < 1:
        ctx.flash("Please enter a quantity greater than 0.", "error")
        return back_to_product(product)
    if not in_stock(product):
        ctx.flash("This product is out of stock.", "error")
        return back_to_product(product)
    cart = ctx.cart_id(create=True)
    existing = ctx.conn.execute("SELECT id FROM shop_cart_items WHERE cart_id = ? AND product_id = ? AND size = ? "
                                "AND color = ?", (cart, product["id"], size, color)).fetchone()
    if existing:
        ctx.conn.execute("UPDATE shop_cart_items SET qty = qty + ? WHERE id = ?", (qty, existing["id"]))
    else:
        ctx.conn.execute("INSERT INTO shop_cart_items (cart_id, product_id, qty, size, color) VALUES (?, ?, ?, ?, ?)",
                         (cart, product["id"], qty, size, color))
    ctx.flash(f"You added {product['name']} to your shopping cart.")
    return back_to_product(product)


def cart_page(ctx: Ctx) -> Response:
    """GET `/checkout/cart/`: the cart table and its subtotal."""
    lines = cart_lines(ctx.conn, ctx.cart_id())
    if not lines:
        return render_page(ctx, "Shopping Cart", "<h1>Shopping Cart</h1><p>You have no items in your shopping cart.</p>"
                           '<p><a href="/">Continue Shopping</a></p>')
    rows = []
    subtotal = 0.0
    for line in lines:
        opts = option_text(line["size"], line["color"])
        summary = line["name"] + (f" | {opts}" if opts else "")
        subtotal += line["price"] * line["qty"]
        options = f'<p class="item-options">{esc(opts)}</p>' if opts else ""
        rows.append(
            f'<tr class="cart-item" data-summary="{esc(summary)}" data-sku="{esc(line["sku"])}">'
            f'<td><a class="product-item-name" href="/{esc(line["slug"])}.html">{esc(line["name"])}</a>{options}</td>'
            f'<td>{money(line["price"])}</td><td><input class="qty" type="number" min="0" '
            f'name="cart[{line["item_id"]}][qty]" value="{line["qty"]}" aria-label="Qty of {esc(line["name"])}"></td>'
            f'<td>{money(line["price"] * line["qty"])}</td>'
            '<td><button type="submit" formaction="/checkout/cart/delete/" '
            f'name="item_id" value="{line["item_id"]}" aria-label="Remove {esc(line["name"])}">Remove item</button>'
            '</td></tr>')
    main = ('<h1>Shopping Cart</h1><form method="post" action="/checkout/cart/updatePost/">'
            '<table id="shopping-cart-table"><caption>Shopping Cart Items</caption><thead><tr><th>Item</th>'
            '<th>Price</th><th>Qty</th><th>Subtotal</th><th>Action</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table><button type="submit">Update Shopping Cart</button></form>'
            f'<section class="cart-summary"><h2>Summary</h2><p>Subtotal: {money(subtotal)}</p>'
            '<p><a href="/checkout/">Proceed to Checkout</a></p></section>')
    return render_page(ctx, "Shopping Cart", main)


def cart_update(ctx: Ctx) -> Response:
    """POST `/checkout/cart/updatePost/`: set line quantities (0 removes the line)."""
    cart = ctx.cart_id()
    for key, value in ctx.form.items():
        match = re.fullmatch(r"cart\[(\d+)\]\[qty\]", key)
        if not match or cart is None:
            continue
        qty = to_int(value, -1)
        if qty == 0:
            ctx.conn.execute("DELETE FROM shop_cart_items WHERE id = ? AND cart_id = ?", (int(match[1]), cart))
        elif qty > 0:
            ctx.conn.execute("UPDATE shop_cart_items SET qty = ? WHERE id = ? AND cart_id = ?",
                             (qty, int(match[1]), cart))
    return redirect("/checkout/cart/")


def cart_delete(ctx: Ctx) -> Response:
    """POST `/checkout/cart/delete/`: remove one cart line."""
    cart = ctx.cart_id()
    if cart is not None:
        ctx.conn.execute("DELETE FROM shop_cart_items WHERE id = ? AND cart_id = ?",
                         (to_int(ctx.form.get("item_id")), cart))
    return redirect("/checkout/cart/")


def checkout_page(ctx: Ctx) -> Response:
    """GET `/checkout/`: the shipping address form and the order summary (signed-in customers)."""
    lines = cart_lines(ctx.conn, ctx.cart_id())
    if not lines:
        return redirect("/checkout/cart/")
    qty = sum(line["qty"] for line in lines)
    subtotal = sum(line["price"] * line["qty"] for line in lines)
    items = "".join(f'<li>{esc(line["name"])} {esc(option_text(line["size"], line["color"]))} &times; {line["qty"]}: '
                    f'{money(line["price"] * line["qty"])}</li>' for line in lines)
    main = ('<h1>Checkout</h1><form method="post" action="/checkout/placeOrder/"><fieldset><legend>Shipping Address'
            f'</legend>{address_inputs(default_address(ctx))}</fieldset><fieldset><legend>Shipping Methods</legend>'
            f'<p>Flat Rate: Fixed {money(SHIPPING_PER_ITEM)} per item</p></fieldset><fieldset><legend>Payment Method'
            '</legend><p>Check / Money order</p></fieldset><section class="order-summary"><h2>Order Summary</h2>'
            f'<ul>{items}</ul><p>Cart Subtotal: {money(subtotal)}</p><p>Shipping: {money(SHIPPING_PER_ITEM * qty)}</p>'
            f'<p>Order Total: {money(subtotal + SHIPPING_PER_ITEM * qty)}</p></section>'
            '<button type="submit">Place Order</button></form>')
    return render_page(ctx, "Checkout", main)


@login_required
def place_order(ctx: Ctx) -> Response:
    """POST `/checkout/placeOrder/`: turn the cart into a pending order."""
    lines = cart_lines(ctx.conn, ctx.cart_id())
    if not lines:
        return redirect("/checkout/cart/")
    address = {key: ctx.form.get(key, "").strip() for key, _ in ADDRESS_FIELDS}
    missing = [label for key, label in ADDRESS_FIELDS if not address[key]]
    if missing:
        ctx.flash(f"Please fill in the required fields: {', '.join(missing)}.", "error")
        return redirect("/checkout/")
    qty = sum(line["qty"] for line in lines)
    subtotal = round(sum(line["price"] * line["qty"] for line in lines), 2)
    shipping = SHIPPING_PER_ITEM * qty
    now = site_now(ctx.conn)
    order_id = (ctx.conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM shop_orders").fetchone()[0])
    ctx.conn.execute(
        "INSERT INTO shop_orders (id, increment_id, customer_id, status, created_at, updated_at, subtotal, shipping, "
        "grand_total, ship_firstname, ship_lastname, ship_street, ship_city, ship_region, ship_postcode, ship_country, "
        "ship_telephone, payment_method) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "'Check / Money order')",
        (order_id, f"{order_id:09d}", ctx.customer["id"], now, now, subtotal, shipping, round(subtotal + shipping, 2),
         *(address[k] for k, _ in ADDRESS_FIELDS)))
    for line in lines:
        ctx.conn.execute("INSERT INTO shop_order_items (order_id, product_id, sku, name, price, qty, size, color) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (order_id, line["id"], line["sku"], line["name"],
                                                             line["price"], line["qty"], line["size"], line["color"]))
        ctx.conn.execute("UPDATE shop_products SET qty = MAX(0, qty - ?) WHERE id = ?", (line["qty"], line["id"]))
    ctx.conn.execute("DELETE FROM shop_cart_items WHERE cart_id = ?", (ctx.cart_id(),))
    ctx.conn.execute("UPDATE shop_sessions SET last_order_id = ? WHERE token = ?", (order_id, ctx.token))
    return redirect("/checkout/onepage/success/")


def success_page(ctx: Ctx) -> Response:
    """GET `/checkout/onepage/success/`: the new order's number."""
    row = ctx.conn.execute("SELECT last_order_id FROM shop_sessions WHERE token = ?", (ctx.token,)).fetchone() \
        if ctx.token else None
    if not row or row["last_order_id"] is None:
        return redirect("/checkout/cart/")
    order = ctx.conn.execute("SELECT * FROM shop_orders WHERE id = ?", (row["last_order_id"],)).fetchone()
    main = ('<h1>Thank you for your purchase!</h1><p>Your order number is: '
            f'<a href="/sales/order/view/order_id/{order["id"]}/">{order["increment_id"]}</a>.</p>'
            "<p>We'll email you an order confirmation with details and tracking info.</p>"
            '<p><a href="/">Continue Shopping</a></p>')
    return render_page(ctx, "Success Page", main)
