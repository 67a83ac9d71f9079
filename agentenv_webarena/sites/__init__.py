"""Embedded WebArena-style sites: a shopping storefront, its admin side and a Postmill-like forum.

`python -m agentenv_webarena.sites` serves them; `EmbeddedSites` starts that process from Python
(the env server does so when no site URLs are configured) and resets per-instance state over HTTP.
"""
from agentenv_webarena.sites.process import EmbeddedSites, drop_instance, is_embedded_site, reset_instance

__all__ = ["EmbeddedSites", "reset_instance", "drop_instance", "is_embedded_site"]
