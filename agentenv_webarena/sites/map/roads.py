"""The map's road network over `sites.world` and its router: Dijkstra by travel time per mode.

Owns the generated graph (nodes: every place and every town centre; edges: streets from a place to
its town centre and to its two nearest neighbours in town, footpaths around parks, hand-listed
links between towns) and the rules of the three OSRM-like engines:

| edge kind  | car      | bicycle  | foot    |
|------------|----------|----------|---------|
| street     | 25 km/h  | 15 km/h  | 5 km/h  |
| arterial   | 45 km/h  | 15 km/h  | 5 km/h  |
| motorway   | 95 km/h  | -        | -       |
| path       | -        | 16 km/h  | 5 km/h  |
| steps      | -        | -        | 3 km/h  |

An edge's length is the great-circle distance times `DETOUR[kind]` (roads are not straight). The
router returns the fastest route; its distance is the length of that route. Everything is pure and
deterministic (no clock, no randomness); the graph is built once, lazily. It does not know pages,
URLs or SQLite.
"""
from __future__ import annotations

import functools
import heapq
from dataclasses import dataclass
from typing import Optional

from agentenv_webarena.sites import world

__all__ = ["ENGINES", "MODE_LABELS", "SPEEDS_KMH", "DETOUR", "Node", "Route", "Graph", "graph", "world_graph", "route",
           "format_distance", "format_time", "node_key"]

# OSM's engine ids (fossgis_osrm_*) -> mode; OSM's select lists them in this order (bike, car, foot).
ENGINES = {"fossgis_osrm_bike": "bicycle", "fossgis_osrm_car": "car", "fossgis_osrm_foot": "foot"}
MODE_LABELS = {"bicycle": "Bicycle (OSRM)", "car": "Car (OSRM)", "foot": "Foot (OSRM)"}
SPEEDS_KMH: dict[str, dict[str, float]] = {
    "car": {"street": 25.0, "arterial": 45.0, "motorway": 95.0},
    "bicycle": {"street": 15.0, "arterial": 15.0, "path": 16.0},
    "foot": {"street": 5.0, "arterial": 5.0, "path": 5.0, "steps": 3.0},
}
DETOUR = {"street": 1.3, "arterial": 1.25, "motorway": 1.15, "path": 1.2, "steps": 1.1}

# Links between town centres: (a, b, kind, road name). Streets of a town reach its centre.
_TOWN_LINKS = (
    ("Pittsburgh", "Downtown", "street", "Grant Street"),
    ("Downtown", "Strip District", "arterial", "Penn Avenue"),
    ("Strip District", "Lawrenceville", "arterial", "Butler Street"),
    ("Lawrenceville", "Bloomfield", "arterial", "Liberty Avenue"),
    ("Bloomfield", "Shadyside", "arterial", "Baum Boulevard"),
    ("Bloomfield", "Oakland", "arterial", "Bigelow Boulevard"),
    ("Downtown", "Oakland", "arterial", "Forbes Avenue"),
    ("Oakland", "Shadyside", "arterial", "Fifth Avenue"),
    ("Oakland", "Squirrel Hill", "arterial", "Forbes Avenue"),
    ("Shadyside", "East Liberty", "arterial", "Highland Avenue"),
    ("Shadyside", "Squirrel Hill", "arterial", "Shady Avenue"),
    ("East Liberty", "Wilkinsburg", "arterial", "Penn Avenue"),
    ("Downtown", "North Side", "arterial", "Roberto Clemente Bridge"),
    ("Downtown", "South Side", "arterial", "Smithfield Street Bridge"),
    ("South Side", "Oakland", "arterial", "Birmingham Bridge"),
    ("South Side", "Homestead", "arterial", "East Carson Street"),
    ("Squirrel Hill", "Homestead", "arterial", "Homestead Grays Bridge"),
    ("Downtown", "Mount Lebanon", "arterial", "West Liberty Avenue"),
    ("Mount Lebanon", "Bethel Park", "arterial", "Washington Road"),
    ("Wilkinsburg", "Monroeville", "arterial", "William Penn Highway"),
    ("Homestead", "McKeesport", "arterial", "Route 837"),
    ("McKeesport", "Monroeville", "arterial", "Route 48"),
    ("North Side", "Sewickley", "arterial", "Ohio River Boulevard"),
    ("Sewickley", "Moon Township", "arterial", "Beaver Grade Road"),
    ("North Side", "Cranberry Township", "arterial", "Route 19"),
    ("Downtown", "Oakland", "motorway", "I-376 Parkway East"),
    ("Oakland", "Monroeville", "motorway", "I-376 Parkway East"),
    ("Downtown", "Moon Township", "motorway", "I-376 Parkway West"),
    ("North Side", "Cranberry Township", "motorway", "I-279 and I-79"),
    ("Bethel Park", "Downtown", "motorway", "I-79 and I-376"),
    ("Cranberry Township", "Erie", "motorway", "I-79"),
    ("Cranberry Township", "Erie", "arterial", "US 19"),
    ("Monroeville", "Harrisburg", "motorway", "Pennsylvania Turnpike"),
    ("Monroeville", "State College", "arterial", "US 22"),
    ("State College", "Harrisburg", "arterial", "US 322"),
    ("Harrisburg", "Philadelphia", "motorway", "Pennsylvania Turnpike"),
    ("Harrisburg", "Philadelphia", "arterial", "US 30"),
    ("Philadelphia", "New York", "motorway", "New Jersey Turnpike"),
    ("Philadelphia", "New York", "arterial", "US 1"),
    ("New York", "Boston", "motorway", "I-95"),
    ("New York", "Boston", "arterial", "US 1"),
    ("Erie", "Buffalo", "motorway", "I-90"),
    ("Erie", "Buffalo", "arterial", "US 20"),
    ("Buffalo", "New York", "motorway", "I-90 and I-87"),
    ("Buffalo", "State College", "arterial", "US 219"),
    ("Erie", "Cleveland", "motorway", "I-90"),
    ("Erie", "Cleveland", "arterial", "US 20"),
    ("Cranberry Township", "Cleveland", "motorway", "I-76 and I-80"),
    ("Cleveland", "Columbus", "motorway", "I-71"),
    ("Cleveland", "Columbus", "arterial", "US 42"),
    ("Moon Township", "Columbus", "motorway", "I-70"),
    ("Bethel Park", "Columbus", "arterial", "US 40"),
    ("Bethel Park", "Morgantown", "motorway", "I-79"),
    ("Bethel Park", "Morgantown", "arterial", "US 19"),
    # Trails and stairs: no cars (and no bicycles on steps).
    ("Downtown", "Oakland", "path", "Eliza Furnace Trail"),
    ("Strip District", "Lawrenceville", "path", "Three Rivers Heritage Trail"),
    ("Downtown", "North Side", "path", "Three Rivers Heritage Trail"),
    ("South Side", "Homestead", "path", "Great Allegheny Passage"),
    ("Homestead", "McKeesport", "path", "Great Allegheny Passage"),
    ("Oakland", "Squirrel Hill", "path", "Schenley Park trails"),
    ("South Side", "Oakland", "steps", "South Side Slopes steps"),
    ("Bloomfield", "Lawrenceville", "steps", "Cedarville Street steps"),
)


@dataclass(frozen=True)
class Node:
    """A routable point: a place (`key` "p<id>") or a town centre (`key` "t<slug>")."""

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
    """Nodes and undirected edges `(neighbour index, km, kind, road name)`, per node index.

    Empty when made; `world_graph()` fills one with the region, tests build small ones by hand.
    """

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.index: dict[str, int] = {}
        self.edges: list[list[tuple[int, float, str, str]]] = []

    def add_node(self, node: Node) -> None:
        """Add a node (its key must be new)."""
        if node.key in self.index:
            raise ValueError(f"node {node.key!r} is already in the graph")
        self.index[node.key] = len(self.nodes)
        self.nodes.append(node)
        self.edges.append([])

    def add_edge(self, a: str, b: str, kind: str, road: str, km: Optional[float] = None) -> None:
        """Link nodes `a` and `b` both ways; `km` defaults to their distance times `DETOUR[kind]`.
        A second edge of the same kind between the same nodes is ignored."""
        if kind not in DETOUR:
            raise ValueError(f"edge kind {kind!r} is unknown; choose one of {sorted(DETOUR)}")
        i, j = self.index[a], self.index[b]
        if any(n == j and k == kind for n, _, k, _ in self.edges[i]):
            return
        if km is None:
            km = world.distance_km(self.nodes[i], self.nodes[j]) * DETOUR[kind]
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
            if t > best[i]:
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


def _street(place: world.Place) -> str:
    return place.street.lstrip("0123456789 ")


def world_graph() -> Graph:
    """The region's graph: every town centre and place; each place linked by street to its town centre
    and its two nearest neighbours in town, each park by footpath to its three nearest places within
    2 km, and the hand-listed links between towns."""
    g = Graph()
    for town in world.TOWNS:
        g.add_node(Node(node_key(town), town.name, town.lat, town.lon))
    for place in world.PLACES:
        g.add_node(Node(node_key(place), place.name, place.lat, place.lon))
    by_town: dict[str, list[world.Place]] = {}
    for place in world.PLACES:
        by_town.setdefault(place.town, []).append(place)
    for town, places in by_town.items():
        centre = world.town_by_name(town)
        for place in places:
            g.add_edge(node_key(place), node_key(centre), "street", _street(place))
            near = sorted((p for p in places if p is not place), key=lambda p: (world.distance_km(place, p), p.id))
            for other in near[:2]:
                g.add_edge(node_key(place), node_key(other), "street", _street(other))
    for park in (p for p in world.PLACES if p.category == "park"):
        near = sorted((p for p in world.PLACES if p is not park and world.distance_km(park, p) < 2.0),
                      key=lambda p: (world.distance_km(park, p), p.id))
        for other in near[:3]:
            g.add_edge(node_key(park), node_key(other), "path", f"{park.name} footpath")
    for a, b, kind, road in _TOWN_LINKS:
        g.add_edge(f"t{world.slugify(a)}", f"t{world.slugify(b)}", kind, road)
    return g


@functools.lru_cache(maxsize=1)
def graph() -> Graph:
    """The region's road graph (built once)."""
    return world_graph()


@functools.lru_cache(maxsize=4096)
def route(start: str, end: str, mode: str) -> Optional[Route]:
    """The fastest route between two node keys for `mode` ("car", "bicycle", "foot"); None if unreachable."""
    return graph().route(start, end, mode)
