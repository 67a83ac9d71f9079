"""The embedded sites' stylesheets: one CSS file per site in this folder, laid out like the real app.

Owns the look of every page and nothing of its markup: `stylesheet(site)` is `base.css` then `<site>.css`,
comments and spacing dropped, which `common.html_page` inlines into the page's `<style>`. The sheets place
elements (bars, sidebars, grids, image boxes) so that the 1280x720 first viewport holds about what the real
app's does; they never hide an element, so the whole-page accessibility tree does not depend on them.

| site        | sheet           | the app's shape                                                           |
|-------------|-----------------|---------------------------------------------------------------------------|
| `shop`      | `shop.css`      | Magento Luma: header strip, logo/search/cart row, category bar, 4-a-row grid |
| `admin`     | `admin.css`     | Magento admin: dark left menu column, page title bar, dark-headed grids   |
| `gitlab`    | `gitlab.css`    | GitLab: dark top bar, grey left project sidebar, content column           |
| `forum`     | `forum.css`     | Postmill: top bar, submissions with a vote column, right sidebar          |
| `map`       | `map.css`       | OpenStreetMap: header, left search/directions panel over the map area     |
| `wiki`      | `wiki.css`      | Kiwix: toolbar over a Wikipedia article with its infobox                  |
| `homepage`  | `homepage.css`  | WebArena's start page: a grid of site cards                               |
"""
from __future__ import annotations

import functools
import os
import re

__all__ = ["SITES", "stylesheet"]

_DIR = os.path.dirname(os.path.abspath(__file__))
SITES = ("shop", "admin", "gitlab", "forum", "map", "wiki", "homepage")


def _compact(css: str) -> str:
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"\s+", " ", css)
    return re.sub(r"\s*([{};,>])\s*", r"\1", css).replace(";}", "}").strip()


@functools.lru_cache(maxsize=None)
def stylesheet(site: str) -> str:
    """The CSS of `site` (one of `SITES`): `base.css` and the site's sheet, compacted.

    Raises:
        ValueError: `site` is not one of `SITES`.
    """
    if site not in SITES:
        raise ValueError(f"no stylesheet for site {site!r}; choose one of {list(SITES)}")
    parts = []
    for name in ("base", site):
        with open(os.path.join(_DIR, f"{name}.css"), encoding="utf-8") as f:
            parts.append(_compact(f.read()))
    return "".join(parts)
