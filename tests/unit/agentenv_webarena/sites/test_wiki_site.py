"""The embedded wiki (`agentenv_webarena.sites.wiki`): its facts agree with the shared world and the code
host's data, its seed is deterministic, and its pages answer Kiwix's URL shapes (4xx pages for bad input)."""
from __future__ import annotations

import re
import sqlite3

import pytest
from starlette.testclient import TestClient

from agentenv_webarena.sites import wiki, world
from agentenv_webarena.sites.gitlab.data import PROJECTS
from agentenv_webarena.sites.wiki import corpus
from agentenv_webarena.sites.wiki.topics import LANGUAGE_ARTICLES

MAP = "http://map.test"
LANDING = corpus.article_path(corpus.LANDING_TITLE)


@pytest.fixture(scope="module")
def client():
    return TestClient(wiki.create_app(None, site_urls={"map": MAP}))


def test_every_notable_place_has_an_article_with_the_worlds_facts():
    places = corpus.notable_places()
    assert len(places) >= 80
    for p in places:
        art = corpus.article(p.name)
        assert art is not None, p.name
        assert art.fact(corpus.place_year_label(p)) == str(p.founded)
        assert art.fact("Coordinates") == corpus.coordinates_text(p.lat, p.lon)
        assert art.fact("Address") == p.address
        town = world.town_by_name(p.town)
        assert town.name in art.fact("Location")
        if p.architect:
            assert art.fact("Architect") == p.architect
        if corpus.capacity_label(p):
            assert art.fact(corpus.capacity_label(p)) == f"{p.capacity:,}"
    amenities = [p for p in world.PLACES if p not in places]
    assert amenities and all(corpus.article(p.name) is None for p in amenities)


def test_every_town_has_an_article_with_the_worlds_facts():
    for town in world.TOWNS:
        art = corpus.article(corpus.town_title(town))
        assert art is not None, town.name
        assert art.fact("Founded") == str(town.founded)
        assert art.fact("Population") == f"{town.population:,}"
        assert art.fact("County") == town.county


def test_code_host_languages_have_articles():
    used = {p.language for p in PROJECTS}
    covered = used & set(LANGUAGE_ARTICLES)
    assert {"Python", "JavaScript", "TypeScript", "Go", "Rust", "C"} <= covered
    for language in covered:
        art = corpus.article(LANGUAGE_ARTICLES[language])
        assert art is not None and art.fact("First appeared").isdigit(), language


def test_every_internal_link_resolves():
    link = re.compile(r"\[\[([^\]|]+)")
    for art in corpus.articles().values():
        texts = [art.lead, *(v for _, v in art.infobox)]
        for sec in art.sections:
            texts += list(sec.paragraphs) + ([c for row in sec.table.rows for c in row] if sec.table else [])
        for target in link.findall(" ".join(texts)):
            assert corpus.article(target) is not None, (art.title, target)


def _seeded() -> list[tuple]:
    conn = sqlite3.connect(":memory:")
    conn.executescript(wiki.SCHEMA)
    wiki.seed(conn)
    rows = conn.execute("SELECT a.title, a.kind, a.lead, f.position, f.label, f.value FROM wiki_articles a "
                        "JOIN wiki_facts f ON f.article_id = a.id ORDER BY a.id, f.position").fetchall()
    conn.close()
    return rows


def test_seed_is_deterministic_and_indexes_every_article():
    first, second = _seeded(), _seeded()
    assert first == second
    assert len({r[0] for r in first}) == sum(bool(a.infobox) for a in corpus.articles().values())
    assert ("Carnegie Mellon University", "Founded", "1900") in {(r[0], r[4], r[5]) for r in first}


def test_root_redirects_to_the_landing_page(client):
    r = client.get("/", follow_redirects=False)
    assert r.status_code == 302 and r.headers["location"] == LANDING
    page = client.get(LANDING)
    assert page.status_code == 200 and "Welcome to Wikipedia" in page.text
    assert corpus.article_path(corpus.list_title("museum")) in page.text


def test_article_page_has_infobox_lead_sections_and_map_link(client):
    place = world.place_by_slug("carnegie-mellon-university")
    r = client.get(corpus.article_path(place.name))
    assert r.status_code == 200
    assert '<table class="infobox">' in r.text and '<th scope="row">Founded</th><td>1900</td>' in r.text
    assert f'href="{MAP}/{place.osm_type}/{place.id}"' in r.text
    assert corpus.article_path("Oakland, Pittsburgh") in r.text
    assert "<h2>History</h2>" in r.text


def test_other_capitalisation_redirects_and_unknown_article_is_not_found(client):
    r = client.get(corpus.article_path("python (programming language)"), follow_redirects=False)
    assert r.status_code == 302 and r.headers["location"] == corpus.article_path("Python (programming language)")
    missing = client.get(corpus.article_path("No Such Article"))
    assert missing.status_code == 404
    assert "was not found" in missing.text and "pattern=No+Such+Article" in missing.text
    assert client.get("/wikipedia_en_all_maxi_2099-01/A/Pittsburgh").status_code == 404


def test_search_lists_matching_articles_with_snippets(client):
    r = client.get("/search", params={"content": corpus.BOOK, "pattern": "Carnegie Mellon University"})
    assert r.status_code == 200
    assert re.search(r"Results <b>1-\d+</b> of <b>\d+</b>", r.text)
    first = re.search(r'<li><a href="([^"]+)">([^<]+)</a>', r.text)
    assert first.group(2) == "Carnegie Mellon University"
    none = client.get("/search", params={"pattern": "zzzqqqxxx"})
    assert none.status_code == 200 and "No results" in none.text


@pytest.mark.parametrize("params,status,needle", [
    ({"pattern": "python", "start": "abc"}, 400, "start must be a whole number"),
    ({"pattern": "python", "pageLength": "0"}, 400, "pageLength must be between"),
    ({"pattern": "x" * 501}, 400, "longer than 500"),
    ({"pattern": "python", "content": "other_book"}, 404, "No such book"),
])
def test_bad_search_input_gets_a_4xx_page(client, params, status, needle):
    r = client.get("/search", params=params)
    assert r.status_code == status and needle in r.text


def test_search_pages_through_results(client):
    everything = corpus.search("Pittsburgh")
    assert len(everything) > 30
    r = client.get("/search", params={"pattern": "Pittsburgh", "start": "25", "pageLength": "25"})
    assert f"Results <b>26-{min(50, len(everything))}</b>" in r.text and ">Previous</a>" in r.text


def test_map_links_are_plain_text_without_a_map_url():
    bare = TestClient(wiki.create_app(None))
    r = bare.get(corpus.article_path("Carnegie Mellon University"))
    assert r.status_code == 200 and '<span class="geo">' in r.text
