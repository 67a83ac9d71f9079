"""Embedded WebArena-style sites: a shopping storefront and its admin side, a Postmill-like forum, a
GitLab-like code host, an OpenStreetMap-like map, a Kiwix-like wiki and WebArena's homepage.

One package per site: `shop` (the storefront, with its admin side in `shop.admin`), `forum`,
`gitlab`, `map`, `wiki` and `homepage`, each with its SQL schema, seed, pages and app; `world` holds
the facts several sites share (places, people), so a multi-site task has one truth.
`store` keeps the per-instance SQLite state, `common` the
helpers every site shares, `apps` assembles the apps with their control endpoints.
`python -m agentenv_webarena.sites` serves them; `EmbeddedSites` (`process`) starts that process
from Python (the env server does so when no site URLs are configured) and resets per-instance
state over HTTP. The sites import nothing of the environment, the browser, `webarena/` or the
trainer, so they run on their own.
"""
from agentenv_webarena.sites.process import EmbeddedSites, drop_instance, is_embedded_site, reset_instance

__all__ = ["EmbeddedSites", "reset_instance", "drop_instance", "is_embedded_site"]
