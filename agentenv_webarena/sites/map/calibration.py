"""WebArena's own travel answers between places our map also has: what `roads`' geometry is checked against.

Owns `REFERENCES` (facts read from the reference answers of WebArena's map tasks in `test.raw.json`,
with the task ids they come from) and `compare()`, which routes each pair on our graph. Used by
`bench/map_geometry.py` (the table) and the unit tests (a regression guard). Where WebArena names a
place our map lacks but one of ours stands at the same spot, the row says which (`note`).
Pure; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from agentenv_webarena.sites import world
from agentenv_webarena.sites.map.roads import Route, node_key, route

__all__ = ["Reference", "Comparison", "REFERENCES", "compare", "resolve"]


@dataclass(frozen=True)
class Reference:
    """One WebArena answer: from `a` to `b` (a place slug, or "town:<name>") by `mode`, `km` or `minutes`."""

    tasks: tuple[int, ...]
    a: str
    b: str
    mode: str
    km: Optional[float] = None
    minutes: Optional[float] = None
    note: str = ""


@dataclass(frozen=True)
class Comparison:
    """A reference and our route for it; `ratio` is ours / WebArena's (distance when given, else time)."""

    ref: Reference
    ours: Route

    @property
    def measure(self) -> str:
        return "distance" if self.ref.km is not None else "time"

    @property
    def ratio(self) -> float:
        if self.ref.km is not None:
            return self.ours.distance_km / self.ref.km
        return self.ours.time_s / 60.0 / self.ref.minutes


CMU, PITT, SHADYSIDE = "carnegie-mellon-university", "university-of-pittsburgh", "upmc-shadyside"
WATERFRONT, MUSIC_HALL = "waterfront-homestead", "carnegie-museum-of-art"
REFERENCES: tuple[Reference, ...] = (
    Reference((151,), CMU, PITT, "car", minutes=4),
    Reference((54,), CMU, PITT, "foot", minutes=25),
    Reference((152,), "schenley-park", PITT, "car", minutes=4),
    Reference((154,), CMU, "schenley-park", "car", minutes=4, note="from CMU's Gates building"),
    Reference((153,), "south-side-works", CMU, "car", minutes=7, note="REI is at SouthSide Works"),
    Reference((17,), WATERFRONT, CMU, "car", minutes=13, note="AMC Waterfront"),
    Reference((17,), WATERFRONT, CMU, "foot", minutes=95, note="AMC Waterfront"),
    Reference((18,), WATERFRONT, PITT, "car", minutes=15, note="AMC Waterfront"),
    Reference((18,), WATERFRONT, PITT, "foot", minutes=107, note="AMC Waterfront"),
    Reference((19,), "carnegie-science-center", CMU, "car", minutes=12),
    Reference((19,), "carnegie-science-center", CMU, "foot", minutes=104),
    Reference((20,), "randyland", CMU, "car", minutes=13),
    Reference((20,), "randyland", CMU, "foot", minutes=105),
    Reference((85,), "pittsburgh-international-airport", CMU, "car", minutes=30,
              note="from a La Quinta Inn near the airport"),
    Reference((86,), "pittsburgh-international-airport", PITT, "car", minutes=29,
              note="from a La Quinta Inn near the airport"),
    Reference((363,), CMU, MUSIC_HALL, "foot", km=0.748, note="Carnegie Music Hall: the same building"),
    Reference((364,), CMU, SHADYSIDE, "foot", km=1.7),
    Reference((365,), MUSIC_HALL, SHADYSIDE, "foot", km=2.2, note="Carnegie Music Hall: the same building"),
    Reference((137, 287), "town:Pittsburgh", "town:Philadelphia", "car", minutes=5 * 60 + 47),
    Reference((138,), "town:New York", "town:Philadelphia", "car", minutes=60 + 58),
    Reference((97,), CMU, "town:Boston", "car", km=914, note="to MIT, across the Charles from Boston"),
)


def resolve(name: str) -> world.Place | world.Town:
    """A `Reference` end: "town:<name>" is a town, anything else a place slug."""
    return world.town_by_name(name[5:]) if name.startswith("town:") else world.place_by_slug(name)


def compare() -> list[Comparison]:
    """Our route for every reference, in `REFERENCES` order."""
    out = []
    for ref in REFERENCES:
        found = route(node_key(resolve(ref.a)), node_key(resolve(ref.b)), ref.mode)
        assert found is not None, ref
        out.append(Comparison(ref, found))
    return out
