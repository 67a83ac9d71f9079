"""The embedded wiki: a Kiwix-served Wikipedia (WebArena's `wikipedia` site), read-only.

Owns the wiki's articles (`corpus`, built from `sites.world`'s towns and places, the code host's
languages and tools, and topics the forum talks about: `topics`), their pages (`pages`) and the app
(`app`). The article text is module-level data shared by every instance (Kiwix is read-only, so no
instance can change it); the per-instance database holds only a small index of titles and infobox facts
(`wiki_articles`, `wiki_facts`), which task templates query. It does not own instances, resets or the
control endpoints (`sites.store`, `sites.apps`).

URLs (Kiwix's shapes, book `wikipedia_en_all_maxi_2022-05`):

- GET `/`: 302 to the landing page.
- GET `/wikipedia_en_all_maxi_2022-05/A/User:The_other_Kiwix_guy/Landing`: the landing page (a welcome and
  the list articles of each subject).
- GET `/wikipedia_en_all_maxi_2022-05/A/<Title_with_underscores>`: an article; another capitalisation of a
  title 302s to it; an unknown title is a 404 "Not Found" page with a link to search for its words.
- GET `/search?content=wikipedia_en_all_maxi_2022-05&pattern=<words>`: full-text search, 25 results a page
  (`start`, `pageLength`); a bad number is a 400 page naming the parameter, another book a 404.

An article has a heading (`h1#firstHeading`), an infobox (`table.infobox`: a `th` label and a `td` value
per row), a lead (`p.lead`), sections (`h2` with paragraphs and `table.wikitable`s) and links to other
articles. Coordinates link to the map site: a place's to `<map>/<osm_type>/<id>`, a town's to
`<map>/search?query=<name>` (plain text while the map's URL is unknown).
"""
from __future__ import annotations

import sqlite3

from agentenv_webarena.sites.wiki.app import create_app
from agentenv_webarena.sites.wiki.corpus import (
    BOOK,
    LANDING_TITLE,
    article,
    article_path,
    articles,
    plain_text,
    search,
)

__all__ = ["SCHEMA", "seed", "create_app", "BOOK", "LANDING_TITLE", "article", "article_path", "articles", "search"]

SCHEMA = """
CREATE TABLE wiki_articles (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    lead TEXT NOT NULL
);
CREATE TABLE wiki_facts (
    article_id INTEGER NOT NULL REFERENCES wiki_articles(id),
    position INTEGER NOT NULL,
    label TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (article_id, position)
);
"""


def seed(conn: sqlite3.Connection) -> None:
    """Index every article (title, kind, plain lead) and its infobox facts (plain values), in title order."""
    for i, title in enumerate(sorted(articles()), start=1):
        art = articles()[title]
        conn.execute("INSERT INTO wiki_articles (id, title, kind, lead) VALUES (?, ?, ?, ?)",
                     (i, art.title, art.kind, plain_text(art.lead)))
        conn.executemany("INSERT INTO wiki_facts (article_id, position, label, value) VALUES (?, ?, ?, ?)",
                         [(i, k, label, plain_text(value)) for k, (label, value) in enumerate(art.infobox)])
