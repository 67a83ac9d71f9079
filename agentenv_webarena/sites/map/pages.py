"""The map's pages: home, search, place / town pages, directions, My places, notes and the tag editor.

Owns every handler (`fn(ctx, **path_params) -> Response`, bound by `map.app` through
`sites.common.page`) and their markup: plain server-rendered HTML whose forms work without scripts,
with OSM's element ids and classes where WebArena's checks read them (`div#content`, `#sidebar_content`,
`select.routing_engines`, inputs `route_from` / `route_to`). Bad input gets a 4xx page that says what was
wrong; an unknown element gets a 404 page saying so.
"""
from __future__ import annotations

import re
from typing import Optional
from urllib.parse import quote

from starlette.responses import Response

from agentenv_webarena.sites import world
from agentenv_webarena.sites.common import RequestContext, esc, html_page, redirect, to_int
from agentenv_webarena.sites.map import entities, model
from agentenv_webarena.sites.map.roads import ENGINES, MODE_LABELS, node_key, route
from agentenv_webarena.sites.map.search import (
    CATEGORY_LABELS,
    Located,
    RouteError,
    display_name,
    element_path,
    format_coord,
    lookup,
    parse_route,
    route_param,
    search,
    snap,
    town_by_id,
)
from agentenv_webarena.sites.map.states import STATES, State, state_by_id, state_for_query, state_id, towns_in

__all__ = ["home", "search_page", "element_page", "directions", "my_places", "save_place", "remove_place",
           "add_note", "note_page", "resolve_note", "edit_tags", "not_found", "error_page", "DEFAULT_ENGINE",
           "MODE_LINKS",
           "directions_url"]

DEFAULT_ENGINE = "fossgis_osrm_car"
MODE_LINKS = {"fossgis_osrm_car": "Car", "fossgis_osrm_bike": "Bicycle", "fossgis_osrm_foot": "Foot"}
_PHONE = re.compile(r"^[0-9+()\- ]{3,30}$")
_MAX_NOTE = 1000


def _page(title: str, main: str, *, query: str = "", status_code: int = 200) -> Response:
    header = ('<header><a href="/" class="brand">OpenStreetMap</a>'
              '<form action="/search" method="get" role="search">'
              f'<input type="search" name="query" aria-label="Search" placeholder="Search" value="{esc(query)}">'
              '<button type="submit">Search</button></form>'
              '<nav><a href="/directions">Directions</a> <a href="/my_places">My places</a></nav></header>')
    return html_page(f"{title} | OpenStreetMap", f'{header}<div id="content">{main}</div>', status_code=status_code,
                     site="map")


def error_page(title: str, text: str, status_code: int, *, query: str = "") -> Response:
    return _page(title, f'<div id="sidebar_content"><h2>{esc(title)}</h2><p class="error">{esc(text)}</p></div>',
                 query=query, status_code=status_code)


def not_found(text: str) -> Response:
    """A 404 page saying what does not exist."""
    return error_page("Not found", text, 404)


def directions_url(a: Optional[Located], b: Optional[Located], engine: str = DEFAULT_ENGINE) -> str:
    """/directions?engine=...&route=lat1%2Clon1%3Blat2%2Clon2 (OSM's shape)."""
    return f"/directions?engine={engine}&route={quote(route_param(a, b), safe='')}"


def home(ctx: RequestContext) -> Response:
    """The front page: search box, links, and the towns of the map."""
    towns = "".join(f'<li><a href="{element_path(t)}">{esc(t.name)}</a></li>' for t in world.TOWNS if not t.parent)
    main = ('<div id="sidebar_content"><h1>Welcome to OpenStreetMap</h1>'
            "<p>Search for a place, get directions by car, bicycle or foot, or browse a town.</p>"
            f"<h2>Towns and cities</h2><ul class=\"towns\">{towns}</ul></div>")
    return _page("Home", main)


def _hit_line(hit) -> str:
    obj = hit.obj
    if isinstance(obj, world.Place):
        what = f"{CATEGORY_LABELS[obj.category]}, {obj.address}"
    else:
        what = f"{obj.kind.capitalize()}, {display_name(obj)}"
    away = f' <span class="distance">{hit.km:.1f} km away</span>' if hit.km is not None else ""
    return (f'<li class="search_results_entry"><a class="set_position" href="{element_path(obj)}">{esc(obj.name)}</a>'
            f' <span class="details">{esc(what)}</span>{away}</li>')


def search_page(ctx: RequestContext) -> Response:
    """GET /search?query=...: results as links (names, addresses, distances for "X near Y"); as on OSM the page
    answers 200 when nothing matches and says so, and an empty query shows how to search."""
    query = ctx.q.get("query", "")
    if not query.strip():
        return _page("Search", '<div id="sidebar_content"><h2>Search</h2><p>Type a place, an address, or e.g. '
                     "'pharmacy near Carnegie Mellon University'.</p></div>")
    result = search(query)
    heading = "Search results"
    what = result.brand or (CATEGORY_LABELS[result.category] if result.category else "")
    if result.kind == "near" and result.anchor is not None:
        heading = f"{what} near {result.anchor.name}, nearest first"
    elif result.kind == "in" and result.anchor is not None:
        heading = f"{what} in {result.anchor.name} ({len(result.hits)})"
    items = "".join(_hit_line(h) for h in result.hits[:50])
    state = state_for_query(query) if result.kind == "name" else None
    if state is not None:  # a state's boundary ranks first, as Nominatim ranks administrative areas
        items = (f'<li class="search_results_entry"><a class="set_position" href="/relation/{state_id(state)}">'
                 f'{esc(state.name)}</a> <span class="details">State, United States</span></li>') + items
    none = result.message if result.message.startswith("No results found") else f"No results found. {result.message}"
    body = (f'<ul class="search_results results-list">{items}</ul>' if items else
            f'<p class="search_results_entry">{esc(none.strip())}</p>')
    return _page(f"Search: {query}", f'<div id="sidebar_content"><h2>{esc(heading)}</h2>{body}</div>', query=query)


def _row(label: str, value: object, row_id: str = "") -> str:
    attr = f' id="{row_id}"' if row_id else ""
    return f"<tr{attr}><th>{esc(label)}</th><td>{esc(value)}</td></tr>"


def _place(kind: str, element_id: int) -> tuple[Optional[world.Place], Optional[Response]]:
    place = entities.place_by_id(element_id)
    if place is None:
        return None, not_found(f"There is no {kind} {element_id} on the map.")
    if place.osm_type != kind:
        return None, not_found(f"There is no {kind} {element_id}: it is a {place.osm_type} "
                               f"(/{place.osm_type}/{element_id}).")
    return place, None


def element_page(ctx: RequestContext, kind: str, id: int) -> Response:
    """GET /node/<id>, /way/<id> (a place) or /relation/<id> (a town)."""
    kind, element_id = kind, id
    if kind == "relation":
        town, state = town_by_id(element_id), state_by_id(element_id)
        if state is not None:
            return _state_page(state)
        return not_found(f"There is no relation {element_id} on the map.") if town is None else _town_page(town)
    place, error = _place(kind, element_id)
    if error:
        return error
    tags = model.tags_of(ctx.conn, place.id)
    notes = model.notes_of(ctx.conn, place.id)
    saved = ctx.conn.execute("SELECT 1 FROM map_saved WHERE place_id = ?", (place.id,)).fetchone() is not None
    rows = [_row("Category", CATEGORY_LABELS[place.category]), _row("Address", place.address),
            _row("Coordinates", f"{format_coord(place.lat)}, {format_coord(place.lon)}", "coordinates"),
            _row("Opened" if place.category not in ("university", "school") else "Founded", place.founded)]
    if place.capacity is not None:
        rows.append(_row("Capacity", f"{place.capacity} {world.CAPACITY_UNITS.get(place.category, '')}".strip()))
    rows += [_row(label, value) for label, value in (("Architect", place.architect), ("Operator", place.operator))
             if value]
    rows += [_row(model.TAG_LABELS[k], tags[k], f"tag-{k}") for k in model.TAG_KEYS if k in tags]
    save = (f'<p id="saved-status">Saved in My places.</p><form method="post" action="/my_places/{place.id}/remove">'
            '<button type="submit">Remove from My places</button></form>' if saved else
            f'<form method="post" action="/my_places/add"><input type="hidden" name="place_id" value="{place.id}">'
            '<button type="submit">Save to My places</button></form>')
    note_items = "".join(
        f'<li class="note note-{n["status"]}" id="note-{n["id"]}"><a href="/note/{n["id"]}">Note #{n["id"]}</a> '
        f'({"open" if n["status"] == "open" else "resolved"}): <span class="note-body">{esc(n["body"])}</span> '
        f'<span class="note-meta">by {esc(n["author"])}, {esc(n["created_at"])}</span></li>' for n in notes)
    main = (f'<div id="sidebar_content"><h2 class="place-name">{esc(place.name)}</h2>'
            f'<p class="place-category">{esc(CATEGORY_LABELS[place.category])} in '
            f'<a href="{element_path(world.town_by_name(place.town))}">{esc(place.town)}</a></p>'
            f'<p class="place-description">{esc(place.description)}</p>'
            f'<table class="place-details"><tbody>{"".join(rows)}</tbody></table>'
            f'<p><a href="{esc(directions_url(place, None))}">Directions from here</a> '
            f'<a href="{esc(directions_url(None, place))}">Directions to here</a> '
            f'<a href="/{place.osm_type}/{place.id}/edit">Edit {esc(place.name)}</a></p>{save}'
            f'<section id="notes"><h3>Notes ({len(notes)})</h3><ul>{note_items}</ul>'
            f'<form method="post" action="/{place.osm_type}/{place.id}/note"><label for="note_text">Note</label> '
            '<textarea id="note_text" name="text" rows="3"></textarea> <button type="submit">Add note</button>'
            '</form></section></div>')
    return _page(place.name, main)


def _town_page(town: world.Town) -> Response:
    places = world.places_in(town.name)
    items = "".join(f'<li><a href="{element_path(p)}">{esc(p.name)}</a> '
                    f'<span class="details">{esc(CATEGORY_LABELS[p.category])}</span></li>' for p in places)
    kind = f"Neighbourhood of {town.parent}" if town.parent else town.kind.capitalize()
    rows = [_row("Type", kind), _row("County", town.county), _row("State", town.state),
            _row("Population", town.population), _row("Founded", town.founded),
            _row("Coordinates", f"{format_coord(town.lat)}, {format_coord(town.lon)}", "coordinates")]
    main = (f'<div id="sidebar_content"><h2 class="place-name">{esc(town.name)}</h2>'
            f'<table class="place-details"><tbody>{"".join(rows)}</tbody></table>'
            f'<p><a href="{esc(directions_url(None, town))}">Directions to here</a></p>'
            f'<h3>Places in {esc(town.name)} ({len(places)})</h3><ul class="town-places">{items}</ul></div>')
    return _page(town.name, main)


def _state_page(state: State) -> Response:
    """A state's boundary relation: its tags, the states it borders and the map's towns inside it."""
    known = {s.name: s for s in STATES}
    neighbours = "".join(f'<li data-state="{esc(n)}">'
                         + (f'<a href="/relation/{state_id(known[n])}">{esc(n)}</a>' if n in known else esc(n))
                         + "</li>" for n in state.neighbours)
    towns = "".join(f'<li><a href="{element_path(t)}">{esc(t.name)}</a> <span class="details">'
                    f'{esc(t.kind.capitalize())}, {esc(t.county)}</span></li>' for t in towns_in(state))
    rows = [_row("Type", "Boundary: administrative (state)"), _row("admin_level", 4),
            _row("ISO 3166-2", f"US-{state.code}", "state-code"), _row("Capital", state.capital, "state-capital"),
            _row("Country", "United States")]
    main = (f'<div id="sidebar_content"><h2 class="place-name">{esc(state.name)}</h2>'
            f'<table class="place-details"><tbody>{"".join(rows)}</tbody></table>'
            f'<h3>Bordering states ({len(state.neighbours)})</h3><ul id="state-borders">{neighbours}</ul>'
            f'<h3>Towns on this map in {esc(state.name)}</h3>'
            f'<ul class="town-places">{towns or "<li>None</li>"}</ul></div>')
    return _page(state.name, main)


def _resolve(text: str) -> Optional[Located]:
    """A From / To field: a name or address, or "lat, lon"."""
    try:
        point, _ = parse_route(f"{text};")
    except RouteError:
        return lookup(text)
    return snap(*point) if point else None


def _directions_form(engine: str, a_text: str, b_text: str) -> str:
    options = "".join(f'<option value="{key}"{" selected" if key == engine else ""}>{esc(MODE_LABELS[mode])}</option>'
                      for key, mode in ENGINES.items())
    return ('<form method="get" action="/directions" class="directions_form">'
            f'<label for="route_from">From</label> <input type="text" id="route_from" name="route_from" '
            f'value="{esc(a_text)}"> <label for="route_to">To</label> <input type="text" id="route_to" '
            f'name="route_to" value="{esc(b_text)}"> <label for="routing_engine">Mode</label> '
            f'<select id="routing_engine" name="engine" class="routing_engines">{options}</select> '
            '<button type="submit">Go</button></form>')


def directions(ctx: RequestContext) -> Response:
    """GET /directions: the form; with route_from / route_to (the form) geocode and redirect to
    ?engine=...&route=lat1,lon1;lat2,lon2, which shows the fastest route's distance and time."""
    q = ctx.q
    engine = q.get("engine", DEFAULT_ENGINE) or DEFAULT_ENGINE
    if engine not in ENGINES:
        return error_page("Directions", f"Unknown engine {engine!r}; choose one of {', '.join(ENGINES)}.", 400)
    if "route_from" in q or "route_to" in q:
        texts = q.get("route_from", "").strip(), q.get("route_to", "").strip()
        if not all(texts):
            return _page("Directions", _directions_form(engine, *texts) +
                         '<div id="sidebar_content"><p class="error">Enter both From and To.</p></div>',
                         status_code=400)
        ends = [_resolve(t) for t in texts]
        missing = [t for t, e in zip(texts, ends, strict=True) if e is None]
        if missing:
            return _page("Directions", _directions_form(engine, *texts) +
                         f'<div id="sidebar_content"><p class="error">No place found for {esc(missing[0])!s}. '
                         'Try the search box.</p></div>', status_code=404)
        return redirect(directions_url(ends[0], ends[1], engine))
    try:
        a_pt, b_pt = parse_route(q["route"]) if "route" in q else (None, None)
    except RouteError as exc:
        return error_page("Directions", str(exc), 400)
    a, b = (snap(*a_pt) if a_pt else None), (snap(*b_pt) if b_pt else None)
    form = _directions_form(engine, display_name(a) if a else "", display_name(b) if b else "")
    if a is None or b is None:
        return _page("Directions", form + '<div id="sidebar_content"><h2>Directions</h2>'
                     "<p>Enter a start and a destination.</p></div>")
    return _page("Directions", form + _route_panel(a, b, engine))


def _route_panel(a: Located, b: Located, engine: str) -> str:
    modes = " ".join(f'<a href="{esc(directions_url(a, b, key))}"{" aria-current=page" if key == engine else ""}>'
                     f'{label}</a>' for key, label in MODE_LINKS.items())
    head = (f'<div id="sidebar_content"><h2>Directions from {esc(a.name)} to {esc(b.name)}</h2>'
            f'<nav class="modes" aria-label="Mode">{modes}</nav>')
    if a == b:
        return head + '<p class="error">From and To are the same place.</p></div>'
    found = route(node_key(a), node_key(b), ENGINES[engine])
    if found is None:
        return head + f'<p class="error">No route by {MODE_LINKS[engine].lower()} was found.</p></div>'
    steps = "".join(f"<li>Follow {esc(road)} to {esc(to)} ({km:.1f} km)</li>" for road, to, km in found.legs)
    return (head + f'<p>Mode: {MODE_LINKS[engine]}</p><p id="route_distance">Distance: {found.distance_text}</p>'
            f'<p id="route_time">Time: {found.time_text}</p><ol class="route_steps">{steps}</ol></div>')


def my_places(ctx: RequestContext) -> Response:
    """GET /my_places: the saved places, each with a Remove button."""
    saved = model.saved_places(ctx.conn)
    items = []
    for s in saved:
        p = entities.place_by_id(s["place_id"])
        items.append(f'<li data-place-id="{p.id}"><a href="{element_path(p)}">{esc(p.name)}</a> '
                     f'<span class="details">{esc(p.address)}</span> <form method="post" '
                     f'action="/my_places/{p.id}/remove" style="display:inline"><button type="submit" '
                     f'aria-label="Remove {esc(p.name)}">Remove</button></form></li>')
    body = f'<ul id="my_places">{"".join(items)}</ul>' if items else '<ul id="my_places"></ul><p>No saved places.</p>'
    return _page("My places", f'<div id="sidebar_content"><h2>My places ({len(items)})</h2>{body}</div>')


def save_place(ctx: RequestContext) -> Response:
    """POST /my_places/add (place_id): save a place (saving twice keeps one entry)."""
    place_id = to_int(ctx.form.get("place_id"), -1)
    if entities.place_by_id(place_id) is None:
        return error_page("My places", f"place_id {ctx.form.get('place_id')!r} is not a place on the map.", 400)
    ctx.conn.execute("INSERT OR IGNORE INTO map_saved (place_id, saved_at) VALUES (?,?)",
                     (place_id, model.next_timestamp(ctx.conn)))
    return redirect("/my_places")


def remove_place(ctx: RequestContext, id: int) -> Response:
    """POST /my_places/<place id>/remove."""
    place_id = id
    gone = ctx.conn.execute("DELETE FROM map_saved WHERE place_id = ?", (place_id,)).rowcount
    return redirect("/my_places") if gone else not_found(f"Place {place_id} is not in My places.")


def add_note(ctx: RequestContext, kind: str, id: int) -> Response:
    """POST /<node|way>/<id>/note (text): add an open note to a place."""
    place, error = _place(kind, id)
    if error:
        return error
    text = ctx.form.get("text", "").strip()
    if not text or len(text) > _MAX_NOTE:
        return error_page("Add a note", f"A note needs 1 to {_MAX_NOTE} characters of text; got {len(text)}.", 400)
    new_id = ctx.conn.execute("SELECT MAX(id) FROM map_notes").fetchone()[0] + 1
    ctx.conn.execute("INSERT INTO map_notes (id, place_id, body, author, status, created_at) VALUES (?,?,?,?,?,?)",
                     (new_id, place.id, text, "Anonymous", "open", model.next_timestamp(ctx.conn)))
    return redirect(element_path(place))


def note_page(ctx: RequestContext, id: int) -> Response:
    """GET /note/<id>: one note, its place and status, with a Resolve button while open."""
    n = model.note(ctx.conn, id)
    if n is None:
        return not_found(f"There is no note {id}.")
    p = entities.place_by_id(n["place_id"])
    status = "open" if n["status"] == "open" else f"resolved {n['closed_at']}"
    action = (f'<form method="post" action="/note/{n["id"]}/resolve"><button type="submit">Resolve</button></form>'
              if n["status"] == "open" else "")
    main = (f'<div id="sidebar_content"><h2>Note #{n["id"]}</h2><p>On <a href="{element_path(p)}">{esc(p.name)}</a>'
            f'</p><p class="note-body">{esc(n["body"])}</p><p class="note-meta">by {esc(n["author"])}, '
            f'{esc(n["created_at"])}</p><p id="note-status">Status: {esc(status)}</p>{action}</div>')
    return _page(f"Note #{n['id']}", main)


def resolve_note(ctx: RequestContext, id: int) -> Response:
    """POST /note/<id>/resolve: close an open note."""
    note_id = id
    n = model.note(ctx.conn, note_id)
    if n is None:
        return not_found(f"There is no note {note_id}.")
    if n["status"] == "open":
        ctx.conn.execute("UPDATE map_notes SET status = 'closed', closed_at = ? WHERE id = ?",
                         (model.next_timestamp(ctx.conn), note_id))
    return redirect(f"/note/{note_id}")


def _edit_form(place: world.Place, values: dict[str, str], error: str = "") -> str:
    fields = "".join(f'<p><label for="tag_{k}">{model.TAG_LABELS[k]}</label> <input type="text" id="tag_{k}" '
                     f'name="{k}" value="{esc(values.get(k, ""))}"></p>' for k in ("phone", "website", "opening_hours"))
    radios = "".join(f'<label><input type="radio" name="wheelchair" value="{v}"'
                     f'{" checked" if values.get("wheelchair") == v else ""}> {v}</label> '
                     for v in model.WHEELCHAIR_VALUES)
    err = f'<p class="error">{esc(error)}</p>' if error else ""
    return (f'<div id="sidebar_content"><h2>Edit {esc(place.name)}</h2>{err}'
            f'<form method="post" action="/{place.osm_type}/{place.id}/edit">{fields}'
            f'<fieldset><legend>Wheelchair access</legend>{radios}</fieldset>'
            '<button type="submit">Save</button></form></div>')


def _check_tags(values: dict[str, str]) -> str:
    """'' when the edited tags are valid, else what is wrong."""
    if values["phone"] and not _PHONE.match(values["phone"]):
        return f"Phone {values['phone']!r} may hold only digits, spaces and + ( ) -."
    if values["website"] and not values["website"].startswith(("http://", "https://")):
        return f"Website {values['website']!r} must start with http:// or https://."
    if len(values["opening_hours"]) > 100:
        return "Opening hours must be at most 100 characters."
    if values["wheelchair"] and values["wheelchair"] not in model.WHEELCHAIR_VALUES:
        return f"Wheelchair must be one of {', '.join(model.WHEELCHAIR_VALUES)}."
    return ""


def edit_tags(ctx: RequestContext, kind: str, id: int) -> Response:
    """GET/POST /<node|way>/<id>/edit: change a place's phone, website, opening hours, wheelchair access
    (an empty field removes the tag)."""
    place, error = _place(kind, id)
    if error:
        return error
    if ctx.request.method == "GET":
        return _page(f"Edit {place.name}", _edit_form(place, model.tags_of(ctx.conn, place.id)))
    values = {k: ctx.form.get(k, "").strip() for k in model.TAG_KEYS}
    problem = _check_tags(values)
    if problem:
        return _page(f"Edit {place.name}", _edit_form(place, values, problem), status_code=400)
    for key, value in values.items():
        if value:
            ctx.conn.execute("INSERT OR REPLACE INTO map_tags (place_id, key, value) VALUES (?,?,?)",
                             (place.id, key, value))
        elif key != "wheelchair":  # an unticked radio group leaves wheelchair as it was
            ctx.conn.execute("DELETE FROM map_tags WHERE place_id = ? AND key = ?", (place.id, key))
    return redirect(element_path(place))
