"""Judge-scored questions with free-text answers and vaguer intents, template ids 9300-9399, all held out.

Owns the kinds of WebArena question whose answer is a short free text that its evaluator hands to an LLM judge
(`string_match` with a `fuzzy_match` reference): why reviewers like a product (read in the admin's reviews), the
criticisms of a product the intent describes instead of naming, the gist of what a forum poster says, what the
comments on a code-host issue say, what a project's README tells a newcomer, and what the wiki says about a place
the intent describes by its kind, location and year. Intents describe their target where the pages make it
findable; two instances ask for something that does not exist (answer "N/A").

Scoring without a judge: each task has one reference answer, which its reference play gives verbatim, so the
evaluator's cleaned-equality short cut scores it 1.0; any other answer needs the judge (reward 0,
`needs_judge`). Every template is in `TEST_ONLY_TEMPLATES`, so no judge-scored task reaches training.

The answers are built from the seed's own vocabulary (`sites.shop.data.REVIEW_DETAILS`,
`sites.forum.data.BODY_BANKS`, `sites.gitlab.data.COMMENTS`): each sentence the pages show maps to the clause a
summary would use. Only the base rows are read: the shop's base products and their reviews
(`templates.common.BASE_PRODUCTS`), the forum's and the code host's base seed (`templates.common`).
"""
from __future__ import annotations

import random
import re
import sqlite3
from typing import Any, Sequence

from agentenv_webarena.sites import forum, world
from agentenv_webarena.sites.forum import data as forum_data
from agentenv_webarena.sites.gitlab.model import branch_files, issue_list
from agentenv_webarena.sites.shop import PAGE_SIZE as SHOP_PAGE_SIZE
from agentenv_webarena.sites.shop import data as shop_data
from agentenv_webarena.sites.shop import search_index, search_products
from agentenv_webarena.sites.wiki import corpus
from agentenv_webarena.tasks.templates.base import (
    click,
    go_back,
    goto,
    pick,
    stop,
    string_eval,
    task,
    type_text,
    typeable,
)
from agentenv_webarena.tasks.templates.common import (
    ADMIN,
    BASE_PRODUCTS,
    GITLAB,
    REDDIT,
    REVIEW_COMPLAINTS,
    full_path,
    post_list,
    project_url,
    rows,
    visible_projects,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

S = "__SHOPPING__"
W = "__WIKIPEDIA__"
N = 6  # instances per template, an infeasible one included where a template has one
def _fuzzy(answer: str) -> dict:
    """A judge-scored eval whose one reference is `answer` (the reference play's stop text)."""
    if not typeable(answer):
        raise ValueError(f"a reference answer must be typeable in stop [...], got {answer!r}")
    return string_eval(fuzzy=[answer])


def _na(note: str) -> dict:
    return string_eval(fuzzy="N/A", note=note, raw="N/A")


def _join(clauses: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + " and " + clauses[-1]


def _clauses(texts: Sequence[str], phrases: dict[str, str]) -> list[str]:
    """The distinct summary clauses of `texts` (first appearance first); `phrases` maps a sentence fragment to
    its clause. Raises KeyError for a text no fragment matches, so a new seed sentence cannot be dropped."""
    out: list[str] = []
    for text in texts:
        found = [clause for fragment, clause in phrases.items() if fragment in text]
        if not found:
            raise KeyError(f"no summary clause for {text!r}")
        out += [c for c in found if c not in out]
    return out


# --- shop: what reviewers like and criticise --------------------------------------------------------------

# A fragment of each review text of the seed (`sites.shop.data.REVIEW_DETAILS`) -> what it praises / criticises.
_PRAISE = {
    "arrived quickly and works exactly as described": "it arrived quickly and works exactly as described",
    "Great quality for the price": "it is great quality for the price",
    "Sturdy, well made and looks great": "it is sturdy, well made and looks great",
    "again in a heartbeat": "they would buy it again and recommend it to everyone",
    "overall. Shipping took": "it is good overall",
    "works well, although": "it works well",
    "for everyday use": "it is nice for everyday use",
}
_CRITICISM = {
    "Shipping took a little longer": "shipping took longer than expected",
    "packaging was a bit damaged": "the packaging arrived damaged",
    "because of the color": "the color disappointed",
    "fine but nothing special": "it is nothing special",
    "acceptable for the price but I expected": "the quality is only acceptable for the price",
    "instructions were confusing": "the instructions are confusing",
    **REVIEW_COMPLAINTS,  # the low ratings' complaints
}


def _name_parts() -> dict[str, tuple[str, str]]:
    """Product name -> (brand, noun), from the vocabulary the names are made of (`<brand> <adjective> <noun>`)."""
    return {f"{b} {a} {noun}": (b, noun) for _, _, brands, adjectives, nouns in shop_data.CATEGORIES
            for b in brands for a in adjectives for noun, *_ in nouns}


def _base_products(db: sqlite3.Connection) -> list[dict]:
    """Enabled seed products with their (base) reviews: `all` (any status) and `shown` (approved, oldest first)."""
    products = rows(db, "SELECT id, name FROM shop_products WHERE enabled = 1 AND id <= ? ORDER BY id",
                    (BASE_PRODUCTS,))
    reviews = rows(db, "SELECT * FROM shop_reviews WHERE product_id <= ? ORDER BY created_at, id", (BASE_PRODUCTS,))
    for p in products:
        p["all"] = [r for r in reviews if r["product_id"] == p["id"]]
        p["shown"] = [r for r in p["all"] if r["status"] == "approved"]
    return products


def t9300_why_reviewers_like(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    tpl = "What do reviewers like about {{product}}? Read its reviews in the admin panel and sum up the reasons."
    cases = []
    for p in _base_products(db):
        liked = [r for r in p["shown"] if r["rating_percent"] >= 80]
        # every review approved: the admin grid and the storefront show the same ones
        if len(p["all"]) == len(p["shown"]) and len(liked) >= 2:
            reasons = _clauses([r["detail"] for r in liked], _PRAISE)
            if len(reasons) >= 2:
                cases.append((p, liked, reasons))
    out = []
    for p, liked, reasons in pick(rng, cases, N):
        answer = f"Reviewers like that {'; '.join(reasons)}."
        grid_order = sorted(liked, key=lambda r: (r["created_at"], r["id"]), reverse=True)  # the grid: newest first
        visits = [step for r in grid_order for step in (click("link", f"Edit review {r['id']}"), go_back())]
        out.append(task(sites=["shopping_admin"], start_url=ADMIN, intent_template=tpl, values={"product": p["name"]},
                        eval=_fuzzy(answer),
                        sequence=[click("link", "All Reviews"), type_text("textbox", "Search by keyword", p["name"]),
                                  *visits[:-1], stop(answer)]))
    return out


def _lower(noun: str) -> str:
    """A product noun as running text: capitalised words lower-cased, acronyms and codes kept ("vitamin C serum")."""
    return " ".join(w.lower() if len(w) > 1 and w[1:].islower() else w for w in noun.split())


def _found_by(db: sqlite3.Connection, index: list, query: str, product_id: int) -> bool:
    """Product `product_id` is on the first results page of the storefront's search for `query`."""
    return product_id in [r["id"] for _, r in search_products(db, query, index)][:SHOP_PAGE_SIZE]


def t9301_described_product_criticisms(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    tpl = "List the main criticisms reviewers make of the {{noun}} that {{brand}} makes."
    parts, index = _name_parts(), search_index(db)
    products = _base_products(db)
    makers: dict[str, list[str]] = {}  # noun -> brands that make one
    for p in products:
        brand, noun = parts[p["name"]]
        makers.setdefault(noun, []).append(brand)
    cases = []
    for p in products:
        brand, noun = parts[p["name"]]
        critical = [r for r in p["shown"] if r["rating_percent"] <= 80]
        if makers[noun].count(brand) != 1 or len(p["shown"]) < 3:
            continue  # the description must name one product, with enough reviews to criticise it
        if not _found_by(db, index, f"{brand} {noun}", p["id"]):
            continue
        criticisms = _clauses([r["detail"] for r in critical], _CRITICISM)
        if 2 <= len(criticisms) <= 4:
            cases.append((p, brand, noun, criticisms))
    out = []
    for p, brand, noun, criticisms in pick(rng, cases, N - 1):
        answer = f"Reviewers criticise that {'; '.join(criticisms)}."
        out.append(task(sites=["shopping"], start_url=S, intent_template=tpl,
                        values={"noun": _lower(noun), "brand": brand}, eval=_fuzzy(answer),
                        sequence=[type_text("searchbox", "Search", f"{brand} {noun}"), click("link", p["name"]),
                                  stop(answer)]))
    # infeasible: a brand of the same department that makes no such product
    p, brand, noun, _ = cases[0]
    department = next(c for c in shop_data.CATEGORIES if any(n == noun for n, *_ in c[4]))
    other = next(b for b in department[2] if b not in makers[noun])
    out.append(task(sites=["shopping"], start_url=S, intent_template=tpl, values={"noun": _lower(noun), "brand": other},
                    eval=_na(f"{other} makes no {_lower(noun)} that the store sells."),
                    sequence=[type_text("searchbox", "Search", f"{other} {noun}"), stop("N/A")]))
    rng.shuffle(out)
    return out


# --- forum: the gist of what a poster says ---------------------------------------------------------------

# Each forum-specific body sentence of the seed (`sites.forum.data.BODY_BANKS`) -> what it tells the reader.
_POSTER_SAYS = {
    "I have been wondering about this for a while.": "they have wondered about it for a while",
    "Curious to hear different perspectives.": "they want to hear different perspectives",
    "Serious answers only, please.": "they want serious answers only",
    "Mine is probably boring, but I will share it in the comments.": "they will share their own answer in the "
                                                                     "comments",
    "The prose was beautiful and the ending surprised me.": "they found the prose beautiful and the ending "
                                                            "surprising",
    "I went in blind and loved every chapter.": "they went in blind and loved every chapter",
    "The middle section dragged a little for me.": "they felt the middle section dragged",
    "I listened to the audiobook on my commute.": "they listened to the audiobook on their commute",
    "No spoilers please, I am only halfway through.": "they are only halfway through and ask for no spoilers",
    "The combat took a while to click but now I am hooked.": "the combat took a while to click but now they are "
                                                             "hooked",
    "Played it on the Steam Deck.": "they played it on the Steam Deck",
    "The art direction is stunning.": "they find the art direction stunning",
    "I keep coming back to it every year.": "they keep coming back to it every year",
    "The paper was published in a peer-reviewed journal this week.": "the paper came out in a peer-reviewed "
                                                                     "journal this week",
    "The sample size is small, so take it with a grain of salt.": "the sample size is small, so readers should "
                                                                  "be cautious",
    "The authors say replication is already under way.": "the authors say a replication is under way",
    "I switched last year and have mixed feelings.": "they switched last year and have mixed feelings",
    "Prices have come down a lot recently.": "prices have come down a lot recently",
    "Privacy is my main concern here.": "privacy is their main concern",
    "Curious what everyone else is using.": "they want to know what everyone else uses",
    "The cinematography is gorgeous.": "they find the cinematography gorgeous",
    "The score carries the whole third act.": "the score carries the third act",
    "Saw it in a theater with a great crowd.": "they saw it in a theater with a great crowd",
    "The practical effects still look amazing.": "the practical effects still look amazing",
    "Code and data are linked in the paper.": "the code and data are linked in the paper",
    "Looking for feedback on the approach.": "they want feedback on the approach",
    "Our baseline numbers were surprisingly strong.": "their baseline numbers were surprisingly strong",
    "Happy to answer questions.": "they are happy to answer questions",
    "I am 27 and make about 55k a year.": "they are 27 and earn about 55k a year",
    "We have no other debt besides this.": "they have no other debt",
    "I put 10 percent of every paycheck aside.": "they save 10 percent of every paycheck",
    "Would appreciate any advice.": "they would like advice",
    "Primary sources are scarce, but the archaeology helps.": "primary sources are scarce but archaeology helps",
    "I got curious after a documentary.": "they got curious after a documentary",
    "The standard textbook account seems oversimplified.": "the usual textbook account seems oversimplified to "
                                                           "them",
    "Taken with a small refractor from my backyard.": "they took it with a small refractor from their backyard",
    "The scale of it is hard to imagine.": "its scale is hard to imagine",
    "Launch is planned for next year.": "the launch is planned for next year",
    "It has been on repeat all week.": "it has been on repeat all week",
    "The bass line on the second track is unreal.": "the bass line on the second track is unreal",
    "My dad played this record constantly when I was a kid.": "their dad played the record constantly when they "
                                                              "were a kid",
    "Recipe in the comments.": "the recipe is in the comments",
    "It took three tries to get right.": "it took three tries to get right",
    "Used a cast iron pan.": "they used a cast iron pan",
    "Family loved it.": "their family loved it",
    "Total cost was about 120 dollars in materials.": "the materials cost about 120 dollars",
    "Took two weekends with basic tools.": "it took two weekends with basic tools",
    "First time working with plywood.": "it was their first time working with plywood",
    "Just moved to the area.": "they just moved to the area",
    "Asking for a friend visiting next month.": "they ask for a friend visiting next month",
    "Parking was a nightmare last time.": "parking was a nightmare last time",
}


def _topic(forum_name: str, title: str) -> str | None:
    """The slot a base post's title was made from (its forum's title patterns in `TITLE_BANKS`), or None."""
    patterns, slots = forum_data.TITLE_BANKS[forum_name]
    return next((s for p in patterns for s in slots if p.format(x=s) == title), None)


def t9302_thread_gist(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    tpl = "Give me the gist of what {{user}} says in the thread they started about {{topic}} in the {{forum}} forum."
    posts = [p for p in post_list(db, sort="new") if p["forum"] in forum_data.TITLE_BANKS]
    topics = [(p, _topic(p["forum"], p["title"])) for p in posts]
    cases = []
    for p, topic in topics:
        said = [s for s in forum_data.BODY_BANKS.get(p["forum"], []) if s in p["body"]]
        said.sort(key=p["body"].index)
        same_topic = [q for q, t in topics if t == topic and (q["forum"], q["author"]) == (p["forum"], p["author"])]
        hits = forum.submission_list(db, sort="new", search=topic, limit=forum.PAGE_SIZE) if topic else []
        if (len(said) >= 2 and len(same_topic) == 1 and typeable(topic) and typeable(p["title"])
                and any(h["id"] == p["id"] for h in hits)):
            cases.append((p, topic, [_POSTER_SAYS[s] for s in said]))
    out = []
    for p, topic, clauses in pick(rng, cases, N):
        answer = f"The poster says {_join(clauses)}."
        out.append(task(sites=["reddit"], start_url=REDDIT, intent_template=tpl,
                        values={"user": p["author"], "topic": topic, "forum": p["forum"]}, eval=_fuzzy(answer),
                        sequence=[type_text("searchbox", "Search", topic), click("link", p["title"]), stop(answer)]))
    return out


# --- code host: an issue's discussion and a README ---------------------------------------------------------

# Each issue title of the seed without a slot (`sites.gitlab.data.ISSUE_TITLES`) -> the issue, described.
_ISSUES = {
    "Crash when the config file is empty": "the crash on an empty config file",
    "Add a dark mode": "the request for a dark mode",
    "Support Windows paths": "the request to support Windows paths",
    "Improve the error message for missing files": "the unclear error message for missing files",
    "Typo in the README": "the typo in the README",
    "Tests fail on Python 3.12": "the test failures on Python 3.12",
    "Add keyboard navigation": "the request for keyboard navigation",
    "Slow start-up with large inputs": "the slow start-up with large inputs",
    "Broken link in the contributing guide": "the broken link in the contributing guide",
    "Colour contrast too low on buttons": "the low colour contrast of the buttons",
    "Upgrade dependencies": "the dependency upgrade",
    "Publish a release with the latest fixes": "the request for a release with the latest fixes",
    "Missing alt text on images": "the missing alt text on images",
    "Allow configuring the output directory": "the request for a configurable output directory",
    "Add a changelog": "the request for a changelog",
    "Flaky test in the CI pipeline": "the flaky test in CI",
    "Screen reader announces the menu twice": "the screen reader announcing the menu twice",
    "Explain how to install from source": "the request to explain installing from source",
    "Add a command-line flag for verbose output": "the request for a verbose-output flag",
    "Font size too small on mobile": "the font size that is too small on mobile",
}
# Each comment of the seed (`sites.gitlab.data.COMMENTS`) -> what its author did, after "commenters".
_COMMENTERS = {
    "Thanks for reporting this, I can reproduce it.": "could reproduce it",
    "I would be happy to work on this.": "offered to work on it",
    "Could you share the exact steps?": "asked for the exact steps",
    "This is fixed on the main branch now.": "said it is fixed on the main branch",
    "Looks good to me!": "said it looks good",
    "Can we add a test for this case?": "asked for a test for this case",
    "Nice catch, thank you.": "thanked the reporter",
    "I think this duplicates an older issue.": "suspected it duplicates an older issue",
    "Let us discuss this in the next meeting.": "proposed discussing it at the next meeting",
    "Approved, merging once CI passes.": "approved it for merging once CI passes",
}


def t9303_issue_discussion(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    tpl = "What did the commenters say about {{issue}} in the {{project}} project, and is that issue still open?"
    cases = []
    for p in visible_projects(db):
        issues = issue_list(db, project_id=p["id"], state="all")
        titles = [i["title"] for i in issues]
        for i in issues[:20]:  # the first page of the project's "All" issues
            if i["title"] not in _ISSUES or titles.count(i["title"]) != 1:
                continue
            notes = [n["body"] for n in rows(db, "SELECT body FROM gitlab_notes WHERE noteable_type = 'Issue' AND "
                                                 "noteable_id = ? ORDER BY created_at, id", (i["id"],))]
            said = _clauses(notes, _COMMENTERS) if notes else []
            if len(said) >= 3:
                cases.append((p, i, said))
    out = []
    for p, i, said in pick(rng, cases, N):
        status = "it is still open" if i["state"] == "opened" else "it is closed"
        answer = f"Commenters {_join(said)}; {status}."
        out.append(task(sites=["gitlab"], start_url=GITLAB, intent_template=tpl,
                        values={"issue": _ISSUES[i["title"]], "project": full_path(p)}, eval=_fuzzy(answer),
                        sequence=[goto(project_url(p, "/-/issues?state=all")), click("link", i["title"]),
                                  stop(answer)]))
    return out


_README = re.compile(r"^# .+?\n\n(?P<about>.+?)\n\n## Installation\n\nClone the repository and read `(?P<start>[^`]+)` "
                     r"to get started\.\n.*?## License\n\n(?P<license>.+?), see LICENSE\.\n\nMaintained by "
                     r"(?P<maintainer>.+?)\.\n$", re.S)


def t9304_readme_summary(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    tpl = ("According to its README, what is {{project}} for, where should a newcomer start, and under which "
           "license is it released?")
    groups = {g["path"]: g["name"] for g in rows(db, "SELECT path, name FROM gitlab_groups")}
    projects = [p for p in visible_projects(db) if p["namespace"] in groups or p["namespace"] == "byteblaze"]
    cases = []
    for p in projects:
        if sum(q["namespace"] == p["namespace"] and q["language"] == p["language"] for q in projects) != 1:
            continue  # the language names one project of its namespace
        readme = next((f["content"] for f in branch_files(db, p["id"], p["default_branch"])
                       if f["path"] == "README.md"), "")
        found = _README.match(readme)
        if found and typeable(readme):
            cases.append((p, found))
    out = []
    for p, found in pick(rng, cases, N):
        group = groups.get(p["namespace"], "")
        described = (f"my {p['language']} project" if p["namespace"] == "byteblaze" else
                     f"the {p['language']} project of {group}" if group.startswith("The ") else
                     f"the {p['language']} project of the {group} group")
        answer = (f"{found['about']} To get started, "
                  f"clone the repository and read {found['start']}. It is released under the {found['license']} "
                  f"and maintained by {found['maintainer']}.")
        out.append(task(sites=["gitlab"], start_url=GITLAB, intent_template=tpl, values={"project": described},
                        eval=_fuzzy(answer),
                        sequence=[goto(f"{GITLAB}/{p['namespace']}"), click("link", f"{p['namespace']} / {p['name']}"),
                                  stop(answer)]))
    return out


# --- wiki: a place described by its kind, location and year ------------------------------------------------

_VERBS = {"Founded": "was founded", "Opened": "opened", "Established": "was established", "Completed": "was completed"}


def t9305_described_place(db: sqlite3.Connection, rng: random.Random) -> list[dict]:
    tpl = "According to Wikipedia, which {{kind}} in {{town}} {{when}}, and what is it known for?"
    landing = f"{W}/{corpus.BOOK}/A/{corpus.LANDING_TITLE}"
    notable = corpus.notable_places()
    def within(q: world.Place, town: str) -> bool:  # a city's places include its neighbourhoods'
        return q.town == town or world.town_by_name(q.town).parent == town

    cases = [p for p in notable if sum(q.category == p.category and within(q, p.town) for q in notable) == 1
             and corpus.article(p.name) is not None and typeable(p.name)]
    out = []

    def values(category: str, town: str, year_label: str, year: int) -> dict:
        return {"kind": corpus.category_label(category), "town": corpus.town_title(world.town_by_name(town)),
                "when": f"{_VERBS[year_label]} in {year}"}

    for p in pick(rng, cases, N - 1):
        answer = f"It is {p.name}. {p.description}"
        out.append(task(sites=["wikipedia"], start_url=landing, intent_template=tpl,
                        values=values(p.category, p.town, corpus.place_year_label(p), p.founded), eval=_fuzzy(answer),
                        sequence=[click("link", corpus.list_title(p.category)), click("link", p.name), stop(answer)]))
    # infeasible: the same kind in a town that has none of it
    p = cases[0]
    town = next(t.name for t in world.TOWNS if not any(q.category == p.category and within(q, t.name) for q in notable))
    v = values(p.category, town, corpus.place_year_label(p), p.founded)
    out.append(task(sites=["wikipedia"], start_url=landing, intent_template=tpl, values=v,
                    eval=_na(f"Wikipedia lists no {v['kind']} in {v['town']}."),
                    sequence=[click("link", corpus.list_title(p.category)), stop("N/A")]))
    rng.shuffle(out)
    return out


TEMPLATES: list[tuple[int, Any]] = [(int(name[1:5]), fn) for name, fn in sorted(globals().items())
                                    if re.fullmatch(r"t93\d\d_\w+", name) and callable(fn)]
TEST_ONLY_TEMPLATES = {template_id for template_id, _ in TEMPLATES}
