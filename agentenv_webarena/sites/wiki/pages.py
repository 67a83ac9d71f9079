"""The wiki's HTML: Kiwix's toolbar, an article (title, lead, infobox, sections), the landing page, the
full-text search results and the "not found" page.

Owns markup only: it reads articles from `corpus` and the map's base URL from the caller, and returns
Starlette responses. Pages are plain server-rendered HTML, so Chromium's accessibility tree shows the
infobox as a table of row headers and cells, and every link by its text.
"""
from __future__ import annotations

import re
from typing import Mapping, Optional
from urllib.parse import quote_plus, urlencode

from starlette.responses import HTMLResponse

from agentenv_webarena.sites.common import esc, html_page
from agentenv_webarena.sites.wiki.corpus import (
    BOOK,
    LANDING_TITLE,
    REGION,
    Article,
    Section,
    article_path,
    articles,
    plain_text,
    search_words,
)
from agentenv_webarena.sites.wiki.topics import KIND_FACTS

__all__ = ["render_article", "render_landing", "render_search", "render_not_found", "map_url_of", "PAGE_LENGTH"]

PAGE_LENGTH = 25  # search results per page (Kiwix's default)


_LINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_MAP = re.compile(r"\{\{(map|mapsearch):([^|}]+)\|([^}]+)\}\}")


def _map_href(kind: str, target: str, map_url: Optional[str]) -> Optional[str]:
    if not map_url:
        return None
    if kind == "map":  # "node/123": the map's page of that element
        return f"{map_url}/{target}"
    return f"{map_url}/search?query={quote_plus(target)}"


def _markup(text: str, map_url: Optional[str]) -> str:
    """Escape `text` and turn its link markup into anchors."""
    out, pos = [], 0
    pattern = re.compile(f"{_LINK.pattern}|{_MAP.pattern}")
    for m in pattern.finditer(text):
        out.append(esc(text[pos:m.start()]))
        if m.group(1) is not None:
            title, shown = m.group(1), m.group(2) or m.group(1)
            out.append(f'<a href="{esc(article_path(title))}" title="{esc(title)}">{esc(shown)}</a>')
        else:
            href = _map_href(m.group(3), m.group(4), map_url)
            shown = esc(m.group(5))
            out.append(f'<a class="geo" href="{esc(href)}">{shown}</a>' if href
                       else f'<span class="geo">{shown}</span>')
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def _toolbar(pattern: str = "") -> str:
    return ('<div id="kiwixtoolbar" role="banner">'
            f'<a href="{esc(article_path(LANDING_TITLE))}">Wikipedia</a>'
            '<form role="search" action="/search" method="get">'
            f'<input type="hidden" name="content" value="{BOOK}">'
            f'<input type="search" name="pattern" aria-label="Search" placeholder="Search \'Wikipedia\'" '
            f'value="{esc(pattern)}"> <button type="submit">Search</button></form></div>')


def _page(title: str, main: str, pattern: str = "", status_code: int = 200) -> HTMLResponse:
    body = f'{_toolbar(pattern)}<main id="content">{main}</main>'
    return html_page(title, body, status_code=status_code, site="wiki")


def _section(sec: Section, map_url: Optional[str]) -> str:
    parts = [f"<h2>{esc(sec.heading)}</h2>"] + [f"<p>{_markup(p, map_url)}</p>" for p in sec.paragraphs]
    if sec.table:
        head = "".join(f'<th scope="col">{esc(h)}</th>' for h in sec.table.headers)
        rows = "".join("<tr>" + "".join(f"<td>{_markup(c, map_url)}</td>" for c in row) + "</tr>"
                       for row in sec.table.rows)
        parts.append(f'<table class="wikitable"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>')
    return "".join(parts)


def render_article(art: Article, map_url: Optional[str]) -> HTMLResponse:
    """An article page: heading, infobox table, lead and sections."""
    box = ""
    if art.infobox:
        rows = "".join(f'<tr><th scope="row">{esc(label)}</th><td>{_markup(value, map_url)}</td></tr>'
                       for label, value in art.infobox)
        box = f'<table class="infobox"><caption>{esc(art.title)}</caption><tbody>{rows}</tbody></table>'
    body = "".join(_section(s, map_url) for s in art.sections)
    main = (f'<h1 id="firstHeading">{esc(art.title)}</h1><div id="bodyContent">{box}'
            f'<p class="lead">{_markup(art.lead, map_url)}</p>{body}</div>')
    return _page(art.title, main)


def render_landing() -> HTMLResponse:
    """The landing page: a welcome, the search box and a portal per subject, linking to the list articles."""
    portals = [(f"Places of {REGION}", [f"List of towns in {REGION}"]
                + sorted(t for t in articles() if t.startswith("List of") and t.endswith(REGION)
                         and t != f"List of towns in {REGION}"))]
    portals += [("Computing", [KIND_FACTS["programming language"][1], KIND_FACTS["software"][1]]),
                ("Arts", [KIND_FACTS[k][1] for k in ("novel", "film", "video game", "album")]),
                ("Science and history", [KIND_FACTS[k][1] for k in ("astronomical object", "historical period")])]
    blocks = "".join(f'<section><h2>{esc(name)}</h2><ul>'
                     + "".join(f'<li><a href="{esc(article_path(t))}">{esc(t)}</a></li>' for t in titles)
                     + "</ul></section>" for name, titles in portals)
    main = ('<h1 id="firstHeading">Welcome to Wikipedia</h1>'
            f"<p>The free encyclopedia that anyone can edit. {len(articles()):,} articles in English, offline.</p>"
            f"{blocks}")
    return _page("Wikipedia, the free encyclopedia", main)


def _snippet(art: Article, words: list[str]) -> str:
    text = plain_text(" ".join([art.lead] + [p for s in art.sections for p in s.paragraphs]))
    low = text.casefold()
    at = min((low.find(w) for w in words if w in low), default=0)
    start = max(0, at - 60)
    piece = text[start:start + 200]
    html = esc(piece)
    for w in sorted(set(words), key=len, reverse=True):
        html = re.sub(f"(?i)\\b({re.escape(esc(w))})\\b", r"<b>\1</b>", html)
    return ("…" if start else "") + html + ("…" if start + 200 < len(text) else "")


def _word_count(art: Article) -> int:
    cells = [c for s in art.sections if s.table for row in s.table.rows for c in row]
    parts = [art.lead, *(v for _, v in art.infobox), *(p for s in art.sections for p in s.paragraphs), *cells]
    return len(plain_text(" ".join(parts)).split())


def render_search(pattern: str, hits: list[Article], start: int, page_length: int) -> HTMLResponse:
    """The full-text search results for `pattern`: a header, then each hit's title link and snippet."""
    words = search_words(pattern)
    if not words:
        main = '<h1 id="firstHeading">Search</h1><p>Type words to search for in the search box.</p>'
        return _page("Search", main, pattern)
    shown = hits[start:start + page_length]
    if not hits:
        header = f'<div class="header">No results were found for <b>"{esc(pattern)}"</b></div>'
    else:
        header = (f'<div class="header">Results <b>{start + 1}-{start + len(shown)}</b> of <b>{len(hits)}</b> '
                  f'for <b>"{esc(pattern)}"</b></div>')
    items = "".join(
        f'<li><a href="{esc(article_path(a.title))}">{esc(a.title)}</a><cite>{_snippet(a, words)}</cite>'
        f'<div class="book-title">from Wikipedia</div>'
        f'<div class="informations">{_word_count(a)} words</div></li>'
        for a in shown)
    nav = []
    if start > 0:
        prev = urlencode({"content": BOOK, "pattern": pattern, "start": max(0, start - page_length),
                          "pageLength": page_length})
        nav.append(f'<a href="/search?{esc(prev)}">Previous</a>')
    if start + page_length < len(hits):
        nxt = urlencode({"content": BOOK, "pattern": pattern, "start": start + page_length, "pageLength": page_length})
        nav.append(f'<a href="/search?{esc(nxt)}">Next</a>')
    main = (f'<h1 id="firstHeading">Search results</h1>{header}<div class="results"><ul>{items}</ul></div>'
            f'<nav class="footer" aria-label="Result pages">{" ".join(nav)}</nav>')
    return _page(f"Search: {pattern}", main, pattern)


def render_not_found(path: str, wanted: str = "", status_code: int = 404, message: str = "") -> HTMLResponse:
    """Kiwix's "not found" page: the URL that was asked for and a link to search for its words."""
    text = message or f'The requested URL "{path}" was not found on this server.'
    heading = "Bad Request" if status_code == 400 else "Not Found"
    main = f'<h1 id="firstHeading">{heading}</h1><p role="alert">{esc(text)}</p>'
    if wanted:
        query = urlencode({"content": BOOK, "pattern": wanted})
        main += f'<p>Make a full text search for <a href="/search?{esc(query)}">{esc(wanted)}</a></p>'
    return _page("Content not found", main, status_code=status_code)


def map_url_of(site_urls: Optional[Mapping[str, str]]) -> Optional[str]:
    """The map site's base URL, when the sites process has filled it in."""
    return (site_urls or {}).get("map") or None
