"""The embedded map: an OpenStreetMap-like site over `sites.world` (WebArena's `map` site).

Owns the map's pages and routing; the places and towns themselves belong to `sites.world`. The map
data (places, towns, the road graph in `roads`) is static Python, built once per process; only what
visitors change is per-instance SQLite (`schema.sql`: tags, notes, My places), restored at reset.
No login, no scripts needed.

Modules: `entities` (WebArena's own chain branches and landmarks, map-only), `roads` (road graph,
Dijkstra per mode, distance / time formats), `search` (geocoder: names, addresses, "X near Y", "X in Z",
brands, route parameters), `states` (US states: borders, pages), `model` (seed and queries of the tables),
`pages` (handlers and markup), `app`.

URLs (OpenStreetMap's shapes, so WebArena-style `url_match` checks carry over):

- GET `/`: search box, links, the towns.
- GET `/search?query=...`: results: a name or address ("Carnegie Mellon University", "5000 Forbes
  Avenue"), "<category> near <place>" (nearest first, 10, each "N.N km away" in a straight line) or
  "<category> in <town>" (all, by name); "<brand> near <place>" / "<brand> in <town>" ("Starbucks near
  Carnegie Mellon University") lists the places whose names hold the brand's words. No match: the page
  says "No results found" (200, as on OSM); an empty query shows how to search.
- GET `/node/<id>`, `/way/<id>`: a place (ways are areas: parks, campuses, stadiums, airports,
  hospitals, zoos); `/relation/<id>`: a town or neighbourhood with its places, or a US state (`states`: its
  bordering states and towns; a search naming a state lists it first).
- GET `/directions?engine=fossgis_osrm_car|fossgis_osrm_bike|fossgis_osrm_foot&route=lat1%2Clon1%3Blat2%2Clon2`:
  the fastest route: "Distance: 12.3 km" and "Time: 0:17" (h:mm). The form (GET `/directions` with
  `route_from`, `route_to`, `engine`) geocodes both fields (a name, an address or "lat, lon") and
  redirects to that URL; coordinates are printed by `search.format_coord` (up to 5 decimals) and
  snap to the nearest place or town. Default engine: car.
- GET `/my_places`; POST `/my_places/add` (`place_id`), `/my_places/<place id>/remove`.
- POST `/<node|way>/<id>/note` (`text`): add an open note; GET `/note/<id>`; POST `/note/<id>/resolve`.
- GET/POST `/<node|way>/<id>/edit`: tags `phone`, `website`, `opening_hours` (an empty field removes
  the tag) and `wheelchair` (yes / limited / no).

After a POST the site answers 303 to the page showing the result. Bad input: a 4xx page naming the
problem; an unknown element or path: a 404 page saying so.

Accessible names: header searchbox "Search" (button "Search"), links "Directions", "My places";
directions textboxes "From", "To", combobox "Mode", button "Go", mode links "Car", "Bicycle",
"Foot"; place page links "Directions from here", "Directions to here", "Edit <name>", buttons "Save
to My places" / "Remove from My places", textbox "Note" and button "Add note"; My places buttons
"Remove <name>"; note page button "Resolve"; edit page textboxes "Phone", "Website", "Opening
hours", radios "yes" / "limited" / "no", button "Save".

CSS hooks (OSM's where WebArena reads them):

- every page: `div#content` > `div#sidebar_content` (the panel text).
- search: `ul.search_results.results-list` > `li.search_results_entry` > `a.set_position` (the place's page);
  no match: `p.search_results_entry` "No results found".
- directions: `div#content select.routing_engines` (options in OSM's order: bicycle 0, car 1,
  foot 2, so `.selectedIndex` is 1 for car), inputs `[name="route_from"]` / `[name="route_to"]`
  (after a route is shown, their values are `search.display_name` of both ends),
  `#route_distance` ("Distance: 12.3 km"), `#route_time` ("Time: 0:17").
- place page: `h2.place-name`, `#coordinates td` ("40.4433, -79.9436"), `#tag-<key> td` (phone,
  website, opening_hours, wheelchair; absent when the place lacks the tag), `#saved-status`,
  `section#notes` with `li.note.note-open|note-closed#note-<id>` > `.note-body`.
- note page: `#note-status` ("Status: open" / "Status: resolved <time>").
- My places: `ul#my_places` > `li[data-place-id]`.
"""
from agentenv_webarena.sites.map.app import create_app
from agentenv_webarena.sites.map.model import SCHEMA, seed
from agentenv_webarena.sites.map.pages import DEFAULT_ENGINE, MODE_LINKS, directions_url
from agentenv_webarena.sites.map.roads import ENGINES, Route, format_distance, format_time, route
from agentenv_webarena.sites.map.search import display_name, element_path, format_coord, search

__all__ = ["SCHEMA", "seed", "create_app", "ENGINES", "MODE_LINKS", "DEFAULT_ENGINE", "Route", "route",
           "format_distance", "format_time", "display_name", "element_path", "format_coord", "search",
           "directions_url"]
