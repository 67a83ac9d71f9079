"""`sites.map.roads`: Dijkstra by travel time on hand-built graphs, the mode rules, and the region's graph
(rivers, bridges, and its distances and times against WebArena's reference answers)."""
from __future__ import annotations

import pytest

from agentenv_webarena.sites import world
from agentenv_webarena.sites.map.calibration import compare
from agentenv_webarena.sites.map.roads import (
    BRIDGES,
    DETOUR,
    SPEEDS_KMH,
    Graph,
    Node,
    crosses_river,
    format_distance,
    format_time,
    graph,
    node_key,
    route,
)


def _graph(edges: list[tuple[str, str, str, float]]) -> Graph:
    """Nodes named by their keys (coordinates unused: every edge gives its km)."""
    g = Graph()
    for key in sorted({k for a, b, _, _ in edges for k in (a, b)}):
        g.add_node(Node(key, key.upper(), 40.0, -80.0))
    for a, b, kind, km in edges:
        g.add_edge(a, b, kind, f"{a}-{b}", km=km)
    return g


def test_fastest_not_shortest_by_car():
    # a-b-d: 10 km of street (30 km/h) = 20 min; a-c-d: 24 km of motorway (88 km/h) = 16.4 min
    g = _graph([("a", "b", "street", 5), ("b", "d", "street", 5), ("a", "c", "motorway", 12),
                ("c", "d", "motorway", 12)])
    car = g.route("a", "d", "car")
    assert [leg[1] for leg in car.legs] == ["C", "D"]
    assert car.distance_km == pytest.approx(24)
    assert car.time_s == pytest.approx(24 / SPEEDS_KMH["car"]["motorway"] * 3600)
    # bicycles may not use the motorway: 10 km at 15 km/h = 40 min
    bike = g.route("a", "d", "bicycle")
    assert [leg[1] for leg in bike.legs] == ["B", "D"]
    assert bike.time_s == pytest.approx(40 * 60)
    assert (bike.distance_text, bike.time_text) == ("10.0 km", "0:40")


def test_expressways_are_for_cars_only():
    g = _graph([("a", "b", "expressway", 5), ("a", "c", "street", 3), ("c", "b", "street", 3)])
    assert [leg[1] for leg in g.route("a", "b", "car").legs] == ["B"]
    assert g.route("a", "b", "bicycle").distance_km == pytest.approx(6)
    assert g.route("a", "b", "foot").distance_km == pytest.approx(6)


def test_steps_are_for_walkers_and_paths_not_for_cars():
    g = _graph([("a", "b", "steps", 0.3), ("a", "c", "street", 1.0), ("c", "b", "street", 1.0),
                ("a", "e", "path", 0.5)])
    foot = g.route("a", "b", "foot")
    assert foot.distance_km == pytest.approx(0.3) and foot.time_s == pytest.approx(0.3 / 3 * 3600)
    assert g.route("a", "b", "bicycle").distance_km == pytest.approx(2.0)
    assert g.route("a", "e", "car") is None  # only a path reaches e
    assert g.route("a", "e", "bicycle").time_s == pytest.approx(0.5 / 16 * 3600)


def test_edge_length_is_great_circle_times_detour():
    g = Graph()
    g.add_node(Node("a", "A", 40.0, -80.0))
    g.add_node(Node("b", "B", 40.1, -80.0))  # 11.12 km due north
    g.add_edge("a", "b", "street", "s")
    g.add_edge("a", "b", "motorway", "m", detour=1.5)
    kms = sorted(km for _, km, _, _ in g.edges[0])
    assert kms == pytest.approx([11.1195 * DETOUR["street"], 11.1195 * 1.5], rel=1e-3)


def test_graph_rejects_bad_input():
    g = _graph([("a", "b", "street", 1.0)])
    with pytest.raises(ValueError, match="already"):
        g.add_node(Node("a", "A", 0, 0))
    with pytest.raises(ValueError, match="tramway"):
        g.add_edge("a", "b", "tramway", "x")
    with pytest.raises(KeyError):
        g.route("a", "b", "horse")


def test_formats():
    assert format_distance(12.345) == "12.3 km"
    assert format_time(17 * 60 + 20) == "0:17"
    assert format_time(17 * 60 + 40) == "0:18"
    assert format_time(5) == "0:01"
    assert format_time(109 * 3600 + 3 * 60) == "109:03"


def test_region_graph_is_connected_and_symmetric_for_every_mode():
    g = graph()
    start = node_key(world.place_by_slug("carnegie-mellon-university"))
    for mode in ("car", "bicycle", "foot"):
        for node in g.nodes[::7]:
            assert route(start, node.key, mode) is not None, (mode, node.name)
    a, b = node_key(world.place_by_slug("pnc-park")), node_key(world.town_by_name("Boston"))
    there, back = route(a, b, "car"), route(b, a, "car")
    assert there.time_s == pytest.approx(back.time_s) and there.distance_km == pytest.approx(back.distance_km)


def test_modes_differ_on_the_region():
    a = node_key(world.place_by_slug("carnegie-mellon-university"))
    b = node_key(world.place_by_slug("pittsburgh-international-airport"))
    car, bike, foot = (route(a, b, m) for m in ("car", "bicycle", "foot"))
    assert car.time_s < bike.time_s < foot.time_s
    assert car.distance_km != bike.distance_km  # the car takes the Parkway, bicycles may not


def _place(slug: str):
    return world.place_by_slug(slug)


def test_local_streets_cross_rivers_only_on_bridges():
    g = graph()
    bridges = {name for name, *_ in BRIDGES}
    for i, edges in enumerate(g.edges):
        for j, _, _, road in edges:
            hand_listed = g.nodes[i].key[0] == g.nodes[j].key[0] == "t" and road != "local streets"
            if road not in bridges and not hand_listed:  # those name their bridges
                assert not crosses_river(g.nodes[i], g.nodes[j]), (g.nodes[i].name, g.nodes[j].name, road)
    # the North Side and Downtown face each other across the Allegheny; Station Square is across the Mon
    assert crosses_river(_place("pnc-park"), _place("heinz-hall"))
    assert crosses_river(_place("station-square"), _place("ppg-place"))
    assert not crosses_river(_place("carnegie-mellon-university"), _place("upmc-shadyside"))


def test_walks_go_directly_between_nearby_places():
    cmu, upmc = node_key(_place("carnegie-mellon-university")), node_key(_place("upmc-shadyside"))
    walk = route(cmu, upmc, "foot")
    straight = world.distance_km(_place("carnegie-mellon-university"), _place("upmc-shadyside"))
    assert walk.distance_km <= straight * 1.4  # no detour through the neighbourhood centres
    assert all(not name.startswith(("Oakland", "Shadyside")) for _, name, _ in walk.legs)


# WebArena's answers (sites.map.calibration) that the geometry must keep within TOLERANCE; the bench
# (bench/map_geometry.py) prints them all.
TOLERANCE = 0.25
GUARDED = {
    ("carnegie-mellon-university", "university-of-pittsburgh", "car"),  # 4 min
    ("carnegie-mellon-university", "upmc-shadyside", "foot"),  # 1.7 km
    ("carnegie-science-center", "carnegie-mellon-university", "foot"),  # 1 h 44 min
    ("waterfront-homestead", "carnegie-mellon-university", "car"),  # 13 min
    ("town:Pittsburgh", "town:Philadelphia", "car"),  # 5 h 47 min
    ("town:New York", "town:Philadelphia", "car"),  # 1 h 58 min
    ("carnegie-mellon-university", "town:Boston", "car"),  # 914 km
}


def test_distances_and_times_match_webarena_references():
    rows = [c for c in compare() if (c.ref.a, c.ref.b, c.ref.mode) in GUARDED]
    assert len(rows) == len(GUARDED)
    off = [(c.ref.a, c.ref.b, c.ref.mode, round(c.ratio, 2)) for c in rows if abs(c.ratio - 1) > TOLERANCE]
    assert off == []
    every = compare()
    assert sum(abs(c.ratio - 1) <= TOLERANCE for c in every) >= 0.8 * len(every)


def test_long_drives_are_plausible():
    pit, phl = node_key(world.town_by_name("Pittsburgh")), node_key(world.town_by_name("Philadelphia"))
    drive = route(pit, phl, "car")
    assert 460 <= drive.distance_km <= 530 and 5 * 3600 <= drive.time_s <= 6 * 3600
    assert "Pennsylvania Turnpike" in {road for road, _, _ in drive.legs}
