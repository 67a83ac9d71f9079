"""The map's Starlette app: every route of the map, bound to an `InstanceStore`.

Owns the URL table (OpenStreetMap's paths) and binds each handler of `pages` to the store
(`sites.common.page`); any other path gets the map's 404 page.
"""
from __future__ import annotations

from typing import Callable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentenv_webarena.sites.common import RequestContext, page
from agentenv_webarena.sites.map import pages
from agentenv_webarena.sites.store import InstanceStore

__all__ = ["create_app"]


async def _not_found(request: Request, exc: HTTPException) -> Response:
    if exc.status_code == 405:
        return pages.error_page("Method not allowed", f"{request.method} is not allowed on {request.url.path}.", 405)
    return pages.not_found(f"There is no page at {request.url.path}.")


def create_app(store: InstanceStore) -> Starlette:
    """The map's Starlette app over `store` (every request uses its `X-Webarena-Instance` DB)."""

    def bind(handler: Callable) -> Callable:
        return page(store, RequestContext, handler)

    element = "/{kind:str}/{id:int}"
    routes = [
        Route("/", bind(pages.home)),
        Route("/search", bind(pages.search_page)),
        Route("/directions", bind(pages.directions)),
        Route("/my_places", bind(pages.my_places)),
        Route("/my_places/add", bind(pages.save_place), methods=["POST"]),
        Route("/my_places/{id:int}/remove", bind(pages.remove_place), methods=["POST"]),
        Route("/note/{id:int}", bind(pages.note_page)),
        Route("/note/{id:int}/resolve", bind(pages.resolve_note), methods=["POST"]),
        Route(element, bind(pages.element_page)),
        Route(element + "/note", bind(pages.add_note), methods=["POST"]),
        Route(element + "/edit", bind(pages.edit_tags), methods=["GET", "POST"]),
    ]
    return Starlette(routes=routes, exception_handlers={404: _not_found, 405: _not_found})
