"""The map's road network over `sites.world` and its router: Dijkstra by travel time per mode.

Owns the generated graph and the rules of the three OSRM-like engines. Nodes: every town centre,
every place, and both ends of each listed bridge. Edges:

- local streets: every pair of nodes less than `LOCAL_KM` apart, each node's `LOCAL_NEAREST` nearest
  nodes (so sparse suburbs stay connected) and each place's town centre, unless the straight line
  crosses a river (`RIVERS`: the Allegheny, the Monongahela and the Ohio as polylines); rivers are
  crossed on the listed bridges only. So a walk goes directly between nearby places, not via centres;
- footpaths from each park to its three nearest places within 2 km (same river rule);
- hand-listed links between towns: city arterials, highways between cities, motorways, trails, steps;
- last, WebArena's named places (`entities.PLACES`) as *terminals*: local streets by the same rule link
  each to the nodes around it, but a route may only start or end at a terminal, never pass through one
  (`Graph.route` does not expand it), so they change no route between the other nodes (`add_terminal`).

| edge kind  | car      | bicycle  | foot    | length: great-circle distance x |
|------------|----------|----------|---------|---------------------------------|
| street     | 30 km/h  | 15 km/h  | 5 km/h  | 1.35 (urban grid and hills)     |
| arterial   | 45 km/h  | 15 km/h  | 5 km/h  | 1.3                             |
| highway    | 75 km/h  | 15 km/h  | 5 km/h  | 1.2                             |
| expressway | 65 km/h  | -        | -       | 1.3 (motorways inside the city) |
| motorway   | 88 km/h  | -        | -       | 1.2 (the turnpike: 1.22)        |
| path       | -        | 16 km/h  | 5 km/h  | 1.25                            |
| steps      | -        | -        | 3 km/h  | 1.1                             |

An edge's length is the great-circle distance times its detour factor (`DETOUR[kind]`, or the link's
own where the table says so): roads are not straight. The factors and speeds are calibrated against
WebArena's own map answers (`bench/map_geometry.py`): Pittsburgh to Philadelphia is about 500 km and
5 h 45 by car, a walk across Oakland about 1.35 times the straight line. The router returns the
fastest route; its distance is the length of that route. Everything is pure and deterministic (no
clock, no randomness); the graph is built once, lazily. It does not know pages, URLs or SQLite.
"""
from __future__ import annotations

import functools
import heapq
from dataclasses import dataclass
from typing import Optional, Protocol, Sequence

from agentenv_webarena.sites import world
from agentenv_webarena.sites.map import entities

__all__ = ["ENGINES", "MODE_LABELS", "SPEEDS_KMH", "DETOUR", "LOCAL_KM", "LOCAL_NEAREST", "RIVERS", "BRIDGES",
           "Node", "Route", "Graph", "graph", "world_graph", "add_terminal", "route", "crosses_river",
           "format_distance", "format_time", "node_key"]

# OSM's engine ids (fossgis_osrm_*) -> mode; OSM's select lists them in this order (bike, car, foot).
ENGINES = {"fossgis_osrm_bike": "bicycle", "fossgis_osrm_car": "car", "fossgis_osrm_foot": "foot"}
MODE_LABELS = {"bicycle": "Bicycle (OSRM)", "car": "Car (OSRM)", "foot": "Foot (OSRM)"}
SPEEDS_KMH: dict[str, dict[str, float]] = {
    "car": {"street": 30.0, "arterial": 45.0, "highway": 75.0, "expressway": 65.0, "motorway": 88.0},
    "bicycle": {"street": 15.0, "arterial": 15.0, "highway": 15.0, "path": 16.0},
    "foot": {"street": 5.0, "arterial": 5.0, "highway": 5.0, "path": 5.0, "steps": 3.0},
}
DETOUR = {"street": 1.35, "arterial": 1.3, "highway": 1.2, "expressway": 1.3, "motorway": 1.2, "path": 1.25,
          "steps": 1.1}
LOCAL_KM = 1.6  # nodes closer than this are linked by local streets
LOCAL_NEAREST = 3  # and every node to this many nearest nodes, however far

# Rivers as (lat, lon) polylines, each from the Point (the confluence) up or down its valley, long enough to
# lie between every pair of places on opposite banks that a local street could link.
RIVERS: dict[str, tuple[tuple[float, float], ...]] = {
    "Allegheny River": ((40.4424, -80.0128), (40.4462, -80.0040), (40.4490, -79.9950), (40.4540, -79.9860),
                        (40.4620, -79.9760), (40.4730, -79.9620), (40.4800, -79.9480), (40.4850, -79.9300),
                        (40.4900, -79.9150), (40.5000, -79.8900), (40.5200, -79.8500), (40.5400, -79.8200)),
    "Monongahela River": ((40.4424, -80.0128), (40.4395, -80.0075), (40.4368, -80.0010), (40.4345, -79.9930),
                          (40.4320, -79.9850), (40.4300, -79.9750), (40.4285, -79.9650), (40.4240, -79.9560),
                          (40.4120, -79.9470), (40.4030, -79.9400), (40.4070, -79.9300), (40.4125, -79.9200),
                          (40.4120, -79.9000), (40.4080, -79.8850), (40.3950, -79.8720), (40.3700, -79.8690),
                          (40.3500, -79.8720), (40.3200, -79.8850), (40.2500, -79.9000)),
    "Ohio River": ((40.4424, -80.0128), (40.4440, -80.0300), (40.4600, -80.0500), (40.4800, -80.0700),
                   (40.5000, -80.0900), (40.5100, -80.1200), (40.5250, -80.1600), (40.5300, -80.1850),
                   (40.5500, -80.2200), (40.6000, -80.2500), (40.6800, -80.3000)),
}
# Bridges: name, one end (lat, lon), the other end, edge kind. Local streets reach both ends.
BRIDGES: tuple[tuple[str, tuple[float, float], tuple[float, float], str], ...] = (
    ("Roberto Clemente Bridge", (40.4446, -80.0025), (40.4474, -80.0040), "street"),
    ("16th Street Bridge", (40.4484, -79.9918), (40.4522, -79.9948), "street"),
    ("31st Street Bridge", (40.4590, -79.9758), (40.4640, -79.9800), "street"),
    ("40th Street Bridge", (40.4700, -79.9618), (40.4762, -79.9660), "street"),
    ("Smithfield Street Bridge", (40.4382, -80.0010), (40.4345, -80.0032), "street"),
    ("10th Street Bridge", (40.4355, -79.9880), (40.4300, -79.9870), "street"),
    ("Birmingham Bridge", (40.4352, -79.9755), (40.4282, -79.9772), "arterial"),
    ("Hot Metal Bridge", (40.4322, -79.9622), (40.4270, -79.9640), "street"),
    ("Homestead Grays Bridge", (40.4165, -79.9225), (40.4085, -79.9205), "arterial"),
    ("Rankin Bridge", (40.4132, -79.8842), (40.4045, -79.8862), "arterial"),
)

# Links between towns: (a, b, kind, road name, detour or None for DETOUR[kind]). Hand-listed links may cross
# rivers (they name their bridges and tunnels).
_TOWN_LINKS: tuple[tuple[str, str, str, str, Optional[float]], ...] = (
    ("Pittsburgh", "Downtown", "street", "Grant Street", None),
    ("Downtown", "Strip District", "arterial", "Penn Avenue", None),
    ("Strip District", "Lawrenceville", "arterial", "Butler Street", None),
    ("Lawrenceville", "Bloomfield", "arterial", "Liberty Avenue", None),
    ("Bloomfield", "Shadyside", "arterial", "Baum Boulevard", None),
    ("Bloomfield", "Oakland", "arterial", "Bigelow Boulevard", None),
    ("Downtown", "Oakland", "arterial", "Forbes Avenue", None),
    ("Oakland", "Shadyside", "arterial", "Fifth Avenue", None),
    ("Oakland", "Squirrel Hill", "arterial", "Forbes Avenue", None),
    ("Shadyside", "East Liberty", "arterial", "Highland Avenue", None),
    ("Shadyside", "Squirrel Hill", "arterial", "Shady Avenue", None),
    ("East Liberty", "Wilkinsburg", "arterial", "Penn Avenue", None),
    ("Downtown", "North Side", "arterial", "Roberto Clemente Bridge", None),
    ("Downtown", "South Side", "arterial", "Smithfield Street Bridge", None),
    ("South Side", "Oakland", "arterial", "Birmingham Bridge", None),
    ("South Side", "Homestead", "arterial", "East Carson Street", None),
    ("Squirrel Hill", "Homestead", "arterial", "Homestead Grays Bridge", None),
    ("Downtown", "Mount Lebanon", "arterial", "West Liberty Avenue", None),
    ("Mount Lebanon", "Bethel Park", "arterial", "Washington Road", None),
    ("Wilkinsburg", "Monroeville", "arterial", "William Penn Highway", None),
    ("Homestead", "McKeesport", "arterial", "Route 837", None),
    ("McKeesport", "Monroeville", "arterial", "Route 48", None),
    ("North Side", "Sewickley", "arterial", "Ohio River Boulevard", None),
    ("Sewickley", "Moon Township", "arterial", "Beaver Grade Road", None),
    ("North Side", "Cranberry Township", "highway", "Route 19", None),
    ("Downtown", "Oakland", "expressway", "I-376 Parkway East", None),
    ("Oakland", "Monroeville", "motorway", "I-376 Parkway East", None),
    ("Downtown", "North Side", "expressway", "Fort Duquesne Bridge", None),
    ("Downtown", "Moon Township", "motorway", "I-376 Parkway West", None),
    ("North Side", "Cranberry Township", "motorway", "I-279 and I-79", None),
    ("Bethel Park", "Downtown", "motorway", "I-79 and I-376", None),
    ("Cranberry Township", "Erie", "motorway", "I-79", None),
    ("Cranberry Township", "Erie", "highway", "US 19", None),
    ("Monroeville", "Harrisburg", "motorway", "Pennsylvania Turnpike", 1.22),
    ("Monroeville", "State College", "highway", "US 22", None),
    ("State College", "Harrisburg", "highway", "US 322", None),
    ("Harrisburg", "Philadelphia", "motorway", "Pennsylvania Turnpike", None),
    ("Harrisburg", "Philadelphia", "highway", "US 30", None),
    ("Philadelphia", "New York", "motorway", "New Jersey Turnpike", None),
    ("Philadelphia", "New York", "highway", "US 1", None),
    ("New York", "Boston", "motorway", "I-95", None),
    ("New York", "Boston", "highway", "US 1", None),
    ("Erie", "Buffalo", "motorway", "I-90", None),
    ("Erie", "Buffalo", "highway", "US 20", None),
    ("Buffalo", "New York", "motorway", "I-90 and I-87", None),
    ("Buffalo", "State College", "highway", "US 219", None),
    ("Erie", "Cleveland", "motorway", "I-90", None),
    ("Erie", "Cleveland", "highway", "US 20", None),
    ("Cranberry Township", "Cleveland", "motorway", "I-76 and I-80", None),
    ("Cleveland", "Columbus", "motorway", "I-71", None),
    ("Cleveland", "Columbus", "highway", "US 42", None),
    ("Moon Township", "Columbus", "motorway", "I-70", None),
    ("Bethel Park", "Columbus", "highway", "US 40", None),
    ("Bethel Park", "Morgantown", "motorway", "I-79", None),
    ("Bethel Park", "Morgantown", "highway", "US 19", None),
    # Trails and stairs: no cars (and no bicycles on steps).
    ("Downtown", "Oakland", "path", "Eliza Furnace Trail", None),
    ("Strip District", "Lawrenceville", "path", "Three Rivers Heritage Trail", None),
    ("Downtown", "North Side", "path", "Three Rivers Heritage Trail", None),
    ("South Side", "Homestead", "path", "Great Allegheny Passage", None),
    ("Homestead", "McKeesport", "path", "Great Allegheny Passage", None),
    ("Oakland", "Squirrel Hill", "path", "Schenley Park trails", None),
    ("Bloomfield", "Lawrenceville", "steps", "Cedarville Street steps", None),
)


@dataclass(frozen=True)
class Node:
    """A routable point: a place (`key` "p<id>"), a town centre (`key` "t<slug>") or a bridge end
    (`key` "j<slug>-0" / "-1", named "<bridge> (north end)")."""

    key: str
    name: str
    lat: float
    lon: float


@dataclass(frozen=True)
class Route:
    """A fastest route: total `distance_km`, `time_s`, and the node names it passes (with the road)."""

    mode: str
    distance_km: float
    time_s: float
    legs: tuple[tuple[str, str, float], ...]  # (road name, node reached, leg km)

    @property
    def distance_text(self) -> str:
        """"12.3 km" (what the directions page prints after "Distance: ")."""
        return format_distance(self.distance_km)

    @property
    def time_text(self) -> str:
        """"0:17" (h:mm, what the directions page prints after "Time: ")."""
        return format_time(self.time_s)


def format_distance(km: float) -> str:
    """Kilometres with one decimal: "12.3 km"."""
    return f"{km:.1f} km"


def format_time(seconds: float) -> str:
    """Hours and minutes, "h:mm", rounded to the minute (at least 0:01)."""
    minutes = max(1, int(seconds / 60 + 0.5))
    return f"{minutes // 60}:{minutes % 60:02d}"


def node_key(obj: world.Place | world.Town) -> str:
    """The graph key of a place or a town."""
    return f"p{obj.id}" if isinstance(obj, world.Place) else f"t{obj.slug}"


class Graph:
    """Nodes and undirected edges `(neighbour index, km, kind, road name)`, per node index; `terminals` the
    indices of nodes a route may start or end at but never pass through.

    Empty when made; `world_graph()` fills one with the region, tests build small ones by hand.
    """

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.index: dict[str, int] = {}
        self.edges: list[list[tuple[int, float, str, str]]] = []
        self.terminals: set[int] = set()

    def add_node(self, node: Node, terminal: bool = False) -> None:
        """Add a node (its key must be new); a `terminal` one only starts or ends routes."""
        if node.key in self.index:
            raise ValueError(f"node {node.key!r} is already in the graph")
        self.index[node.key] = len(self.nodes)
        if terminal:
            self.terminals.add(len(self.nodes))
        self.nodes.append(node)
        self.edges.append([])

    def add_edge(self, a: str, b: str, kind: str, road: str, km: Optional[float] = None,
                 detour: Optional[float] = None) -> None:
        """Link nodes `a` and `b` both ways; `km` defaults to their great-circle distance times `detour`
        (default `DETOUR[kind]`). A second edge of the same kind between the same nodes is ignored."""
        if kind not in DETOUR:
            raise ValueError(f"edge kind {kind!r} is unknown; choose one of {sorted(DETOUR)}")
        i, j = self.index[a], self.index[b]
        if i == j or any(n == j and k == kind for n, _, k, _ in self.edges[i]):
            return
        if km is None:
            km = world.distance_km(self.nodes[i], self.nodes[j]) * (DETOUR[kind] if detour is None else detour)
        self.edges[i].append((j, km, kind, road))
        self.edges[j].append((i, km, kind, road))

    def route(self, start: str, end: str, mode: str) -> Optional[Route]:
        """The fastest route from node key `start` to `end` for `mode`, or None when unreachable.

        Raises:
            KeyError: an unknown node key or mode.
        """
        speeds = SPEEDS_KMH[mode]
        src, dst = self.index[start], self.index[end]
        best = {src: 0.0}
        prev: dict[int, tuple[int, float, str]] = {}
        heap = [(0.0, src)]
        while heap:
            t, i = heapq.heappop(heap)
            if i == dst:
                break
            if t > best[i] or (i in self.terminals and i != src):
                continue
            for j, km, kind, road in self.edges[i]:
                speed = speeds.get(kind)
                if speed is None:
                    continue
                nt = t + km / speed * 3600.0
                if nt < best.get(j, float("inf")) - 1e-9:
                    best[j] = nt
                    prev[j] = (i, km, road)
                    heapq.heappush(heap, (nt, j))
        if dst not in best:
            return None
        legs: list[tuple[str, str, float]] = []
        node = dst
        while node != src:
            i, km, road = prev[node]
            legs.append((road, self.nodes[node].name, km))
            node = i
        legs.reverse()
        return Route(mode, sum(km for _, _, km in legs), best[dst], tuple(legs))


def _orientation(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
    return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])


def _segments_cross(p1: tuple[float, float], p2: tuple[float, float], q1: tuple[float, float],
                    q2: tuple[float, float]) -> bool:
    """Whether segments p1-p2 and q1-q2 properly intersect (lat/lon as a plane: fine at a city's scale)."""
    d1, d2 = _orientation(q1, q2, p1), _orientation(q1, q2, p2)
    d3, d4 = _orientation(p1, p2, q1), _orientation(p1, p2, q2)
    return d1 * d2 < 0 and d3 * d4 < 0


class _Located(Protocol):
    lat: float
    lon: float


def crosses_river(a: _Located, b: _Located) -> bool:
    """Whether the straight line from `a` to `b` crosses one of `RIVERS`."""
    p, q = (a.lat, a.lon), (b.lat, b.lon)
    lat_lo, lat_hi, lon_lo, lon_hi = min(p[0], q[0]), max(p[0], q[0]), min(p[1], q[1]), max(p[1], q[1])
    for line in RIVERS.values():
        for r, s in zip(line, line[1:], strict=False):
            if max(r[0], s[0]) < lat_lo or min(r[0], s[0]) > lat_hi or max(r[1], s[1]) < lon_lo \
                    or min(r[1], s[1]) > lon_hi:
                continue
            if _segments_cross(p, q, r, s):
                return True
    return False


def _road(a: Node, b: Node, places: dict[str, world.Place]) -> str:
    """A local street's name: the street of the place it leads to (of `b`, else of `a`), else "local streets"."""
    for node in (b, a):
        if node.key in places:
            return places[node.key].street.lstrip("0123456789 ")
    return "local streets"


def _bridge_end(name: str, n: int) -> str:
    """The node key of end `n` (0 or 1) of a bridge."""
    return f"j{world.slugify(name)}-{n}"


def _side(here: tuple[float, float], there: tuple[float, float]) -> str:
    """"north", "south", "east" or "west": where `here` lies seen from `there`."""
    dlat, dlon = here[0] - there[0], (here[1] - there[1]) * 0.76  # a degree of longitude is shorter
    if abs(dlat) >= abs(dlon):
        return "north" if dlat > 0 else "south"
    return "east" if dlon > 0 else "west"


def world_graph(terminals: Sequence[world.Place] = entities.PLACES) -> Graph:
    """The region's graph (see the module docstring): town centres, places and bridge ends; local streets
    that never cross a river except on a bridge, park footpaths, the hand-listed links between towns; then
    `terminals` (default: WebArena's named places), which routes only start or end at."""
    g = Graph()
    for town in world.TOWNS:
        g.add_node(Node(node_key(town), town.name, town.lat, town.lon))
    places = {node_key(p): p for p in world.PLACES}
    for key, place in places.items():
        g.add_node(Node(key, place.name, place.lat, place.lon))
    for name, end_a, end_b, _ in BRIDGES:
        for n, (here, there) in enumerate(((end_a, end_b), (end_b, end_a))):
            g.add_node(Node(_bridge_end(name, n), f"{name} ({_side(here, there)} end)", *here))
    nodes = list(g.nodes)
    for a in nodes:
        near = sorted((world.distance_km(a, b), b.key, b) for b in nodes if b is not a)
        chosen = [b for km, _, b in near if km < LOCAL_KM]
        nearest = (b for _, _, b in near if not crosses_river(a, b))
        chosen += [next(nearest) for _ in range(LOCAL_NEAREST)]
        if a.key in places:
            chosen.append(g.nodes[g.index[node_key(world.town_by_name(places[a.key].town))]])
        for b in chosen:
            if not crosses_river(a, b):
                g.add_edge(a.key, b.key, "street", _road(a, b, places))
    for name, _, _, kind in BRIDGES:
        g.add_edge(_bridge_end(name, 0), _bridge_end(name, 1), kind, name)
    for park in (p for p in world.PLACES if p.category == "park"):
        near = sorted((p for p in world.PLACES if p is not park and world.distance_km(park, p) < 2.0
                       and not crosses_river(park, p)), key=lambda p: (world.distance_km(park, p), p.id))
        for other in near[:3]:
            g.add_edge(node_key(park), node_key(other), "path", f"{park.name} footpath")
    for a, b, kind, road, detour in _TOWN_LINKS:
        g.add_edge(f"t{world.slugify(a)}", f"t{world.slugify(b)}", kind, road, detour=detour)
    for place in terminals:
        add_terminal(g, Node(node_key(place), place.name, place.lat, place.lon), place.street,
                     node_key(world.town_by_name(place.town)))
    return g


def add_terminal(g: Graph, node: Node, street: str, centre: Optional[str] = None) -> list[str]:
    """Add `node` as a terminal, linked by local streets named after its `street` by the rule of `world_graph`
    (every node closer than `LOCAL_KM`, its `LOCAL_NEAREST` nearest and its town's `centre`, none across a
    river); returns the keys it is linked to. Routes between other nodes stay as they were: none passes a
    terminal.

    Raises:
        ValueError: no node on its side of the rivers to link it to.
    """
    near = sorted((world.distance_km(node, b), b.key) for b in g.nodes if not crosses_river(node, b))
    if not near:
        raise ValueError(f"{node.name!r} has no node to link to on its side of the rivers")
    linked = [key for km, key in near if km < LOCAL_KM] + [key for _, key in near[:LOCAL_NEAREST]]
    if centre is not None and not crosses_river(node, g.nodes[g.index[centre]]):
        linked.append(centre)
    g.add_node(node, terminal=True)
    for key in dict.fromkeys(linked):
        g.add_edge(node.key, key, "street", street.lstrip("0123456789 "))
    return list(dict.fromkeys(linked))


@functools.lru_cache(maxsize=1)
def graph() -> Graph:
    """The region's road graph (built once)."""
    return world_graph()


@functools.lru_cache(maxsize=4096)
def route(start: str, end: str, mode: str) -> Optional[Route]:
    """The fastest route between two node keys for `mode` ("car", "bicycle", "foot"); None if unreachable."""
    return graph().route(start, end, mode)
