"""The embedded map (`sites.map`) through Starlette's TestClient: search, place pages, directions URLs and
their errors, My places / notes / tag edits per instance, and reset to the seed."""
from __future__ import annotations

import re

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites import map as site
from agentenv_webarena.sites import world
from agentenv_webarena.sites.apps import _control_routes
from agentenv_webarena.sites.map.search import RouteError, category_of, parse_route, search
from agentenv_webarena.sites.store import INSTANCE_HEADER

CMU = world.place_by_slug("carnegie-mellon-university")
PITT = world.place_by_slug("university-of-pittsburgh")


@pytest.fixture(scope="module")
def app(store):
    return Starlette(routes=[*_control_routes(store), Mount("/", app=site.create_app(store))])


def _client(app, instance: str) -> TestClient:
    client = TestClient(app, headers={INSTANCE_HEADER: instance})
    client.post("/__control/reset", params={"instance": instance})
    return client


def _numbers(page: str) -> tuple[str, str]:
    return re.search(r"Distance: ([\d.]+ km)", page).group(1), re.search(r"Time: (\d+:\d\d)", page).group(1)


def test_search_finds_a_place_and_its_page_shows_the_facts(app):
    c = _client(app, "search")
    page = c.get("/search", params={"query": "Carnegie Mellon University"})
    assert page.status_code == 200 and f'<a class="set_position" href="/way/{CMU.id}">' in page.text
    place = c.get(f"/way/{CMU.id}").text
    for fact in ("Carnegie Mellon University", "5000 Forbes Avenue", "40.4433, -79.9436", "University", "1900"):
        assert fact in place


def test_near_and_in_searches():
    near = search("pharmacies near Carnegie Mellon University")
    assert near.kind == "near" and near.anchor is CMU and near.hits
    kms = [h.km for h in near.hits]
    assert kms == sorted(kms) and all(h.obj.category == "pharmacy" for h in near.hits)
    inside = search("cafes in Shadyside")
    assert inside.kind == "in" and {h.obj.town for h in inside.hits} == {"Shadyside"}
    assert category_of("coffee shops") == "cafe" and category_of("train stations") == "train_station"
    assert search("pharmacy near Atlantis").message and not search("pharmacy near Atlantis").hits


@pytest.mark.parametrize("query, text", [
    ("Atlantis Opera House", "No results found for &#x27;Atlantis Opera House&#x27;."),
    ("hotels near Atlantis", "No results found. No place called &#x27;Atlantis&#x27; was found."),
    ("", "Type a place, an address"),
])
def test_a_search_without_results_answers_and_says_so(app, query, text):
    page = _client(app, "no-results").get("/search", params={"query": query})
    assert page.status_code == 200 and text in page.text and 'id="sidebar_content"' in page.text
    assert "search_results_entry" in page.text or not query


def test_directions_form_redirects_to_an_osm_url_and_numbers_are_stable(app):
    c = _client(app, "route")
    r = c.get("/directions", params={"route_from": CMU.name, "route_to": PITT.name, "engine": "fossgis_osrm_foot"},
              follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == "/directions?engine=fossgis_osrm_foot&route=40.4433%2C-79.9436%3B40.4444%2C-79.9608"
    first, second = c.get(r.headers["location"]).text, c.get(r.headers["location"]).text
    assert _numbers(first) == _numbers(second)
    assert 'name="route_from" value="Carnegie Mellon University, 5000 Forbes Avenue' in first
    car = c.get(site.directions_url(CMU, PITT, "fossgis_osrm_car")).text
    assert _numbers(car)[1] != _numbers(first)[1]
    assert '<option value="fossgis_osrm_car" selected>' in car


@pytest.mark.parametrize("params, status, words", [
    ({"route": "40.44,-79.94"}, 400, "two points"),
    ({"route": "north;south"}, 400, "lat,lon"),
    ({"route": "95,-79.9;40.4,-79.9"}, 400, "out of range"),
    ({"engine": "fossgis_osrm_horse"}, 400, "fossgis_osrm_car"),
    ({"route_from": "Carnegie Mellon University", "route_to": ""}, 400, "both From and To"),
    ({"route_from": "Carnegie Mellon University", "route_to": "Atlantis"}, 404, "Atlantis"),
])
def test_directions_bad_input_gets_a_4xx_page_saying_why(app, params, status, words):
    r = _client(app, "bad").get("/directions", params=params)
    assert r.status_code == status and words in r.text


def test_parse_route_accepts_half_routes():
    assert parse_route("40.4,-79.9;") == ((40.4, -79.9), None)
    with pytest.raises(RouteError, match="separated"):
        parse_route("1;2;3")


@pytest.mark.parametrize("path", ["/node/1", f"/node/{CMU.id}", "/relation/5", "/note/99", "/nowhere"])
def test_unknown_elements_get_a_404_page_saying_so(app, path):
    r = _client(app, "missing").get(path)
    assert r.status_code == 404 and "<html" in r.text and ("There is no" in r.text)


def test_edits_notes_and_saved_places_are_per_instance_and_reset(app):
    a, b = _client(app, "edit-a"), _client(app, "edit-b")
    page = f"/way/{PITT.id}"
    assert a.post(f"{page}/edit", data={"phone": "+1 412-555-0000", "website": "", "opening_hours": "24/7",
                                        "wheelchair": "yes"}).status_code == 200
    assert a.post(f"{page}/note", data={"text": "Side door closed"}).status_code == 200
    assert a.post("/my_places/add", data={"place_id": str(PITT.id)}).status_code == 200
    mine, theirs = a.get(page).text, b.get(page).text
    assert "+1 412-555-0000" in mine and "Side door closed" in mine and "Saved in My places" in mine
    assert "+1 412-555-0000" not in theirs and "Side door closed" not in theirs
    assert PITT.name in a.get("/my_places").text and PITT.name not in b.get("/my_places").text
    a.post("/__control/reset", params={"instance": "edit-a"})
    assert "Side door closed" not in a.get(page).text and PITT.name not in a.get("/my_places").text


def test_resolving_a_note_and_removing_a_saved_place(app, store):
    c = _client(app, "resolve")
    note_id = store.pristine().execute("SELECT id FROM map_notes WHERE status = 'open' ORDER BY id").fetchone()[0]
    assert "Status: open" in c.get(f"/note/{note_id}").text
    c.post(f"/note/{note_id}/resolve")
    assert "Status: resolved" in c.get(f"/note/{note_id}").text
    assert c.post(f"/my_places/{CMU.id}/remove").status_code == 200
    assert CMU.name not in c.get("/my_places").text
    assert c.post(f"/my_places/{CMU.id}/remove").status_code == 404


@pytest.mark.parametrize("data, words", [
    ({"phone": "call me"}, "Phone"), ({"website": "example.org"}, "http"), ({"wheelchair": "sometimes"}, "one of"),
])
def test_tag_edits_are_validated(app, data, words):
    r = _client(app, "tags").post(f"/way/{CMU.id}/edit", data={"phone": "", "website": "", "opening_hours": "",
                                                                **data})
    assert r.status_code == 400 and words in r.text


def test_bad_note_and_save_requests(app):
    c = _client(app, "bad-post")
    assert c.post(f"/way/{CMU.id}/note", data={"text": "  "}).status_code == 400
    assert c.post("/my_places/add", data={"place_id": "abc"}).status_code == 400
