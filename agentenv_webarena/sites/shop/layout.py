"""The storefront's request context and page chrome: header, account sidebar, 404, login gate, address markup.

Owns `Ctx` (one request: its instance DB, form, session, signed-in customer and cart) and the
markup every storefront page shares. The pages themselves live in `catalog`, `checkout` and
`account`.
"""
from __future__ import annotations

import sqlite3
from typing import Any, Optional

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from agentenv_webarena.sites.common import RequestContext, SessionTable, esc, html_page, redirect
from agentenv_webarena.sites.shop.model import COOKIE, cart_lines

__all__ = ["Ctx", "render_page", "account_page", "not_found", "star_text", "back_to_product",
           "ADDRESS_FIELDS", "address_inputs", "address_lines", "default_address"]



class Ctx(RequestContext):
    """One storefront request: its instance DB, form fields, the visitor's session (guests have one too, for
    their cart and messages) and the signed-in customer (`customer`, or None).

    As in Magento, signing in and out attaches the customer to the visitor's session and detaches it.
    """

    SESSIONS = SessionTable(cookie=COOKIE, table="shop_sessions", accounts="shop_customers",
                            account_column="customer_id")
    LOGIN_URL = "/customer/account/login/"

    def __init__(self, request: Request, conn: sqlite3.Connection, form: dict[str, str]):
        super().__init__(request, conn, form)
        self.session: Optional[sqlite3.Row] = None
        if self.token:
            self.session = conn.execute("SELECT * FROM shop_sessions WHERE token = ?", (self.token,)).fetchone()
            if self.session is None:
                self.token = None

    @property
    def customer(self) -> Optional[sqlite3.Row]:
        """The signed-in customer, or None."""
        return self.account

    def ensure_session(self) -> str:
        """The session token, creating a guest session (and its cookie) when there is none."""
        if self.token is None:
            self.start_session(None)
        return self.token

    def sign_in(self, account: sqlite3.Row) -> None:
        """Attach the customer to the visitor's session (a guest's cart merges into the customer's, as in
        Magento)."""
        guest_cart = self.cart_id() if self.customer is None and self.token else None
        self.ensure_session()
        self.conn.execute("UPDATE shop_sessions SET customer_id = ? WHERE token = ?", (account["id"], self.token))
        self.account = account
        if guest_cart is not None:
            mine = self.cart_id(create=True)
            self.conn.execute("UPDATE shop_cart_items SET cart_id = ? WHERE cart_id = ?", (mine, guest_cart))
            self.conn.execute("DELETE FROM shop_carts WHERE id = ?", (guest_cart,))

    def flash(self, message: str, kind: str = "success") -> None:
        self.ensure_session()
        self.conn.execute("UPDATE shop_sessions SET flash = ?, flash_kind = ? WHERE token = ?",
                          (message, kind, self.token))

    def take_flash(self) -> str:
        if self.token is None:
            return ""
        row = self.conn.execute("SELECT flash, flash_kind FROM shop_sessions WHERE token = ?", (self.token,)).fetchone()
        if not row or not row["flash"]:
            return ""
        self.conn.execute("UPDATE shop_sessions SET flash = '' WHERE token = ?", (self.token,))
        return (f'<div class="message message-{esc(row["flash_kind"])}" role="alert">'
                f'{esc(row["flash"])}</div>')

    def cart_id(self, create: bool = False) -> Optional[int]:
        """The visitor's cart: the customer's when logged in, else the guest session's."""
        if self.customer is not None:
            row = self.conn.execute("SELECT id FROM shop_carts WHERE customer_id = ?",
                                    (self.customer["id"],)).fetchone()
            if row is None and create:
                return self.conn.execute("INSERT INTO shop_carts (customer_id) VALUES (?)",
                                         (self.customer["id"],)).lastrowid
        else:
            if self.token is None and not create:
                return None
            token = self.ensure_session()
            row = self.conn.execute("SELECT id FROM shop_carts WHERE session_token = ?", (token,)).fetchone()
            if row is None and create:
                return self.conn.execute("INSERT INTO shop_carts (session_token) VALUES (?)", (token,)).lastrowid
        return row["id"] if row else None


def _header(ctx: Ctx) -> str:
    count = sum(line["qty"] for line in cart_lines(ctx.conn, ctx.cart_id()))
    if ctx.customer is not None:
        who = f'{esc(ctx.customer["firstname"])} {esc(ctx.customer["lastname"])}'
        links = (f'<li>Welcome, {who}!</li><li><a href="/customer/account/">My Account</a></li>'
                 '<li><a href="/wishlist/">My Wish List</a></li>'
                 '<li><a href="/customer/account/logout/">Sign Out</a></li>')
    else:
        links = '<li>Default welcome msg!</li><li><a href="/customer/account/login/">Sign In</a></li>'
    value = esc(ctx.q.get("q", "")) if ctx.request.url.path.startswith("/catalogsearch") else ""
    categories = ctx.conn.execute("SELECT name, slug FROM shop_categories WHERE include_in_menu = 1 "
                                  "ORDER BY position").fetchall()
    nav = "".join(f'<li><a href="/{esc(c["slug"])}.html">{esc(c["name"])}</a></li>' for c in categories)
    return ('<header class="page-header"><a class="logo" href="/">One Stop Market</a>'
            '<form class="minisearch" role="search" action="/catalogsearch/result/" method="get">'
            '<label for="search">Search</label>'
            f'<input id="search" type="search" name="q" value="{value}" placeholder="Search entire store here...">'
            '<button type="submit">Search</button></form>'
            f'<ul class="header-links">{links}</ul>'
            f'<a class="showcart" href="/checkout/cart/">My Cart ({count})</a></header>'
            f'<nav class="nav-sections" aria-label="Categories"><ul>{nav}</ul></nav>')


# Luma's footer: information links, a newsletter box and the copyright (plain text here but for Contact Us: the
# other links lead nowhere a task needs, and no name repeats a link or button of the pages above it).
_FOOTER = (
    '<footer class="page-footer"><section class="footer-links"><h2>Customer Service</h2><ul>'
    '<li>Privacy and Cookie Policy</li><li>Search Terms</li><li><a href="/contact/">Contact Us</a></li>'
    '<li>Orders and Returns</li>'
    '<li>Advanced Search</li><li>Shipping and Delivery</li><li>Returns and Exchanges</li></ul></section>'
    '<section class="footer-about"><h2>About One Stop Market</h2><p>One Stop Market sells beauty, sports, '
    'clothing, home, electronics, office, grocery, health, video game and garden products from hundreds of '
    'brands, shipped across the United States.</p><p>Free shipping on orders over $50. Most orders ship within '
    'two business days; returns are accepted within 30 days of delivery.</p></section>'
    '<section class="footer-newsletter"><h2>Newsletter</h2><p>Sign up for our newsletter to hear about new '
    'products, sales and seasonal offers first.</p></section>'
    '<p class="copyright">Copyright 2013-present Magento, Inc. All rights reserved.</p></footer>'
)


def render_page(ctx: Ctx, title: str, main: str, status_code: int = 200) -> HTMLResponse:
    """A storefront page: header, flash message, `main`, footer."""
    body = f'{_header(ctx)}<main id="maincontent">{ctx.take_flash()}{main}</main>{_FOOTER}'
    return html_page(title, body, status_code=status_code, site="shop")


def account_page(ctx: Ctx, title: str, main: str) -> HTMLResponse:
    """A page of the customer account: the account sidebar, then `title` and `main`."""
    nav = "".join(f'<li><a href="{href}">{label}</a></li>' for href, label in (
        ("/customer/account/", "My Account"), ("/sales/order/history/", "My Orders"),
        ("/wishlist/", "My Wish List"), ("/customer/address/", "Address Book"),
        ("/customer/account/edit/", "Account Information"), ("/review/customer/", "My Product Reviews"),
        ("/newsletter/manage/", "Newsletter Subscriptions")))
    main = (f'<div class="layout"><nav class="sidebar" aria-label="My account"><ul>{nav}</ul></nav>'
            f'<div class="column-main"><h1>{esc(title)}</h1>{main}</div></div>')
    return render_page(ctx, title, main)


def not_found(ctx: Ctx) -> HTMLResponse:
    """The storefront's 404 page."""
    return render_page(ctx, "404 Not Found", "<h1>Whoops, our bad...</h1><p>The page you requested was not found.</p>",
                       status_code=404)


def star_text(percent: int) -> str:
    """`80` -> `4 out of 5 stars`."""
    return f"{percent // 20} out of 5 stars"


def back_to_product(product: sqlite3.Row) -> Response:
    """A redirect to the product's page."""
    return redirect(f'/{product["slug"]}.html')


ADDRESS_FIELDS = (("firstname", "First Name"), ("lastname", "Last Name"), ("street", "Street Address"),
                  ("city", "City"), ("region", "State/Province"), ("postcode", "Zip/Postal Code"),
                  ("country", "Country"), ("telephone", "Phone Number"))


def address_inputs(values: Any) -> str:
    """The address form fields, filled from `values` (a row or None)."""
    return "".join(f'<div class="field"><label for="addr-{key}">{label}</label><input id="addr-{key}" type="text" '
                   f'name="{key}" value="{esc(values[key] if values else "")}"></div>' for key, label in ADDRESS_FIELDS)


def address_lines(a: Any, prefix: str = "") -> str:
    """An address as `<address>` lines; `prefix` picks the columns (`"ship_"` on an order row)."""

    def get(key: str) -> Any:
        return a[prefix + key]

    return (f'{esc(get("firstname"))} {esc(get("lastname"))}<br>{esc(get("street"))}<br>{esc(get("city"))}, '
            f'{esc(get("region"))}, {esc(get("postcode"))}<br>{esc(get("country"))}<br>T: {esc(get("telephone"))}')


def default_address(ctx: Ctx) -> Optional[sqlite3.Row]:
    """The signed-in customer's default address, or None."""
    return ctx.conn.execute("SELECT * FROM shop_addresses WHERE customer_id = ? ORDER BY is_default DESC, id LIMIT 1",
                            (ctx.customer["id"],)).fetchone()
