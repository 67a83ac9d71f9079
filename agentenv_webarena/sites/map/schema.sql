-- The map's per-instance state (the map data itself is static Python: sites.world + map.roads).
-- OSM-style tags an editor may change: phone, website, opening_hours, wheelchair.
CREATE TABLE map_tags (
    place_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (place_id, key)
);
-- Map notes (OSM's "Add a note"): open until someone resolves them.
CREATE TABLE map_notes (
    id INTEGER PRIMARY KEY,
    place_id INTEGER NOT NULL,
    body TEXT NOT NULL,
    author TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    created_at TEXT NOT NULL,
    closed_at TEXT
);
CREATE INDEX map_notes_place ON map_notes (place_id);
-- "My places": the visitor's saved places.
CREATE TABLE map_saved (
    id INTEGER PRIMARY KEY,
    place_id INTEGER NOT NULL UNIQUE,
    saved_at TEXT NOT NULL
);
