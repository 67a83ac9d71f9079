"""Wiki task templates (intent_template_id 7000-7199): the embedded Kiwix wiki on its own, from WebArena's
homepage, and with the forum, the map and the code host.

Each template is `(template_id, fn(db, rng) -> list[task dict])` (dict shape: `templates.base.task`).
Facts come from the wiki's index tables (`wiki_articles`, `wiki_facts`: the infobox of every article),
which `sites.wiki` builds from `sites.world` (the map's places), `sites.gitlab.data` (the code host's
project languages) and its topic list (what the forum talks about), so a multi-site task has one truth.
The wiki is read-only: its state-changing (`program_html`) tasks write what they read elsewhere (the
homepage's scratchpad, a forum post, comment or biography, the map's route form or My places, a code host
issue). Reference steps name elements by role and accessible name as Chromium shows them on the sites'
pages; the map's and code host's steps and checks (`directions_steps`, `route_on_screen`, `visible_projects`, ...)
are reused from their template modules, which own how those pages are driven.
"""
from __future__ import annotations

import random
import re
import sqlite3
from typing import Callable, Optional
from urllib.parse import urlencode

from agentenv_webarena.sites import forum, world
from agentenv_webarena.sites.forum.data import PRIMARY_USER as FORUM_USER
from agentenv_webarena.sites.gitlab.data import PRIMARY_USER as GITLAB_USER
from agentenv_webarena.sites.map import element_path
from agentenv_webarena.sites.map.model import saved_places
from agentenv_webarena.sites.wiki import corpus
from agentenv_webarena.sites.wiki.topics import LANGUAGE_ARTICLES
from agentenv_webarena.tasks.templates.base import (
    DONE,
    clear_and_type,
    click,
    goto,
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
    ALL_COMMENT_BODIES,
    BY,
    GITLAB,
    MAP,
    MINE_ONLY,
    MY_PLACES,
    POST_URL_FUNC,
    REDDIT,
    TITLE,
    directions_steps,
    full_path,
    landmarks,
    post_list,
    project_url,
    route_between,
    route_on_screen,
    rows,
    two_routes_steps,
    visible_projects,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES", "WIKI", "HOMEPAGE", "LANDING", "wiki_url", "search_steps", "facts"]

WIKI = "__WIKIPEDIA__"
HOMEPAGE = "__HOMEPAGE__"
LANDING = WIKI + corpus.article_path(corpus.LANDING_TITLE)
SCRATCHPAD = f"{HOMEPAGE}/scratchpad.html"
NOTE_LOCATOR = "document.querySelector('#note').value"
TITLE_LOCATOR = "document.querySelector('.submission__title').outerText"
INSTANCES = 8  # instances per template (fewer when the data offer fewer)
_PAGE = 25  # search results on the first page


# --- facts -------------------------------------------------------------------------------------------

def facts(db: sqlite3.Connection) -> dict[str, dict]:
    """title -> {"kind": ..., "lead": ..., <infobox label>: <value>, ...} from the wiki's index tables."""
    out: dict[str, dict] = {}
    for r in rows(db, "SELECT id, title, kind, lead FROM wiki_articles ORDER BY id"):
        out[r["title"]] = {"kind": r["kind"], "lead": r["lead"], "_id": r["id"]}
    by_id = {v["_id"]: v for v in out.values()}
    for r in rows(db, "SELECT article_id, label, value FROM wiki_facts ORDER BY article_id, position"):
        by_id[r["article_id"]][r["label"]] = r["value"]
    return out


def _of_kind(db: sqlite3.Connection, *kinds: str) -> list[tuple[str, dict]]:
    return [(t, f) for t, f in facts(db).items() if f["kind"] in kinds]


def wiki_url(title: str) -> str:
    """The placeholder URL of an article."""
    return WIKI + corpus.article_path(title)


def _name(title: str) -> str:
    """A title without its disambiguation ("Dune (novel)" -> "Dune")."""
    return re.sub(r" \([^)]*\)$", "", title)


def _findable(title: str, query: str) -> bool:
    """The article is on the first page of results for `query` and the query can be typed."""
    hits = [a.title for a in corpus.search(query)[:_PAGE]]
    return title in hits and "[" not in query and "]" not in query


def search_steps(title: str, query: Optional[str] = None) -> list[dict]:
    """Search the wiki for `query` (default: the title without its disambiguation) and open the article."""
    return [type_text("searchbox", "Search", query or _name(title), enter=True), click("link", title)]


def _task(tpl: str, values: dict, ev: dict, sequence: list, *, start: str = LANDING,
          sites: tuple[str, ...] = ("wikipedia",)) -> dict:
    return task(sites=list(sites), start_url=start, intent_template=tpl, values=values, eval=ev, sequence=sequence)


def _unique(items: list, key: Callable) -> list:
    """The items whose `key` no other item shares."""
    counts: dict = {}
    for item in items:
        counts[key(item)] = counts.get(key(item), 0) + 1
    return [item for item in items if counts[key(item)] == 1]


def _places(db: sqlite3.Connection) -> list[tuple[str, dict]]:
    return [(t, f) for t, f in facts(db).items() if "Address" in f and _findable(t, t)]


_YEAR_VERBS = {"Founded": "founded", "Opened": "opened", "Established": "established", "Completed": "completed"}


def _year_of(f: dict) -> tuple[str, str]:
    """(infobox label, verb) of a place's year."""
    for label, verb in _YEAR_VERBS.items():
        if label in f:
            return label, verb
    raise KeyError(f"place facts have no year: {sorted(f)}")


# --- wiki only: information seeking ------------------------------------------------------------------

def t7000_place_year(db, rng):
    tpl = "In which year was {{place}} {{verb}}?"
    out = []
    for title, f in pick(rng, _places(db), INSTANCES):
        label, verb = _year_of(f)
        out.append(_task(tpl, {"place": title, "verb": verb}, string_eval(exact=f[label]),
                         search_steps(title) + [stop(f[label])]))
    return out


def t7001_place_architect(db, rng):
    tpl = "Who was the architect of {{place}}?"
    places = [(t, f) for t, f in _places(db) if "Architect" in f]
    return [_task(tpl, {"place": t}, string_eval(exact=f["Architect"]), search_steps(t) + [stop(f["Architect"])])
            for t, f in pick(rng, places, INSTANCES)]


def t7002_town_population(db, rng):
    tpl = "What was the population of {{town}} at the last census, according to the wiki?"
    towns = [(t, f) for t, f in _of_kind(db, "town") if _findable(t, t)]
    return [_task(tpl, {"town": t}, string_eval(must_include=[f["Population"]]),
                  search_steps(t, t) + [stop(f["Population"])]) for t, f in pick(rng, towns, INSTANCES)]


def t7003_category_member_by_year(db, rng):
    tpl = "Which {{label}} of the Pittsburgh region listed on the wiki was {{verb}} in {{year}}?"
    out = []
    for category in world.CATEGORIES:
        members = [p for p in corpus.notable_places() if p.category == category]
        if len(members) < 3:
            continue
        listing = corpus.list_title(category)
        for p in _unique(members, key=lambda p: p.founded):
            verb = _YEAR_VERBS[corpus.place_year_label(p)]
            out.append(_task(tpl, {"label": corpus.category_label(category), "verb": verb, "year": p.founded},
                             string_eval(exact=p.name),
                             [click("link", listing), stop(p.name)]))
    return pick(rng, out, INSTANCES)


def t7004_oldest_in_town(db, rng):
    tpl = "According to the wiki, what is the oldest {{label}} in {{town}}?"
    out = []
    for town in world.TOWNS:
        title = corpus.town_title(town)
        if not _findable(title, title):
            continue
        mine = [p for p in corpus.notable_places() if p.town == town.name]
        for category in {p.category for p in mine}:
            members = sorted((p for p in mine if p.category == category), key=lambda p: p.founded)
            if len(members) < 2 or members[0].founded == members[1].founded:
                continue
            out.append(_task(tpl, {"label": corpus.category_label(category), "town": title},
                             string_eval(exact=members[0].name), search_steps(title, title) + [stop(members[0].name)]))
    out.sort(key=lambda t: t["intent"])
    return pick(rng, out, INSTANCES)


def t7005_language_first_appeared(db, rng):
    tpl = "In which year did the {{language}} language first appear?"
    langs = [(t, f) for t, f in _of_kind(db, "programming language") if _findable(t, _name(t))]
    return [_task(tpl, {"language": _name(t)}, string_eval(exact=f["First appeared"]),
                  search_steps(t) + [stop(f["First appeared"])]) for t, f in pick(rng, langs, INSTANCES)]


def t7006_software_origin(db, rng):
    tpl = "Which language is {{software}} written in, and in which year was it first released?"
    tools = [(t, f) for t, f in _of_kind(db, "software") if _findable(t, _name(t))]
    out = []
    for t, f in pick(rng, tools, INSTANCES):
        answer = f"{f['Written in']}, {f['Initial release']}"
        out.append(_task(tpl, {"software": _name(t)}, string_eval(must_include=[f["Written in"], f["Initial release"]]),
                         search_steps(t) + [stop(answer)]))
    return out


def t7007_novel_author(db, rng):
    tpl = "Who wrote the novel {{novel}}?"
    novels = [(t, f) for t, f in _of_kind(db, "novel") if _findable(t, _name(t))]
    return [_task(tpl, {"novel": _name(t)}, string_eval(exact=f["Author"]), search_steps(t) + [stop(f["Author"])])
            for t, f in pick(rng, novels, INSTANCES)]


def t7008_film_director_year(db, rng):
    tpl = "Who directed the film {{film}}, and in which year was it released?"
    films = [(t, f) for t, f in _of_kind(db, "film") if _findable(t, _name(t))]
    return [_task(tpl, {"film": _name(t)}, string_eval(must_include=[f["Directed by"], f["Release year"]]),
                  search_steps(t) + [stop(f"{f['Directed by']}, {f['Release year']}")])
            for t, f in pick(rng, films, INSTANCES)]


def t7009_earlier_of_two(db, rng):
    tpl = "Which came out first, the {{kind}} {{a}} or the {{kind}} {{b}}?"
    years = {"novel": "Published", "album": "Released", "video game": "Release year"}
    out = []
    for kind, label in years.items():
        items = [(t, f) for t, f in _of_kind(db, kind) if _findable(t, _name(t))]
        for (ta, fa), (tb, fb) in zip(items, items[1:] + items[:1], strict=True):
            if fa[label] == fb[label]:
                continue
            first = _name(ta) if int(fa[label]) < int(fb[label]) else _name(tb)
            out.append(_task(tpl, {"kind": kind, "a": _name(ta), "b": _name(tb)}, string_eval(exact=first),
                             search_steps(ta) + search_steps(tb) + [stop(first)]))
    return pick(rng, out, INSTANCES)


def t7010_open_place_article(db, rng):
    tpl = "Open the wiki article about {{place}}."
    return [_task(tpl, {"place": t}, url_eval(wiki_url(t)), search_steps(t) + [stop(DONE)])
            for t, _ in pick(rng, _places(db), INSTANCES)]


def t7011_open_town_of_place(db, rng):
    tpl = "Open the wiki article about the neighbourhood or town where {{place}} is located."
    out = []
    for t, _ in pick(rng, _places(db), INSTANCES):
        town = world.town_by_name(next(p for p in corpus.notable_places() if p.name == t).town)
        out.append(_task(tpl, {"place": t}, url_eval(wiki_url(corpus.town_title(town))),
                         search_steps(t) + [click("link", town.name), stop(DONE)]))
    return out


def t7012_search_results(db, rng):
    tpl = 'Search the wiki for articles that mention "{{words}}".'
    people = sorted({f["Architect"] for _, f in _places(db) if "Architect" in f})
    out = []
    for words in pick(rng, people, INSTANCES):
        ev = url_eval(f"{WIKI}/search?" + urlencode({"content": corpus.BOOK, "pattern": words}))
        out.append(_task(tpl, {"words": words}, ev, [type_text("searchbox", "Search", words, enter=True), stop(DONE)]))
    return out


def t7013_count_listed(db, rng):
    tpl = "How many {{plural}} of the Pittsburgh region have an article on the wiki?"
    out = []
    for category in world.CATEGORIES:
        n = sum(p.category == category for p in corpus.notable_places())
        if n < 2:
            continue
        plural = corpus.category_label(category, plural=True)
        out.append(_task(tpl, {"plural": plural}, string_eval(exact=str(n)),
                         [click("link", corpus.list_title(category)), stop(str(n))]))
    return pick(rng, out, INSTANCES)


def t7014_place_detail(db, rng):
    tpl = "What is the {{detail}} of {{place}}?"
    note = "The wiki's articles give no phone numbers or opening hours."
    chosen = pick(rng, _places(db), INSTANCES)
    out = []
    for i, (t, f) in enumerate(chosen):
        if i < 3:
            detail = "phone number" if i % 2 == 0 else "opening hours"
            out.append(_task(tpl, {"detail": detail, "place": t}, string_eval(fuzzy="N/A", note=note),
                             search_steps(t) + [stop("N/A")]))
        else:
            street = f["Address"].split(",")[0]
            out.append(_task(tpl, {"detail": "street address", "place": t}, string_eval(must_include=[street]),
                             search_steps(t) + [stop(f["Address"])]))
    rng.shuffle(out)
    return out


def t7015_capacity(db, rng):
    tpl = "According to the wiki, how many {{unit}} does {{place}} have?"
    units = {"Capacity": "seats", "Beds": "beds", "Rooms": "rooms", "Students": "students"}
    out = []
    for t, f in _places(db):
        for label, unit in units.items():
            if label in f:
                out.append(_task(tpl, {"unit": unit, "place": t}, string_eval(must_include=[f[label]]),
                                 search_steps(t) + [stop(f[label])]))
    return pick(rng, out, INSTANCES)


def t7016_town_county_founded(db, rng):
    tpl = "In which county is {{town}}, and in which year was it founded?"
    towns = [(t, f) for t, f in _of_kind(db, "town") if _findable(t, t) and "City" not in f]
    return [_task(tpl, {"town": t}, string_eval(must_include=[f["County"], f["Founded"]]),
                  search_steps(t, t) + [stop(f"{f['County']}, {f['Founded']}")])
            for t, f in pick(rng, towns, INSTANCES)]


def t7017_operator(db, rng):
    tpl = "Which organisation operates {{place}}?"
    places = [(t, f) for t, f in _places(db) if "Operator" in f]
    return [_task(tpl, {"place": t}, string_eval(exact=f["Operator"]), search_steps(t) + [stop(f["Operator"])])
            for t, f in pick(rng, places, INSTANCES)]


def t7018_sky_and_history(db, rng):
    tpl = "According to the wiki, in which year {{event}}?"
    out = []
    for t, f in _of_kind(db, "astronomical object", "historical period"):
        if not _findable(t, _name(t)):
            continue
        if f["kind"] == "astronomical object":
            event, year = f"was {_name(t)} first recorded", f["Discovered"]
        else:
            event, year = f"did the period of the {_name(t)} end", f["Ended"]
        out.append(_task(tpl, {"event": event}, string_eval(exact=year), search_steps(t) + [stop(year)]))
    return pick(rng, out, INSTANCES)


def t7019_album_artist(db, rng):
    tpl = "Which artist released the album {{album}}, and in which year?"
    albums = [(t, f) for t, f in _of_kind(db, "album") if _findable(t, _name(t))]
    return [_task(tpl, {"album": _name(t)}, string_eval(must_include=[f["Artist"], f["Released"]]),
                  search_steps(t) + [stop(f"{f['Artist']}, {f['Released']}")]) for t, f in pick(rng, albums, INSTANCES)]


def t7020_same_architect(db, rng):
    tpl = "Which place in {{town}} was designed by the architect of {{place}}?"
    notable = corpus.notable_places()
    out = []
    for p in notable:
        if not p.architect or not _findable(p.name, p.name):
            continue
        others = [o for o in notable if o.architect == p.architect and o.name != p.name]
        by_town: dict[str, list] = {}
        for o in others:
            by_town.setdefault(o.town, []).append(o)
        for town, there in by_town.items():
            if len(there) == 1 and town != p.town:
                title = corpus.town_title(world.town_by_name(town))
                out.append(_task(tpl, {"town": title, "place": p.name}, string_eval(exact=there[0].name),
                                 search_steps(p.name) + [type_text("searchbox", "Search", p.architect),
                                                         stop(there[0].name)]))
    return pick(rng, out, INSTANCES)


def t7021_game_developer(db, rng):
    tpl = "Which studio developed the video game {{game}}?"
    games = [(t, f) for t, f in _of_kind(db, "video game") if _findable(t, _name(t))]
    return [_task(tpl, {"game": _name(t)}, string_eval(exact=f["Developer"]), search_steps(t) + [stop(f["Developer"])])
            for t, f in pick(rng, games, INSTANCES)]


# --- homepage: pick the right card --------------------------------------------------------------------

def t7030_homepage_open_article(db, rng):
    tpl = "From the homepage, open the encyclopedia article about {{topic}}."
    items = [(t, f) for t, f in facts(db).items() if f["kind"] not in ("list", "town") and _findable(t, _name(t))]
    return [_task(tpl, {"topic": _name(t)}, url_eval(wiki_url(t)),
                  [click("link", "Wikipedia")] + search_steps(t) + [stop(DONE)], start=HOMEPAGE)
            for t, _ in pick(rng, items, INSTANCES)]


def t7031_homepage_years_between(db, rng):
    tpl = ("Starting from the homepage, find how many years passed between the first appearance of {{a}} and of "
           "{{b}} (use the encyclopedia, and the calculator if you like).")
    langs = [(t, f) for t, f in _of_kind(db, "programming language") if _findable(t, _name(t))]
    out = []
    for (ta, fa), (tb, fb) in zip(langs[::2], langs[1::2], strict=False):
        ya, yb = int(fa["First appeared"]), int(fb["First appeared"])
        if ya == yb:
            continue
        diff = str(abs(ya - yb))
        seq = ([click("link", "Wikipedia")] + search_steps(ta) + search_steps(tb) +
               [goto(f"{HOMEPAGE}/calculator.html"),
                type_text("textbox", "Expression", f"{max(ya, yb)} - {min(ya, yb)}"), stop(diff)])
        out.append(_task(tpl, {"a": _name(ta), "b": _name(tb)}, string_eval(exact=diff), seq, start=HOMEPAGE))
    return pick(rng, out, INSTANCES)


def _note_task(tpl: str, values: dict, note: str, required: list[str], reading: list[dict]) -> dict:
    """A task that ends by saving `note` on the homepage scratchpad; scored on the saved note."""
    ev = html_eval([target(SCRATCHPAD, NOTE_LOCATOR, must_include=required)])
    seq = reading + [goto(SCRATCHPAD), type_text("textbox", "Notes", note, enter=False), click("button", "Save"),
                     stop(DONE)]
    return _task(tpl, values, ev, seq, start=HOMEPAGE, sites=("homepage", "wikipedia"))


def t7032_scratchpad_place_year(db, rng):
    tpl = ('Look up in the encyclopedia the year {{place}} was {{verb}} and save a note "{{place}}: <year>" on the '
           "scratchpad.")
    out = []
    for t, f in pick(rng, _places(db), INSTANCES):
        label, verb = _year_of(f)
        out.append(_note_task(tpl, {"place": t, "verb": verb}, f"{t}: {f[label]}", [f"{t}: {f[label]}"],
                              [click("link", "Wikipedia")] + search_steps(t)))
    return out


def t7033_scratchpad_oldest_three(db, rng):
    tpl = ("Using the encyclopedia, write the three oldest {{plural}} of the Pittsburgh region (oldest first, "
           "separated by commas) on the scratchpad.")
    out = []
    for category in world.CATEGORIES:
        members = sorted((p for p in corpus.notable_places() if p.category == category), key=lambda p: p.founded)
        if len(members) < 4 or len({p.founded for p in members[:4]}) < 4:
            continue
        names = [p.name for p in members[:3]]
        plural = corpus.category_label(category, plural=True)
        reading = [click("link", "Wikipedia"), click("link", corpus.list_title(category))]
        out.append(_note_task(tpl, {"plural": plural}, ", ".join(names), [", ".join(names)], reading))
    return pick(rng, out, INSTANCES)


def t7034_scratchpad_language_designers(db, rng):
    tpl = "Save on the scratchpad who designed {{language}} and the year it first appeared."
    langs = [(t, f) for t, f in _of_kind(db, "programming language") if _findable(t, _name(t))]
    out = []
    for t, f in pick(rng, langs, INSTANCES):
        note = f"{_name(t)}: {f['Designed by']}, {f['First appeared']}"
        out.append(_note_task(tpl, {"language": _name(t)}, note, [_name(t), f["Designed by"], f["First appeared"]],
                              [click("link", "Wikipedia")] + search_steps(t)))
    return out


# --- forum and wiki -----------------------------------------------------------------------------------

def _forum_posts_about(db: sqlite3.Connection, kinds: tuple[str, ...]) -> list[tuple[dict, str, dict]]:
    """(post, article title, facts) for forum posts whose title names exactly one topic article of `kinds`."""
    topics = [(t, f) for t, f in facts(db).items() if f["kind"] in kinds and _findable(t, _name(t))]
    out = []
    for post in post_list(db, sort="new"):
        named = [(t, f) for t, f in topics if _name(t).casefold() in post["title"].casefold()]
        if len(named) == 1 and "[" not in post["title"] and "]" not in post["title"]:
            out.append((post, *named[0]))
    return _unique(out, key=lambda x: x[0]["title"])


def _post_url(post: dict) -> str:
    return REDDIT + forum.post_path(post["forum"], post["id"], post["title"])


def t7040_comment_author(db, rng):
    tpl = 'Comment on the forum post "{{title}}" with the name of the author of the book it talks about.'
    out = []
    posts = _unique(_forum_posts_about(db, ("novel",)), key=lambda x: x[1])
    for post, t, f in pick(rng, posts, 10):
        url = _post_url(post)
        ev = html_eval([target(url, ALL_COMMENT_BODIES, must_include=[f["Author"]], prep_actions=[MINE_ONLY])])
        seq = ([tab_focus(1)] + search_steps(t) +
               [tab_focus(0), type_text("textbox", "Comment", f"{_name(t)} was written by {f['Author']}.", enter=False),
                click("button", "Post"), stop(DONE)])
        out.append(task(sites=["reddit", "wikipedia"], start_url=f"{url} |AND| {LANDING}", intent_template=tpl,
                        values={"title": post["title"]}, eval=ev, sequence=seq))
    return out


def t7041_who_made_it(db, rng):
    tpl = 'The forum post "{{title}}" is about a {{kind}}. According to the wiki, {{question}}?'
    questions = {"film": ("who directed it", "Directed by"), "album": ("which artist released it", "Artist"),
                 "video game": ("which studio developed it", "Developer")}
    out = []
    for post, t, f in _forum_posts_about(db, tuple(questions)):
        question, label = questions[f["kind"]]
        out.append(task(sites=["reddit", "wikipedia"], start_url=_post_url(post), intent_template=tpl,
                        values={"title": post["title"], "kind": f["kind"], "question": question},
                        eval=string_eval(exact=f[label]),
                        sequence=[goto(LANDING)] + search_steps(t) + [stop(f[label])]))
    return pick(rng, out, INSTANCES)


def t7042_post_place_question(db, rng):
    tpl = ('Ask in the pittsburgh forum whether {{place}} is worth a visit; the post title must name the place and '
           'the year it was {{verb}}, as the wiki gives it.')
    places = [(t, f) for t, f in _places(db) if f["kind"] in ("museum", "park", "landmark", "zoo", "stadium")]
    out = []
    for t, f in pick(rng, places, 10):
        label, verb = _year_of(f)
        title = f"Is {t} ({verb} {f[label]}) worth a visit?"
        ev = html_eval([target(POST_URL_FUNC, TITLE_LOCATOR, must_include=[t, f[label]])],
                       with_url=f"{REDDIT}/f/pittsburgh")
        seq = (search_steps(t) + [tab_focus(1), click("link", "Submit a post"),
                                  type_text("textbox", "Title", title, enter=False),
                                  click("button", "Create submission"), stop(DONE)])
        out.append(task(sites=["reddit", "wikipedia"], start_url=f"{LANDING} |AND| {REDDIT}/f/pittsburgh",
                        intent_template=tpl, values={"place": t, "verb": verb}, eval=ev, sequence=seq))
    return out


def t7043_history_post_period(db, rng):
    tpl = ('Reply to the forum post "{{title}}" with a comment giving the years the period it talks about began and '
           'ended, as the wiki gives them.')
    out = []
    for post, t, f in _unique(_forum_posts_about(db, ("historical period",)), key=lambda x: x[1]):
        url = _post_url(post)
        ev = html_eval([target(url, ALL_COMMENT_BODIES, must_include=[f["Began"], f["Ended"]],
                               prep_actions=[MINE_ONLY])])
        comment = f"The {_name(t)} lasted from {f['Began']} to {f['Ended']}."
        seq = ([goto(LANDING)] + search_steps(t) +
               [goto(url), type_text("textbox", "Comment", comment, enter=False), click("button", "Post"), stop(DONE)])
        out.append(task(sites=["reddit", "wikipedia"], start_url=url, intent_template=tpl,
                        values={"title": post["title"]}, eval=ev, sequence=seq))
    return pick(rng, out, INSTANCES)


def t7044_bio_favourite_author(db, rng):
    tpl = 'Set my forum biography to "Big fan of <author>", where <author> is the writer of the novel {{novel}}.'
    novels = [(t, f) for t, f in _of_kind(db, "novel") if _findable(t, _name(t))]
    current = rows(db, "SELECT biography FROM forum_users WHERE username = ?", (FORUM_USER,))[0]["biography"]
    out = []
    for t, f in pick(rng, novels, INSTANCES):
        bio = f"Big fan of {f['Author']}"
        if bio == current:
            continue
        ev = html_eval([target(f"{REDDIT}/user/{FORUM_USER}", "document.querySelector('.user-bio').outerText",
                               exact=bio)])
        edit = ([click("link", "Edit biography"), type_text("textbox", "Biography", bio, enter=False)] if not current
                else [click("link", "Edit biography")] + clear_and_type("textbox", "Biography", bio))
        seq = search_steps(t) + [tab_focus(1)] + edit + [click("button", "Save"), stop(DONE)]
        out.append(task(sites=["reddit", "wikipedia"], start_url=f"{LANDING} |AND| {REDDIT}/user/{FORUM_USER}",
                        intent_template=tpl, values={"novel": _name(t)}, eval=ev, sequence=seq))
    return out


# --- map and wiki (WebArena's pattern: find the place in the encyclopedia, then route to it) ----------

def _listed_by_year(min_members: int = 3) -> list[world.Place]:
    """Notable places the map finds whose year is unique in their category (so "the museum founded in Y" is one)."""
    local = {p.name for p in landmarks()}
    out = []
    for category in world.CATEGORIES:
        members = [p for p in corpus.notable_places() if p.category == category]
        if len(members) >= min_members:
            out += [p for p in _unique(members, key=lambda p: p.founded) if p.name in local]
    return out


def _by_year_values(p: world.Place) -> dict:
    return {"label": corpus.category_label(p.category), "verb": _YEAR_VERBS[corpus.place_year_label(p)],
            "year": p.founded}


def _origins(rng: random.Random, dest: world.Place, k: int) -> list[world.Place]:
    """`k` map landmarks at least 0.8 km from `dest` (route starts)."""
    return pick(rng, [o for o in landmarks() if world.distance_km(o, dest) >= 0.8], k)


def t7050_drive_to_place_of_year(db, rng):
    tpl = ("Which {{label}} of the Pittsburgh region was {{verb}} in {{year}} according to the wiki, and how long does "
           "it take to drive there from {{origin}}?")
    out = []
    for p in _listed_by_year():
        for origin in _origins(rng, p, 1):
            r = route_between(origin, p, "car")
            seq = ([click("link", corpus.list_title(p.category)), tab_focus(1)]
                   + directions_steps(origin, p, "car") + [stop(f"{p.name}, {r.time_text}")])
            out.append(_task(tpl, {**_by_year_values(p), "origin": origin.name},
                             string_eval(must_include=[p.name, r.time_text]), seq,
                             start=f"{LANDING} |AND| {MAP}", sites=("wikipedia", "map")))
    return pick(rng, out, INSTANCES)


def t7051_distance_to_architects_work(db, rng):
    tpl = "How far is the drive from {{origin}} to the {{label}} designed by {{architect}}, according to the map?"
    local = {p.name for p in landmarks()}
    notable = corpus.notable_places()
    out = []
    for p in notable:
        twins = [o for o in notable if o.architect == p.architect and o.category == p.category]
        if not p.architect or len(twins) != 1 or p.name not in local:
            continue
        for origin in _origins(rng, p, 1):
            r = route_between(origin, p, "car")
            seq = ([type_text("searchbox", "Search", p.architect), tab_focus(1)]
                   + directions_steps(origin, p, "car") + [stop(r.distance_text)])
            out.append(_task(tpl, {"origin": origin.name, "label": corpus.category_label(p.category),
                                   "architect": p.architect},
                             string_eval(must_include=[f"{r.distance_km:.1f}"]), seq,
                             start=f"{LANDING} |AND| {MAP}", sites=("wikipedia", "map")))
    return pick(rng, out, INSTANCES)


def t7052_route_to_oldest_in_town(db, rng):
    tpl = "Show on the map the route {{by}} from {{origin}} to the oldest {{label}} in {{town}}, according to the wiki."
    local = {p.name for p in landmarks()}
    out = []
    for town in world.TOWNS:
        title = corpus.town_title(town)
        mine = [p for p in corpus.notable_places() if p.town == town.name]
        if not _findable(title, title):
            continue
        for category in sorted({p.category for p in mine}):
            members = sorted((p for p in mine if p.category == category), key=lambda p: p.founded)
            if len(members) < 2 or members[0].founded == members[1].founded or members[0].name not in local:
                continue
            p = members[0]
            for origin in _origins(rng, p, 1):
                mode = rng.choice(("car", "bicycle", "foot") if world.distance_km(origin, p) < 6 else ("car",))
                seq = (search_steps(title, title) + [tab_focus(1)] + directions_steps(origin, p, mode)
                       + [stop(DONE)])
                out.append(_task(tpl, {"by": BY[mode], "origin": origin.name,
                                       "label": corpus.category_label(category), "town": title},
                                 route_on_screen(origin, p, mode), seq,
                                 start=f"{LANDING} |AND| {MAP}", sites=("wikipedia", "map")))
    return pick(rng, out, INSTANCES)


def t7053_map_page_from_wiki(db, rng):
    tpl = "Find on the map the page of the {{label}} that was {{verb}} in {{year}}, as the wiki lists it."
    out = []
    for p in _listed_by_year():
        coords = corpus.coordinates_text(p.lat, p.lon)
        seq = [click("link", corpus.list_title(p.category)), click("link", p.name), click("link", coords), stop(DONE)]
        out.append(_task(tpl, _by_year_values(p), url_eval(MAP + element_path(p)), seq, sites=("wikipedia", "map")))
    return pick(rng, out, INSTANCES)


def t7054_closer_of_two_years(db, rng):
    tpl = ("Which is the shorter drive from {{origin}}: the {{label}} {{verb}} in {{y1}} or the {{label}} {{verb}} in "
           "{{y2}} (years as the wiki gives them)?")
    by_category: dict[str, list[world.Place]] = {}
    for p in _listed_by_year():
        by_category.setdefault(p.category, []).append(p)
    out = []
    for category, members in sorted(by_category.items()):
        for x, y in zip(members, members[1:], strict=False):
            if corpus.place_year_label(x) != corpus.place_year_label(y):
                continue
            for origin in _origins(rng, x, 1):
                if origin.name == y.name:
                    continue
                dx = route_between(origin, x, "car").distance_km
                dy = route_between(origin, y, "car").distance_km
                if abs(dx - dy) < 0.15:  # the page's one-decimal distances differ
                    continue
                best = x if dx < dy else y
                seq = ([click("link", corpus.list_title(category)), tab_focus(1)]
                       + two_routes_steps(origin, x, y) + [stop(best.name)])
                values = {"origin": origin.name, "label": corpus.category_label(category),
                          "verb": _YEAR_VERBS[corpus.place_year_label(x)], "y1": x.founded, "y2": y.founded}
                out.append(_task(tpl, values, string_eval(must_include=[best.name]), seq,
                                 start=f"{LANDING} |AND| {MAP}", sites=("wikipedia", "map")))
    return pick(rng, out, INSTANCES)


def t7055_save_place_of_year(db, rng):
    tpl = "Save to My places on the map the {{label}} that was {{verb}} in {{year}}, as the wiki lists it."
    saved = {world.place_by_id(r["place_id"]).name for r in saved_places(db)}
    out = []
    for p in _listed_by_year():
        if p.name in saved:
            continue
        ev = html_eval([target(f"{MAP}/my_places", MY_PLACES, must_include=[p.name])])
        seq = [click("link", corpus.list_title(p.category)), click("link", p.name),
               click("link", corpus.coordinates_text(p.lat, p.lon)), click("button", "Save to My places"), stop(DONE)]
        out.append(_task(tpl, _by_year_values(p), ev, seq, sites=("wikipedia", "map")))
    return pick(rng, out, INSTANCES)


# --- code host and wiki -------------------------------------------------------------------------------

def _projects_by_language(db: sqlite3.Connection) -> list[tuple[dict, str, dict]]:
    """(project, language article title, its facts) for visible projects whose language has an article
    (not "Shell": the article is about one shell, Bash, so the question would be ambiguous)."""
    known = facts(db)
    out = []
    for p in visible_projects(db):
        title = LANGUAGE_ARTICLES.get(p["language"] or "")
        if title and p["language"] != "Shell" and _findable(title, p["language"]):
            out.append((dict(p), title, known[title]))
    return out


def _language_steps(p: dict, title: str) -> list[dict]:
    return [goto(project_url(p)), tab_focus(1)] + search_steps(title, p["language"])


def t7060_project_language_year(db, rng):
    tpl = "In which year did the main language of the code host project {{project}} first appear?"
    out = []
    for p, title, f in pick(rng, _projects_by_language(db), INSTANCES):
        out.append(task(sites=["gitlab", "wikipedia"], start_url=f"{GITLAB} |AND| {LANDING}", intent_template=tpl,
                        values={"project": full_path(p)}, eval=string_eval(exact=f["First appeared"]),
                        sequence=_language_steps(p, title) + [stop(f["First appeared"])]))
    return out


def t7061_project_language_designer(db, rng):
    tpl = "Who designed the main language of the code host project {{project}}, according to the wiki?"
    out = []
    for p, title, f in pick(rng, _projects_by_language(db), INSTANCES):
        out.append(task(sites=["gitlab", "wikipedia"], start_url=f"{GITLAB} |AND| {LANDING}", intent_template=tpl,
                        values={"project": full_path(p)}, eval=string_eval(exact=f["Designed by"]),
                        sequence=_language_steps(p, title) + [stop(f["Designed by"])]))
    return out


def t7062_issue_with_language_year(db, rng):
    tpl = ('Open an issue titled "Language history" in my code host project {{project}} whose description gives the '
           "year the project's main language first appeared, according to the wiki.")
    mine = [x for x in _projects_by_language(db) if x[0]["namespace"] == GITLAB_USER]
    out = []
    for p, title, f in pick(rng, mine, INSTANCES):
        year = f["First appeared"]
        ev = html_eval([target("last", TITLE, exact="Language history"),
                        target("last", "document.querySelector('.description').outerText", must_include=[year])],
                       with_url=project_url(p, "/-/issues"))
        seq = ([tab_focus(1)] + search_steps(title, p["language"]) +
               [tab_focus(0), click("link", contains="Issues "), click("link", "New issue"),
                type_text("textbox", "Title", "Language history", enter=False),
                type_text("textbox", "Description", f"{p['language']} first appeared in {year}.", enter=False),
                click("button", "Create issue"), stop(DONE)])
        out.append(task(sites=["gitlab", "wikipedia"], start_url=f"{project_url(p)} |AND| {LANDING}",
                        intent_template=tpl, values={"project": p["path"]}, eval=ev, sequence=seq))
    return out


# Held out: every instance of these goes to the test split (templates never seen in training).
TEST_ONLY_TEMPLATES = {7008, 7011, 7016, 7020, 7031, 7034, 7043, 7054, 7061}

TEMPLATES = [
    (7000, t7000_place_year),
    (7001, t7001_place_architect),
    (7002, t7002_town_population),
    (7003, t7003_category_member_by_year),
    (7004, t7004_oldest_in_town),
    (7005, t7005_language_first_appeared),
    (7006, t7006_software_origin),
    (7007, t7007_novel_author),
    (7008, t7008_film_director_year),
    (7009, t7009_earlier_of_two),
    (7010, t7010_open_place_article),
    (7011, t7011_open_town_of_place),
    (7012, t7012_search_results),
    (7013, t7013_count_listed),
    (7014, t7014_place_detail),
    (7015, t7015_capacity),
    (7016, t7016_town_county_founded),
    (7017, t7017_operator),
    (7018, t7018_sky_and_history),
    (7019, t7019_album_artist),
    (7020, t7020_same_architect),
    (7021, t7021_game_developer),
    (7030, t7030_homepage_open_article),
    (7031, t7031_homepage_years_between),
    (7032, t7032_scratchpad_place_year),
    (7033, t7033_scratchpad_oldest_three),
    (7034, t7034_scratchpad_language_designers),
    (7040, t7040_comment_author),
    (7041, t7041_who_made_it),
    (7042, t7042_post_place_question),
    (7043, t7043_history_post_period),
    (7044, t7044_bio_favourite_author),
    (7050, t7050_drive_to_place_of_year),
    (7051, t7051_distance_to_architects_work),
    (7052, t7052_route_to_oldest_in_town),
    (7053, t7053_map_page_from_wiki),
    (7054, t7054_closer_of_two_years),
    (7055, t7055_save_place_of_year),
    (7060, t7060_project_language_year),
    (7061, t7061_project_language_designer),
    (7062, t7062_issue_with_language_year),
]
