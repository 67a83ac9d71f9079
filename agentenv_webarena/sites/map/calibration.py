"""WebArena's own travel answers between places our map also has: what `roads`' geometry is checked against.

Owns `REFERENCES` (facts read from the reference answers of WebArena's map tasks in `test.raw.json`,
with the task ids they come from) and `compare()`, which routes each pair on our graph. Used by
`bench/map_geometry.py` (the table) and the unit tests (a regression guard). Where WebArena names a
place our map lacks but one of ours stands at the same spot, the row says which (`note`); the rows after
those name WebArena's own places where `entities` has them (the stand-in rows stay, as the guards use them).
Pure; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from agentenv_webarena.sites import world
from agentenv_webarena.sites.map import entities
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
STARBUCKS, CVS = "starbucks-417-south-craig-street-oakland", "cvs-pharmacy-4610-centre-avenue-oakland"
MUSIC_HALL_ITSELF, GARDNER = ("carnegie-music-hall-4400-forbes-avenue-oakland",
                              "gardner-steel-conference-center-130-thackeray-avenue-oakland")
LA_QUINTA = "la-quinta-inn-suites-pittsburgh-airport-8507-university-boulevard-moon-township"
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
    # WebArena's own places (`entities`)
    Reference((52, 100), CMU, STARBUCKS, "foot", km=0.557),
    Reference((52,), CMU, STARBUCKS, "foot", minutes=7),
    Reference((53,), PITT, STARBUCKS, "foot", minutes=18),
    Reference((55,), STARBUCKS, "chatham-university", "foot", minutes=30),
    Reference((56,), "carnegie-museum-of-art", "hunt-library-4909-frew-street-oakland", "foot", minutes=11),
    Reference((363,), CMU, MUSIC_HALL_ITSELF, "foot", km=0.748),
    Reference((365,), MUSIC_HALL_ITSELF, SHADYSIDE, "foot", km=2.2),
    Reference((366,), CVS, SHADYSIDE, "foot", km=1.2),
    Reference((367,), CMU, CVS, "foot", km=1.4),
    Reference((98,), PITT, "fuku-tea-3716-forbes-avenue-oakland", "foot", km=0.653),
    Reference((99,), "whole-foods-market-5700-penn-avenue-east-liberty", "five-guys-117-south-bouquet-street-oakland",
              "foot", km=4.0, note="from 5700 Penn Avenue, Whole Foods' address"),
    Reference((153,), "rei-412-south-27th-street-south-side", CMU, "car", minutes=7),
    Reference((154,), "gates-and-hillman-centers-4902-forbes-avenue-oakland", "schenley-park", "car", minutes=4),
    Reference((85,), LA_QUINTA, CMU, "car", minutes=30),
    Reference((86,), LA_QUINTA, PITT, "car", minutes=29),
    Reference((84,), "doubletree-by-hilton-new-york-downtown-8-stone-street-new-york",
              "keens-steakhouse-72-west-36th-street-new-york", "car", minutes=14),
    Reference((220,), "wyndham-pittsburgh-university-center-100-lytton-avenue-oakland", GARDNER, "foot", km=0.375),
    Reference((220,), "the-oaklander-hotel-5130-forbes-avenue-oakland", GARDNER, "foot", km=0.338),
    Reference((33,), "doubletree-by-hilton-hotel-pittsburgh-airport-8402-university-boulevard-moon-township",
              "aldi-9125-university-boulevard-moon-township", "foot", km=1.4,
              note="to the nearest supermarket on our map"),
)


def resolve(name: str) -> world.Place | world.Town:
    """A `Reference` end: "town:<name>" is a town, anything else a place slug (the world's or `entities`')."""
    return world.town_by_name(name[5:]) if name.startswith("town:") else entities.place_by_slug(name)


def compare() -> list[Comparison]:
    """Our route for every reference, in `REFERENCES` order."""
    out = []
    for ref in REFERENCES:
        found = route(node_key(resolve(ref.a)), node_key(resolve(ref.b)), ref.mode)
        assert found is not None, ref
        out.append(Comparison(ref, found))
    return out
