"""The wiki's articles, built once per process from the shared facts: the region's towns and notable places
(`sites.world`), the topics of `topics` (languages and tools the code host's projects use, and what the
forum talks about), and list articles gathering each kind.

Owns the article model (`Article`, `Section`, `Table`), the Kiwix URL scheme (`BOOK`, `article_path`,
`LANDING_TITLE`) and the corpus (`articles()`, `article(title)`), which is module-level, read-only data
shared by every instance (Kiwix is read-only), so no per-instance copy holds the text. It does not
render HTML (`pages`) or serve requests (`app`).

Text markup: `[[Title]]` or `[[Title|shown text]]` links to another article; `{{map:<osm_type>/<id>|text}}`
and `{{mapsearch:<query>|text}}` link to the map site (resolved by `pages` when the map's URL is known).
"""
from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import quote

from agentenv_webarena.sites import world
from agentenv_webarena.sites.wiki.topics import KIND_FACTS, TOPICS

__all__ = ["BOOK", "LANDING_TITLE", "REGION", "Article", "Section", "Table", "article_path", "title_from_path",
           "articles", "article", "plain_text", "notable_places", "place_year_label", "list_title",
           "capacity_label", "coordinates_text", "category_label", "town_title", "search", "search_words"]

BOOK = "wikipedia_en_all_maxi_2022-05"
LANDING_TITLE = "User:The_other_Kiwix_guy/Landing"
REGION = "the Pittsburgh region"

# Categories whose members are everyday amenities (no article), unless a place has an architect or operator.
_AMENITY_CATEGORIES = {"restaurant", "cafe", "pharmacy", "bank", "supermarket", "library", "school", "post_office",
                       "fire_station", "police", "hotel", "church"}
# category -> (singular label, plural label)
_CATEGORY_LABELS = {
    "university": ("university", "universities"), "museum": ("museum", "museums"), "park": ("park", "parks"),
    "hospital": ("hospital", "hospitals"), "library": ("library", "libraries"), "stadium": ("stadium", "stadiums"),
    "airport": ("airport", "airports"), "hotel": ("hotel", "hotels"), "restaurant": ("restaurant", "restaurants"),
    "cafe": ("cafe", "cafes"), "train_station": ("railway station", "railway stations"),
    "bank": ("bank", "banks"), "supermarket": ("supermarket", "supermarkets"), "pharmacy": ("pharmacy", "pharmacies"),
    "school": ("school", "schools"), "church": ("church", "churches"), "theatre": ("theatre", "theatres"),
    "city_hall": ("seat of government", "seats of government"), "bus_station": ("bus station", "bus stations"),
    "fire_station": ("fire station", "fire stations"), "police": ("police station", "police stations"),
    "post_office": ("post office", "post offices"), "landmark": ("landmark", "landmarks"), "zoo": ("zoo", "zoos"),
}
# The infobox label of a place's `founded` year, per category ("Founded" otherwise).
_YEAR_LABELS = {"park": "Established", "stadium": "Opened", "hospital": "Opened", "airport": "Opened",
                "train_station": "Opened", "bus_station": "Opened", "theatre": "Opened", "zoo": "Opened",
                "landmark": "Completed", "city_hall": "Completed", "hotel": "Opened", "church": "Completed"}
_CAPACITY_LABELS = {"seats": "Capacity", "beds": "Beds", "rooms": "Rooms", "passengers a year": "Passengers",
                    "students": "Students"}


@dataclass(frozen=True)
class Table:
    """A wikitable: column headers and rows of cells (cells may hold link markup)."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Section:
    """A titled section: paragraphs (with link markup) and an optional table."""

    heading: str
    paragraphs: tuple[str, ...] = ()
    table: Optional[Table] = None


@dataclass(frozen=True)
class Article:
    """One article: its title, kind, lead paragraph, infobox rows (label, value with markup) and sections."""

    title: str
    kind: str
    lead: str
    infobox: tuple[tuple[str, str], ...] = ()
    sections: tuple[Section, ...] = field(default_factory=tuple)

    def fact(self, label: str) -> Optional[str]:
        """The infobox value under `label` without markup, or None."""
        for key, value in self.infobox:
            if key == label:
                return plain_text(value)
        return None


def article_path(title: str) -> str:
    """The Kiwix path of an article: `/wikipedia_en_all_maxi_2022-05/A/<Title_with_underscores>`."""
    return f"/{BOOK}/A/" + quote(title.replace(" ", "_"), safe="_-.,()':/!")


def title_from_path(name: str) -> str:
    """The title a path segment names (underscores read as spaces)."""
    return name.replace("_", " ").strip()


_LINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_MAP = re.compile(r"\{\{(map|mapsearch):([^|}]+)\|([^}]+)\}\}")


def plain_text(markup: str) -> str:
    """`markup` as a reader sees it (link markup replaced by the shown text)."""
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), markup)
    return _MAP.sub(lambda m: m.group(3), text)


def category_label(category: str, plural: bool = False) -> str:
    """The reader's word for a place category ("train_station" -> "railway station")."""
    return _CATEGORY_LABELS[category][1 if plural else 0]


def place_year_label(place: world.Place) -> str:
    """The infobox label of a place's year ("Founded", "Opened", "Established" or "Completed")."""
    return _YEAR_LABELS.get(place.category, "Founded")


def capacity_label(place: world.Place) -> Optional[str]:
    """The infobox label of a place's capacity ("Capacity", "Beds", ...), None when it has none."""
    unit = world.CAPACITY_UNITS.get(place.category)
    return _CAPACITY_LABELS[unit] if unit and place.capacity is not None else None


def list_title(category: str) -> str:
    """The list article of a place category ("List of museums in the Pittsburgh region")."""
    return f"List of {category_label(category, plural=True)} in {REGION}"


def coordinates_text(lat: float, lon: float) -> str:
    """Coordinates as Wikipedia prints them: "40.4433°N 79.9436°W"."""
    return f"{abs(lat):.4f}°{'N' if lat >= 0 else 'S'} {abs(lon):.4f}°{'E' if lon >= 0 else 'W'}"


def notable_places() -> list[world.Place]:
    """The places with an article: every non-amenity category, and amenities with an architect or operator."""
    return [p for p in world.PLACES
            if p.category not in _AMENITY_CATEGORIES or p.architect or p.operator]


def _a(text: str) -> str:
    return "an" if text[:1].lower() in "aeiou" else "a"


def _town_link(town: world.Town) -> str:
    if town.parent:
        return f"[[{town.name}, {town.parent}|{town.name}]], [[{town.parent}]]"
    return f"[[{town.name}]]"


def town_title(town: world.Town) -> str:
    """A town's article title (neighbourhoods as "Oakland, Pittsburgh")."""
    return f"{town.name}, {town.parent}" if town.parent else town.name


def _place_article(place: world.Place, notable_titles: set[str]) -> Article:
    town = world.town_by_name(place.town)
    label = category_label(place.category)
    year_label = place_year_label(place)
    lead = (f"{place.name} is {_a(label)} {label} in {_town_link(town)}, {town.state}. {place.description}")
    box = [("Type", label.capitalize()), ("Location", _town_link(town)), ("Address", place.address),
           ("Coordinates", f"{{{{map:{place.osm_type}/{place.id}|{coordinates_text(place.lat, place.lon)}}}}}"),
           (year_label, str(place.founded))]
    cap = capacity_label(place)
    if cap:
        box.append((cap, f"{place.capacity:,}"))
    if place.architect:
        box.append(("Architect", place.architect))
    if place.operator:
        box.append(("Operator", place.operator))
    verb = {"Founded": "was founded", "Opened": "opened", "Established": "was established",
            "Completed": "was completed"}[year_label]
    history = f"{place.name} {verb} in {place.founded}."
    if place.architect:
        history += f" It was designed by {place.architect}."
    if place.operator:
        history += f" It is operated by {place.operator}."
    neighbours = [p for p in world.places_in(town=place.town) if p.name in notable_titles and p.name != place.name]
    where = (f"{place.name} stands at {place.address}, in {_town_link(town)}. It appears on the map at "
             f"{{{{map:{place.osm_type}/{place.id}|{coordinates_text(place.lat, place.lon)}}}}}.")
    sections = [Section("History", (history,)), Section("Location", (where,))]
    if neighbours:
        sections.append(Section("Nearby", ("Other notable places in " + _town_link(town) + ": "
                                           + ", ".join(f"[[{p.name}]]" for p in neighbours) + ".",)))
    sections.append(Section("See also", (f"[[{list_title(place.category)}]]",)))
    return Article(place.name, place.category, lead, tuple(box), tuple(sections))


def _town_article(town: world.Town, notable: list[world.Place]) -> Article:
    kind = "neighbourhood" if town.parent else town.kind
    where = f"in the city of [[{town.parent}]]" if town.parent else f"in {town.county}, {town.state}"
    lead = (f"{town.name} is {_a(kind)} {kind} {where}, United States. It was founded in {town.founded} and had "
            f"a population of {town.population:,} at the last census.")
    box = [("Country", "United States"), ("State", town.state), ("County", town.county)]
    if town.parent:
        box.append(("City", f"[[{town.parent}]]"))
    box += [("Founded", str(town.founded)), ("Population", f"{town.population:,}"),
            ("Coordinates", f"{{{{mapsearch:{town.name}|{coordinates_text(town.lat, town.lon)}}}}}")]
    mine = [p for p in notable if p.town == town.name or p.city == town.name]
    sections = [Section("History", (f"{town.name} was founded in {town.founded}.",))]
    if mine:
        sections.append(Section("Notable places", (), Table(
            ("Name", "Type", "Founded"),
            tuple((f"[[{p.name}]]", category_label(p.category), str(p.founded)) for p in mine))))
    parts = [t for t in world.TOWNS if t.parent == town.name]
    if parts:
        sections.append(Section("Neighbourhoods", (", ".join(f"[[{town_title(t)}|{t.name}]]" for t in parts) + ".",)))
    amenities = [p for p in world.PLACES if p.town == town.name and p not in mine]
    if amenities:
        counts: dict[str, int] = {}
        for p in amenities:
            counts[p.category] = counts.get(p.category, 0) + 1
        listed = ", ".join(f"{n} {category_label(c, plural=n > 1)}" for c, n in sorted(counts.items()))
        sections.append(Section("Amenities", (f"{town.name} also has {listed}.",)))
    return Article(town_title(town), "town", lead, tuple(box), tuple(sections))


def _topic_article(title: str, kind: str, values: tuple[str, ...]) -> Article:
    labels, list_name, year_label = KIND_FACTS[kind]
    facts = dict(zip(labels, values, strict=True))
    name = re.sub(r" \([^)]*\)$", "", title)
    first, year = labels[0], facts[year_label]
    people = {"Designed by": "designed by", "Developer": "developed by", "Author": "written by",
              "Directed by": "directed by", "Artist": "by", "Type": "a", "Region": "in"}[first]
    if kind == "astronomical object":
        kind_text = facts["Type"][:1].lower() + facts["Type"][1:]
        lead = f"{name} is {_a(kind_text)} {kind_text} in the {facts['Location']}."
        body = f"It was first recorded in {year}."
    elif kind == "historical period":
        lead = f"The {name} was a period of history in {facts['Region']}, from {facts['Began']} to {facts['Ended']}."
        body = f"It began in {facts['Began']} and ended in {facts['Ended']}."
    else:
        noun = "software project" if kind == "software" else kind
        lead = f"{name} is {_a(noun)} {noun} {people} {facts[first]}. {year_label}: {year}."
        extra = [f"{label}: {facts[label]}" for label in labels[1:] if label != year_label]
        body = f"{name} was {people} {facts[first]} and dates from {year}. " + ". ".join(extra) + "."
    box = [("Kind", kind.capitalize())] + [(label, facts[label]) for label in labels]
    sections = (Section("History", (body,)), Section("See also", (f"[[{list_name}]]",)))
    return Article(title, kind, lead, tuple(box), sections)


def _lists(corpus: dict[str, Article], notable: list[world.Place]) -> list[Article]:
    out = []
    for category in world.CATEGORIES:
        members = [p for p in notable if p.category == category]
        if not members:
            continue
        plural = category_label(category, plural=True)
        rows = tuple((f"[[{p.name}]]", _town_link(world.town_by_name(p.town)), str(p.founded)) for p in members)
        out.append(Article(list_title(category), "list",
                           f"This is a list of the {len(members)} {plural} of {REGION} that have an article.",
                           (), (Section(plural.capitalize(), (), Table(("Name", "Location", "Year"), rows)),)))
    towns = tuple((f"[[{town_title(t)}]]", t.kind, t.county, str(t.founded)) for t in world.TOWNS)
    out.append(Article(f"List of towns in {REGION}", "list",
                       f"This is a list of the {len(towns)} towns and neighbourhoods of {REGION}.", (),
                       (Section("Towns", (), Table(("Name", "Kind", "County", "Founded"), towns)),)))
    for kind, (labels, list_name, _) in KIND_FACTS.items():
        members = [a for a in corpus.values() if a.kind == kind]
        rows = tuple((f"[[{a.title}]]", *(a.fact(label) or "" for label in labels)) for a in members)
        out.append(Article(list_name, "list", f"This is a list of {len(members)} articles about each {kind}.", (),
                           (Section("Articles", (), Table(("Title", *labels), rows)),)))
    return out


@functools.lru_cache(maxsize=1)
def articles() -> dict[str, Article]:
    """Every article, by title (built once: deterministic, from `world` and `topics`)."""
    notable = notable_places()
    titles = {p.name for p in notable}
    corpus: dict[str, Article] = {}
    for place in notable:
        corpus[place.name] = _place_article(place, titles)
    for town in world.TOWNS:
        art = _town_article(town, notable)
        if art.title in corpus:
            raise ValueError(f"wiki title {art.title!r} names both a place and a town")
        corpus[art.title] = art
    for topic in TOPICS:
        corpus[topic.title] = _topic_article(topic.title, topic.kind, topic.values)
    for art in _lists(corpus, notable):
        corpus[art.title] = art
    return corpus


@functools.lru_cache(maxsize=1)
def _folded() -> dict[str, str]:
    return {title.casefold(): title for title in articles()}


def article(title: str) -> Optional[Article]:
    """The article titled `title` (case-insensitive, like a Kiwix redirect of another capitalisation), or None."""
    found = articles().get(title)
    if found is None:
        key = _folded().get(title.casefold())
        found = articles()[key] if key else None
    return found


_WORD = re.compile(r"[^\W_]+(?:[-'.+#][^\W_]+)*[+#]*", re.UNICODE)


def search_words(pattern: str) -> list[str]:
    """The words of a search pattern, folded (punctuation dropped, "C++" and "Node.js" kept whole)."""
    return [w.casefold() for w in _WORD.findall(pattern)]


@functools.lru_cache(maxsize=1)
def _texts() -> dict[str, tuple[str, Counter]]:
    """title -> (folded title, word counts of the full text) for search."""
    out = {}
    for title, art in articles().items():
        parts = [art.title, art.lead] + [f"{k} {v}" for k, v in art.infobox]
        for sec in art.sections:
            parts += [sec.heading, *sec.paragraphs]
            if sec.table:
                parts += [" ".join(row) for row in sec.table.rows]
        out[title] = (title.casefold(), Counter(search_words(plain_text(" ".join(parts)))))
    return out


def search(pattern: str) -> list[Article]:
    """Articles containing every word of `pattern`, best first (Kiwix-like full-text search).

    Ranking: an exact title match first, then articles with more of the words in the title, then more
    occurrences in the text, then by title.
    """
    words = search_words(pattern)
    if not words:
        return []
    whole = " ".join(words)
    scored = []
    for title, (folded_title, counts) in _texts().items():
        if not all(counts[w] for w in words):
            continue
        exact = folded_title == whole or re.sub(r" \([^)]*\)$", "", folded_title) == whole
        title_words = set(search_words(folded_title))
        in_title = sum(w in title_words for w in words)
        hits = sum(counts[w] for w in words)
        scored.append((not exact, -in_title, -hits, title))
    return [articles()[s[-1]] for s in sorted(scored)]
