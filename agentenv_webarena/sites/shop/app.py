"""The storefront's Starlette app: every route of the shop, bound to an `InstanceStore`.

Owns the URL table (Magento's paths, each with and without its trailing slash) and how a request
becomes a page call (`sites.common.page`: the instance DB, the form, the session cookie) or a REST call
(the admin bearer token). The pages live in `catalog`, `checkout`, `account` and `contact`, the REST subset in `rest`.
"""
from __future__ import annotations

from typing import Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentenv_webarena.sites.common import db, json_error, page, slash_routes
from agentenv_webarena.sites.shop import account, catalog, checkout, contact, rest
from agentenv_webarena.sites.shop.layout import Ctx
from agentenv_webarena.sites.store import InstanceStore

__all__ = ["create_app"]


def create_app(store: InstanceStore) -> Starlette:
    """The storefront's Starlette app over `store` (each request uses its `X-Webarena-Instance` DB)."""

    def bind(handler: Callable[..., Response]) -> Callable:
        return page(store, Ctx, handler)

    def api(handler: Callable[..., Response], auth: bool = True) -> Callable:
        async def endpoint(request: Request) -> Response:
            body = await request.body()
            with db(store, request) as conn:
                if not auth:
                    return handler(conn, body)
                if rest.rest_admin(conn, request) is None:
                    return json_error(401, 'The consumer isn\'t authorized to access %resources.')
                return handler(conn, request, **request.path_params)
        return endpoint

    routes = [Route("/", bind(catalog.home))]
    for path, handler, methods in (
        ("/catalogsearch/result/", catalog.search_results, ("GET",)),
        ("/catalogsearch/result/index/", catalog.search_results, ("GET",)),
        ("/checkout/cart/", checkout.cart_page, ("GET",)),
        ("/checkout/cart/add/", checkout.cart_add, ("POST",)),
        ("/checkout/cart/updatePost/", checkout.cart_update, ("POST",)),
        ("/checkout/cart/delete/", checkout.cart_delete, ("POST",)),
        ("/checkout/", checkout.checkout_page, ("GET",)),
        ("/checkout/placeOrder/", checkout.place_order, ("POST",)),
        ("/checkout/onepage/success/", checkout.success_page, ("GET",)),
        ("/sales/order/history/", account.order_history, ("GET",)),
        ("/sales/order/view/order_id/{order_id:int}/", account.order_view, ("GET",)),
        ("/customer/account/", account.dashboard, ("GET",)),
        ("/customer/account/index/", account.dashboard, ("GET",)),
        ("/customer/account/edit/", account.account_edit, ("GET",)),
        ("/customer/account/editPost/", account.account_edit_post, ("POST",)),
        ("/customer/address/", account.address_book, ("GET",)),
        ("/customer/address/edit/id/{address_id:int}/", account.address_edit, ("GET",)),
        ("/customer/address/formPost/id/{address_id:int}/", account.address_save, ("POST",)),
        ("/wishlist/", account.wishlist_page, ("GET",)),
        ("/wishlist/index/add/", account.wishlist_add, ("POST",)),
        ("/wishlist/index/remove/", account.wishlist_remove, ("POST",)),
        ("/wishlist/index/cart/", account.wishlist_to_cart, ("POST",)),
        ("/review/customer/", account.my_reviews, ("GET",)),
        ("/newsletter/manage/", account.newsletter_manage, ("GET",)),
        ("/newsletter/manage/save/", account.newsletter_save, ("POST",)),
        ("/contact/", contact.contact_page, ("GET",)),
        ("/contact/index/", contact.contact_page, ("GET",)),
        ("/contact/index/post/", contact.contact_post, ("POST",)),
        ("/review/product/post/id/{product_id:int}/", catalog.review_post, ("POST",)),
        ("/customer/account/login/", account.login_page, ("GET",)),
        ("/customer/account/loginPost/", account.login_post, ("POST",)),
        ("/customer/account/logout/", account.logout, ("GET", "POST")),
    ):
        routes += slash_routes(path, bind(handler), methods)
    for prefix in ("/rest/V1", "/rest/default/V1", "/rest/all/V1"):
        routes += [
            Route(f"{prefix}/integration/admin/token", api(rest.rest_token, auth=False), methods=["POST"]),
            Route(f"{prefix}/orders", api(rest.rest_orders), methods=["GET"]),
            Route(f"{prefix}/products/{{sku}}/reviews", api(lambda conn, request, sku: rest.rest_reviews(conn, sku)),
                  methods=["GET"]),
            Route(f"{prefix}/products/{{sku}}", api(lambda conn, request, sku: rest.rest_product(conn, sku)),
                  methods=["GET"]),
        ]
    routes.append(Route("/{slug:path}.html", bind(catalog.slug_page)))
    return Starlette(routes=routes)
