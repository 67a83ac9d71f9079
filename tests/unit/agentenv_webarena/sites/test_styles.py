"""The sites' stylesheets: one per site, inlined into every page, and none of them hides or pins content."""
import re

import pytest
from starlette.testclient import TestClient

from agentenv_webarena.sites import homepage
from agentenv_webarena.sites.common import html_page
from agentenv_webarena.sites.styles import SITES, stylesheet

# Declarations that would take an element out of the accessibility tree or out of the agent's reach (an inner
# scroller the page's `scroll [down]` does not move, a bar fixed over the content a click would hit).
_HIDING = re.compile(r"display:\s*none|visibility:\s*hidden|overflow(-[xy])?:\s*(hidden|auto|scroll)"
                     r"|position:\s*(fixed|sticky)|text-transform|content:\s*\"[^\"]")


def _rules(css: str) -> list[tuple[str, str]]:
    return re.findall(r"([^{}]+)\{([^{}]*)\}", css)


@pytest.mark.parametrize("site", SITES)
def test_each_site_has_a_compact_sheet_after_the_base(site):
    css = stylesheet(site)
    assert css.startswith(stylesheet("homepage").split("body{", 1)[0])  # base.css comes first
    assert "/*" not in css and "\n" not in css and 500 < len(css) < 8000
    assert len(_rules(css)) > 5


@pytest.mark.parametrize("site", SITES)
def test_no_rule_hides_pins_or_renames_content(site):
    """Only an empty pseudo-element (the map's drawn background) may be fixed; nothing is hidden, clipped,
    made an inner scroller, or given text (CSS text would enter accessible names)."""
    for selector, body in _rules(stylesheet(site)):
        found = _HIDING.search(body)
        if found and selector.endswith(("::after", "::before")) and re.search(r'content:\s*""', body) \
                and re.fullmatch(r"position:\s*fixed", found.group(0)):
            continue
        assert found is None, f"{site}: {selector} {{{body}}}"


def test_unknown_site_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="'shop'"):
        stylesheet("shopping")


def test_html_page_inlines_the_sites_sheet():
    body = html_page("T", "<p>x</p>", site="forum").body.decode()
    assert f"<style>{stylesheet('forum')}</style>" in body and "<p>x</p>" in body


def test_the_homepage_pages_carry_its_sheet(store):
    client = TestClient(homepage.create_app(store, {"shopping": "http://shop"}))
    for path in ("/", "/calculator.html", "/scratchpad.html"):
        assert stylesheet("homepage") in client.get(path).text, path
