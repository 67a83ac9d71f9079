"""The sites' stylesheets in Chromium: they move elements, never hide or rename one, and give each site its app's
shape in the first 1280x720 viewport (bench/webarena_viewport.py measures what that viewport then holds).

In process, as the env server runs (embedded sites + one Chromium), on the pages of the viewport bench.
"""
from __future__ import annotations

import dataclasses
import os
import re
import sys

import pytest
from helpers import require_chromium

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
require_chromium()

from webarena_viewport import PAGES  # noqa: E402

pytestmark = pytest.mark.timeout(600)
_ID = re.compile(r"^(\t*)\[-?\d+\] ")


@pytest.fixture(scope="module")
def world():
    from agentenv_webarena.environment import EnvConfig, WebarenaWorld

    base = EnvConfig()
    world = WebarenaWorld.load(dataclasses.replace(base, browser=dataclasses.replace(
        base.browser, current_viewport_only=False)))
    try:
        yield world
    finally:
        world.close()


@pytest.fixture(scope="module")
def session(world):
    from agentenv_webarena.environment import WebarenaSession

    session = WebarenaSession(world)
    try:
        yield session
    finally:
        session.close()


def _open(world, session, kind: str, task: int, path: str):
    session.reset(task)
    page = session.browser.page
    if path:
        world.host.run(page.goto(world.config.site_urls[kind] + path, wait_until="load"), timeout_s=60)
    return page


def _tree(world, session) -> list[str]:
    text = world.host.run(session.browser.observe(), timeout_s=30).text
    # list markers come and go with `list-style` (the viewport-only observation leaves them out anyway)
    return [_ID.sub(r"\1[ID] ", line) for line in text.split("\n") if "ListMarker" not in line]


def test_the_whole_page_tree_is_the_same_without_the_stylesheet(world, session):
    changed = {}
    for kind, name, task, path in PAGES:
        page = _open(world, session, kind, task, path)
        styled = _tree(world, session)
        world.host.run(page.evaluate("document.querySelectorAll('style').forEach(s => s.remove())"), timeout_s=30)
        plain = _tree(world, session)
        if styled != plain:
            changed[f"{kind} {name}"] = sorted(set(styled) ^ set(plain))[:4]
    assert not changed, changed


def _box(world, page, selector: str) -> dict:
    return world.host.run(page.evaluate(
        "s => { const r = document.querySelector(s).getBoundingClientRect();"
        " return {x: r.x, y: r.y, w: r.width, h: r.height}; }", selector), timeout_s=30)


def test_each_site_has_its_apps_layout(world, session):
    # Luma: the logo row under the links strip, four products a row, each under its image box
    page = _open(world, session, "shopping", 0, "/sports-outdoors.html")
    tops = world.host.run(page.evaluate(
        "[...document.querySelectorAll('.product-item-link')].slice(0, 5).map(a => a.getBoundingClientRect().y)"),
        timeout_s=30)
    assert len(set(tops[:4])) == 1 and tops[4] > tops[0], tops
    assert _box(world, page, ".header-links")["y"] < _box(world, page, ".logo")["y"]
    assert tops[0] - _box(world, page, ".product-item")["y"] > 150  # the image box above the name
    # Magento admin: the menu is a column left of the page, which starts at the top
    page = _open(world, session, "shopping_admin", 252, "/sales/order/")
    menu, main = _box(world, page, ".admin-menu"), _box(world, page, "#anchor-content")
    assert menu["x"] + menu["w"] <= main["x"] and main["y"] == 0
    # GitLab: top bar, then the project sidebar left of the content
    page = _open(world, session, "gitlab", 830, "/byteblaze/empathy-prompts")
    side, content = _box(world, page, ".nav-sidebar"), _box(world, page, "#content-body")
    assert side["x"] + side["w"] <= content["x"] and side["y"] == content["y"] > 0
    # Postmill: the vote column left of each submission's title, the sidebar right of the list
    page = _open(world, session, "reddit", 480, "/f/gaming")
    vote, title = _box(world, page, ".submission__vote"), _box(world, page, ".submission__title")
    assert vote["x"] + vote["w"] <= title["x"]
    assert _box(world, page, "#sidebar")["x"] > _box(world, page, "#main")["x"] + 600
    # OSM: the search box at the top of the left panel, the panel narrower than half the window
    page = _open(world, session, "map", 1208, "")
    search, panel = _box(world, page, "form[role=search]"), _box(world, page, "#content")
    assert search["x"] == panel["x"] == 0 and search["y"] < panel["y"] and panel["w"] < 640
