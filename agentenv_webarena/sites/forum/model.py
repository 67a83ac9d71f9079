"""The forum's constants and the queries its pages and the task templates share.

Owns the session cookie, page size and sort orders (hot, new, top, most commented), the
timestamp format and the site clock (`site_now`), submission paths (`post_path`), submission
listings with score and comment count (`submission_list`) and a post's comment tree in page order
(`comment_order`). It renders no pages.
"""
from __future__ import annotations

import datetime as dt
import re
import sqlite3
from typing import Optional

__all__ = ["COOKIE", "PAGE_SIZE", "SORTS", "SORT_LABELS", "TIME_FORMAT", "SEED_START", "format_ts", "parse_ts",
           "slugify", "post_path", "SUBMISSION_SELECT", "submission_list", "count_submissions", "comment_order",
           "site_now", "forum_row", "submission_row", "is_moderator"]

COOKIE = "forum_session"
PAGE_SIZE = 20
SORTS = ("hot", "new", "top", "most_commented")
SORT_LABELS = {"hot": "Hot", "new": "New", "top": "Top", "most_commented": "Most commented"}
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
_HOT_POINT_S = 43200
SEED_START = dt.datetime(2023, 1, 2, 8, 0, 0)


def format_ts(t: dt.datetime) -> str:
    """A datetime as a stored timestamp (`TIME_FORMAT`)."""
    return t.strftime(TIME_FORMAT)


def parse_ts(text: str) -> dt.datetime:
    """A stored timestamp (`TIME_FORMAT`) as a datetime."""
    return dt.datetime.strptime(text, TIME_FORMAT)


def slugify(title: str) -> str:
    """Postmill-style URL slug: lower-case words joined by '-', at most 100 characters."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:100].rstrip("-") or "-"


def post_path(forum: str, submission_id: int, title: str) -> str:
    """`/f/<forum>/<id>/<slug>`, the canonical path of a submission."""
    return f"/f/{forum}/{submission_id}/{slugify(title)}"


SUBMISSION_SELECT = """
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
    sql = SUBMISSION_SELECT + where + " ORDER BY " + _ORDER[sort]
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        args += [limit, offset]
    return _dicts(conn.execute(sql, args))


def _dicts(cursor: sqlite3.Cursor) -> list[dict]:
    """Rows as dicts, whatever the connection's row_factory."""
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def count_submissions(conn: sqlite3.Connection, *, forum: Optional[str] = None, author: Optional[str] = None,
                      search: Optional[str] = None) -> int:
    """How many submissions `submission_list` would list without a limit."""
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


def site_now(conn: sqlite3.Connection) -> str:
    """The site clock: one minute after the newest timestamp stored."""
    latest = conn.execute(
        "SELECT MAX(t) FROM (SELECT MAX(created_at) AS t FROM forum_submissions "
        "UNION ALL SELECT MAX(created_at) FROM forum_comments UNION ALL SELECT MAX(edited_at) FROM forum_submissions "
        "UNION ALL SELECT MAX(created_at) FROM forum_forums)").fetchone()[0]
    base = parse_ts(latest) if latest else SEED_START
    return format_ts(base + dt.timedelta(minutes=1))


def forum_row(conn: sqlite3.Connection, name: str) -> Optional[sqlite3.Row]:
    """The forum named `name` (case-insensitive), or None."""
    return conn.execute("SELECT * FROM forum_forums WHERE name = ? COLLATE NOCASE", (name,)).fetchone()


def submission_row(conn: sqlite3.Connection, submission_id: int) -> Optional[sqlite3.Row]:
    """One submission with its score and comment count, or None."""
    return conn.execute(SUBMISSION_SELECT + " WHERE s.id = ?", (submission_id,)).fetchone()


def is_moderator(conn: sqlite3.Connection, forum_id: int, user_id: Optional[int]) -> bool:
    """Whether the user moderates the forum (None, an anonymous visitor, never does)."""
    return user_id is not None and conn.execute("SELECT 1 FROM forum_moderators WHERE forum_id = ? AND user_id = ?",
                                                (forum_id, user_id)).fetchone() is not None
