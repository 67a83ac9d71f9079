"""The forum's Starlette app: every route of the forum, bound to an `InstanceStore`.

Owns the URL table (Postmill's paths) and binds each page handler of `listing`, `threads` and
`account` to the store through `sites.common.page` (handlers take `(ctx, **path_params)`).
"""
from __future__ import annotations

from typing import Callable

from starlette.applications import Starlette
from starlette.routing import Route

from agentenv_webarena.sites.common import page
from agentenv_webarena.sites.forum import account, listing, threads
from agentenv_webarena.sites.forum.layout import Ctx
from agentenv_webarena.sites.store import InstanceStore

__all__ = ["create_app"]


def create_app(store: InstanceStore) -> Starlette:
    """The forum's Starlette app over `store` (every request uses its `X-Webarena-Instance` DB)."""

    def bind(handler: Callable) -> Callable:
        return page(store, Ctx, handler)

    routes = [
        Route("/", bind(listing.front)),
        Route("/forums", bind(listing.forums)),
        Route("/search", bind(listing.search)),
        Route("/login", bind(account.login_page)),
        Route("/login_check", bind(account.login_check), methods=["POST"]),
        Route("/logout", bind(account.logout), methods=["POST"]),
        Route("/submit", bind(threads.submit), methods=["GET", "POST"]),
        Route("/submit/{forum}", bind(threads.submit), methods=["GET", "POST"]),
        Route("/create_forum", bind(listing.create_forum), methods=["GET", "POST"]),
        Route("/sv/{id:int}", bind(threads.vote), methods=["POST"]),
        Route("/cv/{id:int}", bind(threads.vote), methods=["POST"]),
        Route("/user/{name}", bind(account.user_page)),
        Route("/user/{name}/edit_biography", bind(account.edit_biography), methods=["GET", "POST"]),
        Route("/user/{name}/{section}", bind(account.user_page)),
        Route("/f/{forum}", bind(listing.forum_page)),
        Route("/f/{forum}/edit", bind(listing.edit_forum), methods=["GET", "POST"]),
        Route("/f/{forum}/subscribe", bind(listing.subscription), methods=["POST"]),
        Route("/f/{forum}/unsubscribe", bind(listing.subscription), methods=["POST"]),
        Route("/f/{forum}/{id:int}", bind(threads.submission_page)),
        Route("/f/{forum}/{id:int}/", bind(threads.submission_page)),
        Route("/f/{forum}/{id:int}/-/comment", bind(threads.comment_post), methods=["POST"]),
        Route("/f/{forum}/{id:int}/-/comment/{cid:int}", bind(threads.comment_page), methods=["GET", "POST"]),
        Route("/f/{forum}/{id:int}/-/edit", bind(threads.edit_submission), methods=["GET", "POST"]),
        Route("/f/{forum}/{id:int}/-/delete", bind(threads.delete_submission), methods=["POST"]),
        Route("/f/{forum}/{id:int}/{slug}", bind(threads.submission_page)),
        Route("/f/{forum}/{sort}", bind(listing.forum_page)),
        Route("/{sort}", bind(listing.front)),
    ]
    return Starlette(routes=routes)
