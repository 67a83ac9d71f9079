"""The forum's tables (`schema.sql`) and their deterministic seed: forums, users, posts, comments, votes.

Owns how the pristine forum data is made from the vocabulary in `data` with a fixed
`random.Random(SEED)` (no clock), so every build yields the same rows and ids.
"""
from __future__ import annotations

import datetime as dt
import random
import sqlite3
from pathlib import Path

from agentenv_webarena.sites.forum import data
from agentenv_webarena.sites.forum.entities import seed_entities
from agentenv_webarena.sites.forum.model import SEED_START, format_ts, slugify

__all__ = ["SCHEMA", "SEED", "seed"]

SCHEMA = (Path(__file__).parent / "schema.sql").read_text(encoding="utf-8")
SEED = 8088
_SEED_SPAN_S = 175 * 86400  # posts fall between early January and late June 2023
_LINK_FORUMS = ("science", "technology", "space", "MachineLearning", "movies", "history")  # some posts are links


def seed(conn: sqlite3.Connection) -> None:
    """Insert the deterministic forum data: 14 forums (with moderators), 30 users, ~300 posts, comments, votes;
    then WebArena's named forums, users and posts with the posts that fill them (`entities`).

    Uses `random.Random(SEED)` only (no clock), so every build yields the same rows and ids.
    """
    rng = random.Random(SEED)
    user_ids: dict[str, int] = {}
    for i, name in enumerate(data.USERS, start=1):
        joined = format_ts(SEED_START - dt.timedelta(days=30 + 11 * i))
        conn.execute("INSERT INTO forum_users (id, username, password, biography, created_at) VALUES (?,?,?,?,?)",
                     (i, name, "test1234", data.BIOS.get(name, ""), joined))
        user_ids[name] = i
    forum_ids: dict[str, int] = {}
    for i, (name, title, description, sidebar, _weight) in enumerate(data.FORUMS, start=1):
        conn.execute("INSERT INTO forum_forums (id, name, title, description, sidebar, created_at) "
                     "VALUES (?,?,?,?,?,?)",
                     (i, name, title, description, sidebar, format_ts(SEED_START - dt.timedelta(days=400 - 9 * i))))
        forum_ids[name] = i
    for name, moderators in data.MODERATORS.items():
        conn.executemany("INSERT INTO forum_moderators (forum_id, user_id) VALUES (?,?)",
                         [(forum_ids[name], user_ids[user]) for user in moderators])

    posts = _seed_posts(rng, list(user_ids))
    posts.sort(key=lambda p: p["created_at"])
    primary = user_ids[data.PRIMARY_USER]
    for sid, post in enumerate(posts, start=1):
        conn.execute("INSERT INTO forum_submissions (id, forum_id, user_id, title, url, body, created_at, edited_at) "
                     "VALUES (?,?,?,?,?,?,?,?)",
                     (sid, forum_ids[post["forum"]], user_ids[post["author"]], post["title"], post["url"],
                      post["body"], format_ts(post["created_at"]), post["edited_at"]))
        post["id"] = sid
    _seed_comments(conn, rng, posts, user_ids)
    _seed_votes(conn, rng, posts, user_ids, primary)
    _seed_subscriptions(conn, rng, user_ids, forum_ids, primary)
    seed_entities(conn)


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
            created = SEED_START + dt.timedelta(seconds=rng.randrange(_SEED_SPAN_S))
            url = ""
            if name in _LINK_FORUMS and rng.random() < 0.3:
                url = f"{rng.choice(data.LINK_HOSTS)}/{slugify(title)[:40]}"
            n_sentences = 0 if (url and rng.random() < 0.6) else rng.choice((0, 1, 2, 2, 3))
            pool = data.BODY_BANKS[name] + data.GENERIC_BODY
            body = " ".join(rng.sample(pool, n_sentences))
            edited = None
            if body and rng.random() < 0.1:
                edited = format_ts(created + dt.timedelta(minutes=rng.randint(5, 600)))
            posts.append({"forum": name, "author": author, "title": title, "url": url, "body": body,
                          "created_at": created, "edited_at": edited})
    return posts


def _seed_comments(conn: sqlite3.Connection, rng: random.Random, posts: list[dict], user_ids: dict[str, int]) -> None:
    rows = []
    for post in posts:
        n = rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14))  # threads long enough to scroll, as on Postmill
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
                      format_ts(row["created"])))


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
