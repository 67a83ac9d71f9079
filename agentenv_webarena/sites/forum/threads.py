"""The embedded forum: a Postmill-like reddit clone (WebArena's `reddit` site).

Owns the forum's tables (`forum_*`), its deterministic seed data and its Starlette app. It does
not own instances or resets (`store.InstanceStore`), the control endpoints (`apps`), or logins of
the env (`tasks.auth`, whose recipe this site answers: POST `/login_check` with `_username` and
`_password`, cookie `forum_session`).

URLs (Postmill's shapes, so WebArena-style URL checks and `reddit_get_post_url` carry over):

| Method & path                                  | Page / effect                                             |
|------------------------------------------------|-----------------------------------------------------------|
| GET  `/`, `/hot`, `/new`, `/top`, `/most_commented` | every forum's submissions, sorted (`?page=N`, 20 a page) |
| GET  `/forums`                                 | table of forums: name, title, submissions, subscribers    |
| GET  `/f/<forum>`, `/f/<forum>/<sort>`         | one forum's submissions (sort as above, default hot)      |
| GET  `/f/<forum>/<id>/<slug>` (also `/f/<forum>/<id>/`) | a submission with its comment tree and comment form |
| POST `/f/<forum>/<id>/-/comment`               | top-level comment, field `comment[comment]`               |
| GET/POST `/f/<forum>/<id>/-/comment/<cid>`     | one comment's thread and its reply form (`reply[comment]`)|
| GET/POST `/f/<forum>/<id>/-/edit`              | edit own submission (same fields as submit)               |
| POST `/f/<forum>/<id>/-/delete`                | delete own submission (with its comments and votes)       |
| POST `/sv/<id>`, `/cv/<cid>`                   | vote on a submission / comment: `choice` 1, -1 or 0 (retract), `next` = where to return |
| GET/POST `/submit`, `/submit/<forum>`          | create a submission: `submission[title]`, `submission[url]`, `submission[body]`, `submission[forum]` |
| POST `/f/<forum>/subscribe`, `/f/<forum>/unsubscribe` | (un)subscribe the logged-in user                   |
| GET/POST `/create_forum`                       | new forum: `forum[name]`, `forum[title]`, `forum[description]`, `forum[sidebar]` |
| GET  `/user/<name>`, `/user/<name>/submissions`, `/user/<name>/comments` | user page (bio, latest posts and comments), full lists |
| GET/POST `/user/<name>/edit_biography`         | own biography, field `user_biography[biography]`          |
| GET  `/search?q=...`                           | submissions whose title or body contains the words        |
| GET  `/login`; POST `/login_check`; POST `/logout` | login form (`_username`, `_password`), session cookie `forum_session` |

After a POST the site answers 303 to the page showing the result (a new submission: its
`/f/<forum>/<id>/<slug>`). Actions that need a user redirect anonymous visitors to `/login`.

CSS hooks (Postmill's class names, for WebArena-style `program_html` locators):

- submission: `article.submission#submission-<id>` > `div.submission__vote` (vote form) and
  `div.submission__inner` holding `.submission__title` (h1 on the post page, h2 in lists) with the
  link `a.submission__link`, `p.submission__url` (link posts: `a` to the URL), `p.submission__info`
  (`a.submission__author`, `time`, `a.submission__forum`, `span.submission__edited` when edited),
  `div.submission__body` (always present on the post page, empty for a title-only post) and
  `nav.submission__nav`. On a post page `document.querySelector('.submission__title').outerText`
  is the title and `.submission__body` the body.
- votes: `form.vote` whose class is exactly `vote`, `vote vote--user-upvoted` or
  `vote vote--user-downvoted` (the logged-in user's vote), buttons `.vote__up` / `.vote__down`
  (named "Upvote" / "Downvote", or "Retract upvote" / "Retract downvote" when active) and the
  score `span.vote__net-score` ("12 points": one text node, so WebArena's StaticText de-duplication
  never hides a bare number). `document.querySelector('div.submission__vote').querySelector('form')
  .getAttribute('class')` reads the user's vote on the post page's submission.
- comments: `section.comments` > `h2.comments__heading` ("N comments"), the comment form, then
  `article.comment#comment-<cid>` > `div.comment__vote`, `p.comment__info` (`a.comment__author`),
  `div.comment__body`, `nav.comment__nav` (a "Reply" link) and `div.comment__replies` (children).
  Each level is ordered oldest first (`created_at`, then id). A comment's page
  (`/f/<forum>/<id>/-/comment/<cid>`, its "Reply" link) shows the post without a vote form, then
  the reply form and that comment's thread, so its first "Upvote" button is the comment's.
- sidebar: `aside#sidebar > section`; the first section is "Subscribed forums" on the front pages
  and the forum card (`.forum-description`, `.forum-sidebar`, subscribe button
  `form.subscribe-form button`, exactly "Subscribe" or "Unsubscribe") on a forum page, whose main
  heading is `h1.forum-title`.
- user page: `h1.user-name`, `div.user-bio` (the biography, empty when none).

Sorts: hot = `epoch(created_at) + 43200 * score` descending (a point of score is worth twelve
hours); new = `created_at` descending; top = score descending, then newest; most_commented =
comment count descending, then newest. Score is the sum of the votes (+1 / -1); a new submission or
comment starts with its author's upvote, as in Postmill. New rows get the site clock: one minute
after the newest timestamp in the database, so the data stay deterministic.
"""
from __future__ import annotations

import datetime as dt
import random
import re
import sqlite3
from typing import Any, Iterable, Optional
from urllib.parse import quote, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from agentenv_webarena.sites import forum_data as data
from agentenv_webarena.sites.common import db, esc, html_page, new_token, query_url, read_form, redirect
from agentenv_webarena.sites.store import InstanceStore

__all__ = ["SCHEMA", "seed", "create_app", "COOKIE", "PAGE_SIZE", "SORTS", "slugify", "post_path",
           "submission_list", "comment_order", "SEED", "TIME_FORMAT"]

COOKIE = "forum_session"
PAGE_SIZE = 20
SORTS = ("hot", "new", "top", "most_commented")
SORT_LABELS = {"hot": "Hot", "new": "New", "top": "Top", "most_commented": "Most commented"}
SEED = 8088
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
_HOT_POINT_S = 43200

SCHEMA = """
CREATE TABLE forum_users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password TEXT NOT NULL,
    biography TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE TABLE forum_sessions (
    token TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES forum_users(id) ON DELETE CASCADE
);
CREATE TABLE forum_forums (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    sidebar TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE TABLE forum_submissions (
    id INTEGER PRIMARY KEY,
    forum_id INTEGER NOT NULL REFERENCES forum_forums(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    title TEXT NOT NULL,
    url TEXT NOT NULL DEFAULT '',
    body TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    edited_at TEXT
);
CREATE INDEX forum_submissions_forum ON forum_submissions(forum_id);
CREATE INDEX forum_submissions_user ON forum_submissions(user_id);
CREATE TABLE forum_comments (
    id INTEGER PRIMARY KEY,
    submission_id INTEGER NOT NULL REFERENCES forum_submissions(id) ON DELETE CASCADE,
    parent_id INTEGER REFERENCES forum_comments(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    edited_at TEXT
);
CREATE INDEX forum_comments_submission ON forum_comments(submission_id);
CREATE INDEX forum_comments_user ON forum_comments(user_id);
CREATE TABLE forum_submission_votes (
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    submission_id INTEGER NOT NULL REFERENCES forum_submissions(id) ON DELETE CASCADE,
    choice INTEGER NOT NULL CHECK (choice IN (-1, 1)),
    PRIMARY KEY (user_id, submission_id)
);
CREATE INDEX forum_submission_votes_target ON forum_submission_votes(submission_id);
CREATE TABLE forum_comment_votes (
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    comment_id INTEGER NOT NULL REFERENCES forum_comments(id) ON DELETE CASCADE,
    choice INTEGER NOT NULL CHECK (choice IN (-1, 1)),
    PRIMARY KEY (user_id, comment_id)
);
CREATE INDEX forum_comment_votes_target ON forum_comment_votes(comment_id);
CREATE TABLE forum_subscriptions (
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    forum_id INTEGER NOT NULL REFERENCES forum_forums(id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, forum_id)
);
"""


# --- seed ------------------------------------------------------------------------------------------

_SEED_START = dt.datetime(2023, 1, 2, 8, 0, 0)
_SEED_SPAN_S = 175 * 86400  # posts fall between early January and late June 2023


def _ts(t: dt.datetime) -> str:
    return t.strftime(TIME_FORMAT)


def _parse_ts(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, TIME_FORMAT)


def seed(conn: sqlite3.Connection) -> None:
    """Insert the deterministic forum data: 14 forums, 30 users, ~300 posts, comments, votes.

    Uses `random.Random(SEED)` only (no clock), so every build yields the same rows and ids.
    """
    rng = random.Random(SEED)
    user_ids: dict[str, int] = {}
    for i, name in enumerate(data.USERS, start=1):
        joined = _ts(_SEED_START - dt.timedelta(days=30 + 11 * i))
        conn.execute("INSERT INTO forum_users (id, username, password, biography, created_at) VALUES (?,?,?,?,?)",
                     (i, name, "test1234", data.BIOS.get(name, ""), joined))
        user_ids[name] = i
    forum_ids: dict[str, int] = {}
    for i, (name, title, description, sidebar, _weight) in enumerate(data.FORUMS, start=1):
        conn.execute("INSERT INTO forum_forums (id, name, title, description, sidebar, created_at) VALUES (?,?,?,?,?,?)",
                     (i, name, title, description, sidebar, _ts(_SEED_START - dt.timedelta(days=400 - 9 * i))))
        forum_ids[name] = i

    posts = _seed_posts(rng, list(user_ids))
    posts.sort(key=lambda p: p["created_at"])
    primary = user_ids[data.PRIMARY_USER]
    for sid, post in enumerate(posts, start=1):
        conn.execute("INSERT INTO forum_submissions (id, forum_id, user_id, title, url, body, created_at, edited_at) "
                     "VALUES (?,?,?,?,?,?,?,?)",
                     (sid, forum_ids[post["forum"]], user_ids[post["author"]], post["title"], post["url"],
                      post["body"], _ts(post["created_at"]), post["edited_at"]))
        post["id"] = sid
    _seed_comments(conn, rng, posts, user_ids)
    _seed_votes(conn, rng, posts, user_ids, primary)
    _seed_subscriptions(conn, rng, user_ids, forum_ids, primary)


def _seed_posts(rng: random.Random, users: list[str]) -> list[dict]:
    posts: list[dict] = []
    seen: set[str] = set()
    # The primary user posts in a handful of forums (so "edit my post" tasks have material).
    authors = users[1:]
    for name, *_rest, weight in data.FORUMS:
        patterns, slots = data.TITLE_BANKS[name]
        candidates = [p.format(x=s) for p in patterns for s in slots]
        rng.shuffle(candidates)
        count = weight + rng.randint(-3, 3)
        for title in candidates:
            if count == 0:
                break
            if title.lower() in seen:
                continue
            seen.add(title.lower())
            count -= 1
            author = data.PRIMARY_USER if rng.random() < 0.06 else rng.choice(authors)
            created = _SEED_START + dt.timedelta(seconds=rng.randrange(_SEED_SPAN_S))
            url = ""
            if name in ("science", "technology", "space", "MachineLearning", "movies", "history") and rng.random() < 0.3:
                url = f"{rng.choice(data.LINK_HOSTS)}/{slugify(title)[:40]}"
            n_sentences = 0 if (url and rng.random() < 0.6) else rng.choice((0, 1, 2, 2, 3))
            pool = data.BODY_BANKS[name] + data.GENERIC_BODY
            body = " ".join(rng.sample(pool, n_sentences))
            edited = None
            if body and rng.random() < 0.1:
                edited = _ts(created + dt.timedelta(minutes=rng.randint(5, 600)))
            posts.append({"forum": name, "author": author, "title": title, "url": url, "body": body,
                          "created_at": created, "edited_at": edited})
    return posts


def _seed_comments(conn: sqlite3.Connection, rng: random.Random, posts: list[dict], user_ids: dict[str, int]) -> None:
    rows = []
    for post in posts:
        n = min(rng.choice((0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 8)), 10)
        thread: list[tuple[int, dt.datetime]] = []  # (row index, created)
        for _ in range(n):
            author = rng.choice(data.USERS[1:] if rng.random() > 0.05 else [data.PRIMARY_USER])
            parent = None
            base = post["created_at"]
            if thread and rng.random() < 0.35:
                parent_index, base = rng.choice(thread)
                parent = parent_index
            created = base + dt.timedelta(minutes=rng.randint(3, 3000))
            rows.append({"post": post["id"], "parent": parent, "author": author,
                         "body": rng.choice(data.COMMENT_BANK), "created": created})
            thread.append((len(rows) - 1, created))
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["created"], i))
    ids = {row_index: cid for cid, row_index in enumerate(order, start=1)}
    for row_index in order:
        row = rows[row_index]
        parent_id = ids[row["parent"]] if row["parent"] is not None else None
        conn.execute("INSERT INTO forum_comments (id, submission_id, parent_id, user_id, body, created_at) "
                     "VALUES (?,?,?,?,?,?)",
                     (ids[row_index], row["post"], parent_id, user_ids[row["author"]], row["body"],
                      _ts(row["created"])))


def _seed_votes(conn: sqlite3.Connection, rng: random.Random, posts: list[dict], user_ids: dict[str, int],
                primary: int) -> None:
    voters = [uid for uid in user_ids.values() if uid != primary]
    for post in posts:
        author = user_ids[post["author"]]
        conn.execute("INSERT INTO forum_submission_votes VALUES (?,?,1)", (author, post["id"]))
        appeal = rng.random()
        up_share = 0.55 + 0.4 * appeal
        for uid in voters:
            if uid == author or rng.random() > 0.1 + 0.4 * appeal:
                continue
            conn.execute("INSERT INTO forum_submission_votes VALUES (?,?,?)",
                         (uid, post["id"], 1 if rng.random() < up_share else -1))
    # The primary user voted on a few posts (never their own).
    theirs = [p for p in posts if user_ids[p["author"]] != primary]
    for post in rng.sample(theirs, 14):
        conn.execute("INSERT INTO forum_submission_votes VALUES (?,?,?)",
                     (primary, post["id"], 1 if rng.random() < 0.75 else -1))
    comments = conn.execute("SELECT id, user_id FROM forum_comments ORDER BY id").fetchall()
    for cid, author in comments:
        conn.execute("INSERT INTO forum_comment_votes VALUES (?,?,1)", (author, cid))
        for uid in rng.sample(voters, rng.randint(0, 5)):
            if uid != author:
                conn.execute("INSERT INTO forum_comment_votes VALUES (?,?,?)",
                             (uid, cid, 1 if rng.random() < 0.8 else -1))


def _seed_subscriptions(conn: sqlite3.Connection, rng: random.Random, user_ids: dict[str, int],
                        forum_ids: dict[str, int], primary: int) -> None:
    names = sorted(forum_ids)
    for uid in user_ids.values():
        if uid == primary:
            chosen = ["books", "gaming", "pittsburgh"]
        else:
            chosen = rng.sample(names, rng.randint(1, 6))
        for name in chosen:
            conn.execute("INSERT INTO forum_subscriptions VALUES (?,?)", (uid, forum_ids[name]))


# --- queries shared with the task templates ----------------------------------------------------------

def slugify(title: str) -> str:
    """Postmill-style URL slug: lower-case words joined by '-', at most 100 characters."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:100].rstrip("-") or "-"


def post_path(forum: str, submission_id: int, title: str) -> str:
    """`/f/<forum>/<id>/<slug>`, the canonical path of a submission."""
    return f"/f/{forum}/{submission_id}/{slugify(title)}"


_SUBMISSION_SELECT = """
SELECT s.id, s.title, s.url, s.body, s.created_at, s.edited_at, s.user_id,
       f.name AS forum, u.username AS author,
       (SELECT COALESCE(SUM(choice), 0) FROM forum_submission_votes v WHERE v.submission_id = s.id) AS score,
       (SELECT COUNT(*) FROM forum_comments c WHERE c.submission_id = s.id) AS comment_count
FROM forum_submissions s JOIN forum_forums f ON f.id = s.forum_id JOIN forum_users u ON u.id = s.user_id
"""

_ORDER = {
    "hot": f"(CAST(strftime('%s', s.created_at) AS INTEGER) + {_HOT_POINT_S} * score) DESC, s.id DESC",
    "new": "s.created_at DESC, s.id DESC",
    "top": "score DESC, s.created_at DESC, s.id DESC",
    "most_commented": "comment_count DESC, s.created_at DESC, s.id DESC",
}


def _filters(forum: Optional[str], author: Optional[str], search: Optional[str]) -> tuple[str, list]:
    where, args = [], []
    if forum is not None:
        where.append("f.name = ? COLLATE NOCASE")
        args.append(forum)
    if author is not None:
        where.append("u.username = ? COLLATE NOCASE")
        args.append(author)
    for word in (search or "").split():
        where.append("(s.title LIKE ? OR s.body LIKE ?)")
        args += [f"%{word}%", f"%{word}%"]
    return (" WHERE " + " AND ".join(where) if where else ""), args


def submission_list(conn: sqlite3.Connection, *, sort: str = "hot", forum: Optional[str] = None,
                    author: Optional[str] = None, search: Optional[str] = None,
                    limit: Optional[int] = None, offset: int = 0) -> list[dict]:
    """Submissions with `score` and `comment_count`, filtered and sorted as the pages list them.

    Args:
        sort: one of `SORTS`.
        forum / author: exact names (case-insensitive).
        search: every word must occur in the title or body (case-insensitive).
    """
    if sort not in _ORDER:
        raise ValueError(f"sort {sort!r} is unknown; choose from {list(SORTS)}")
    where, args = _filters(forum, author, search)
    sql = _SUBMISSION_SELECT + where + " ORDER BY " + _ORDER[sort]
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        args += [limit, offset]
    return _dicts(conn.execute(sql, args))


def _dicts(cursor: sqlite3.Cursor) -> list[dict]:
    """Rows as dicts, whatever the connection's row_factory."""
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _count_submissions(conn: sqlite3.Connection, *, forum: Optional[str] = None, author: Optional[str] = None,
                       search: Optional[str] = None) -> int:
    where, args = _filters(forum, author, search)
    return conn.execute("SELECT COUNT(*) FROM forum_submissions s JOIN forum_forums f ON f.id = s.forum_id "
                        "JOIN forum_users u ON u.id = s.user_id" + where, args).fetchone()[0]


def comment_order(conn: sqlite3.Connection, submission_id: int) -> list[dict]:
    """The post's comments in page order (depth-first, each level oldest first), with `depth` and `score`."""
    rows = _dicts(conn.execute(
        "SELECT c.id, c.parent_id, c.body, c.created_at, c.edited_at, c.user_id, u.username AS author, "
        "(SELECT COALESCE(SUM(choice), 0) FROM forum_comment_votes v WHERE v.comment_id = c.id) AS score "
        "FROM forum_comments c JOIN forum_users u ON u.id = c.user_id WHERE c.submission_id = ? "
        "ORDER BY c.created_at, c.id", (submission_id,)))
    children: dict[Optional[int], list[dict]] = {}
    for row in rows:
        children.setdefault(row["parent_id"], []).append(row)
    out: list[dict] = []

    def walk(parent: Optional[int], depth: int) -> None:
        for row in children.get(parent, []):
            out.append({**row, "depth": depth})
            walk(row["id"], depth + 1)

    walk(None, 0)
    return out


def _now(conn: sqlite3.Connection) -> str:
    """The site clock: one minute after the newest timestamp stored."""
    latest = conn.execute(
        "SELECT MAX(t) FROM (SELECT MAX(created_at) AS t FROM forum_submissions "
        "UNION ALL SELECT MAX(created_at) FROM forum_comments UNION ALL SELECT MAX(edited_at) FROM forum_submissions "
        "UNION ALL SELECT MAX(created_at) FROM forum_forums)").fetchone()[0]
    base = _parse_ts(latest) if latest else _SEED_START
    return _ts(base + dt.timedelta(minutes=1))


# --- rendering -------------------------------------------------------------------------------------

_CSS = (
    ".site-nav{display:flex;gap:1em;align-items:center;padding:.5em 0;border-bottom:1px solid #ccc}"
    ".site-nav form{margin:0}.layout{display:flex;gap:2em}#main{flex:1;min-width:0}#sidebar{width:18em}"
    ".submission{display:flex;gap:.8em;margin:.8em 0}.submission__title{font-size:1.1em;margin:0}"
    "h1.submission__title{font-size:1.5em}.submission__info,.comment__info{color:#555;font-size:.9em;margin:.2em 0}"
    ".vote{display:flex;flex-direction:column;align-items:center;margin:0}.vote__button{font-size:.75em}"
    ".vote--user-upvoted .vote__up{color:#f80}.vote--user-downvoted .vote__down{color:#08f}"
    ".comment{margin:.5em 0}.comment__row{display:flex;gap:.6em}.comment__replies{margin-left:2em}"
    "label{display:block;margin-top:.6em}textarea{width:32em;max-width:100%}input[type=text],input[type=url]{width:32em}"
    ".pagination{display:flex;gap:1em;margin:1em 0}.sort-nav{display:flex;gap:1em}.flash{background:#dfd;padding:.3em}"
    ".errors{color:#b00}table{border-collapse:collapse}td,th{padding:.2em .8em;text-align:left}"
)


class _Ctx:
    """What every page needs: the request, its instance DB and the logged-in user (or None)."""

    def __init__(self, request: Request, conn: sqlite3.Connection):
        self.request = request
        self.conn = conn
        self.user: Optional[sqlite3.Row] = None
        token = request.cookies.get(COOKIE)
        if token:
            self.user = conn.execute(
                "SELECT u.* FROM forum_sessions s JOIN forum_users u ON u.id = s.user_id WHERE s.token = ?",
                (token,)).fetchone()

    @property
    def here(self) -> str:
        path = self.request.url.path
        return path + ("?" + self.request.url.query if self.request.url.query else "")


def _header(ctx: _Ctx) -> str:
    if ctx.user is not None:
        name = esc(ctx.user["username"])
        account = (f'<a href="/user/{quote(ctx.user["username"])}" class="site-nav__user">{name}</a>'
                   '<form action="/logout" method="post"><button type="submit">Log out</button></form>')
    else:
        account = '<a href="/login">Log in</a>'
    return ('<header class="site-header"><nav class="site-nav" aria-label="Site">'
            '<a href="/" class="site-nav__home"><strong>Postmill</strong></a>'
            '<a href="/forums">Forums</a><a href="/submit">Submit</a>'
            '<form role="search" action="/search" method="get" class="search-form">'
            '<input type="search" name="q" aria-label="Search" placeholder="Search"></form>'
            f"{account}</nav></header>")


def _page(ctx: _Ctx, title: str, main: str, sidebar: str = "", status_code: int = 200) -> HTMLResponse:
    aside = f'<aside id="sidebar">{sidebar}</aside>' if sidebar else ""
    body = f'{_header(ctx)}<div class="layout"><main id="main">{main}</main>{aside}</div>'
    return html_page(title, body, status_code=status_code, css=_CSS)


def _not_found(ctx: _Ctx, what: str) -> HTMLResponse:
    return _page(ctx, "Page not found", f"<h1>Page not found</h1><p>{esc(what)}</p>", status_code=404)


def _paragraphs(text: str) -> str:
    parts = [p.strip() for p in re.split(r"\n\s*\n", text or "") if p.strip()]
    return "".join(f"<p>{esc(p)}</p>" for p in parts)


def _when(ts: str) -> str:
    t = _parse_ts(ts)
    return f'<time datetime="{t.isoformat()}+00:00">{t.strftime("%Y-%m-%d %H:%M")}</time>'


def _vote_form(kind: str, target_id: int, score: int, mine: int, back: str) -> str:
    state = {1: " vote--user-upvoted", -1: " vote--user-downvoted"}.get(mine, "")
    up_label, up_value = ("Retract upvote", 0) if mine == 1 else ("Upvote", 1)
    down_label, down_value = ("Retract downvote", 0) if mine == -1 else ("Downvote", -1)
    action = f"/{'sv' if kind == 'submission' else 'cv'}/{target_id}"
    return (f'<form action="{action}" method="post" class="vote{state}">'
            f'<input type="hidden" name="next" value="{esc(back)}">'
            f'<button type="submit" class="vote__button vote__up" name="choice" value="{up_value}">{up_label}</button>'
            f'<span class="vote__net-score">{score} point{"" if abs(score) == 1 else "s"}</span>'
            f'<button type="submit" class="vote__button vote__down" name="choice" value="{down_value}">{down_label}</button>'
            "</form>")


def _my_votes(ctx: _Ctx, table: str, column: str, ids: Iterable[int]) -> dict[int, int]:
    ids = list(ids)
    if ctx.user is None or not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = ctx.conn.execute(f"SELECT {column}, choice FROM {table} WHERE user_id = ? AND {column} IN ({marks})",
                            (ctx.user["id"], *ids)).fetchall()
    return {r[0]: r[1] for r in rows}


def _submission_info(row: Any) -> str:
    edited = ' <span class="submission__edited">(edited)</span>' if row["edited_at"] else ""
    return (f'<p class="submission__info">Submitted by <a class="submission__author" '
            f'href="/user/{quote(row["author"])}">{esc(row["author"])}</a> on {_when(row["created_at"])} in '
            f'<a class="submission__forum" href="/f/{quote(row["forum"])}">f/{esc(row["forum"])}</a>{edited}</p>')


def _listing(ctx: _Ctx, rows: list[dict]) -> str:
    if not rows:
        return '<p class="empty">There are no submissions here.</p>'
    mine = _my_votes(ctx, "forum_submission_votes", "submission_id", (r["id"] for r in rows))
    items = []
    for row in rows:
        path = post_path(row["forum"], row["id"], row["title"])
        url = ""
        if row["url"]:
            host = urlsplit(row["url"]).netloc
            url = f' <span class="submission__host">({esc(host)})</span>'
        n = row["comment_count"]
        items.append(
            f'<article class="submission" id="submission-{row["id"]}">'
            f'<div class="submission__vote">{_vote_form("submission", row["id"], row["score"], mine.get(row["id"], 0), ctx.here)}</div>'
            f'<div class="submission__inner"><h2 class="submission__title"><a class="submission__link" '
            f'href="{esc(path)}">{esc(row["title"])}</a>{url}</h2>{_submission_info(row)}'
            f'<nav class="submission__nav"><a href="{esc(path)}">{n} comment{"" if n == 1 else "s"}</a></nav>'
            "</div></article>")
    return '<div class="submission-list">' + "".join(items) + "</div>"


def _pagination(ctx: _Ctx, page: int, total: int) -> str:
    links = []
    path = ctx.request.url.path
    params = {k: v for k, v in ctx.request.query_params.items() if k != "page"}
    if page > 1:
        links.append(f'<a href="{esc(query_url(path, **params, page=page - 1 if page > 2 else None))}">Previous page</a>')
    if page * PAGE_SIZE < total:
        links.append(f'<a href="{esc(query_url(path, **params, page=page + 1))}">Next page</a>')
    return f'<nav class="pagination" aria-label="Pages">{"".join(links)}</nav>' if links else ""


def _page_number(request: Request) -> int:
    try:
        return max(1, int(request.query_params.get("page", "1")))
    except ValueError:
        return 1


def _sort_nav(base: str, current: str) -> str:
    links = []
    for sort in SORTS:
        label = SORT_LABELS[sort]
        href = f"{base.rstrip('/')}/{sort}" if base != "/" else f"/{sort}"
        current_attr = ' aria-current="page"' if sort == current else ""
        links.append(f'<a href="{esc(href)}"{current_attr}>{label}</a>')
    return f'<nav class="sort-nav" aria-label="Sort">{"".join(links)}</nav>'


def _subscriptions_section(ctx: _Ctx) -> str:
    if ctx.user is None:
        return ('<section class="subscriptions"><h2>Subscribed forums</h2>'
                '<p><a href="/login">Log in</a> to subscribe to forums.</p></section>')
    rows = ctx.conn.execute(
        "SELECT f.name FROM forum_subscriptions s JOIN forum_forums f ON f.id = s.forum_id WHERE s.user_id = ? "
        "ORDER BY f.name COLLATE NOCASE", (ctx.user["id"],)).fetchall()
    items = "".join(f'<li><a href="/f/{quote(r["name"])}">{esc(r["name"])}</a></li>' for r in rows)
    inner = f"<ul>{items}</ul>" if rows else "<p>You are not subscribed to any forum.</p>"
    return f'<section class="subscriptions"><h2>Subscribed forums</h2>{inner}</section>'


# --- handlers --------------------------------------------------------------------------------------

def _login_required(ctx: _Ctx) -> Optional[Response]:
    return None if ctx.user is not None else redirect("/login")


def _forum_row(conn: sqlite3.Connection, name: str) -> Optional[sqlite3.Row]:
    return conn.execute("SELECT * FROM forum_forums WHERE name = ? COLLATE NOCASE", (name,)).fetchone()


def _submission_row(conn: sqlite3.Connection, submission_id: int) -> Optional[sqlite3.Row]:
    return conn.execute(_SUBMISSION_SELECT + " WHERE s.id = ?", (submission_id,)).fetchone()


_form = read_form


def _safe_next(value: Optional[str], fallback: str) -> str:
    """Only same-site paths are followed after a POST."""
    if value and value.startswith("/") and not value.startswith("//"):
        return value
    return fallback


def create_app(store: InstanceStore) -> Starlette:
    """The forum's Starlette app over `store` (every request uses its `X-Webarena-Instance` DB)."""

    def front(request: Request) -> Response:
        sort = request.path_params.get("sort", "hot")
        if sort not in SORTS:
            with db(store, request) as conn:
                return _not_found(_Ctx(request, conn), f"There is no page {request.url.path}.")
        page = _page_number(request)
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            rows = submission_list(conn, sort=sort, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
            total = _count_submissions(conn)
            main = (f"<h1>All forums: {SORT_LABELS[sort].lower()} submissions</h1>{_sort_nav('/', sort)}"
                    f"{_listing(ctx, rows)}{_pagination(ctx, page, total)}")
            sidebar = (_subscriptions_section(ctx) + '<section class="about"><h2>About</h2>'
                       "<p>Postmill is a forum for communities of every kind.</p>"
                       '<p><a href="/create_forum">Create a forum</a></p></section>')
            return _page(ctx, "Postmill", main, sidebar)

    def forums(request: Request) -> Response:
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            rows = conn.execute(
                "SELECT f.name, f.title, "
                "(SELECT COUNT(*) FROM forum_submissions s WHERE s.forum_id = f.id) AS submissions, "
                "(SELECT COUNT(*) FROM forum_subscriptions x WHERE x.forum_id = f.id) AS subscribers "
                "FROM forum_forums f ORDER BY f.name COLLATE NOCASE").fetchall()
            body = "".join(
                f'<tr><td><a href="/f/{quote(r["name"])}">{esc(r["name"])}</a></td><td>{esc(r["title"])}</td>'
                f'<td>{r["submissions"]}</td><td>{r["subscribers"]}</td></tr>' for r in rows)
            main = ("<h1>List of forums</h1><table class=\"forum-list\"><thead><tr><th>Forum</th><th>Title</th>"
                    f"<th>Submissions</th><th>Subscribers</th></tr></thead><tbody>{body}</tbody></table>"
                    '<p><a href="/create_forum">Create a forum</a></p>')
            return _page(ctx, "List of forums", main)

    def forum_page(request: Request) -> Response:
        name = request.path_params["forum"]
        sort = request.path_params.get("sort", "hot")
        page = _page_number(request)
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            forum = _forum_row(conn, name)
            if forum is None or sort not in SORTS:
                return _not_found(ctx, f"The forum {name} does not exist." if forum is None
                                  else f"Unknown sort {sort}; use one of {', '.join(SORTS)}.")
            if forum["name"] != name:
                return RedirectResponse(request.url.path.replace(f"/f/{name}", f"/f/{forum['name']}", 1), 301)
            rows = submission_list(conn, sort=sort, forum=forum["name"], limit=PAGE_SIZE,
                                   offset=(page - 1) * PAGE_SIZE)
            total = _count_submissions(conn, forum=forum["name"])
            main = (f'<h1 class="forum-title">{esc(forum["title"])}</h1><p class="forum-name">f/{esc(forum["name"])}</p>'
                    f'{_sort_nav("/f/" + quote(forum["name"]), sort)}{_listing(ctx, rows)}{_pagination(ctx, page, total)}')
            return _page(ctx, f"f/{forum['name']}", main, _forum_sidebar(ctx, forum))

    def _forum_sidebar(ctx: _Ctx, forum: sqlite3.Row) -> str:
        subscribers = ctx.conn.execute("SELECT COUNT(*) FROM forum_subscriptions WHERE forum_id = ?",
                                       (forum["id"],)).fetchone()[0]
        subscribed = ctx.user is not None and ctx.conn.execute(
            "SELECT 1 FROM forum_subscriptions WHERE forum_id = ? AND user_id = ?",
            (forum["id"], ctx.user["id"])).fetchone() is not None
        action, label = ("unsubscribe", "Unsubscribe") if subscribed else ("subscribe", "Subscribe")
        name = quote(forum["name"])
        return (f'<section class="forum-card"><h2><a href="/f/{name}">f/{esc(forum["name"])}</a></h2>'
                f'<p class="forum-description">{esc(forum["description"])}</p>'
                f'<form action="/f/{name}/{action}" method="post" class="subscribe-form">'
                f'<button type="submit">{label}</button></form>'
                f'<p class="forum-subscribers">{subscribers} subscriber{"" if subscribers == 1 else "s"}</p>'
                f'<p><a href="/submit/{name}">Submit a post</a></p>'
                f'<div class="forum-sidebar">{_paragraphs(forum["sidebar"])}</div>'
                f'<p class="forum-created">Created {_when(forum["created_at"])}</p></section>')

    def _load_post(ctx: _Ctx, request: Request) -> tuple[Optional[sqlite3.Row], Optional[Response]]:
        name = request.path_params["forum"]
        post = _submission_row(ctx.conn, request.path_params["id"])
        if post is None or post["forum"].lower() != name.lower():
            return None, _not_found(ctx, "This submission does not exist (it may have been deleted).")
        return post, None

    def _post_block(ctx: _Ctx, post: sqlite3.Row, *, full: bool = True) -> str:
        path = post_path(post["forum"], post["id"], post["title"])
        mine = _my_votes(ctx, "forum_submission_votes", "submission_id", [post["id"]]).get(post["id"], 0)
        url = (f'<p class="submission__url"><a href="{esc(post["url"])}" rel="nofollow">{esc(post["url"])}</a></p>'
               if post["url"] else "")
        own = ctx.user is not None and ctx.user["id"] == post["user_id"]
        nav = f'<a href="{esc(path)}">{post["comment_count"]} comment{"" if post["comment_count"] == 1 else "s"}</a>'
        if own and full:
            nav += (f'<a href="/f/{quote(post["forum"])}/{post["id"]}/-/edit">Edit</a>'
                    f'<form action="/f/{quote(post["forum"])}/{post["id"]}/-/delete" method="post">'
                    '<button type="submit">Delete</button></form>')
        vote = _vote_form("submission", post["id"], post["score"], mine, ctx.here) if full else ""
        heading = "h1" if full else "h2"
        body = f'<div class="submission__body">{_paragraphs(post["body"])}</div>' if full else ""
        return (f'<article class="submission submission--full" id="submission-{post["id"]}">'
                f'<div class="submission__vote">{vote}</div><div class="submission__inner">'
                f'<{heading} class="submission__title"><a class="submission__link" href="{esc(path)}">'
                f'{esc(post["title"])}</a></{heading}>{url}{_submission_info(post)}{body}'
                f'<nav class="submission__nav">{nav}</nav></div></article>')

    def _comment_tree(ctx: _Ctx, post: sqlite3.Row, comments: list[dict], root: Optional[int] = None) -> str:
        mine = _my_votes(ctx, "forum_comment_votes", "comment_id", (c["id"] for c in comments))
        by_parent: dict[Optional[int], list[dict]] = {}
        for c in comments:
            by_parent.setdefault(c["parent_id"], []).append(c)
        base = f"/f/{quote(post['forum'])}/{post['id']}/-/comment"

        def render(c: dict) -> str:
            edited = ' <span class="comment__edited">(edited)</span>' if c["edited_at"] else ""
            replies = "".join(render(child) for child in by_parent.get(c["id"], []))
            return (f'<article class="comment" id="comment-{c["id"]}"><div class="comment__row">'
                    f'<div class="comment__vote">{_vote_form("comment", c["id"], c["score"], mine.get(c["id"], 0), ctx.here)}</div>'
                    f'<div class="comment__main"><p class="comment__info"><a class="comment__author" '
                    f'href="/user/{quote(c["author"])}">{esc(c["author"])}</a> {_when(c["created_at"])}{edited}</p>'
                    f'<div class="comment__body">{_paragraphs(c["body"])}</div>'
                    f'<nav class="comment__nav"><a href="{base}/{c["id"]}">Reply</a></nav></div></div>'
                    f'<div class="comment__replies">{replies}</div></article>')

        if root is not None:
            top = [c for c in comments if c["id"] == root]
        else:
            top = by_parent.get(None, [])
        return "".join(render(c) for c in top)

    def submission_page(request: Request) -> Response:
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            post, missing = _load_post(ctx, request)
            if missing:
                return missing
            comments = comment_order(conn, post["id"])
            n = len(comments)
            form = ""
            if ctx.user is not None:
                form = (f'<form action="/f/{quote(post["forum"])}/{post["id"]}/-/comment" method="post" '
                        'class="comment-form"><label for="comment_comment">Comment</label>'
                        '<textarea id="comment_comment" name="comment[comment]" rows="3" required></textarea>'
                        '<button type="submit">Post</button></form>')
            main = (_post_block(ctx, post) + f'<section class="comments" aria-label="Comments">'
                    f'<h2 class="comments__heading">{n} comment{"" if n == 1 else "s"}</h2>{form}'
                    f'{_comment_tree(ctx, post, comments)}</section>')
            forum = _forum_row(conn, post["forum"])
            return _page(ctx, post["title"], main, _forum_sidebar(ctx, forum))

    async def comment_post(request: Request) -> Response:
        form = await _form(request)
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            need = _login_required(ctx)
            if need:
                return need
            post, missing = _load_post(ctx, request)
            if missing:
                return missing
            text = str(form.get("comment[comment]", "")).strip()
            if not text:
                return redirect(post_path(post["forum"], post["id"], post["title"]))
            cid = _add_comment(conn, ctx.user["id"], post["id"], None, text)
            return redirect(post_path(post["forum"], post["id"], post["title"]) + f"#comment-{cid}")

    async def comment_page(request: Request) -> Response:
        form = await _form(request) if request.method == "POST" else None
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            post, missing = _load_post(ctx, request)
            if missing:
                return missing
            cid = request.path_params["cid"]
            comments = comment_order(conn, post["id"])
            target = next((c for c in comments if c["id"] == cid), None)
            if target is None:
                return _not_found(ctx, "This comment does not exist.")
            if form is not None:
                need = _login_required(ctx)
                if need:
                    return need
                text = str(form.get("reply[comment]", "")).strip()
                if text:
                    new_id = _add_comment(conn, ctx.user["id"], post["id"], cid, text)
                    return redirect(post_path(post["forum"], post["id"], post["title"]) + f"#comment-{new_id}")
            reply = ""
            if ctx.user is not None:
                reply = (f'<form action="/f/{quote(post["forum"])}/{post["id"]}/-/comment/{cid}" method="post" '
                         f'class="comment-form reply-form"><label for="reply_comment">Reply to {esc(target["author"])}'
                         '</label><textarea id="reply_comment" name="reply[comment]" rows="3" required></textarea>'
                         '<button type="submit">Post</button></form>')
            path = post_path(post["forum"], post["id"], post["title"])
            main = (_post_block(ctx, post, full=False) +
                    f'<section class="comments" aria-label="Comments"><h2 class="comments__heading">'
                    f'Comment by {esc(target["author"])}</h2><p><a href="{esc(path)}">Show all comments</a></p>'
                    f'{reply}{_comment_tree(ctx, post, comments, root=cid)}</section>')
            return _page(ctx, f"Comment on {post['title']}", main)

    def _add_comment(conn: sqlite3.Connection, user_id: int, submission_id: int, parent: Optional[int],
                     text: str) -> int:
        cur = conn.execute("INSERT INTO forum_comments (submission_id, parent_id, user_id, body, created_at) "
                           "VALUES (?,?,?,?,?)", (submission_id, parent, user_id, text, _now(conn)))
        conn.execute("INSERT INTO forum_comment_votes VALUES (?,?,1)", (user_id, cur.lastrowid))
        return cur.lastrowid

    async def vote(request: Request) -> Response:
        form = await _form(request)
        kind = "submission" if request.url.path.startswith("/sv/") else "comment"
        target = request.path_params["id"]
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            need = _login_required(ctx)
            if need:
                return need
            table, column = (("forum_submission_votes", "submission_id") if kind == "submission"
                             else ("forum_comment_votes", "comment_id"))
            source = "forum_submissions" if kind == "submission" else "forum_comments"
            if conn.execute(f"SELECT 1 FROM {source} WHERE id = ?", (target,)).fetchone() is None:
                return _not_found(ctx, f"There is no {kind} {target}.")
            try:
                choice = int(str(form.get("choice", "")))
            except ValueError:
                choice = 99
            if choice not in (-1, 0, 1):
                return _page(ctx, "Bad vote", "<h1>Bad vote</h1><p>choice must be 1, -1 or 0.</p>", status_code=400)
            conn.execute(f"DELETE FROM {table} WHERE user_id = ? AND {column} = ?", (ctx.user["id"], target))
            if choice:
                conn.execute(f"INSERT INTO {table} (user_id, {column}, choice) VALUES (?,?,?)",
                             (ctx.user["id"], target, choice))
            fallback = "/"
            if kind == "submission":
                post = _submission_row(conn, target)
                fallback = post_path(post["forum"], post["id"], post["title"])
            return redirect(_safe_next(str(form.get("next", "")), fallback))

    def _submission_form(ctx: _Ctx, action: str, heading: str, button: str, values: dict[str, str],
                         errors: list[str], forum_choice: Optional[str], show_forum: bool = True) -> str:
        err = "".join(f"<li>{esc(e)}</li>" for e in errors)
        err = f'<ul class="errors" role="alert">{err}</ul>' if err else ""
        forum_field = ""
        if show_forum:
            names = [r["name"] for r in ctx.conn.execute("SELECT name FROM forum_forums ORDER BY name COLLATE NOCASE")]
            options = '<option value="">Choose a forum</option>' + "".join(
                f'<option value="{esc(n)}"{" selected" if forum_choice and n.lower() == forum_choice.lower() else ""}>'
                f"{esc(n)}</option>" for n in names)
            forum_field = (f'<label for="submission_forum">Forum</label>'
                           f'<select id="submission_forum" name="submission[forum]">{options}</select>')
        return (f"<h1>{esc(heading)}</h1>{err}<form action=\"{esc(action)}\" method=\"post\" class=\"submission-form\">"
                '<label for="submission_title">Title</label><input type="text" id="submission_title" '
                f'name="submission[title]" maxlength="300" required value="{esc(values.get("title", ""))}">'
                '<label for="submission_url">URL</label><input type="url" id="submission_url" name="submission[url]" '
                f'value="{esc(values.get("url", ""))}">'
                '<label for="submission_body">Body</label><textarea id="submission_body" name="submission[body]" '
                f'rows="6">{esc(values.get("body", ""))}</textarea>{forum_field}'
                f'<p><button type="submit">{esc(button)}</button></p></form>')

    def _read_submission(form: Any) -> dict[str, str]:
        return {k: str(form.get(f"submission[{k}]", "")).strip() for k in ("title", "url", "body", "forum")}

    def _check_submission(values: dict[str, str]) -> list[str]:
        errors = []
        if not values["title"]:
            errors.append("The title must not be empty.")
        elif len(values["title"]) > 300:
            errors.append("The title must be at most 300 characters.")
        if values["url"] and not re.match(r"^https?://[^\s/]+", values["url"]):
            errors.append("The URL must start with http:// or https://.")
        return errors

    async def submit(request: Request) -> Response:
        preset = request.path_params.get("forum")
        form = await _form(request) if request.method == "POST" else None
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            need = _login_required(ctx)
            if need:
                return need
            action = f"/submit/{quote(preset)}" if preset else "/submit"
            if preset and _forum_row(conn, preset) is None:
                return _not_found(ctx, f"The forum {preset} does not exist.")
            if form is None:
                return _page(ctx, "Create submission",
                             _submission_form(ctx, action, "Create submission", "Create submission", {}, [], preset))
            values = _read_submission(form)
            forum = _forum_row(conn, values["forum"] or preset or "")
            errors = _check_submission(values)
            if forum is None:
                errors.append("Choose a forum that exists.")
            if errors:
                page = _submission_form(ctx, action, "Create submission", "Create submission", values, errors,
                                        values["forum"] or preset)
                return _page(ctx, "Create submission", page, status_code=400)
            cur = conn.execute(
                "INSERT INTO forum_submissions (forum_id, user_id, title, url, body, created_at) VALUES (?,?,?,?,?,?)",
                (forum["id"], ctx.user["id"], values["title"], values["url"], values["body"], _now(conn)))
            conn.execute("INSERT INTO forum_submission_votes VALUES (?,?,1)", (ctx.user["id"], cur.lastrowid))
            return redirect(post_path(forum["name"], cur.lastrowid, values["title"]))

    async def edit_submission(request: Request) -> Response:
        form = await _form(request) if request.method == "POST" else None
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            need = _login_required(ctx)
            if need:
                return need
            post, missing = _load_post(ctx, request)
            if missing:
                return missing
            if post["user_id"] != ctx.user["id"]:
                return _page(ctx, "Forbidden", "<h1>Forbidden</h1><p>You can only edit your own submissions.</p>",
                             status_code=403)
            action = f"/f/{quote(post['forum'])}/{post['id']}/-/edit"
            if form is None:
                values = {"title": post["title"], "url": post["url"], "body": post["body"]}
                return _page(ctx, "Edit submission",
                             _submission_form(ctx, action, "Edit submission", "Save", values, [], None, show_forum=False))
            values = _read_submission(form)
            errors = _check_submission(values)
            if errors:
                return _page(ctx, "Edit submission",
                             _submission_form(ctx, action, "Edit submission", "Save", values, errors, None,
                                              show_forum=False), status_code=400)
            conn.execute("UPDATE forum_submissions SET title = ?, url = ?, body = ?, edited_at = ? WHERE id = ?",
                         (values["title"], values["url"], values["body"], _now(conn), post["id"]))
            return redirect(post_path(post["forum"], post["id"], values["title"]))

    def delete_submission(request: Request) -> Response:
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            need = _login_required(ctx)
            if need:
                return need
            post, missing = _load_post(ctx, request)
            if missing:
                return missing
            if post["user_id"] != ctx.user["id"]:
                return _page(ctx, "Forbidden", "<h1>Forbidden</h1><p>You can only delete your own submissions.</p>",
                             status_code=403)
            conn.execute("DELETE FROM forum_submissions WHERE id = ?", (post["id"],))
            return redirect(f"/f/{quote(post['forum'])}")

    async def subscription(request: Request) -> Response:
        form = await _form(request)
        subscribe = request.url.path.endswith("/subscribe")
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            need = _login_required(ctx)
            if need:
                return need
            forum = _forum_row(conn, request.path_params["forum"])
            if forum is None:
                return _not_found(ctx, f"The forum {request.path_params['forum']} does not exist.")
            if subscribe:
                conn.execute("INSERT OR IGNORE INTO forum_subscriptions VALUES (?,?)", (ctx.user["id"], forum["id"]))
            else:
                conn.execute("DELETE FROM forum_subscriptions WHERE user_id = ? AND forum_id = ?",
                             (ctx.user["id"], forum["id"]))
            return redirect(_safe_next(str(form.get("next", "")), f"/f/{quote(forum['name'])}"))

    async def create_forum(request: Request) -> Response:
        form = await _form(request) if request.method == "POST" else None
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            need = _login_required(ctx)
            if need:
                return need
            values = {k: str(form.get(f"forum[{k}]", "")).strip() if form is not None else ""
                      for k in ("name", "title", "description", "sidebar")}
            errors: list[str] = []
            if form is not None:
                if not re.fullmatch(r"[A-Za-z0-9_]{3,25}", values["name"]):
                    errors.append("The name must be 3 to 25 letters, digits or underscores.")
                elif _forum_row(conn, values["name"]) is not None:
                    errors.append("A forum with that name already exists.")
                if not values["title"]:
                    errors.append("The title must not be empty.")
                if not errors:
                    cur = conn.execute("INSERT INTO forum_forums (name, title, description, sidebar, created_at) "
                                       "VALUES (?,?,?,?,?)", (values["name"], values["title"], values["description"],
                                                              values["sidebar"], _now(conn)))
                    conn.execute("INSERT INTO forum_subscriptions VALUES (?,?)", (ctx.user["id"], cur.lastrowid))
                    return redirect(f"/f/{quote(values['name'])}")
            err = "".join(f"<li>{esc(e)}</li>" for e in errors)
            main = ("<h1>Create forum</h1>" + (f'<ul class="errors" role="alert">{err}</ul>' if err else "") +
                    '<form action="/create_forum" method="post" class="forum-form">'
                    '<label for="forum_name">Name</label><input type="text" id="forum_name" name="forum[name]" '
                    f'required value="{esc(values["name"])}">'
                    '<label for="forum_title">Title</label><input type="text" id="forum_title" name="forum[title]" '
                    f'required value="{esc(values["title"])}">'
                    '<label for="forum_description">Description</label><textarea id="forum_description" '
                    f'name="forum[description]" rows="3">{esc(values["description"])}</textarea>'
                    '<label for="forum_sidebar">Sidebar</label><textarea id="forum_sidebar" name="forum[sidebar]" '
                    f'rows="3">{esc(values["sidebar"])}</textarea>'
                    '<p><button type="submit">Create forum</button></p></form>')
            return _page(ctx, "Create forum", main, status_code=400 if errors else 200)

    def _user_row(conn: sqlite3.Connection, name: str) -> Optional[sqlite3.Row]:
        return conn.execute("SELECT * FROM forum_users WHERE username = ? COLLATE NOCASE", (name,)).fetchone()

    def _user_comments(conn: sqlite3.Connection, user_id: int, limit: int, offset: int) -> list[sqlite3.Row]:
        return conn.execute(
            "SELECT c.id, c.body, c.created_at, s.id AS submission_id, s.title, f.name AS forum "
            "FROM forum_comments c JOIN forum_submissions s ON s.id = c.submission_id "
            "JOIN forum_forums f ON f.id = s.forum_id WHERE c.user_id = ? ORDER BY c.created_at DESC, c.id DESC "
            "LIMIT ? OFFSET ?", (user_id, limit, offset)).fetchall()

    def _comment_items(rows: list[sqlite3.Row]) -> str:
        if not rows:
            return '<p class="empty">No comments yet.</p>'
        items = "".join(
            f'<li class="user-comment"><p>On <a href="{esc(post_path(r["forum"], r["submission_id"], r["title"]))}">'
            f'{esc(r["title"])}</a> in f/{esc(r["forum"])}, {_when(r["created_at"])}</p>'
            f'<div class="comment__body">{_paragraphs(r["body"])}</div></li>' for r in rows)
        return f'<ul class="user-comments">{items}</ul>'

    def user_page(request: Request) -> Response:
        name = request.path_params["name"]
        section = request.path_params.get("section")
        page = _page_number(request)
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            user = _user_row(conn, name)
            if user is None or section not in (None, "submissions", "comments"):
                return _not_found(ctx, f"There is no user {name}." if user is None else "Unknown page.")
            uname = user["username"]
            own = ctx.user is not None and ctx.user["id"] == user["id"]
            edit = (f'<p><a href="/user/{quote(uname)}/edit_biography">Edit biography</a></p>' if own else "")
            head = (f'<h1 class="user-name">{esc(uname)}</h1><section class="user-about"><h2>Biography</h2>'
                    f'<div class="user-bio">{_paragraphs(user["biography"])}</div>{edit}</section>'
                    f'<nav class="user-nav" aria-label="User"><a href="/user/{quote(uname)}">Overview</a>'
                    f'<a href="/user/{quote(uname)}/submissions">Submissions</a>'
                    f'<a href="/user/{quote(uname)}/comments">Comments</a></nav>')
            if section == "submissions":
                rows = submission_list(conn, sort="new", author=uname, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
                total = _count_submissions(conn, author=uname)
                main = head + f"<h2>Submissions by {esc(uname)}</h2>{_listing(ctx, rows)}{_pagination(ctx, page, total)}"
            elif section == "comments":
                rows = _user_comments(conn, user["id"], PAGE_SIZE, (page - 1) * PAGE_SIZE)
                total = conn.execute("SELECT COUNT(*) FROM forum_comments WHERE user_id = ?", (user["id"],)).fetchone()[0]
                main = head + f"<h2>Comments by {esc(uname)}</h2>{_comment_items(rows)}{_pagination(ctx, page, total)}"
            else:
                rows = submission_list(conn, sort="new", author=uname, limit=5)
                comments = _user_comments(conn, user["id"], 5, 0)
                main = (head + f"<h2>Latest submissions</h2>{_listing(ctx, rows)}"
                        f'<p><a href="/user/{quote(uname)}/submissions">All submissions</a></p>'
                        f"<h2>Latest comments</h2>{_comment_items(comments)}"
                        f'<p><a href="/user/{quote(uname)}/comments">All comments</a></p>')
            sidebar = (f'<section class="user-card"><h2>{esc(uname)}</h2>'
                       f'<p>Registered {_when(user["created_at"])}</p></section>')
            return _page(ctx, uname, main, sidebar)

    async def edit_biography(request: Request) -> Response:
        form = await _form(request) if request.method == "POST" else None
        name = request.path_params["name"]
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            need = _login_required(ctx)
            if need:
                return need
            user = _user_row(conn, name)
            if user is None:
                return _not_found(ctx, f"There is no user {name}.")
            if user["id"] != ctx.user["id"]:
                return _page(ctx, "Forbidden", "<h1>Forbidden</h1><p>You can only edit your own biography.</p>",
                             status_code=403)
            if form is not None:
                bio = str(form.get("user_biography[biography]", "")).strip()
                conn.execute("UPDATE forum_users SET biography = ? WHERE id = ?", (bio, user["id"]))
                return redirect(f"/user/{quote(user['username'])}")
            main = (f"<h1>Edit biography</h1><form action=\"/user/{quote(user['username'])}/edit_biography\" "
                    'method="post" class="biography-form"><label for="user_biography_biography">Biography</label>'
                    '<textarea id="user_biography_biography" name="user_biography[biography]" rows="5">'
                    f'{esc(user["biography"])}</textarea><p><button type="submit">Save</button></p></form>')
            return _page(ctx, "Edit biography", main)

    def search(request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        page = _page_number(request)
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            if not q:
                return _page(ctx, "Search", "<h1>Search</h1><p>Type words to look for in the search box.</p>")
            rows = submission_list(conn, sort="new", search=q, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
            total = _count_submissions(conn, search=q)
            main = (f'<h1>Search results for "{esc(q)}"</h1><p>{total} submission{"" if total == 1 else "s"} found.</p>'
                    f"{_listing(ctx, rows)}{_pagination(ctx, page, total)}")
            return _page(ctx, f"Search: {q}", main)

    def login_page(request: Request) -> Response:
        with db(store, request) as conn:
            ctx = _Ctx(request, conn)
            failed = request.query_params.get("error")
            err = '<p class="errors" role="alert">Invalid username or password.</p>' if failed else ""
            main = ("<h1>Log in</h1>" + err + '<form action="/login_check" method="post" class="login-form">'
                    '<label for="login_username">Username</label>'
                    '<input type="text" id="login_username" name="_username" required autocomplete="username">'
                    '<label for="login_password">Password</label>'
                    '<input type="password" id="login_password" name="_password" required '
                    'autocomplete="current-password"><p><button type="submit">Log in</button></p></form>')
            return _page(ctx, "Log in", main)

    async def login_check(request: Request) -> Response:
        form = await _form(request)
        username = str(form.get("_username", ""))
        password = str(form.get("_password", ""))
        with db(store, request) as conn:
            user = conn.execute("SELECT id, password FROM forum_users WHERE username = ? COLLATE NOCASE",
                                (username,)).fetchone()
            if user is None or user["password"] != password:
                # Redirect back to the login page (tasks.auth reads that as a refused login).
                return redirect("/login")
            token = new_token()
            conn.execute("INSERT INTO forum_sessions (token, user_id) VALUES (?,?)", (token, user["id"]))
        response = redirect("/")
        response.set_cookie(COOKIE, token, path="/", httponly=True, samesite="lax")
        return response

    def logout(request: Request) -> Response:
        token = request.cookies.get(COOKIE)
        if token:
            with db(store, request) as conn:
                conn.execute("DELETE FROM forum_sessions WHERE token = ?", (token,))
        response = redirect("/")
        response.delete_cookie(COOKIE, path="/")
        return response

    routes = [
        Route("/", front),
        Route("/forums", forums),
        Route("/search", search),
        Route("/login", login_page),
        Route("/login_check", login_check, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/submit", submit, methods=["GET", "POST"]),
        Route("/submit/{forum}", submit, methods=["GET", "POST"]),
        Route("/create_forum", create_forum, methods=["GET", "POST"]),
        Route("/sv/{id:int}", vote, methods=["POST"]),
        Route("/cv/{id:int}", vote, methods=["POST"]),
        Route("/user/{name}", user_page),
        Route("/user/{name}/edit_biography", edit_biography, methods=["GET", "POST"]),
        Route("/user/{name}/{section}", user_page),
        Route("/f/{forum}", forum_page),
        Route("/f/{forum}/subscribe", subscription, methods=["POST"]),
        Route("/f/{forum}/unsubscribe", subscription, methods=["POST"]),
        Route("/f/{forum}/{id:int}", submission_page),
        Route("/f/{forum}/{id:int}/", submission_page),
        Route("/f/{forum}/{id:int}/-/comment", comment_post, methods=["POST"]),
        Route("/f/{forum}/{id:int}/-/comment/{cid:int}", comment_page, methods=["GET", "POST"]),
        Route("/f/{forum}/{id:int}/-/edit", edit_submission, methods=["GET", "POST"]),
        Route("/f/{forum}/{id:int}/-/delete", delete_submission, methods=["POST"]),
        Route("/f/{forum}/{id:int}/{slug}", submission_page),
        Route("/f/{forum}/{sort}", forum_page),
        Route("/{sort}", front),
    ]
    return Starlette(routes=routes)
