"""The code host's constants and the queries its pages, its API and the task templates share.

Owns the session cookie, roles (GitLab's access levels), timestamps and the site clock (`site_now`),
clone URLs, and the reads several modules need: a project by path (`project_by_path`), project
listings with star / fork / issue counts (`project_list`), a branch's commits (`branch_commits`) and
files (`branch_files`), members (`project_members`) and issues (`issue_list`), and the to-dos that
assignments, review requests and mentions give a user (`add_todo`). It renders no pages.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
import sqlite3
from typing import Optional

__all__ = ["COOKIE", "ROLES", "ROLE_LEVELS", "TIME_FORMAT", "SSH_HOST", "format_ts", "parse_ts", "site_now",
           "clone_urls", "slugify", "commit_sha", "project_by_path", "project_list", "PROJECT_SELECT",
           "branch_commits", "branch_files", "project_members", "member_level", "issue_list", "mr_list",
           "user_by_name", "display_date", "display_day", "TODO_ACTIONS", "add_todo", "mentioned_users"]

COOKIE = "_gitlab_session"
ROLES = {10: "Guest", 20: "Reporter", 30: "Developer", 40: "Maintainer", 50: "Owner"}
ROLE_LEVELS = {name: level for level, name in ROLES.items()}
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
# Clone URLs name a fixed host (WebArena's image names its own), so task answers do not depend on ports.
SSH_HOST = "gitlab.local"
_PATH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def format_ts(t: dt.datetime) -> str:
    """A datetime as a stored timestamp."""
    return t.strftime(TIME_FORMAT)


def parse_ts(text: str) -> dt.datetime:
    """A stored timestamp as a datetime."""
    return dt.datetime.strptime(text, TIME_FORMAT)


def display_date(ts: str) -> str:
    """A timestamp as pages show it: 'Mar 14, 2021'."""
    t = parse_ts(ts)
    return f"{t.strftime('%b')} {t.day}, {t.year}"


def display_day(ts: str) -> str:
    """The ISO day of a timestamp: '2021-03-14'."""
    return ts[:10]


def site_now(conn: sqlite3.Connection) -> str:
    """The site clock: one minute after the newest timestamp written (deterministic, unlike the wall clock)."""
    row = conn.execute(
        "SELECT MAX(t) FROM (SELECT MAX(created_at) AS t FROM gitlab_commits UNION ALL "
        "SELECT MAX(updated_at) FROM gitlab_issues UNION ALL SELECT MAX(updated_at) FROM gitlab_merge_requests "
        "UNION ALL SELECT MAX(created_at) FROM gitlab_notes UNION ALL SELECT MAX(last_activity_at) "
        "FROM gitlab_projects)").fetchone()
    return format_ts(parse_ts(row[0]) + dt.timedelta(minutes=1))


def clone_urls(namespace: str, path: str) -> tuple[str, str]:
    """(SSH, HTTPS) clone URLs of a project."""
    return (f"ssh://git@{SSH_HOST}:2222/{namespace}/{path}.git", f"http://{SSH_HOST}/{namespace}/{path}.git")


def slugify(name: str) -> str:
    """GitLab's project path for a name: lower case, runs of other characters as '-'."""
    return re.sub(r"[^a-z0-9_.]+", "-", name.strip().lower()).strip("-.")


def valid_path(path: str) -> bool:
    """A project or file-name component GitLab would accept."""
    return bool(_PATH.match(path or ""))


def commit_sha(project_id: int, n: int, title: str) -> str:
    """A stable 40-hex commit id."""
    return hashlib.sha1(f"{project_id}:{n}:{title}".encode()).hexdigest()


def user_by_name(conn: sqlite3.Connection, username: str) -> Optional[sqlite3.Row]:
    """The user row of `username` (any case), or None."""
    return conn.execute("SELECT * FROM gitlab_users WHERE username = ? COLLATE NOCASE", (username,)).fetchone()


def project_by_path(conn: sqlite3.Connection, namespace: str, path: str) -> Optional[sqlite3.Row]:
    """The project at `/<namespace>/<path>` (any case), or None."""
    return conn.execute(PROJECT_SELECT + " WHERE p.namespace = ? AND p.path = ?", (namespace, path)).fetchone()


PROJECT_SELECT = (
    "SELECT p.*, (SELECT COUNT(*) FROM gitlab_stars s WHERE s.project_id = p.id) AS stars, "
    "(SELECT COUNT(*) FROM gitlab_projects f WHERE f.forked_from_id = p.id) AS forks, "
    "(SELECT COUNT(*) FROM gitlab_issues i WHERE i.project_id = p.id AND i.state = 'opened') AS open_issues, "
    "(SELECT COUNT(*) FROM gitlab_merge_requests m WHERE m.project_id = p.id AND m.state = 'opened') AS open_mrs "
    "FROM gitlab_projects p")

_SORTS = {"name": "p.name COLLATE NOCASE", "stars": "stars DESC, p.name COLLATE NOCASE",
          "latest": "p.last_activity_at DESC, p.id DESC", "created": "p.created_at DESC, p.id DESC"}


def project_list(conn: sqlite3.Connection, *, viewer_id: Optional[int] = None, member_of: Optional[int] = None,
                 starred_by: Optional[int] = None, namespace: Optional[str] = None, search: str = "",
                 sort: str = "latest", public_only: bool = False) -> list[sqlite3.Row]:
    """Projects the viewer may see, filtered and sorted (`sort`: name, stars, latest, created).

    Private projects are listed only for their members (`viewer_id`).
    """
    where, args = [], []
    if public_only:
        where.append("p.visibility = 'public'")
    elif viewer_id is None:
        where.append("p.visibility = 'public'")
    else:
        where.append("(p.visibility != 'private' OR EXISTS (SELECT 1 FROM gitlab_project_members m "
                     "WHERE m.project_id = p.id AND m.user_id = ?))")
        args.append(viewer_id)
    if member_of is not None:
        where.append("EXISTS (SELECT 1 FROM gitlab_project_members m WHERE m.project_id = p.id AND m.user_id = ?)")
        args.append(member_of)
    if starred_by is not None:
        where.append("EXISTS (SELECT 1 FROM gitlab_stars s WHERE s.project_id = p.id AND s.user_id = ?)")
        args.append(starred_by)
    if namespace is not None:
        where.append("p.namespace = ?")
        args.append(namespace)
    for word in search.split():
        where.append("(p.name LIKE ? OR p.description LIKE ? OR p.namespace LIKE ?)")
        args += [f"%{word}%"] * 3
    sql = PROJECT_SELECT + (" WHERE " + " AND ".join(where) if where else "")
    return conn.execute(sql + " ORDER BY " + _SORTS.get(sort, _SORTS["latest"]), args).fetchall()


def branch_commits(conn: sqlite3.Connection, project_id: int, branch: str) -> list[sqlite3.Row]:
    """The commits reachable from `branch`, newest first (a branch holds the default branch's commits up
    to its fork point, then its own), with the author's `author_name` and `author_username`."""
    row = conn.execute("SELECT b.forked_at, p.default_branch FROM gitlab_branches b JOIN gitlab_projects p "
                       "ON p.id = b.project_id WHERE b.project_id = ? AND b.name = ?", (project_id, branch)).fetchone()
    if row is None:
        return []
    select = ("SELECT c.*, u.name AS author_name, u.username AS author_username, u.email AS author_email "
              "FROM gitlab_commits c JOIN gitlab_users u ON u.id = c.author_id WHERE c.project_id = ? AND ")
    if row["forked_at"] is None:
        return conn.execute(select + "c.branch = ? ORDER BY c.created_at DESC, c.id DESC",
                            (project_id, branch)).fetchall()
    return conn.execute(select + "(c.branch = ? OR (c.branch = ? AND c.created_at <= ?)) "
                        "ORDER BY c.created_at DESC, c.id DESC",
                        (project_id, branch, row["default_branch"], row["forked_at"])).fetchall()


def branch_files(conn: sqlite3.Connection, project_id: int, branch: str) -> list[sqlite3.Row]:
    """Every file of `branch` (path, content, commit title and date), sorted by path."""
    return conn.execute("SELECT f.path, f.content, c.title AS commit_title, c.created_at AS commit_at, c.sha "
                        "FROM gitlab_files f JOIN gitlab_commits c ON c.id = f.commit_id "
                        "WHERE f.project_id = ? AND f.branch = ? ORDER BY f.path", (project_id, branch)).fetchall()


def project_members(conn: sqlite3.Connection, project_id: int) -> list[sqlite3.Row]:
    """A project's members, highest role first, then by username."""
    return conn.execute("SELECT u.id, u.username, u.name, m.access_level, m.created_at FROM gitlab_project_members m "
                        "JOIN gitlab_users u ON u.id = m.user_id WHERE m.project_id = ? "
                        "ORDER BY m.access_level DESC, u.username COLLATE NOCASE", (project_id,)).fetchall()


def member_level(conn: sqlite3.Connection, project_id: int, user_id: Optional[int]) -> int:
    """The user's access level in the project (0 = not a member)."""
    if user_id is None:
        return 0
    row = conn.execute("SELECT access_level FROM gitlab_project_members WHERE project_id = ? AND user_id = ?",
                       (project_id, user_id)).fetchone()
    return row[0] if row else 0


_ISSUE_SELECT = (
    "SELECT i.*, u.username AS author_username, u.name AS author_name, ms.title AS milestone, "
    "(SELECT GROUP_CONCAT(l.name, ', ') FROM (SELECT l.name FROM gitlab_issue_labels il JOIN gitlab_labels l "
    "ON l.id = il.label_id WHERE il.issue_id = i.id ORDER BY l.name) l) AS labels, "
    "(SELECT GROUP_CONCAT(a.username, ', ') FROM (SELECT a.username FROM gitlab_issue_assignees ia JOIN gitlab_users a "
    "ON a.id = ia.user_id WHERE ia.issue_id = i.id ORDER BY a.username) a) AS assignees, "
    "(SELECT COUNT(*) FROM gitlab_notes n WHERE n.noteable_type = 'Issue' AND n.noteable_id = i.id) AS notes "
    "FROM gitlab_issues i JOIN gitlab_users u ON u.id = i.author_id "
    "LEFT JOIN gitlab_milestones ms ON ms.id = i.milestone_id")


def issue_list(conn: sqlite3.Connection, *, project_id: Optional[int] = None, state: str = "opened",
               label: str = "", assignee: str = "", author: str = "", search: str = "",
               iid: Optional[int] = None) -> list[sqlite3.Row]:
    """Issues, newest first, with author, milestone, `labels` and `assignees` (', '-joined, sorted)."""
    where, args = [], []
    if project_id is not None:
        where.append("i.project_id = ?")
        args.append(project_id)
    if state in ("opened", "closed"):
        where.append("i.state = ?")
        args.append(state)
    if label:
        where.append("EXISTS (SELECT 1 FROM gitlab_issue_labels il JOIN gitlab_labels l ON l.id = il.label_id "
                     "WHERE il.issue_id = i.id AND l.name = ?)")
        args.append(label)
    if assignee:
        where.append("EXISTS (SELECT 1 FROM gitlab_issue_assignees ia JOIN gitlab_users a ON a.id = ia.user_id "
                     "WHERE ia.issue_id = i.id AND a.username = ? COLLATE NOCASE)")
        args.append(assignee)
    if author:
        where.append("u.username = ? COLLATE NOCASE")
        args.append(author)
    if iid is not None:
        where.append("i.iid = ?")
        args.append(iid)
    for word in search.split():
        where.append("(i.title LIKE ? OR i.description LIKE ?)")
        args += [f"%{word}%"] * 2
    sql = _ISSUE_SELECT + (" WHERE " + " AND ".join(where) if where else "")
    return conn.execute(sql + " ORDER BY i.created_at DESC, i.id DESC", args).fetchall()


_MR_SELECT = (
    "SELECT m.*, u.username AS author_username, u.name AS author_name, a.username AS assignee_username, "
    "r.username AS reviewer_username, "
    "(SELECT COUNT(*) FROM gitlab_notes n WHERE n.noteable_type = 'MergeRequest' AND n.noteable_id = m.id) AS notes "
    "FROM gitlab_merge_requests m JOIN gitlab_users u ON u.id = m.author_id "
    "LEFT JOIN gitlab_users a ON a.id = m.assignee_id LEFT JOIN gitlab_users r ON r.id = m.reviewer_id")


def mr_list(conn: sqlite3.Connection, *, project_id: Optional[int] = None, state: str = "opened",
            assignee: str = "", reviewer: str = "", iid: Optional[int] = None) -> list[sqlite3.Row]:
    """Merge requests, newest first, with author, assignee and reviewer usernames."""
    where, args = [], []
    if project_id is not None:
        where.append("m.project_id = ?")
        args.append(project_id)
    if state in ("opened", "merged", "closed"):
        where.append("m.state = ?")
        args.append(state)
    if assignee:
        where.append("a.username = ? COLLATE NOCASE")
        args.append(assignee)
    if reviewer:
        where.append("r.username = ? COLLATE NOCASE")
        args.append(reviewer)
    if iid is not None:
        where.append("m.iid = ?")
        args.append(iid)
    sql = _MR_SELECT + (" WHERE " + " AND ".join(where) if where else "")
    return conn.execute(sql + " ORDER BY m.created_at DESC, m.id DESC", args).fetchall()


# To-do actions -> GitLab's `action_id` numbers (the `/dashboard/todos?action_id=` filter).
TODO_ACTIONS = {"assigned": 1, "mentioned": 2, "review_requested": 9}
_MENTION = re.compile(r"(?<![\w.@])@([A-Za-z0-9_][A-Za-z0-9_.-]*)")


def mentioned_users(conn: sqlite3.Connection, text: str) -> list[sqlite3.Row]:
    """The users a text mentions as `@username`, in order, each once."""
    users, seen = [], set()
    for name in _MENTION.findall(text or ""):
        user = user_by_name(conn, name.rstrip(".-"))
        if user is not None and user["id"] not in seen:
            seen.add(user["id"])
            users.append(user)
    return users


def add_todo(conn: sqlite3.Connection, user_id: Optional[int], author_id: int, project_id: int, target_type: str,
             target_id: int, action: str, created_at: str, state: str = "pending") -> None:
    """A to-do for `user_id` (none for actions on oneself, as GitLab): `author_id` did `action` on the target."""
    if user_id is None or user_id == author_id:
        return
    conn.execute("INSERT INTO gitlab_todos (user_id, author_id, project_id, target_type, target_id, action, state, "
                 "created_at) VALUES (?,?,?,?,?,?,?,?)",
                 (user_id, author_id, project_id, target_type, target_id, action, state, created_at))
