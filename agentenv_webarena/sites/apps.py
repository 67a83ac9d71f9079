"""Assemble the embedded sites: one `InstanceStore` for all of them and one ASGI app per site.

Owns which sites exist (`SITES`: shop, shop admin, forum, code host, map, wiki, homepage), the
pristine database build (every site's SCHEMA then seed, in a fixed order) and the control endpoints
every port answers:

| Method & path                               | Effect                                          |
|---------------------------------------------|-------------------------------------------------|
| POST /__control/reset?instance=<name>       | restore the instance's data to the seed (ms)    |
| POST /__control/drop?instance=<name>        | free the instance                               |
| GET  /__control/health                      | "ok"                                            |
"""
from __future__ import annotations

import importlib
import inspect
import sqlite3
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from agentenv_webarena.sites.store import InstanceStore, check_instance_name

__all__ = ["SITES", "SITE_MODULES", "build_database", "build_apps", "pristine_database"]

# Site key (WebArena's name) -> (module with `create_app(store)`, mount path). The mount path is part of
# the site's base URL (WebArena's SHOPPING_ADMIN ends in "/admin").
SITES: dict[str, tuple[str, str]] = {
    "shopping": ("agentenv_webarena.sites.shop", "/"),
    "shopping_admin": ("agentenv_webarena.sites.shop.admin", "/admin"),
    "reddit": ("agentenv_webarena.sites.forum", "/"),
    "gitlab": ("agentenv_webarena.sites.gitlab", "/"),
    "map": ("agentenv_webarena.sites.map", "/"),
    "wikipedia": ("agentenv_webarena.sites.wiki", "/"),
    "homepage": ("agentenv_webarena.sites.homepage", "/"),
}

# Site packages owning tables (SCHEMA + seed), in build order; the shop's admin side shares the shop's
# tables.
SITE_MODULES = ("agentenv_webarena.sites.shop", "agentenv_webarena.sites.forum", "agentenv_webarena.sites.gitlab",
                "agentenv_webarena.sites.map", "agentenv_webarena.sites.wiki", "agentenv_webarena.sites.homepage")


def build_database(conn: sqlite3.Connection) -> None:
    """Create every site's tables and insert its deterministic seed data."""
    for name in SITE_MODULES:
        module = importlib.import_module(name)
        conn.executescript(module.SCHEMA)
        module.seed(conn)
    conn.commit()


def pristine_database() -> sqlite3.Connection:
    """A fresh seeded database (what task generation reads)."""
    return InstanceStore(build_database, max_instances=1).pristine()


def _control_routes(store: InstanceStore) -> list[Route]:
    def _instance(request: Request) -> str:
        return check_instance_name(request.query_params.get("instance", ""))

    async def reset(request: Request) -> JSONResponse:
        try:
            name = _instance(request)
        except ValueError as exc:
            return JSONResponse({"error": {"code": "invalid_instance", "message": str(exc)}}, status_code=422)
        start = time.perf_counter()
        store.reset(name)
        return JSONResponse({"instance": name, "reset_ms": round((time.perf_counter() - start) * 1e3, 3)})

    async def drop(request: Request) -> JSONResponse:
        try:
            name = _instance(request)
        except ValueError as exc:
            return JSONResponse({"error": {"code": "invalid_instance", "message": str(exc)}}, status_code=422)
        return JSONResponse({"instance": name, "dropped": store.drop(name)})

    async def health(request: Request) -> JSONResponse:
        return JSONResponse("ok")

    return [Route("/__control/reset", reset, methods=["POST"]), Route("/__control/drop", drop, methods=["POST"]),
            Route("/__control/health", health, methods=["GET"])]


def build_apps(store: InstanceStore | None = None, site_urls: dict[str, str] | None = None,
               control: bool = True) -> tuple[InstanceStore, dict[str, Any]]:
    """The store and one app per site of `SITES`, keyed by WebArena site name.

    Args:
        store: the instances (a new one over `build_database` when None).
        site_urls: site key -> base URL, for pages that link to the other sites (the homepage); the
            caller may fill it in after building, once the ports are bound.
        control: serve the control routes; without them an env server takes the sites for a real
            deployment (shared state, no per-env reset).
    """
    store = store or InstanceStore(build_database)
    routes = _control_routes(store) if control else []
    urls = {} if site_urls is None else site_urls
    apps = {}
    for site, (module_name, mount) in SITES.items():
        module = importlib.import_module(module_name)
        accepts_urls = "site_urls" in inspect.signature(module.create_app).parameters
        app = module.create_app(store, site_urls=urls) if accepts_urls else module.create_app(store)
        apps[site] = Starlette(routes=[*routes, Mount(mount, app=app)])
    return store, apps
