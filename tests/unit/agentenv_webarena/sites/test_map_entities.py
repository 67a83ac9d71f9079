"""WebArena's named places on the map (`sites.map.entities`): they exist where WebArena's tasks put them, the
search finds them by name, street and brand, routes to them are plausible, and nothing the world's places
had moves (their routes, their search results, the category listings)."""
from __future__ import annotations

import re

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites import map as site
from agentenv_webarena.sites import world
from agentenv_webarena.sites.apps import _control_routes
from agentenv_webarena.sites.map import entities
from agentenv_webarena.sites.map.roads import graph, node_key, route, world_graph
from agentenv_webarena.sites.map.search import category_of, element_path, lookup, search
from agentenv_webarena.sites.store import INSTANCE_HEADER

CMU = world.place_by_slug("carnegie-mellon-university")
ENTITY_IDS = {p.id for p in entities.PLACES}


def _one(name: str, street: str = "") -> world.Place:
    found = [p for p in entities.PLACES if p.name == name and p.street.startswith(street)]
    assert len(found) == 1, (name, street, found)
    return found[0]


def test_webarena_chains_have_branches_and_landmarks_exist():
    names = [p.name for p in entities.PLACES]
    for chain, at_least in (("Starbucks", 5), ("Dunkin'", 3), ("CVS Pharmacy", 4), ("Walgreens", 3), ("Target", 2),
                            ("Costco", 2), ("Trader Joe's", 2), ("Apple Store", 2), ("Whole Foods Market", 1)):
        assert names.count(chain) >= at_least, chain
    for landmark in ("Carnegie Music Hall", "Hunt Library", "Gates and Hillman Centers", "Wells Fargo Center",
                     "Yankee Stadium", "Madison Square Garden", "TD Garden",
                     "Hyatt Regency Pittsburgh International Airport"):
        assert landmark in names
    assert (_one("Trader Joe's", "6343").town, _one("Target", "6231").town) == ("East Liberty", "East Liberty")
    apple = _one("Apple Store", "5508 Walnut")
    assert (round(apple.lat, 3), round(apple.lon, 3)) == (40.451, -79.933)  # WebArena's task 250


def test_ids_slugs_and_points_are_their_own():
    world_ids = {p.id for p in world.PLACES}
    assert not ENTITY_IDS & world_ids and len(ENTITY_IDS) == len(entities.PLACES)
    assert len({p.slug for p in entities.PLACES}) == len(entities.PLACES)
    taken = {(p.lat, p.lon) for p in world.PLACES} | {(t.lat, t.lon) for t in world.TOWNS}
    for p in entities.PLACES:
        assert (p.lat, p.lon) not in taken, p.name  # a route URL of a world place must snap to it
        assert world.distance_km(p, world.town_by_name(p.town)) < 25, p.name
        assert entities.place_by_id(p.id) is p and p.osm_type in ("node", "way")
    assert entities.place_by_id(CMU.id) is CMU and entities.place_by_id(1) is None


def test_search_finds_them_by_name_street_and_brand():
    starbucks = search("Starbucks")
    assert [h.obj.name for h in starbucks.hits] == ["Starbucks"] * len(entities.branches("Starbucks"))
    assert lookup("Starbucks 417 South Craig Street") is _one("Starbucks", "417")
    near = search("Starbucks near Carnegie Mellon University")
    assert near.kind == "near" and near.brand == "Starbucks" and near.anchor is CMU
    assert near.hits[0].obj is _one("Starbucks", "417")
    assert [h.km for h in near.hits] == sorted(h.km for h in near.hits)
    assert [h.obj.street for h in search("CVS in Squirrel Hill").hits] == ["2028 Murray Avenue"]
    assert search("Whole Foods near Carnegie Mellon University").hits[0].obj.street == "5700 Penn Avenue"
    # categories only these places have list them; WebArena's search URLs now find their places
    assert category_of("bars") == "bar" and category_of("parking") == "parking"
    assert search("parking near carnegie mellon university").hits[0].obj.name == "East Campus Garage"
    assert search("bars near Carnegie Music Hall").hits and search("hotels near Carnegie Music Hall").hits
    assert [h.obj.name for h in search("department stores in East Liberty").hits] == ["Target"]


@pytest.mark.parametrize("query", ["cafes near Carnegie Mellon University", "pharmacies in Oakland",
                                   "supermarkets near Trader Joe's", "hotels in Moon Township",
                                   "libraries near Hunt Library", "universities near Posner Hall"])
def test_the_worlds_categories_list_only_the_worlds_places(query):
    result = search(query)
    assert result.hits and not {h.obj.id for h in result.hits} & ENTITY_IDS


def test_name_search_lists_the_worlds_places_first():
    queries = [p.name for p in world.PLACES] + [t.name for t in world.TOWNS] + ["Pennsylvania", "Forbes Avenue"]
    appended = 0
    for q in queries:
        tiers = [h.obj.id in ENTITY_IDS for h in search(q).hits if isinstance(h.obj, world.Place)]
        assert tiers == sorted(tiers), q  # no entity before a world place
        appended += any(tiers)
        assert getattr(lookup(q), "id", None) not in ENTITY_IDS, q
    assert 0 < appended < len(queries) // 4  # a shop is not found by its town's or category's name alone


def test_routes_between_the_worlds_nodes_do_not_move():
    plain, full = world_graph(terminals=()), graph()
    assert len(full.nodes) == len(plain.nodes) + len(entities.PLACES) and full.terminals
    keys = [n.key for n in plain.nodes][::11]
    for mode in ("car", "bicycle", "foot"):
        for a in keys[:12]:
            for b in keys:
                if a != b:
                    assert full.route(a, b, mode) == plain.route(a, b, mode), (a, b, mode)


def test_routes_to_them_are_plausible():
    ratios = []
    for p in entities.PLACES:
        for other in (CMU, world.town_by_name(p.town), *entities.PLACES[::5]):
            straight = world.distance_km(p, other)
            if other is p or straight < 0.2:
                continue
            found = route(node_key(p), node_key(other), "car" if straight > 5 else "foot")
            assert found is not None and found.distance_km >= straight, (p.name, other.name)
            if p.town == getattr(other, "town", other.name):
                assert found.distance_km <= 2.0 * straight, (p.name, other.name, found.distance_km, straight)
            ratios.append(found.distance_km / straight)
    assert sorted(ratios)[len(ratios) // 2] < 1.5
    # WebArena's own answers (tasks 100, 366, 33): 557 m, 1.2 km, 1.4 km on foot
    for a, b, km in ((CMU, _one("Starbucks", "417"), 0.557),
                     (_one("CVS Pharmacy", "4610"), world.place_by_slug("upmc-shadyside"), 1.2),
                     (_one("DoubleTree by Hilton Hotel Pittsburgh Airport"), _one("ALDI"), 1.4)):
        assert route(node_key(a), node_key(b), "foot").distance_km == pytest.approx(km, rel=0.35), (a.name, b.name)


@pytest.fixture(scope="module")
def client(store):
    app = Starlette(routes=[*_control_routes(store), Mount("/", app=site.create_app(store))])
    c = TestClient(app, headers={INSTANCE_HEADER: "entities"})
    c.post("/__control/reset", params={"instance": "entities"})
    return c


def test_pages_search_and_directions(client):
    shop = _one("Starbucks", "417")
    page = client.get(element_path(shop)).text
    for fact in ("Starbucks", "417 South Craig Street, Oakland, Pittsburgh, PA 15213", "40.44575, -79.94893",
                 "https://www.starbucks.com", "Cafe"):
        assert fact in page
    target = _one("Target", "6231")
    assert client.get(f"/way/{target.id}").status_code == 200 and client.get(f"/node/{target.id}").status_code == 404
    listing = client.get("/search", params={"query": "Starbucks near Carnegie Mellon University"}).text
    assert "Starbucks near Carnegie Mellon University, nearest first" in listing
    assert f'href="{element_path(shop)}"' in listing
    form = {"route_from": "Carnegie Mellon University", "route_to": "Trader Joe's 6343 Penn Avenue",
            "engine": "fossgis_osrm_foot"}
    moved = client.get("/directions", params=form, follow_redirects=True).text
    walk = route(node_key(CMU), node_key(_one("Trader Joe's", "6343")), "foot")
    assert f"Distance: {walk.distance_text}" in moved and f"Time: {walk.time_text}" in moved
    assert re.search(r'name="route_to" value="Trader Joe&#x27;s, 6343 Penn Avenue, East Liberty', moved)
    saved = client.post("/my_places/add", data={"place_id": str(shop.id)}, follow_redirects=True).text
    assert f'data-place-id="{shop.id}"' in saved
