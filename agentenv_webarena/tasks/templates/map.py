"""Map task templates (intent_template_id 6000-6199) over the embedded map (`sites.map`) and `sites.world`.

Like WebArena's map tasks: travel time and distance by car, bicycle and foot, the nearest place of a
kind, coordinates and postcodes, which place is closer, places within a town, showing a route or a
search (checked on the URL or on the page, as WebArena checks OSM), and OSM-style edits (My places,
notes, tags) checked with `program_html`; 6060-6061 also read the shop admin (a customer's city, an
order's ship-to city). Answers come from the same functions the pages print with (`map.route`,
`map.search`, `format_*`), so a reference replay reads exactly what the task expects. Dict shape:
`templates.base.task`. State-changing tasks pick targets whose pristine state fails the check.
"""
from __future__ import annotations

import json
import random
import sqlite3
from typing import Optional, Sequence
from urllib.parse import quote

from agentenv_webarena.sites import world
from agentenv_webarena.sites.map import (
    directions_url,
    element_path,
    format_coord,
    search,
)
from agentenv_webarena.sites.map.model import TAG_LABELS, WHEELCHAIR_VALUES, notes_of, rows, saved_places, tags_of
from agentenv_webarena.sites.map.roads import Route
from agentenv_webarena.sites.map.search import CATEGORY_LABELS, Located
from agentenv_webarena.tasks.templates.base import (
    DONE,
    clear_and_type,
    click,
    html_eval,
    pick,
    stop,
    string_eval,
    tab_focus,
    target,
    task,
    type_text,
    url_eval,
)
from agentenv_webarena.tasks.templates.common import (
    ADMIN,
    BASE_CUSTOMERS,
    BY,
    ENGINE_OF,
    MAP,
    MY_PLACES,
    directions_steps,
    find_customer,
    find_order,
    findable,
    landmarks,
    local_places,
    route_between,
    route_on_screen,
    two_routes_steps,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

N = 7  # instances per template (fewer when the data offer fewer)
N_STATE = 9  # instances of the page-state (program_html) templates
VERB = {"car": "drive", "bicycle": "cycle", "foot": "walk"}
NOTES = "document.querySelector('#notes').outerText"
NOTE_STATUS = "document.querySelector('#note-status').outerText"
# Plural phrases the intents use (the search understands them: `search.category_of`).
PLURAL = {"pharmacy": "pharmacies", "library": "libraries", "cafe": "cafes", "restaurant": "restaurants",
          "bank": "banks", "supermarket": "supermarkets", "hotel": "hotels", "hospital": "hospitals",
          "museum": "museums", "park": "parks", "school": "schools", "post_office": "post offices"}
NEAR_CATEGORIES = ("pharmacy", "cafe", "bank", "supermarket", "library", "hospital", "hotel", "post_office")


# --- facts ------------------------------------------------------------------------------------------


def _minutes(r: Route) -> int:
    """The route's time in whole minutes, as the page's h:mm shows it."""
    h, m = r.time_text.split(":")
    return int(h) * 60 + int(m)


def _pairs(rng: random.Random, places: Sequence[Located], k: int, *, min_km: float = 0.8,
           max_km: float = 1e9) -> list[tuple[Located, Located]]:
    """Up to `k` distinct (a, b) pairs whose straight-line distance is within [min_km, max_km]."""
    out: list[tuple[Located, Located]] = []
    for _ in range(400):
        if len(out) >= k or len(places) < 2:
            break
        a, b = rng.sample(list(places), 2)
        if min_km <= world.distance_km(a, b) <= max_km and (a, b) not in out and (b, a) not in out:
            out.append((a, b))
    return out


def _nearest(anchor: Located, category: str) -> Optional[tuple[world.Place, float]]:
    """The nearest place of `category` as the search lists it, when clearly nearest (0.05 km ahead)."""
    hits = search(f"{category.replace('_', ' ')} near {anchor.name}").hits
    if not hits or (len(hits) > 1 and hits[1].km - hits[0].km < 0.05) or not findable(hits[0].obj):
        return None
    return hits[0].obj, hits[0].km


def _task(intent_template: str, values: dict, ev: dict, sequence: list, start_url: str = MAP,
          sites: Sequence[str] = ("map",)) -> dict:
    return task(sites=list(sites), start_url=start_url, intent_template=intent_template, values=values, eval=ev,
                sequence=sequence)


# --- reference steps --------------------------------------------------------------------------------

def _open(obj: Located) -> list[dict]:
    """Search the name, open its page."""
    return [type_text("searchbox", "Search", obj.name, enter=True), click("link", obj.name)]


def _near_search(category: str, anchor: Located) -> list[dict]:
    return [type_text("searchbox", "Search", f"{PLURAL.get(category, category)} near {anchor.name}", enter=True)]


# --- information: travel ----------------------------------------------------------------------------

def t6000_travel_time(db, rng):
    tpl = "How long does it take to {{verb}} from {{a}} to {{b}}?"
    out = []
    for mode in ("car", "bicycle", "foot"):
        for a, b in _pairs(rng, landmarks(), 3, max_km=8 if mode == "foot" else 30):
            r = route_between(a, b, mode)
            out.append(_task(tpl, {"verb": VERB[mode], "a": a.name, "b": b.name},
                             string_eval(must_include=[r.time_text]),
                             directions_steps(a, b, mode) + [stop(r.time_text)]))
    return pick(rng, out, N + 2)


def t6001_travel_distance(db, rng):
    tpl = "What is the {{mode}} route distance from {{a}} to {{b}}, in km?"
    out = []
    for mode in ("car", "bicycle", "foot"):
        for a, b in _pairs(rng, local_places(), 3, max_km=25):
            r = route_between(a, b, mode)
            number = f"{r.distance_km:.1f}"
            out.append(_task(tpl, {"mode": {"car": "driving", "bicycle": "cycling", "foot": "walking"}[mode],
                                   "a": a.name, "b": b.name},
                             string_eval(must_include=[number]),
                             directions_steps(a, b, mode) + [stop(r.distance_text)]))
    return pick(rng, out, N + 2)


def t6002_city_to_city(db, rng):
    tpl = "How far is it to drive from {{a}} to {{b}}, and how long does it take?"
    towns = [t for t in world.TOWNS if not t.parent and findable(t)]
    out = []
    for a, b in _pairs(rng, towns, N, min_km=30):
        r = route_between(a, b, "car")
        out.append(_task(tpl, {"a": a.name, "b": b.name},
                         string_eval(must_include=[f"{r.distance_km:.1f}", r.time_text]),
                         directions_steps(a, b, "car") + [stop(f"{r.distance_text}, {r.time_text}")]))
    return out


def t6003_walk_vs_drive(db, rng):
    tpl = "How many minutes longer is walking than driving from {{a}} to {{b}}?"
    out = []
    for a, b in _pairs(rng, landmarks(), N, max_km=6):
        diff = str(_minutes(route_between(a, b, "foot")) - _minutes(route_between(a, b, "car")))
        seq = directions_steps(a, b, "car") + [click("link", "Foot"), stop(diff)]
        out.append(_task(tpl, {"a": a.name, "b": b.name}, string_eval(must_include=[diff]), seq))
    return out


def t6004_closer_by_car(db, rng):
    tpl = "Which is the shorter drive from {{origin}}: {{x}} or {{y}}?"
    out = []
    places = landmarks()
    for _ in range(300):
        if len(out) >= N:
            break
        origin, x, y = rng.sample(places, 3)
        dx, dy = route_between(origin, x, "car").distance_km, route_between(origin, y, "car").distance_km
        if abs(dx - dy) < 0.15:  # the page's one-decimal distances differ
            continue
        best = x if dx < dy else y
        out.append(_task(tpl, {"origin": origin.name, "x": x.name, "y": y.name}, string_eval(must_include=[best.name]),
                         two_routes_steps(origin, x, y) + [stop(best.name)]))
    return out


def t6005_two_leg_trip(db, rng):
    tpl = ("I walk from {{a}} to {{b}}, then drive from {{b}} to {{c}}. How many minutes does the whole trip take "
           "(each leg's time as the map shows it)?")
    out = []
    places = landmarks()
    for _ in range(300):
        if len(out) >= N:
            break
        a, b, c = rng.sample(places, 3)
        if world.distance_km(a, b) > 5:
            continue
        total = str(_minutes(route_between(a, b, "foot")) + _minutes(route_between(b, c, "car")))
        seq = (directions_steps(a, b, "foot") + clear_and_type("textbox", "From", b.name) +
               clear_and_type("textbox", "To", c.name, enter=True) + [click("link", "Car"), stop(total)])
        out.append(_task(tpl, {"a": a.name, "b": b.name, "c": c.name}, string_eval(must_include=[total]), seq))
    return out


def t6006_bike_time_to_town(db, rng):
    tpl = "How long would it take to cycle from {{place}} to the centre of {{town}}?"
    towns = [t for t in world.TOWNS if t.parent and findable(t)]
    out = []
    for place in pick(rng, landmarks(), 20):
        town = rng.choice([t for t in towns if t.name != place.town])
        r = route_between(place, town, "bicycle")
        out.append(_task(tpl, {"place": place.name, "town": town.name}, string_eval(must_include=[r.time_text]),
                         directions_steps(place, town, "bicycle") + [stop(r.time_text)]))
    return out[:N]


def t6007_reachable_within(db, rng):
    tpl = "Can I get from {{a}} to {{b}} {{by}} in under {{limit}} minutes? Answer Yes or No."
    out = []
    for mode in ("car", "bicycle", "foot"):
        for a, b in _pairs(rng, landmarks(), 3, max_km=10):
            minutes = _minutes(route_between(a, b, mode))
            limit = max(2, minutes + rng.choice((-7, -3, 4, 9)))
            if limit == minutes:
                continue
            answer = "Yes" if minutes < limit else "No"
            out.append(_task(tpl, {"a": a.name, "b": b.name, "by": BY[mode], "limit": limit},
                             string_eval(exact=answer), directions_steps(a, b, mode) + [stop(answer)]))
    return pick(rng, out, N)


def t6008_fastest_mode_gap(db, rng):
    tpl = "From {{a}} to {{b}}, how much time does cycling save compared with walking, in minutes?"
    out = []
    for a, b in _pairs(rng, local_places(), N, max_km=8):
        gap = str(_minutes(route_between(a, b, "foot")) - _minutes(route_between(a, b, "bicycle")))
        seq = directions_steps(a, b, "bicycle") + [click("link", "Foot"), stop(gap)]
        out.append(_task(tpl, {"a": a.name, "b": b.name}, string_eval(must_include=[gap]), seq))
    return out


# --- information: places ----------------------------------------------------------------------------

def t6010_nearest(db, rng):
    tpl = "What is the nearest {{category}} to {{place}}, and on which street is it?"
    out = []
    for place in pick(rng, landmarks(), 40):
        category = rng.choice(NEAR_CATEGORIES)
        found = _nearest(place, category)
        if found is None:
            continue
        street = found[0].street.lstrip("0123456789 ")
        label = CATEGORY_LABELS[category].lower()
        seq = _near_search(category, place) + [click("link", found[0].name), stop(f"{found[0].name}, {street}")]
        out.append(_task(tpl, {"category": label, "place": place.name},
                         string_eval(must_include=[found[0].name, street]), seq))
    return out[:N]


def t6011_nearest_walk_time(db, rng):
    tpl = "Which {{category}} is closest to {{place}} as the crow flies, and how long is the walk there?"
    out = []
    for place in pick(rng, landmarks(), 40):
        category = rng.choice(NEAR_CATEGORIES)
        found = _nearest(place, category)
        if found is None:
            continue
        r = route_between(place, found[0], "foot")
        seq = _near_search(category, place) + directions_steps(place, found[0], "foot") + [
            stop(f"{found[0].name}, {r.time_text}")]
        out.append(_task(tpl, {"category": CATEGORY_LABELS[category].lower(), "place": place.name},
                         string_eval(must_include=[found[0].name, r.time_text]), seq))
    return out[:N]


def t6012_nearest_distance(db, rng):
    tpl = ("How far in a straight line is the nearest {{category}} from {{place}}? Give its name, the distance in km "
           "and its ZIP code.")
    out = []
    for place in pick(rng, local_places(), 60):
        category = rng.choice(NEAR_CATEGORIES)
        found = _nearest(place, category)
        if found is None:
            continue
        km, zip_code = f"{found[1]:.1f}", found[0].postcode
        seq = _near_search(category, place) + [click("link", found[0].name),
                                               stop(f"{found[0].name}, {km} km, {zip_code}")]
        out.append(_task(tpl, {"category": CATEGORY_LABELS[category].lower(), "place": place.name},
                         string_eval(must_include=[found[0].name, km, zip_code]), seq))
    return out[:N]


def t6013_coordinates(db, rng):
    tpl = "What are the coordinates (latitude, longitude) of {{place}}?"
    out = []
    for p in pick(rng, local_places(), N):
        lat, lon = format_coord(p.lat), format_coord(p.lon)
        out.append(_task(tpl, {"place": p.name}, string_eval(must_include=[lat, lon]),
                         _open(p) + [stop(f"{lat}, {lon}")]))
    return out


def t6014_postcode(db, rng):
    tpl = "What is the ZIP code of {{place}}?"
    places = [p for p in world.PLACES if findable(p)]
    return [_task(tpl, {"place": p.name}, string_eval(exact=p.postcode), _open(p) + [stop(p.postcode)])
            for p in pick(rng, places, N)]


def t6015_street_address(db, rng):
    tpl = "What is the street address of {{place}}?"
    places = [p for p in local_places() if p.street[:1].isdigit()]
    return [_task(tpl, {"place": p.name}, string_eval(must_include=[p.street]), _open(p) + [stop(p.street)])
            for p in pick(rng, places, N)]


def t6016_count_in_town(db, rng):
    tpl = "How many {{category}} does the map list in {{town}}?"
    out = []
    for town in world.TOWNS:
        for category in ("restaurant", "cafe", "pharmacy", "museum", "hospital"):
            n = len(world.places_in(town.name, category))
            if n >= 2 and findable(town):
                out.append(_task(tpl, {"category": PLURAL[category], "town": town.name},
                                 string_eval(must_include=[str(n)]), _open(town) + [stop(str(n))]))
    return pick(rng, out, N)


def t6017_list_in_town(db, rng):
    tpl = "List all {{category}} in {{town}} on the map."
    out = []
    for town in world.TOWNS:
        for category in ("restaurant", "cafe", "bank", "hotel", "library", "supermarket"):
            found = world.places_in(town.name, category)
            if 2 <= len(found) <= 5 and findable(town):
                names = [p.name for p in found]
                out.append(_task(tpl, {"category": PLURAL[category], "town": town.name},
                                 string_eval(must_include=names), _open(town) + [stop(", ".join(names))]))
    return pick(rng, out, N)


def t6018_opened_year(db, rng):
    tpl = "According to the map, in which year did {{place}} open?"
    places = [p for p in landmarks() if p.category not in ("university", "school")]
    return [_task(tpl, {"place": p.name}, string_eval(must_include=[str(p.founded)]), _open(p) + [stop(str(p.founded))])
            for p in pick(rng, places, N)]


def t6019_architect(db, rng):
    tpl = "Who was the architect of {{place}}, according to its map page?"
    places = [p for p in world.PLACES if p.architect and findable(p)]
    return [_task(tpl, {"place": p.name}, string_eval(must_include=[p.architect]), _open(p) + [stop(p.architect)])
            for p in pick(rng, places, N)]


def t6020_capacity(db, rng):
    tpl = "What capacity does the map give for {{place}}?"
    places = [p for p in world.PLACES if p.capacity and p.category in ("stadium", "theatre", "hospital", "hotel")
              and findable(p)]
    return [_task(tpl, {"place": p.name}, string_eval(must_include=[str(p.capacity)]),
                  _open(p) + [stop(str(p.capacity))]) for p in pick(rng, places, N)]


def t6021_phone(db, rng):
    tpl = "What phone number does the map list for {{place}}?"
    out = []
    for p in pick(rng, local_places(), 40):
        phone = tags_of(db, p.id).get("phone")
        if phone:
            out.append(_task(tpl, {"place": p.name}, string_eval(must_include=[phone]), _open(p) + [stop(phone)]))
    return out[:N]


def t6022_opening_hours(db, rng):
    tpl = "What are the opening hours of {{place}} according to the map?"
    out = []
    for p in pick(rng, local_places(), 40):
        hours = tags_of(db, p.id).get("opening_hours")
        if hours:
            out.append(_task(tpl, {"place": p.name}, string_eval(must_include=[hours]), _open(p) + [stop(hours)]))
    return out[:N]


def t6023_open_notes(db, rng):
    tpl = "How many open notes are there on {{place}}'s map page?"
    noted = [r["place_id"] for r in rows(db, "SELECT DISTINCT place_id FROM map_notes ORDER BY place_id")]
    out = []
    for pid in pick(rng, noted, len(noted)):
        p = world.place_by_id(pid)
        if findable(p):
            n = str(sum(1 for note in notes_of(db, pid) if note["status"] == "open"))
            out.append(_task(tpl, {"place": p.name}, string_eval(must_include=[n]), _open(p) + [stop(n)]))
    return out[:N]


def t6024_town_population(db, rng):
    tpl = "What population does the map give for {{town}}?"
    towns = [t for t in world.TOWNS if findable(t)]
    return [_task(tpl, {"town": t.name}, string_eval(must_include=[str(t.population)]),
                  _open(t) + [stop(str(t.population))]) for t in pick(rng, towns, N)]


# --- URL checks ------------------------------------------------------------------------------------

def t6030_show_route_url(db, rng):
    tpl = "Show me the route {{by}} from {{a}} to {{b}}."
    out = []
    for mode in ("car", "bicycle", "foot"):
        for a, b in _pairs(rng, local_places(), 3, max_km=15):
            url = MAP + directions_url(a, b, ENGINE_OF[mode])
            out.append(_task(tpl, {"by": BY[mode], "a": a.name, "b": b.name}, url_eval(url),
                             directions_steps(a, b, mode) + [stop(DONE)]))
    return pick(rng, out, N)


def t6031_search_near_url(db, rng):
    tpl = 'Search the map for "{{query}}".'
    out = []
    for p in pick(rng, landmarks(), N):
        query = f"{PLURAL[rng.choice(NEAR_CATEGORIES)]} near {p.name}"
        out.append(_task(tpl, {"query": query}, url_eval(f"{MAP}/search?query={quote(query)}"),
                         [type_text("searchbox", "Search", query, enter=True), stop(DONE)]))
    return out


def t6032_open_place_url(db, rng):
    tpl = "Open the map page of {{place}}."
    return [_task(tpl, {"place": p.name}, url_eval(MAP + element_path(p)), _open(p) + [stop(DONE)])
            for p in pick(rng, local_places(), N)]


def t6033_open_nearest_url(db, rng):
    tpl = "Open the map page of the {{category}} nearest to {{place}}."
    out = []
    for place in pick(rng, landmarks(), 40):
        category = rng.choice(NEAR_CATEGORIES)
        found = _nearest(place, category)
        if found is not None:
            out.append(_task(tpl, {"category": CATEGORY_LABELS[category].lower(), "place": place.name},
                             url_eval(MAP + element_path(found[0])),
                             _near_search(category, place) + [click("link", found[0].name), stop(DONE)]))
    return out[:N]


# --- page checks: a route on screen, and edits -------------------------------------------------------


def t6040_get_directions(db, rng):
    tpl = "Get directions {{by}} from {{a}} to {{b}}."
    out = []
    for mode in ("car", "bicycle", "foot"):
        for a, b in _pairs(rng, landmarks(), 3, max_km=20):
            out.append(_task(tpl, {"by": BY[mode], "a": a.name, "b": b.name}, route_on_screen(a, b, mode),
                             directions_steps(a, b, mode) + [stop(DONE)]))
    return pick(rng, out, N_STATE)


def t6041_directions_to_nearest(db, rng):
    tpl = "Show the walking route from {{place}} to the nearest {{category}}."
    out = []
    for place in pick(rng, landmarks(), 40):
        category = rng.choice(NEAR_CATEGORIES)
        found = _nearest(place, category)
        if found is not None:
            out.append(_task(tpl, {"place": place.name, "category": CATEGORY_LABELS[category].lower()},
                             route_on_screen(place, found[0], "foot"),
                             _near_search(category, place) + directions_steps(place, found[0], "foot") + [stop(DONE)]))
    return out[:N_STATE]


def _saved_names(db: sqlite3.Connection) -> set[str]:
    return {world.place_by_id(s["place_id"]).name for s in saved_places(db)}


def t6042_save_place(db, rng):
    tpl = "Save {{place}} to My places."
    saved = _saved_names(db)
    out = []
    for p in pick(rng, [p for p in local_places() if p.name not in saved], N_STATE):
        ev = html_eval([target(f"{MAP}/my_places", "", must_include=[p.name])])
        out.append(_task(tpl, {"place": p.name}, ev, _open(p) + [click("button", "Save to My places"), stop(DONE)]))
    return out


def _saved_locator(name: str) -> str:
    """'saved' / 'not saved': whether My places lists a place named exactly `name`."""
    return (f"[...document.querySelectorAll('#my_places li > a')].some(a => a.textContent === {json.dumps(name)}) "
            "? 'saved' : 'not saved'")


def t6043_remove_saved(db, rng):
    tpl = "Remove {{place}} from My places."
    out = []
    for name in pick(rng, sorted(_saved_names(db)), N_STATE):
        ev = html_eval([target(f"{MAP}/my_places", _saved_locator(name), exact="not saved")])
        out.append(_task(tpl, {"place": name}, ev,
                         [click("link", "My places"), click("button", f"Remove {name}"), stop(DONE)]))
    return out


def t6044_save_nearest(db, rng):
    tpl = "Find the {{category}} nearest to {{place}} and save it to My places."
    saved = _saved_names(db)
    out = []
    for place in pick(rng, landmarks(), 40):
        category = rng.choice(NEAR_CATEGORIES)
        found = _nearest(place, category)
        if found is None or found[0].name in saved:
            continue
        ev = html_eval([target(f"{MAP}/my_places", "", must_include=[found[0].name])])
        seq = _near_search(category, place) + [click("link", found[0].name), click("button", "Save to My places"),
                                               stop(DONE)]
        out.append(_task(tpl, {"category": CATEGORY_LABELS[category].lower(), "place": place.name}, ev, seq))
    return out[:N_STATE]


_NOTE_TEXTS = ("The side entrance is closed on weekends.", "There is a new bike rack by the door.",
               "The sign now says Open Late.", "Wheelchair ramp at the back of the building.",
               "Construction blocks the sidewalk in front.", "The bus stop moved to the next corner.",
               "Free public restrooms inside.", "Street parking is metered until 6 pm.")


def t6045_add_note(db, rng):
    tpl = 'Add a note to {{place}} on the map saying "{{text}}".'
    out = []
    for p in pick(rng, local_places(), N_STATE):
        text = rng.choice(_NOTE_TEXTS)
        ev = html_eval([target(MAP + element_path(p), NOTES, must_include=[text])])
        seq = _open(p) + [type_text("textbox", "Note", text, enter=False), click("button", "Add note"), stop(DONE)]
        out.append(_task(tpl, {"place": p.name, "text": text}, ev, seq))
    return out


def t6046_note_travel_time(db, rng):
    tpl = ("Add a note to {{b}} giving the walking time from {{a}} as the map shows it "
           '(for example "Walk from X: 0:12").')
    out = []
    for a, b in _pairs(rng, landmarks(), N_STATE, max_km=5):
        time_text = route_between(a, b, "foot").time_text
        ev = html_eval([target(MAP + element_path(b), NOTES, must_include=[time_text])])
        seq = (directions_steps(a, b, "foot") + _open(b) +
               [type_text("textbox", "Note", f"Walk from {a.name}: {time_text}", enter=False),
                click("button", "Add note"), stop(DONE)])
        out.append(_task(tpl, {"a": a.name, "b": b.name}, ev, seq))
    return out


def t6047_resolve_note(db, rng):
    tpl = 'Resolve the open note "{{body}}" on {{place}}.'
    out = []
    for note in rows(db, "SELECT * FROM map_notes WHERE status = 'open' ORDER BY id"):
        p = world.place_by_id(note["place_id"])
        same = [n for n in notes_of(db, p.id) if n["body"] == note["body"] and n["status"] == "open"]
        if not findable(p) or len(same) != 1:
            continue
        ev = html_eval([target(f"{MAP}/note/{note['id']}", NOTE_STATUS, must_include=["resolved"])])
        seq = _open(p) + [click("link", f"Note #{note['id']}"), click("button", "Resolve"), stop(DONE)]
        out.append(_task(tpl, {"body": note["body"], "place": p.name}, ev, seq))
    return pick(rng, out, N_STATE)


def _tag_task(db: sqlite3.Connection, rng: random.Random, tpl: str, key: str, values: Sequence[str],
              slot: str) -> list[dict]:
    """Set tag `key` of a place (through its Edit page) to a new value, checked on the place page."""
    out = []
    for p in pick(rng, local_places(), N_STATE):
        current = tags_of(db, p.id).get(key)
        value = rng.choice([v for v in values if v != current])
        locator = f"document.querySelector('#tag-{key} td').outerText"
        ev = html_eval([target(MAP + element_path(p), locator, exact=value)])
        if key == "wheelchair":
            edit = [click("radio", value)]
        else:
            edit = clear_and_type("textbox", TAG_LABELS[key], value)
        seq = _open(p) + [click("link", f"Edit {p.name}")] + edit + [click("button", "Save"), stop(DONE)]
        out.append(_task(tpl, {"place": p.name, slot: value}, ev, seq))
    return out


def t6048_edit_phone(db, rng):
    phones = [f"+1 412-555-{n:04d}" for n in (1234, 2046, 3187, 4410, 5523, 6789, 7001, 8642)]
    return _tag_task(db, rng, "Change the phone number of {{place}} on the map to {{phone}}.", "phone", phones,
                     "phone")


def t6049_edit_hours(db, rng):
    hours = ("Mo-Fr 08:00-18:00", "Mo-Su 10:00-22:00", "Tu-Sa 11:00-19:00", "Mo-Fr 07:30-15:30; Sa 09:00-13:00")
    return _tag_task(db, rng, "Set the opening hours of {{place}} to {{hours}}.", "opening_hours", hours, "hours")


def t6050_edit_website(db, rng):
    urls = ("https://visit-pittsburgh.example.org", "https://three-rivers.example.org",
            "https://steel-city.example.org")
    return _tag_task(db, rng, "Set the website of {{place}} to {{url}}.", "website", urls, "url")


def t6051_edit_wheelchair(db, rng):
    return _tag_task(db, rng, 'Mark {{place}} as wheelchair accessible: "{{access}}".', "wheelchair",
                     WHEELCHAIR_VALUES, "access")


def t6052_save_town_category(db, rng):
    tpl = "Save every {{category}} in {{town}} to My places."
    saved = _saved_names(db)
    out = []
    for town in world.TOWNS:
        for category in ("cafe", "pharmacy", "bank", "hotel", "library", "supermarket"):
            found = world.places_in(town.name, category)
            if not 2 <= len(found) <= 3 or not findable(town) or any(p.name in saved for p in found):
                continue
            ev = html_eval([target(f"{MAP}/my_places", MY_PLACES, must_include=[p.name for p in found])])
            seq = []
            for p in found:
                seq += [type_text("searchbox", "Search", f"{PLURAL[category]} in {town.name}", enter=True),
                        click("link", p.name), click("button", "Save to My places")]
            out.append(_task(tpl, {"category": PLURAL[category], "town": town.name}, ev, seq + [stop(DONE)]))
    return pick(rng, out, N_STATE)


# --- map + shop admin ------------------------------------------------------------------------------

def _town_named(city: str) -> Optional[world.Town]:
    town = next((t for t in world.TOWNS if t.name == city and not t.parent), None)
    return town if town is not None and findable(town) else None


def t6060_drive_to_customer_city(db, rng):
    tpl = "How long does it take to drive from {{place}} to the city where our shop customer {{customer}} lives?"
    customers = rows(db, "SELECT c.firstname, c.lastname, a.city FROM shop_customers c JOIN shop_addresses a ON "
                         "a.customer_id = c.id AND a.is_default = 1 WHERE c.id <= ? ORDER BY c.id", (BASE_CUSTOMERS,))
    local = [c for c in customers if _town_named(c["city"])]
    out = []
    for place in pick(rng, landmarks(), 3 * N):
        c = local[len(out) % len(local)]
        name, town = f"{c['firstname']} {c['lastname']}", _town_named(c["city"])
        if world.distance_km(place, town) < 3:
            continue
        r = route_between(place, town, "car")
        seq = find_customer(name) + [click("link", f"Edit {name}"), tab_focus(1)] + directions_steps(place, town, "car")
        out.append(_task(tpl, {"place": place.name, "customer": name}, string_eval(must_include=[r.time_text]),
                         seq + [stop(r.time_text)], start_url=f"{ADMIN} |AND| {MAP}", sites=("map", "shopping_admin")))
        if len(out) >= N:
            break
    return out


def t6061_distance_to_order_city(db, rng):
    tpl = "What is the driving distance from {{place}} to the city that shop order #{{order}} was shipped to, in km?"
    orders = [o for o in rows(db, "SELECT * FROM shop_orders ORDER BY id") if _town_named(o["ship_city"])]
    out = []
    for o in pick(rng, orders, len(orders)):
        place, town = rng.choice(landmarks()), _town_named(o["ship_city"])
        if world.distance_km(place, town) < 3:
            continue
        r = route_between(place, town, "car")
        seq = find_order(o) + [tab_focus(1)] + directions_steps(place, town, "car") + [stop(r.distance_text)]
        out.append(_task(tpl, {"place": place.name, "order": o["increment_id"]},
                         string_eval(must_include=[f"{r.distance_km:.1f}"]), seq, start_url=f"{ADMIN} |AND| {MAP}",
                         sites=("map", "shopping_admin")))
        if len(out) >= N:
            break
    return out


# Held out: every instance of these goes to the test split (information-seeking and state-changing).
TEST_ONLY_TEMPLATES = {6005, 6008, 6012, 6020, 6033, 6046, 6051, 6052, 6061}

TEMPLATES = [
    (6000, t6000_travel_time),
    (6001, t6001_travel_distance),
    (6002, t6002_city_to_city),
    (6003, t6003_walk_vs_drive),
    (6004, t6004_closer_by_car),
    (6005, t6005_two_leg_trip),
    (6006, t6006_bike_time_to_town),
    (6007, t6007_reachable_within),
    (6008, t6008_fastest_mode_gap),
    (6010, t6010_nearest),
    (6011, t6011_nearest_walk_time),
    (6012, t6012_nearest_distance),
    (6013, t6013_coordinates),
    (6014, t6014_postcode),
    (6015, t6015_street_address),
    (6016, t6016_count_in_town),
    (6017, t6017_list_in_town),
    (6018, t6018_opened_year),
    (6019, t6019_architect),
    (6020, t6020_capacity),
    (6021, t6021_phone),
    (6022, t6022_opening_hours),
    (6023, t6023_open_notes),
    (6024, t6024_town_population),
    (6030, t6030_show_route_url),
    (6031, t6031_search_near_url),
    (6032, t6032_open_place_url),
    (6033, t6033_open_nearest_url),
    (6040, t6040_get_directions),
    (6041, t6041_directions_to_nearest),
    (6042, t6042_save_place),
    (6043, t6043_remove_saved),
    (6044, t6044_save_nearest),
    (6045, t6045_add_note),
    (6046, t6046_note_travel_time),
    (6047, t6047_resolve_note),
    (6048, t6048_edit_phone),
    (6049, t6049_edit_hours),
    (6050, t6050_edit_website),
    (6051, t6051_edit_wheelchair),
    (6052, t6052_save_town_category),
    (6060, t6060_drive_to_customer_city),
    (6061, t6061_distance_to_order_city),
]
