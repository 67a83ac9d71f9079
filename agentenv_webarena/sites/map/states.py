"""The map's US states: boundary relations of the north-eastern states, their pages and their search hits.

Owns which states the map knows (`STATES`: name, postal code, capital, and every state it shares a land border
with, derived from one list of border pairs so the relation is symmetric), their OSM-style relation ids
(`/relation/<id>`, apart from the towns' ids) and the state page: its tags, the bordering states (linked when the
map has their page) and the towns of `sites.world` inside it. A search whose query names a state ("Ohio",
"Ohio state", "US-OH") lists the state first. Pure data and markup; the geocoder (`search.lookup`, the directions
form) does not resolve states.

CSS hooks: `h2.place-name`, `#state-code td`, `#state-capital td`, `ul#state-borders > li[data-state]`,
`ul.town-places`.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Optional

from agentenv_webarena.sites import world

__all__ = ["State", "STATES", "state_id", "state_by_id", "state_by_name", "state_for_query", "borders", "towns_in"]


@dataclass(frozen=True)
class State:
    """A US state as a boundary relation: name, postal code, capital and land neighbours (names, sorted)."""

    name: str
    code: str
    capital: str
    neighbours: tuple[str, ...]


# name, postal code, capital
_ROWS = (
    ("Pennsylvania", "PA", "Harrisburg"), ("New York", "NY", "Albany"), ("New Jersey", "NJ", "Trenton"),
    ("Delaware", "DE", "Dover"), ("Maryland", "MD", "Annapolis"), ("West Virginia", "WV", "Charleston"),
    ("Ohio", "OH", "Columbus"), ("Virginia", "VA", "Richmond"), ("Kentucky", "KY", "Frankfort"),
    ("Indiana", "IN", "Indianapolis"), ("Michigan", "MI", "Lansing"), ("Massachusetts", "MA", "Boston"),
    ("Connecticut", "CT", "Hartford"), ("Rhode Island", "RI", "Providence"), ("Vermont", "VT", "Montpelier"),
    ("New Hampshire", "NH", "Concord"), ("Maine", "ME", "Augusta"),
)
# Land borders by postal code; states outside `_ROWS` appear by code only (their names below).
_BORDERS = (
    "PA-NY PA-NJ PA-DE PA-MD PA-WV PA-OH NY-NJ NY-CT NY-MA NY-VT NJ-DE DE-MD MD-WV MD-VA WV-VA WV-KY WV-OH "
    "OH-KY OH-IN OH-MI VA-KY VA-TN VA-NC KY-TN KY-MO KY-IL KY-IN IN-IL IN-MI MI-WI MA-RI MA-CT MA-VT MA-NH "
    "CT-RI VT-NH NH-ME"
)
_OTHER = {"TN": "Tennessee", "NC": "North Carolina", "MO": "Missouri", "IL": "Illinois", "WI": "Wisconsin"}


def _build() -> tuple[State, ...]:
    names = {code: name for name, code, _ in _ROWS} | _OTHER
    pairs = [pair.split("-") for pair in _BORDERS.split()]
    return tuple(State(name, code, capital, tuple(sorted(names[b if a == code else a] for a, b in pairs
                                                         if code in (a, b))))
                 for name, code, capital in _ROWS)


STATES: tuple[State, ...] = _build()
_BY_NAME = {s.name.lower(): s for s in STATES}
_BASE_ID = 162_000  # relation ids of states: below the towns' (188,000 on)


def state_id(state: State) -> int:
    """The OSM-style relation id of `state` (its page is /relation/<id>)."""
    return _BASE_ID + 7 * STATES.index(state)


def state_by_id(relation_id: int) -> Optional[State]:
    """The state whose relation id is `relation_id`, else None."""
    index, rest = divmod(relation_id - _BASE_ID, 7)
    return STATES[index] if rest == 0 and 0 <= index < len(STATES) else None


def state_by_name(name: str) -> State:
    """The state called `name` (any case).

    Raises:
        KeyError: the map has no such state (names the value).
    """
    try:
        return _BY_NAME[name.lower()]
    except KeyError:
        raise KeyError(f"no state named {name!r} on the map; known: {sorted(s.name for s in STATES)}") from None


_QUERY = re.compile(r"^\s*(?:the\s+)?(?:state\s+of\s+)?(.+?)(?:\s+state)?\s*$", re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def state_for_query(query: str) -> Optional[State]:
    """The state a search query names ("Ohio", "ohio state", "State of Ohio", "US-OH"), else None."""
    text = query.strip()
    if text.upper().startswith("US-"):
        return next((s for s in STATES if s.code == text[3:].upper()), None)
    match = _QUERY.match(text)
    return _BY_NAME.get(match.group(1).lower()) if match else None


def borders(a: str, b: str) -> bool:
    """Whether states `a` and `b` (names) share a land border."""
    return b in state_by_name(a).neighbours


def towns_in(state: State) -> list[world.Town]:
    """The towns and cities of `sites.world` in `state` (not the neighbourhoods), in world order."""
    return [t for t in world.TOWNS if t.state == state.name and not t.parent]
