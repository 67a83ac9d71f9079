"""`sites.map.roads`: Dijkstra by travel time on hand-built graphs, the mode rules, and the region's graph."""
from __future__ import annotations

import pytest

from agentenv_webarena.sites import world
from agentenv_webarena.sites.map.roads import Graph, Node, format_distance, format_time, graph, node_key, route


def _graph(edges: list[tuple[str, str, str, float]]) -> Graph:
    """Nodes named by their keys (coordinates unused: every edge gives its km)."""
    g = Graph()
    for key in sorted({k for a, b, _, _ in edges for k in (a, b)}):
        g.add_node(Node(key, key.upper(), 40.0, -80.0))
    for a, b, kind, km in edges:
        g.add_edge(a, b, kind, f"{a}-{b}", km=km)
    return g


def test_fastest_not_shortest_by_car():
    # a-b-d: 10 km of street (25 km/h) = 24 min; a-c-d: 30 km of motorway (95 km/h) = 18.9 min
    g = _graph([("a", "b", "street", 5), ("b", "d", "street", 5), ("a", "c", "motorway", 15),
                ("c", "d", "motorway", 15)])
    car = g.route("a", "d", "car")
    assert [leg[1] for leg in car.legs] == ["C", "D"]
    assert car.distance_km == pytest.approx(30)
    assert car.time_s == pytest.approx(30 / 95 * 3600)
    # bicycles may not use the motorway: 10 km at 15 km/h = 40 min
    bike = g.route("a", "d", "bicycle")
    assert [leg[1] for leg in bike.legs] == ["B", "D"]
    assert bike.time_s == pytest.approx(40 * 60)
    assert (bike.distance_text, bike.time_text) == ("10.0 km", "0:40")


def test_steps_are_for_walkers_and_paths_not_for_cars():
    g = _graph([("a", "b", "steps", 0.3), ("a", "c", "street", 1.0), ("c", "b", "street", 1.0),
                ("a", "e", "path", 0.5)])
    foot = g.route("a", "b", "foot")
    assert foot.distance_km == pytest.approx(0.3) and foot.time_s == pytest.approx(0.3 / 3 * 3600)
    assert g.route("a", "b", "bicycle").distance_km == pytest.approx(2.0)
    assert g.route("a", "e", "car") is None  # only a path reaches e
    assert g.route("a", "e", "bicycle").time_s == pytest.approx(0.5 / 16 * 3600)


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
