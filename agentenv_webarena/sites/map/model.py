"""The map's per-instance data (`schema.sql`): its deterministic seed and the queries pages and tasks share.

Owns the seeded OSM tags (phone, website, opening hours, wheelchair access), map notes and "My
places", drawn with `random.Random(SEED)` from `sites.world` (no clock), and the site clock: a new
row is stamped one minute after the newest timestamp in the tables, so data stay deterministic.
It does not render pages.
"""
from __future__ import annotations

import datetime as dt
import random
import sqlite3
from pathlib import Path
from typing import Any

from agentenv_webarena.sites import world
from agentenv_webarena.sites.map import entities

__all__ = ["SCHEMA", "SEED", "TAG_KEYS", "TAG_LABELS", "WHEELCHAIR_VALUES", "seed", "tags_of", "notes_of", "note",
           "saved_places", "next_timestamp", "rows"]

SCHEMA = (Path(__file__).parent / "schema.sql").read_text(encoding="utf-8")
SEED = world.SEED + 6000
TAG_KEYS = ("phone", "website", "opening_hours", "wheelchair")
TAG_LABELS = {"phone": "Phone", "website": "Website", "opening_hours": "Opening hours", "wheelchair": "Wheelchair"}
WHEELCHAIR_VALUES = ("yes", "limited", "no")
_START = dt.datetime(2023, 3, 1, 9, 0)
_TS = "%Y-%m-%d %H:%M"
_AREA_CODES = {"Pennsylvania": "412", "New York": "212", "Massachusetts": "617", "Ohio": "614",
               "West Virginia": "304"}
_HOURS = ("Mo-Fr 09:00-17:00", "Mo-Sa 10:00-21:00; Su 11:00-18:00", "24/7", "Mo-Su 07:00-22:00",
          "Tu-Su 10:00-17:00", "Mo-Fr 08:00-20:00; Sa 09:00-18:00", "Mo-Th 11:00-22:00; Fr-Sa 11:00-23:00")
_NOTE_BODIES = ("The entrance has moved to the side street.", "This place is closed for renovation until spring.",
                "The opening hours on the map are out of date.", "There is a new bike rack in front.",
                "The building number is wrong here.", "A wheelchair ramp was added at the main door.",
                "The parking lot behind the building is now paid parking.", "The phone number no longer works.",
                "The name on the sign is slightly different.", "A new crosswalk was painted at this corner.")
# "My places" of the pristine data, in the order they were saved.
_SAVED = ("carnegie-mellon-university", "pnc-park", "phipps-conservatory-and-botanical-gardens", "frick-park",
          "pittsburgh-union-station", "the-andy-warhol-museum", "pittsburgh-international-airport", "benedum-center")
_AUTHORS = ("yinzer_mapper", "steelcity_gis", "bridgecounter", "oakland_walker", "riverside_cyclist",
            "inclinefan", "mapper412")


def rows(conn: sqlite3.Connection, sql: str, args: tuple = ()) -> list[dict[str, Any]]:
    """Query results as dicts (whatever the connection's row_factory)."""
    cur = conn.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def seed(conn: sqlite3.Connection) -> None:
    """Insert the deterministic tags, ~40 notes and eight saved places (`random.Random(SEED)`, no clock), then
    the tags of WebArena's named places (`entities`)."""
    rng = random.Random(SEED)
    for p in world.PLACES:
        area = _AREA_CODES[p.state]
        tags = {}
        if rng.random() < 0.7:
            tags["phone"] = f"+1 {area}-555-{rng.randrange(100, 10000):04d}"
        if rng.random() < 0.5:
            tags["website"] = f"https://www.{p.slug}.example.org"
        if p.category not in ("park", "landmark") and rng.random() < 0.75:
            tags["opening_hours"] = rng.choice(_HOURS)
        if rng.random() < 0.8:
            tags["wheelchair"] = rng.choice(WHEELCHAIR_VALUES)
        conn.executemany("INSERT INTO map_tags (place_id, key, value) VALUES (?,?,?)",
                         [(p.id, k, v) for k, v in tags.items()])
    when = _START
    for i, place in enumerate(rng.sample(world.PLACES, 40), start=1):
        when += dt.timedelta(hours=rng.randrange(5, 60))
        closed = rng.random() < 0.35
        closed_at = (when + dt.timedelta(days=rng.randrange(1, 9))).strftime(_TS) if closed else None
        conn.execute("INSERT INTO map_notes (id, place_id, body, author, status, created_at, closed_at) "
                     "VALUES (?,?,?,?,?,?,?)",
                     (4_100_000 + i, place.id, rng.choice(_NOTE_BODIES), rng.choice(_AUTHORS),
                      "closed" if closed else "open", when.strftime(_TS), closed_at))
    saved = [world.place_by_slug(s) for s in _SAVED]
    for i, place in enumerate(saved, start=1):
        conn.execute("INSERT INTO map_saved (place_id, saved_at) VALUES (?,?)",
                     (place.id, (_START + dt.timedelta(days=i)).strftime(_TS)))
    _seed_entity_tags(conn)


def _seed_entity_tags(conn: sqlite3.Connection) -> None:
    """Tags of `entities.PLACES`: a phone and hours from their own RNG (so the world's rows above stay as they
    were) and the brand's website."""
    rng = random.Random(SEED + 1)
    for p in entities.PLACES:
        tags = {"phone": f"+1 {_AREA_CODES[p.state]}-555-{rng.randrange(100, 10000):04d}"}
        if p.operator in entities.WEBSITES:
            tags["website"] = entities.WEBSITES[p.operator]
        if p.category not in ("university", "stadium"):
            tags["opening_hours"] = rng.choice(_HOURS)
        tags["wheelchair"] = rng.choice(WHEELCHAIR_VALUES)
        conn.executemany("INSERT INTO map_tags (place_id, key, value) VALUES (?,?,?)",
                         [(p.id, k, v) for k, v in tags.items()])


def next_timestamp(conn: sqlite3.Connection) -> str:
    """One minute after the newest timestamp of the map's tables (the site clock)."""
    newest = conn.execute("SELECT MAX(t) FROM (SELECT MAX(created_at) AS t FROM map_notes UNION ALL "
                          "SELECT MAX(closed_at) FROM map_notes UNION ALL SELECT MAX(saved_at) FROM map_saved)"
                          ).fetchone()[0]
    base = dt.datetime.strptime(newest, _TS) if newest else _START
    return (base + dt.timedelta(minutes=1)).strftime(_TS)


def tags_of(conn: sqlite3.Connection, place_id: int) -> dict[str, str]:
    """The place's tags, key -> value (only the keys it has)."""
    return {r["key"]: r["value"] for r in rows(conn, "SELECT key, value FROM map_tags WHERE place_id = ?",
                                                (place_id,))}


def notes_of(conn: sqlite3.Connection, place_id: int) -> list[dict[str, Any]]:
    """The place's notes, oldest first."""
    return rows(conn, "SELECT * FROM map_notes WHERE place_id = ? ORDER BY created_at, id", (place_id,))


def note(conn: sqlite3.Connection, note_id: int) -> dict[str, Any] | None:
    """One note, or None."""
    found = rows(conn, "SELECT * FROM map_notes WHERE id = ?", (note_id,))
    return found[0] if found else None


def saved_places(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """"My places", in the order they were saved: {id, place_id, saved_at}."""
    return rows(conn, "SELECT * FROM map_saved ORDER BY saved_at, id")
