"""Forum task templates (intent_template_id 3000-3099) over the embedded forum's seed data.

Each template is `(template_id, fn(db, rng) -> list[task dict])`: `fn` reads the pristine database
(`db`, every site's tables) and instantiates tasks in WebArena's `config_files/test.raw.json`
format with a `reference_action_sequence` whose elements are named by their accessibility role and
name, as Chromium exposes them on `sites/forum`'s pages (dict shape: `templates.base.task`; the
generator adds the ids). Also exports the forum facts and locators `cross.py` shares.
"""
from __future__ import annotations

import random
import sqlite3
from typing import Any, Optional

from agentenv_webarena.sites import forum
from agentenv_webarena.sites.forum.data import PRIMARY_USER
from agentenv_webarena.tasks.templates.base import (
    DONE,
    clear_and_type,
    click,
    goto,
    html_eval,
    pick,
    stop,
    string_eval,
    target,
    task,
    type_text,
    typeable,
    url_eval,
)
from agentenv_webarena.tasks.templates.common import (
    ALL_COMMENT_BODIES,
    MINE_ONLY,
    POST_URL_FUNC,
    REDDIT,
    VOTE_LOCATOR,
    edit_bio_steps,
    forums_by_name,
    is_searchable_post,
    my_vote,
    open_post_via_search,
    post_list,
    post_url,
    primary_biography,
    rows,
    users_with_posts,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

INSTANCES = 10  # instances per template (fewer when the data offer fewer)


def _task(intent_template: str, values: dict, start_url: str, ev: dict, sequence: list) -> dict:
    return task(sites=["reddit"], start_url=start_url, intent_template=intent_template, values=values, eval=ev,
                sequence=sequence)


def _pick(rng: random.Random, items: list, n: int = INSTANCES) -> list:
    return pick(rng, items, n)


# --- forum facts ------------------------------------------------------------------------------------


def _unique_top(items: list[dict], key: str) -> Optional[dict]:
    if not items:
        return None
    ranked = sorted(items, key=lambda r: r[key], reverse=True)
    if len(ranked) > 1 and ranked[0][key] == ranked[1][key]:
        return None
    return ranked[0]


# --- templates --------------------------------------------------------------------------------------

def t3000_top_post_author(db, rng):
    tpl = "Who posted the top-scored submission in the {{forum}} forum?"
    out = []
    for f in forums_by_name(db):
        top = _unique_top(post_list(db, forum=f["name"]), "score")
        if top is None:
            continue
        out.append(_task(tpl, {"forum": f["name"]}, REDDIT + "/forums", string_eval(exact=top["author"]),
                             [click("link", f["name"]), click("link", "Top"), stop(top["author"])]))
    return _pick(rng, out)


def t3001_comment_count(db, rng):
    tpl = 'How many comments does the post "{{title}}" have?'
    posts = [p for p in post_list(db, sort="new") if is_searchable_post(db, p)]
    out = []
    for p in _pick(rng, posts):
        n = str(p["comment_count"])
        out.append(_task(tpl, {"title": p["title"]}, REDDIT, string_eval(exact=n),
                             open_post_via_search(p) + [stop(n)]))
    return out


def t3002_forum_with_most_posts(db, rng):
    tpl = "Among the forums {{a}}, {{b}} and {{c}}, which one has the most submissions?"
    forums = forums_by_name(db)
    out, seen = [], set()
    for _ in range(200):
        trio = rng.sample(forums, 3)
        key = tuple(sorted(f["name"] for f in trio))
        best = _unique_top(trio, "posts")
        if best is None or key in seen:
            continue
        seen.add(key)
        out.append(_task(tpl, {"a": trio[0]["name"], "b": trio[1]["name"], "c": trio[2]["name"]}, REDDIT,
                             string_eval(exact=best["name"]), [click("link", "Forums"), stop(best["name"])]))
        if len(out) == INSTANCES:
            break
    return out


def t3003_newest_post_title(db, rng):
    tpl = "What is the title of the most recent post in the {{forum}} forum?"
    out = []
    for f in forums_by_name(db):
        newest = post_list(db, forum=f["name"], sort="new", limit=1)[0]
        out.append(_task(tpl, {"forum": f["name"]}, REDDIT + "/forums",
                             string_eval(fuzzy=[newest["title"]]),
                             [click("link", f["name"]), click("link", "New"), stop(newest["title"])]))
    return _pick(rng, out)


def _registered(db: sqlite3.Connection, username: str) -> str:
    """The day a user registered, as their page's sidebar shows it (`Registered YYYY-MM-DD HH:MM`)."""
    return rows(db, "SELECT created_at FROM forum_users WHERE username = ?", (username,))[0]["created_at"][:10]


def _last_comment_day(db: sqlite3.Connection, username: str) -> Optional[str]:
    """The day of a user's newest comment (their page lists it first under "Latest comments"), or None."""
    r = rows(db, "SELECT c.created_at FROM forum_comments c JOIN forum_users u ON u.id = c.user_id "
                 "WHERE u.username = ? ORDER BY c.created_at DESC, c.id DESC LIMIT 1", (username,))
    return r[0]["created_at"][:10] if r else None


def _split_feasible(rng: random.Random, items: list, n_na: int) -> list[tuple[bool, Any]]:
    """`items` picked in a seeded order, the first `n_na` marked infeasible (False), then shuffled."""
    chosen = _pick(rng, items)
    marked = [(i >= n_na, item) for i, item in enumerate(chosen)]
    rng.shuffle(marked)
    return marked


def t3004_author_detail(db, rng):
    tpl = 'What is the {{detail}} of the user who posted "{{title}}"?'
    posts = [p for p in post_list(db, sort="new") if p["author"] != PRIMARY_USER and is_searchable_post(db, p)]
    note = "The forum does not show users' email addresses anywhere."
    out = []
    for feasible, p in _split_feasible(rng, posts, 4):
        steps = open_post_via_search(p) + [click("link", p["author"])]
        if feasible:
            day = _registered(db, p["author"])
            out.append(_task(tpl, {"detail": "registration date", "title": p["title"]}, REDDIT,
                             string_eval(must_include=[day]), steps + [stop(day)]))
        else:
            out.append(_task(tpl, {"detail": "email address", "title": p["title"]}, REDDIT,
                             string_eval(fuzzy="N/A", note=note), steps + [stop("N/A")]))
    return out


def t3005_go_to_forum(db, rng):
    tpl = "Go to the {{title}} forum."
    out = []
    for f in forums_by_name(db):
        out.append(_task(tpl, {"title": f["title"]}, REDDIT, url_eval(f"{REDDIT}/f/{f['name']}"),
                             [click("link", "Forums"), click("link", f["name"]), stop(DONE)]))
    return _pick(rng, out)


def t3006_author_profile(db, rng):
    tpl = 'Show me the profile page of the user who posted "{{title}}".'
    posts = [p for p in post_list(db, sort="new") if p["author"] != PRIMARY_USER and is_searchable_post(db, p)]
    return [_task(tpl, {"title": p["title"]}, REDDIT, url_eval(f"{REDDIT}/user/{p['author']}"),
                      open_post_via_search(p) + [click("link", p["author"]), stop(DONE)]) for p in _pick(rng, posts)]


def t3007_open_best_post(db, rng):
    tpl = "Open the {{what}} post in the {{forum}} forum."
    kinds = {"most commented": ("comment_count", "Most commented"), "highest-scored": ("score", "Top")}
    out = []
    for f in forums_by_name(db):
        for what, (key, label) in kinds.items():
            top = _unique_top(post_list(db, forum=f["name"]), key)
            if top is None:
                continue
            out.append(_task(tpl, {"what": what, "forum": f["name"]}, f"{REDDIT}/f/{f['name']}",
                                 url_eval(post_url(top)),
                                 [click("link", label), click("link", top["title"]), stop(DONE)]))
    return _pick(rng, out)


def t3008_sorted_listing(db, rng):
    tpl = "Show me the {{sort}} posts in the {{forum}} forum."
    words = {"new": "newest", "top": "top-scored", "most_commented": "most commented"}
    out = []
    for f in forums_by_name(db):
        for sort, word in words.items():
            out.append(_task(tpl, {"sort": word, "forum": f["name"]}, REDDIT + "/forums",
                                 url_eval(f"{REDDIT}/f/{f['name']}/{sort}"),
                                 [click("link", f["name"]), click("link", forum.SORT_LABELS[sort]), stop(DONE)]))
    return _pick(rng, out)


_NEW_POSTS = [
    ("books", "Best audiobook narrators?", "I want narrators who make long fantasy series easy to follow."),
    ("gaming", "Looking for a cozy farming game", "Something relaxing to play after work, no combat please."),
    ("science", "How do vaccines train the immune system?", "Looking for a clear explanation for a high school class."),
    ("technology", "Which e-reader has the best screen?", "I read mostly at night and want a warm light."),
    ("movies", "Movies with great long takes", "Share your favourite single-shot scenes."),
    ("MachineLearning", "Small datasets and overfitting", "What regularization worked best for you on tiny datasets?"),
    ("personalfinance", "Should I refinance my car loan?", "The rate dropped two points since I signed."),
    ("history", "How were medieval castles heated?", "Fireplaces alone seem like they would not be enough."),
    ("space", "Best time to see the Perseids this year", "Looking for dark sky tips near the city."),
    ("Music", "Albums to learn jazz guitar from", "I know my scales and want to start comping."),
    ("food", "Weeknight dinners in 20 minutes", "Share your fastest reliable recipes."),
    ("DIY", "First time tiling a bathroom floor", "What trowel size should I use for large tiles?"),
    ("pittsburgh", "Best bakery in Lawrenceville?", "Looking for good bread and coffee on weekends."),
    ("AskReddit", "What hobby did you pick up this year?", "Mine is sourdough baking, what is yours?"),
]


def t3009_create_post(db, rng):
    tpl = 'Create a post in the {{forum}} forum titled "{{title}}" with the text "{{body}}".'
    out = []
    for name, title, body in _NEW_POSTS:
        ev = html_eval([target(POST_URL_FUNC, "document.querySelector('.submission__title').outerText", exact=title),
                        target(POST_URL_FUNC, "", must_include=[body])],
                       with_url=f"{REDDIT}/f/{name}")
        seq = [click("link", "Forums"), click("link", name), click("link", "Submit a post"),
               type_text("textbox", "Title", title, enter=False),
               type_text("textbox", "Body", body, enter=False),
               click("button", "Create submission"), stop(DONE)]
        out.append(_task(tpl, {"forum": name, "title": title, "body": body}, REDDIT, ev, seq))
    return _pick(rng, out)


_COMMENTS = ["Thanks for posting this, very helpful!", "I completely agree with this post.",
             "Great question, following for answers.", "This was a fun read, thank you.",
             "I had the same problem last year.", "Bookmarking this for later.", "Interesting, I never knew that.",
             "Congrats, that is a great result!", "Well said, I could not agree more.", "Thanks, this made my day."]


def t3010_comment_on_post(db, rng):
    tpl = 'Leave the comment "{{comment}}" on the post "{{title}}".'
    posts = [p for p in post_list(db, sort="new") if is_searchable_post(db, p)]
    out = []
    for p, text in zip(_pick(rng, posts), _COMMENTS, strict=False):
        ev = html_eval([target(post_url(p), ALL_COMMENT_BODIES, must_include=[text], prep_actions=[MINE_ONLY])])
        seq = open_post_via_search(p) + [type_text("textbox", "Comment", text, enter=False),
                               click("button", "Post"), stop(DONE)]
        out.append(_task(tpl, {"comment": text, "title": p["title"]}, REDDIT, ev, seq))
    return out


def _single_comment_targets(db: sqlite3.Connection, exclude_primary: bool = True) -> list[tuple[dict, dict, int]]:
    """(post, comment, index among the post's comments) where the comment's author has no other comment there."""
    out = []
    for p in post_list(db, sort="new"):
        if p["comment_count"] < 2 or not is_searchable_post(db, p):
            continue
        comments = forum.comment_order(db, p["id"])
        for i, c in enumerate(comments):
            if exclude_primary and c["author"] == PRIMARY_USER:
                continue
            if sum(1 for o in comments if o["author"] == c["author"]) == 1:
                out.append((p, c, i))
    return out


def t3011_reply_to_comment(db, rng):
    tpl = 'Reply "{{reply}}" to the comment by {{user}} on the post "{{title}}".'
    replies = ["Thanks, that is a good point!", "I agree with you completely.", "Could you explain that a bit more?",
               "Ha, that is exactly what I thought.", "Interesting, thanks for sharing.", "Same here, great minds!",
               "I see it differently, but fair enough.", "That is really helpful, thank you.",
               "You made my day with this comment.", "Good advice, I will try that."]
    picks = _pick(rng, _single_comment_targets(db))
    out = []
    for (p, c, _), text in zip(picks, replies, strict=False):
        ev = html_eval([target(post_url(p),
                               f"document.querySelector('#comment-{c['id']} > .comment__replies').outerText",
                               must_include=[text])])
        seq = open_post_via_search(p) + [click("link", f"Reply to {c['author']}"),
                               type_text("textbox", f"Reply to {c['author']}", text, enter=False),
                               click("button", "Post"), stop(DONE)]
        out.append(_task(tpl, {"reply": text, "user": c["author"], "title": p["title"]}, REDDIT, ev, seq))
    return out


def t3012_upvote_newest(db, rng):
    tpl = "Upvote the newest post in the {{forum}} forum."
    out = []
    for f in forums_by_name(db):
        newest = post_list(db, forum=f["name"], sort="new", limit=1)[0]
        if my_vote(db, newest["id"]) == 1:
            continue
        ev = html_eval([target(post_url(newest), VOTE_LOCATOR, must_include=["vote vote--user-upvoted"])])
        seq = [click("link", "New"), click("link", newest["title"]), click("button", "Upvote"), stop(DONE)]
        out.append(_task(tpl, {"forum": f["name"]}, f"{REDDIT}/f/{f['name']}", ev, seq))
    return _pick(rng, out)


def t3013_downvote_post(db, rng):
    tpl = 'Downvote the post "{{title}}".'
    posts = [p for p in post_list(db, sort="new") if my_vote(db, p["id"]) != -1 and p["author"] != PRIMARY_USER
             and is_searchable_post(db, p)]
    out = []
    for p in _pick(rng, posts):
        ev = html_eval([target(post_url(p), VOTE_LOCATOR, must_include=["vote vote--user-downvoted"])])
        out.append(_task(tpl, {"title": p["title"]}, REDDIT, ev,
                             open_post_via_search(p) + [click("button", "Downvote"), stop(DONE)]))
    return out


def _my_posts(db: sqlite3.Connection) -> list[dict]:
    return [p for p in post_list(db, sort="new", author=PRIMARY_USER) if typeable(p["title"])]


def t3014_edit_post_body(db, rng):
    tpl = 'Edit my post "{{title}}" so that its text reads "{{body}}".'
    bodies = ["Update: I found the answer, thanks everyone!", "Edit: solved, see the comments.",
              "Thanks for all the replies, this is now resolved.", "Update: it worked out in the end.",
              "Edit: I changed my mind after reading the comments.", "Final update: all sorted now.",
              "Update: thanks to this forum I figured it out.", "Edit: removed the details for privacy.",
              "Update: I went with the first suggestion.", "Edit: fixed a typo, thanks for reading.",
              "Update: still looking for advice.", "Edit: added more context below."]
    out = []
    posts = _my_posts(db)
    for p, body in zip(_pick(rng, posts, len(posts)), bodies, strict=False):
        ev = html_eval([target(post_url(p), "document.querySelector('.submission__body').outerText", exact=body)])
        seq = ([click("link", p["title"]), click("link", "Edit")] + clear_and_type("textbox", "Body", body)
               + [click("button", "Save"), stop(DONE)])
        out.append(_task(tpl, {"title": p["title"], "body": body}, f"{REDDIT}/user/{PRIMARY_USER}/submissions",
                             ev, seq))
    return out[:INSTANCES]


def t3015_edit_post_title(db, rng):
    tpl = 'Change the title of my post "{{old}}" to "{{new}}".'
    out = []
    for p in _pick(rng, _my_posts(db)):
        new = "Update: " + p["title"]
        ev = html_eval([target(POST_URL_FUNC, "document.querySelector('.submission__title').outerText", exact=new)])
        seq = ([click("link", p["title"]), click("link", "Edit")] + clear_and_type("textbox", "Title", new)
               + [click("button", "Save"), stop(DONE)])
        out.append(_task(tpl, {"old": p["title"], "new": new}, f"{REDDIT}/user/{PRIMARY_USER}/submissions",
                             ev, seq))
    return out


def t3016_edit_bio(db, rng):
    tpl = 'Set my forum biography to "{{bio}}".'
    bios = ["Lifelong Marvel fan and weekend gamer.", "Coffee lover, book reader, occasional poster.",
            "Software tester from Pittsburgh.", "I collect comics and vintage posters.",
            "Here for the book recommendations.", "Amateur chef and movie buff.",
            "Learning something new every day.", "Dog person, cat tolerant.", "Trying to read 50 books this year.",
            "Hiking, photography and good pierogies.", "Retro games and modern music.",
            "Just a friendly lurker who sometimes posts."]
    current = primary_biography(db)
    out = []
    for bio in _pick(rng, [b for b in bios if b != current]):
        ev = html_eval([target(f"{REDDIT}/user/{PRIMARY_USER}", "document.querySelector('.user-bio').outerText",
                               exact=bio)])
        seq = [click("link", PRIMARY_USER)] + edit_bio_steps(db, bio) + [click("button", "Save"), stop(DONE)]
        out.append(_task(tpl, {"bio": bio}, REDDIT, ev, seq))
    return out


def _subscribed(db: sqlite3.Connection) -> list[str]:
    return [r["name"] for r in rows(db, "SELECT f.name FROM forum_subscriptions s "
                                        "JOIN forum_forums f ON f.id = s.forum_id "
                                        "JOIN forum_users u ON u.id = s.user_id WHERE u.username = ? "
                                        "ORDER BY f.name COLLATE NOCASE", (PRIMARY_USER,))]


_SIDEBAR = "document.querySelector('#sidebar > section').outerText"


def t3017_subscribe(db, rng):
    tpl = "Subscribe to the {{forum}} forum."
    mine = _subscribed(db)
    heading = "subscribed forums " + " ".join(mine).lower()
    out = []
    for f in forums_by_name(db):
        if f["name"] in mine or f["name"].lower() in heading:
            continue
        ev = html_eval([target(REDDIT + "/", _SIDEBAR, must_include=[f["name"]])])
        out.append(_task(tpl, {"forum": f["name"]}, REDDIT + "/forums", ev,
                             [click("link", f["name"]), click("button", "Subscribe"), stop(DONE)]))
    return _pick(rng, out)


def t3018_switch_subscription(db, rng):
    tpl = "Unsubscribe from the {{old}} forum and subscribe to the {{new}} forum instead."
    mine = _subscribed(db)
    button = "document.querySelector('form.subscribe-form button').outerText"
    out = []
    for old in mine:
        for f in forums_by_name(db):
            if f["name"] in mine:
                continue
            ev = html_eval([target(f"{REDDIT}/f/{old}", button, exact="Subscribe"),
                            target(f"{REDDIT}/f/{f['name']}", button, exact="Unsubscribe")])
            seq = [click("link", "Forums"), click("link", old), click("button", "Unsubscribe"),
                   click("link", "Forums"), click("link", f["name"]),
                   click("button", "Subscribe"), stop(DONE)]
            out.append(_task(tpl, {"old": old, "new": f["name"]}, REDDIT, ev, seq))
    return _pick(rng, out)


def t3019_count_author_posts(db, rng):
    tpl = 'How many posts has the author of "{{title}}" submitted to the forum?'
    counts = {u["username"]: u["n"] for u in users_with_posts(db)}
    posts = [p for p in post_list(db, sort="new") if p["author"] != PRIMARY_USER and is_searchable_post(db, p)
             and counts[p["author"]] <= forum.PAGE_SIZE]
    by_author: dict[str, dict] = {}
    for p in posts:  # one post per author, so the instances ask about different users
        by_author.setdefault(p["author"], p)
    out = []
    for p in _pick(rng, list(by_author.values())):
        n = str(counts[p["author"]])
        out.append(_task(tpl, {"title": p["title"]}, REDDIT, string_eval(exact=n),
                         open_post_via_search(p) + [click("link", p["author"]), click("link", "Submissions"), stop(n)]))
    return out


def t3020_post_score(db, rng):
    tpl = 'What is the score of the post "{{title}}"?'
    posts = [p for p in post_list(db, sort="new") if is_searchable_post(db, p)]
    return [_task(tpl, {"title": p["title"]}, REDDIT, string_eval(must_include=[str(p["score"])]),
                      open_post_via_search(p) + [stop(str(p["score"]))]) for p in _pick(rng, posts)]


def t3021_user_bio(db, rng):
    tpl = "What does {{user}} say about themselves in their forum biography?"
    users = rows(db, "SELECT username, biography FROM forum_users WHERE biography != '' AND username != ? "
                     "ORDER BY id", (PRIMARY_USER,))
    return [_task(tpl, {"user": u["username"]}, REDDIT, string_eval(fuzzy=[u["biography"]]),
                      [goto(f"{REDDIT}/user/{u['username']}"), stop(u["biography"])])
            for u in _pick(rng, users)]


_NEW_FORUMS = [
    ("origami", "Origami", "Folding paper into art, from cranes to tessellations."),
    ("birdwatching", "Birdwatching", "Sightings, field guides and binocular advice."),
    ("chess", "Chess", "Openings, puzzles and game analysis."),
    ("houseplants", "Houseplants", "Keeping indoor plants happy and green."),
    ("running", "Running", "Training plans, races and running shoes."),
    ("boardgames", "Board Games", "Tabletop games old and new."),
    ("photography", "Photography", "Cameras, lenses and photo critiques."),
    ("woodworking", "Woodworking", "Joinery, tools and finished pieces."),
    ("astronomy_club", "Astronomy Club", "Local stargazing meetups and equipment swaps."),
    ("languagelearning", "Language Learning", "Tips and resources for learning new languages."),
    ("cycling", "Cycling", "Road, gravel and commuting by bike."),
    ("knitting", "Knitting", "Patterns, yarn and finished projects."),
]


def t3022_create_forum(db, rng):
    tpl = 'Create a new forum named "{{name}}" with the title "{{title}}" and the description "{{description}}".'
    existing = {r["name"].lower() for r in forums_by_name(db)}
    out = []
    for name, title, desc in _pick(rng, [f for f in _NEW_FORUMS if f[0].lower() not in existing]):
        ev = html_eval([target(f"{REDDIT}/f/{name}", "document.querySelector('h1.forum-title').outerText", exact=title),
                        target(f"{REDDIT}/f/{name}", "document.querySelector('.forum-description').outerText",
                               exact=desc)])
        seq = [click("link", "Create a forum"), type_text("textbox", "Name", name, enter=False),
               type_text("textbox", "Title", title, enter=False),
               type_text("textbox", "Description", desc, enter=False),
               click("button", "Create forum"), stop(DONE)]
        out.append(_task(tpl, {"name": name, "title": title, "description": desc}, REDDIT + "/forums", ev, seq))
    return out


_ASKS = [
    ("books", "science fiction novels", "Looking for science fiction novels with great world building"),
    ("books", "mystery novels", "Recommend me mystery novels with a clever twist"),
    ("Music", "jazz albums", "Which jazz albums should a beginner start with?"),
    ("gaming", "co-op games", "Good co-op games to play with my partner?"),
    ("food", "vegetarian recipes", "Easy vegetarian recipes for a busy week?"),
    ("movies", "horror films", "Best horror films that are not too gory?"),
    ("personalfinance", "budgeting apps", "Which budgeting apps do you actually use?"),
    ("space", "telescopes", "Beginner telescopes under 300 dollars?"),
    ("DIY", "power drills", "Which power drills are worth the money for home projects?"),
    ("history", "podcasts about ancient Rome", "Any good podcasts about ancient Rome?"),
    ("technology", "password managers", "Which password managers do you trust?"),
    ("MachineLearning", "courses on deep learning", "Good free courses on deep learning?"),
]


def t3023_ask_in_right_forum(db, rng):
    tpl = "Ask for recommendations of {{thing}} in the most relevant forum."
    out = []
    for name, thing, title in _pick(rng, _ASKS):
        ev = html_eval([target(POST_URL_FUNC, "document.querySelector('.submission__inner').outerText",
                               must_include=[thing])],
                       with_url=f"{REDDIT}/f/{name}")
        seq = [click("link", name), click("link", "Submit a post"),
               type_text("textbox", "Title", title, enter=False),
               type_text("textbox", "Body", f"I would love some recommendations of {thing}.", enter=False),
               click("button", "Create submission"), stop(DONE)]
        out.append(_task(tpl, {"thing": thing}, REDDIT + "/forums", ev, seq))
    return out


def t3024_delete_post(db, rng):
    tpl = 'Delete my post "{{title}}".'
    gone = "document.querySelector('.submission__title') === null ? 'deleted' : 'still there'"
    out = []
    for p in _pick(rng, _my_posts(db)):
        ev = html_eval([target(post_url(p), gone, exact="deleted")])
        seq = [click("link", p["title"]), click("button", "Delete"), stop(DONE)]
        out.append(_task(tpl, {"title": p["title"]}, f"{REDDIT}/user/{PRIMARY_USER}/submissions", ev, seq))
    return out


def t3025_upvote_comment(db, rng):
    tpl = 'Upvote the comment by {{user}} on the post "{{title}}".'
    mine = {r["comment_id"] for r in rows(db, "SELECT v.comment_id FROM forum_comment_votes v JOIN forum_users u "
                                              "ON u.id = v.user_id WHERE u.username = ?", (PRIMARY_USER,))}
    picks = _pick(rng, [t for t in _single_comment_targets(db) if t[1]["id"] not in mine])
    out = []
    for p, c, _ in picks:
        locator = f"document.querySelector('#comment-{c['id']} .comment__vote form').getAttribute('class')"
        ev = html_eval([target(post_url(p), locator, must_include=["vote vote--user-upvoted"])])
        seq = open_post_via_search(p) + [click("link", f"Reply to {c['author']}"), click("button", "Upvote"),
                                         stop(DONE)]
        out.append(_task(tpl, {"user": c["author"], "title": p["title"]}, REDDIT, ev, seq))
    return out


def t3026_newest_author_activity(db, rng):
    tpl = "On which day did the author of the newest post in the {{forum}} forum {{event}}?"
    note = "The forum does not show when users log in."
    cases = []
    for f in forums_by_name(db):
        newest = post_list(db, forum=f["name"], sort="new", limit=1)[0]
        if newest["author"] != PRIMARY_USER and _last_comment_day(db, newest["author"]):
            cases.append((f["name"], newest["author"]))
    out = []
    for feasible, (name, author) in _split_feasible(rng, cases, 4):
        steps = [click("link", "Forums"), click("link", name), click("link", forum.SORT_LABELS["new"]),
                 click("link", author)]
        if feasible:
            day = _last_comment_day(db, author)
            out.append(_task(tpl, {"forum": name, "event": "last comment on a post"}, REDDIT,
                             string_eval(must_include=[day]), steps + [stop(day)]))
        else:
            out.append(_task(tpl, {"forum": name, "event": "last log in"}, REDDIT,
                             string_eval(fuzzy="N/A", note=note), steps + [stop("N/A")]))
    return out


def t3027_newest_post_by_user(db, rng):
    tpl = "What is the title of the most recent post by {{user}}?"
    users = [u["username"] for u in users_with_posts(db) if u["username"] != PRIMARY_USER]
    out = []
    for u in _pick(rng, users):
        newest = post_list(db, sort="new", author=u, limit=1)[0]
        out.append(_task(tpl, {"user": u}, REDDIT, string_eval(fuzzy=[newest["title"]]),
                             [goto(f"{REDDIT}/user/{u}"), stop(newest["title"])]))
    return out


def t3028_comment_count_by_user_in_post(db, rng):
    tpl = 'Which user wrote the most comments on the post "{{title}}"?'
    out = []
    for p in post_list(db, sort="new"):
        if p["comment_count"] < 3 or not is_searchable_post(db, p):
            continue
        counts: dict[str, int] = {}
        for c in forum.comment_order(db, p["id"]):
            counts[c["author"]] = counts.get(c["author"], 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: -kv[1])
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            continue
        out.append(_task(tpl, {"title": p["title"]}, REDDIT, string_eval(exact=ranked[0][0]),
                             open_post_via_search(p) + [stop(ranked[0][0])]))
    return _pick(rng, out)


# Held out: every instance of these goes to the test split (templates never seen in training).
TEST_ONLY_TEMPLATES = {3011, 3018, 3021, 3022, 3026, 3028}

TEMPLATES = [
    (3000, t3000_top_post_author),
    (3001, t3001_comment_count),
    (3002, t3002_forum_with_most_posts),
    (3003, t3003_newest_post_title),
    (3004, t3004_author_detail),
    (3005, t3005_go_to_forum),
    (3006, t3006_author_profile),
    (3007, t3007_open_best_post),
    (3008, t3008_sorted_listing),
    (3009, t3009_create_post),
    (3010, t3010_comment_on_post),
    (3011, t3011_reply_to_comment),
    (3012, t3012_upvote_newest),
    (3013, t3013_downvote_post),
    (3014, t3014_edit_post_body),
    (3015, t3015_edit_post_title),
    (3016, t3016_edit_bio),
    (3017, t3017_subscribe),
    (3018, t3018_switch_subscription),
    (3019, t3019_count_author_posts),
    (3020, t3020_post_score),
    (3021, t3021_user_bio),
    (3022, t3022_create_forum),
    (3023, t3023_ask_in_right_forum),
    (3024, t3024_delete_post),
    (3025, t3025_upvote_comment),
    (3026, t3026_newest_author_activity),
    (3027, t3027_newest_post_by_user),
    (3028, t3028_comment_count_by_user_in_post),
]
