"""The wiki's Starlette app: Kiwix's URL shapes over the read-only corpus.

Owns the routes and their input checks (a bad query parameter is a 400 page saying which, an unknown
book or article a 404 "not found" page); the markup lives in `pages`, the articles in `corpus`.
"""
from __future__ import annotations

from typing import Mapping, Optional

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from agentenv_webarena.sites.wiki import pages
from agentenv_webarena.sites.wiki.corpus import BOOK, LANDING_TITLE, article, article_path, search, title_from_path

__all__ = ["create_app"]

_MAX_PAGE_LENGTH = 140


def _int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """A whole-number query parameter in [low, high].

    Raises:
        ValueError: the value is not a whole number in range (the message names the parameter).
    """
    raw = request.query_params.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")
    return value


def create_app(store=None, site_urls: Optional[Mapping[str, str]] = None) -> Starlette:
    """The wiki app. `store` is unused (the wiki is read-only); `site_urls` gives the map's URL for coordinates
    (read at each request, as the sites process fills it in once the ports are bound)."""
    urls = site_urls if site_urls is not None else {}

    def landing(request: Request) -> Response:
        return RedirectResponse(article_path(LANDING_TITLE), status_code=302)

    def show(request: Request) -> Response:
        name = request.path_params["name"]
        if request.path_params["book"] != BOOK:
            return pages.render_not_found(request.url.path, message=f'No such book: {request.path_params["book"]}')
        if name == LANDING_TITLE:
            return pages.render_landing()
        title = title_from_path(name)
        found = article(title)
        if found is None:
            return pages.render_not_found(request.url.path, wanted=title)
        if found.title != title:  # another capitalisation: redirect to the article's own URL, as Kiwix does
            return RedirectResponse(article_path(found.title), status_code=302)
        return pages.render_article(found, pages.map_url_of(urls))

    def find(request: Request) -> Response:
        book = request.query_params.get("content", BOOK) or BOOK
        if book != BOOK:
            return pages.render_not_found(request.url.path, message=f"No such book: {book}")
        pattern = request.query_params.get("pattern", "")
        try:
            start = _int_param(request, "start", 0, 0, 1_000_000)
            page_length = _int_param(request, "pageLength", pages.PAGE_LENGTH, 1, _MAX_PAGE_LENGTH)
        except ValueError as exc:
            return pages.render_not_found(request.url.path, status_code=400, message=f"Invalid request: {exc}")
        if len(pattern) > 500:
            return pages.render_not_found(request.url.path, status_code=400,
                                          message="Invalid request: pattern is longer than 500 characters")
        return pages.render_search(pattern, search(pattern), start, page_length)

    def book_root(request: Request) -> Response:
        if request.path_params["book"] != BOOK:
            return pages.render_not_found(request.url.path, message=f'No such book: {request.path_params["book"]}')
        return landing(request)

    async def missing(request: Request, exc: Exception) -> Response:
        return pages.render_not_found(request.url.path)

    routes = [Route("/", landing), Route("/search", find), Route("/{book}", book_root), Route("/{book}/", book_root),
              Route("/{book}/A/", book_root), Route("/{book}/A/{name:path}", show)]
    return Starlette(routes=routes, exception_handlers={404: missing})
