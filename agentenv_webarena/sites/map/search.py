"""The map's geocoder: free-text search over `sites.world`, "X near Y" / "X in Z" lookups, route parsing.

Owns how a query string becomes places (Nominatim-like: a name, an address, "pharmacy near
Carnegie Mellon University", "cafes in Shadyside") and how the `route=lat,lon;lat,lon` parameter
of a directions URL becomes two graph nodes (snapped to the nearest node, as OSRM snaps). Pure;
it does not render pages.

Ranking of a name query (best first, ties in `world` order, towns before places): the exact name (100),
every query word in the name (50), every query word in the name, street, town, city, state or category
(20); `entities`' places (matched on their name and street only) come after all of the world's.
"X near Y" lists the places of category X by straight-line distance from the best match for Y; "X in Z"
lists those in town Z (neighbourhood or municipality) by name. A category of the world lists the world's
places, one only `entities` have (bars, parking, department stores, ...) theirs. When X is no category
but names places ("Starbucks near Carnegie Mellon University", "CVS in Squirrel Hill"), they list every
place, the world's or `entities`', whose name holds X's words.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Optional, Union

from agentenv_webarena.sites import world
from agentenv_webarena.sites.map import entities

__all__ = ["CATEGORIES", "Located", "Hit", "SearchResult", "RouteError", "CATEGORY_LABELS", "category_of",
           "display_name", "search", "lookup", "format_coord", "route_param", "parse_route", "element_path", "town_id",
           "town_by_id", "snap", "NEAR_LIMIT"]

Located = Union[world.Place, world.Town]
NEAR_LIMIT = 10  # results an "X near Y" search lists

CATEGORIES = world.CATEGORIES + tuple(entities.CATEGORY_LABELS)  # the world's, then those only entities have
CATEGORY_LABELS = {c: c.replace("_", " ").capitalize() for c in world.CATEGORIES}
CATEGORY_LABELS.update({"city_hall": "City hall", "police": "Police station"}, **entities.CATEGORY_LABELS)
_PLURALS = {"library": "libraries", "pharmacy": "pharmacies", "university": "universities", "church": "churches",
            "police": "police stations", "city_hall": "city halls", "bus_station": "bus stations",
            "train_station": "train stations", "fire_station": "fire stations", "post_office": "post offices",
            "parking": "parking", "fast_food": "fast food", "wholesale": "wholesale clubs",
            "electronics": "electronics stores", "outdoor": "outdoor shops"}
_SYNONYMS = {"coffee shop": "cafe", "coffee shops": "cafe", "coffee": "cafe", "drugstore": "pharmacy",
             "drugstores": "pharmacy", "grocery store": "supermarket", "grocery stores": "supermarket",
             "theater": "theatre", "theaters": "theatre", "station": "train_station", "stations": "train_station",
             "police station": "police", "college": "university", "colleges": "university",
             "museums and galleries": "museum", "eatery": "restaurant", "hostel": "hotel", "pub": "bar", "pubs": "bar",
             "parking lot": "parking", "parking lots": "parking", "parking garage": "parking", "garage": "parking"}
_NEAR = re.compile(r"^\s*(.+?)\s+(near|in)\s+(.+?)\s*$", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
_COORDS = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$")


class RouteError(ValueError):
    """A directions URL's `route` parameter is malformed (the message says how)."""


@dataclass(frozen=True)
class Hit:
    """One search result: a place or town, with its straight-line distance for "near" searches."""

    obj: Located
    km: Optional[float] = None


@dataclass(frozen=True)
class SearchResult:
    """The results of a query: `kind` "name", "near" or "in"; `anchor` the Y of "X near Y"; a `message` when
    nothing matched; `brand` the X of "X near Y" when X names places rather than a category."""

    kind: str
    hits: tuple[Hit, ...]
    category: str = ""
    anchor: Optional[Located] = None
    message: str = ""
    brand: str = ""


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("'", ""))


def category_of(phrase: str) -> Optional[str]:
    """The category a phrase names ("pharmacies", "coffee shop", "train station"), else None."""
    key = " ".join(_words(phrase))
    if key in _SYNONYMS:
        return _SYNONYMS[key]
    for cat in CATEGORIES:
        label = CATEGORY_LABELS[cat].lower()
        if key in (cat.replace("_", " "), label, _PLURALS.get(cat, label + "s")):
            return cat
    return None


def display_name(obj: Located) -> str:
    """The geocoder's full name: "Carnegie Mellon University, 5000 Forbes Avenue, Oakland, Pittsburgh,
    Pennsylvania" (a town: "Oakland, Pittsburgh, Allegheny County, Pennsylvania")."""
    if isinstance(obj, world.Place):
        parts = [obj.name, obj.street, obj.town] + ([obj.city] if obj.city != obj.town else []) + [obj.state]
    else:
        parts = [obj.name] + ([obj.parent] if obj.parent else []) + [obj.county, obj.state]
    return ", ".join(parts)


@functools.lru_cache(maxsize=1)
def _index() -> list[tuple[Located, str, set[str], set[str], int]]:
    """(object, normalised name, name words, all words, tier) for every town, every place of the world (tier 0),
    then `entities.PLACES` (tier 1, whose words are their name's and street's only: a shop is not found by
    its town or category alone, as on Nominatim)."""
    out: list[tuple[Located, str, set[str], set[str], int]] = []
    for t in world.TOWNS:
        words = set(_words(t.name))
        out.append((t, " ".join(_words(t.name)), words, words | set(_words(display_name(t))), 0))
    for p in world.PLACES:
        words = set(_words(p.name))
        extra = _words(f"{display_name(p)} {CATEGORY_LABELS[p.category]} {p.category}")
        out.append((p, " ".join(_words(p.name)), words, words | set(extra), 0))
    for p in entities.PLACES:
        words = set(_words(p.name))
        out.append((p, " ".join(_words(p.name)), words, words | set(_words(p.street)), 1))
    return out


def _name_hits(query: str) -> list[Hit]:
    """Places and towns matching `query`, best first: the world's before `entities`', then by score and order."""
    q_words = _words(query)
    if not q_words:
        return []
    q_name, q_set = " ".join(q_words), set(q_words)
    scored = []
    for order, (obj, name, name_words, all_words, tier) in enumerate(_index()):
        if q_name == name:
            score = 100
        elif q_set <= name_words:
            score = 50
        elif q_set <= all_words:
            score = 20
        else:
            continue
        scored.append((tier, -score, order, obj))
    scored.sort(key=lambda s: s[:3])
    return [Hit(obj) for *_, obj in scored]


@functools.lru_cache(maxsize=4096)
def lookup(text: str) -> Optional[Located]:
    """The best match for a place or town name / address (what the directions form geocodes), else None."""
    hits = _name_hits(text)
    return hits[0].obj if hits else None


def search(query: str) -> SearchResult:
    """Run a search-box query: "X near Y", "X in Z" (X a category), or a name / address."""
    match = _NEAR.match(query)
    if match and category_of(match.group(1)):
        category, how, where = category_of(match.group(1)), match.group(2).lower(), match.group(3)
        label = _PLURALS.get(category, CATEGORY_LABELS[category].lower() + "s")
        if how == "in":
            town = next((h.obj for h in _name_hits(where) if isinstance(h.obj, world.Town)), None)
            if town is None:
                return SearchResult("in", (), category, message=f"No town or neighbourhood called {where!r}.")
            found = sorted(_of_category(category, town.name), key=lambda p: p.name.lower())
            msg = "" if found else f"No {label} in {town.name}."
            return SearchResult("in", tuple(Hit(p) for p in found), category, town, msg)
        anchor = lookup(where)
        if anchor is None:
            return SearchResult("near", (), category, message=f"No place called {where!r} was found.")
        ranked = sorted((p for p in _of_category(category) if p is not anchor),
                        key=lambda p: (world.distance_km(anchor, p), p.id))[:NEAR_LIMIT]
        return SearchResult("near", tuple(Hit(p, world.distance_km(anchor, p)) for p in ranked), category, anchor)
    if match:
        found = _named_search(match.group(1), match.group(2).lower(), match.group(3))
        if found is not None:
            return found
    hits = tuple(_name_hits(query))
    return SearchResult("name", hits, message="" if hits else f"No results found for {query.strip()!r}.")


def _of_category(category: str, town: Optional[str] = None) -> list[world.Place]:
    """The places a category search lists: the world's for the world's categories, else `entities`' (id order)."""
    if category in world.CATEGORIES:
        return world.places_in(town, category)
    return [p for p in entities.PLACES if p.category == category
            and (town is None or p.town == town or world.town_by_name(p.town).parent == town)]


def _named_search(what: str, how: str, where: str) -> Optional[SearchResult]:
    """"X near Y" / "X in Z" for X that names places (a brand: every word of X in their names), or None when
    no place's name holds X's words or Y / Z is not found (the query is then searched as one name)."""
    q_words = set(_words(what))
    named = [row[0] for row in _index() if isinstance(row[0], world.Place) and q_words <= row[2]]
    if not q_words or not named:
        return None
    if how == "in":
        town = next((h.obj for h in _name_hits(where) if isinstance(h.obj, world.Town)), None)
        if town is None:
            return None
        found = sorted((p for p in named if p.town == town.name or world.town_by_name(p.town).parent == town.name),
                       key=lambda p: (p.name.lower(), p.id))
        msg = "" if found else f"No {what.strip()} in {town.name}."
        return SearchResult("in", tuple(Hit(p) for p in found), anchor=town, message=msg, brand=what.strip())
    anchor = lookup(where)
    if anchor is None:
        return None
    ranked = sorted((p for p in named if p is not anchor), key=lambda p: (world.distance_km(anchor, p), p.id))
    return SearchResult("near", tuple(Hit(p, world.distance_km(anchor, p)) for p in ranked[:NEAR_LIMIT]),
                        anchor=anchor, brand=what.strip())


def format_coord(value: float) -> str:
    """A coordinate as URLs and pages print it: up to 5 decimals, no trailing zeros ("40.4433")."""
    text = f"{value:.5f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def route_param(a: Optional[Located], b: Optional[Located]) -> str:
    """The `route` value of a directions URL: "lat1,lon1;lat2,lon2" (a side left empty when None)."""
    def one(obj: Optional[Located]) -> str:
        return "" if obj is None else f"{format_coord(obj.lat)},{format_coord(obj.lon)}"
    return f"{one(a)};{one(b)}"


def parse_route(value: str) -> tuple[Optional[tuple[float, float]], Optional[tuple[float, float]]]:
    """Parse "lat1,lon1;lat2,lon2" (either side may be empty).

    Raises:
        RouteError: not two ';'-separated parts, or a side that is not "lat,lon" within range.
    """
    parts = value.split(";")
    if len(parts) != 2:
        raise RouteError(f"route={value!r} must be two points 'lat1,lon1;lat2,lon2' separated by ';'")
    out: list[Optional[tuple[float, float]]] = []
    for part in parts:
        if not part.strip():
            out.append(None)
            continue
        m = _COORDS.match(part)
        if not m:
            raise RouteError(f"route point {part!r} must be 'lat,lon' in decimal degrees, e.g. '40.4433,-79.9436'")
        lat, lon = float(m.group(1)), float(m.group(2))
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            raise RouteError(f"route point {part!r} is out of range (latitude -90..90, longitude -180..180)")
        out.append((lat, lon))
    return out[0], out[1]


@dataclass(frozen=True)
class _Point:
    lat: float
    lon: float


def snap(lat: float, lon: float) -> Located:
    """The town or place at these coordinates (exact), else the nearest one (OSRM snaps to the network)."""
    point = _Point(lat, lon)
    best = min(_index(), key=lambda row: (world.distance_km(point, row[0]), isinstance(row[0], world.Place)))
    return best[0]


def town_id(town: world.Town) -> int:
    """The OSM-style relation id of a town (its page is /relation/<id>)."""
    return 188_000 + 13 * world.TOWNS.index(town)


def town_by_id(relation_id: int) -> Optional[world.Town]:
    """The town whose relation id is `relation_id`, else None."""
    index, rest = divmod(relation_id - 188_000, 13)
    return world.TOWNS[index] if rest == 0 and 0 <= index < len(world.TOWNS) else None


def element_path(obj: Located) -> str:
    """The page of a place or town: "/node/<id>", "/way/<id>" or "/relation/<id>"."""
    if isinstance(obj, world.Place):
        return f"/{obj.osm_type}/{obj.id}"
    return f"/relation/{town_id(obj)}"

