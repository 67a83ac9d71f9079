"""The code host's REST subset under `/api/v4` (GitLab's shapes, the fields WebArena-style checks read).

Owns, all GET and JSON: `/api/v4/user`, `/api/v4/users?username=`, `/api/v4/users/<id>`,
`/api/v4/users/<id>/starred_projects`, `/api/v4/projects?search=&membership=&starred=`, and under
`/api/v4/projects/<id or url-encoded namespace/path>`: the project itself, `/members[/all]`,
`/issues[?state=&labels=&assignee_username=]`, `/issues/<iid>`, `/issues/<iid>/notes`,
`/merge_requests[?state=]`, `/merge_requests/<iid>`, `/merge_requests/<iid>/notes`, `/milestones`,
`/labels`, `/starrers`, `/forks`, `/repository/branches`, `/repository/commits[?ref_name=]`,
`/repository/tree[?ref=&path=]` and `/repository/files/<path>/raw?ref=`. Private projects answer
404 unless the session cookie belongs to a member. Errors are `{"message": ...}` with a 4xx status.
"""
from __future__ import annotations

import sqlite3
from typing import Any, Optional
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from agentenv_webarena.sites.common import json_error, to_int
from agentenv_webarena.sites.gitlab.layout import Ctx, load_project
from agentenv_webarena.sites.gitlab.model import (
    PROJECT_SELECT,
    branch_commits,
    branch_files,
    issue_list,
    mr_list,
    project_list,
    project_members,
    user_by_name,
)

__all__ = ["api_user", "api_users", "api_projects", "api_project"]


def _iso(ts: str) -> str:
    return ts.replace(" ", "T") + ".000Z" if ts else ts


def _user_json(u: Any) -> dict:
    return {"id": u["id"], "username": u["username"], "name": u["name"], "state": "active",
            "web_url": f"/{u['username']}", "bio": u["bio"], "location": u["location"],
            "created_at": _iso(u["created_at"])}


def _project_json(request: Request, p: sqlite3.Row) -> dict:
    base = str(request.base_url).rstrip("/")
    full = f"{p['namespace']}/{p['path']}"
    return {"id": p["id"], "name": p["name"], "path": p["path"], "path_with_namespace": full,
            "name_with_namespace": f"{p['namespace']} / {p['name']}", "description": p["description"],
            "visibility": p["visibility"], "default_branch": p["default_branch"], "star_count": p["stars"],
            "forks_count": p["forks"], "open_issues_count": p["open_issues"], "web_url": f"{base}/{full}",
            "namespace": {"path": p["namespace"], "full_path": p["namespace"]}, "topics": [
                t for t in p["topics"].split(", ") if t], "created_at": _iso(p["created_at"]),
            "last_activity_at": _iso(p["last_activity_at"]), "forked_from_project_id": p["forked_from_id"]}


def _issue_json(i: sqlite3.Row) -> dict:
    return {"id": i["id"], "iid": i["iid"], "project_id": i["project_id"], "title": i["title"],
            "description": i["description"], "state": i["state"], "created_at": _iso(i["created_at"]),
            "updated_at": _iso(i["updated_at"]), "labels": [n for n in (i["labels"] or "").split(", ") if n],
            "assignees": [{"username": n} for n in (i["assignees"] or "").split(", ") if n],
            "author": {"username": i["author_username"], "name": i["author_name"]},
            "milestone": {"title": i["milestone"]} if i["milestone"] else None, "due_date": i["due_date"] or None,
            "user_notes_count": i["notes"]}


def _mr_json(m: sqlite3.Row) -> dict:
    return {"id": m["id"], "iid": m["iid"], "project_id": m["project_id"], "title": m["title"],
            "description": m["description"], "state": m["state"], "source_branch": m["source_branch"],
            "target_branch": m["target_branch"], "author": {"username": m["author_username"]},
            "assignee": {"username": m["assignee_username"]} if m["assignee_username"] else None,
            "reviewers": [{"username": m["reviewer_username"]}] if m["reviewer_username"] else [],
            "created_at": _iso(m["created_at"]), "updated_at": _iso(m["updated_at"]), "user_notes_count": m["notes"]}


def api_user(ctx: Ctx) -> Response:
    """GET `/api/v4/user`: the signed-in user (401 without a session)."""
    if ctx.account is None:
        return json_error(401, "401 Unauthorized")
    return JSONResponse(_user_json(ctx.account))


def api_users(ctx: Ctx, rest: str = "") -> Response:
    """GET `/api/v4/users[?username=]`, `/api/v4/users/<id>[/starred_projects]`."""
    if not rest:
        name = ctx.q.get("username")
        rows = ([u] if (u := user_by_name(ctx.conn, name)) else []) if name else \
            ctx.conn.execute("SELECT * FROM gitlab_users ORDER BY id").fetchall()
        return JSONResponse([_user_json(u) for u in rows])
    parts = rest.strip("/").split("/")
    u = ctx.conn.execute("SELECT * FROM gitlab_users WHERE id = ?", (to_int(parts[0], -1),)).fetchone()
    if u is None:
        return json_error(404, "404 User Not Found")
    if len(parts) == 1:
        return JSONResponse(_user_json(u))
    if parts[1:] == ["starred_projects"]:
        rows = project_list(ctx.conn, viewer_id=ctx.user_id, starred_by=u["id"], sort="name")
        return JSONResponse([_project_json(ctx.request, p) for p in rows])
    return json_error(404, f"404 Not Found: /users/{rest}")


def api_projects(ctx: Ctx) -> Response:
    """GET `/api/v4/projects?search=&membership=true&starred=true&order_by=`."""
    q = ctx.q
    if (q.get("membership") == "true" or q.get("starred") == "true") and ctx.account is None:
        return json_error(401, "401 Unauthorized")
    rows = project_list(ctx.conn, viewer_id=ctx.user_id, search=q.get("search", ""),
                        member_of=ctx.user_id if q.get("membership") == "true" else None,
                        starred_by=ctx.user_id if q.get("starred") == "true" else None,
                        sort="stars" if q.get("order_by") == "star_count" else "latest")
    return JSONResponse([_project_json(ctx.request, p) for p in rows])


def _resolve(ctx: Ctx, rest: str) -> tuple[Optional[sqlite3.Row], list[str]]:
    """The project a `/projects/<id or ns/path>/...` path names, and the remaining segments."""
    parts = [unquote(s) for s in rest.strip("/").split("/")]
    if parts and parts[0].isdigit():
        row = ctx.conn.execute(PROJECT_SELECT + " WHERE p.id = ?", (int(parts[0]),)).fetchone()
        project = load_project(ctx, row["namespace"], row["path"]) if row else None
        return project, parts[1:]
    if len(parts) >= 2:
        return load_project(ctx, parts[0], parts[1]), parts[2:]
    return None, []


def api_project(ctx: Ctx, rest: str) -> Response:
    """GET `/api/v4/projects/<id>[/...]`: a project and its sub-resources (see the module docstring)."""
    q = ctx.q
    p, sub = _resolve(ctx, rest)
    if p is None:
        return json_error(404, "404 Project Not Found")
    pid = p["id"]
    if not sub:
        return JSONResponse(_project_json(ctx.request, p))
    head = sub[0]
    if head == "members":
        return JSONResponse([{"id": m["id"], "username": m["username"], "name": m["name"],
                              "access_level": m["access_level"]} for m in project_members(ctx.conn, pid)])
    if head == "issues":
        state = q.get("state", "all")
        rows = issue_list(ctx.conn, project_id=pid, state=state, label=q.get("labels", ""),
                          assignee=q.get("assignee_username", ""),
                          iid=to_int(sub[1], -1) if len(sub) > 1 else None)
        return _listing_or_item(ctx.conn, "Issue", sub, [_issue_json(r) for r in rows], rows)
    if head == "merge_requests":
        rows = mr_list(ctx.conn, project_id=pid, state=q.get("state", "all"),
                       iid=to_int(sub[1], -1) if len(sub) > 1 else None)
        return _listing_or_item(ctx.conn, "MergeRequest", sub, [_mr_json(r) for r in rows], rows)
    if head == "milestones":
        rows = ctx.conn.execute("SELECT * FROM gitlab_milestones WHERE project_id = ? ORDER BY iid", (pid,)).fetchall()
        return JSONResponse([{"id": m["id"], "iid": m["iid"], "title": m["title"], "description": m["description"],
                              "start_date": m["start_date"] or None, "due_date": m["due_date"] or None,
                              "state": m["state"]} for m in rows])
    if head == "labels":
        rows = ctx.conn.execute("SELECT * FROM gitlab_labels WHERE project_id = ? ORDER BY name", (pid,)).fetchall()
        return JSONResponse([{"id": r["id"], "name": r["name"], "color": r["color"]} for r in rows])
    if head == "starrers":
        rows = ctx.conn.execute("SELECT u.* FROM gitlab_stars s JOIN gitlab_users u ON u.id = s.user_id "
                                "WHERE s.project_id = ? ORDER BY u.username", (pid,)).fetchall()
        return JSONResponse([{"user": _user_json(u)} for u in rows])
    if head == "forks":
        rows = [r for r in project_list(ctx.conn, viewer_id=ctx.user_id) if r["forked_from_id"] == pid]
        return JSONResponse([_project_json(ctx.request, r) for r in rows])
    if head == "repository":
        return _repository(ctx.conn, p, sub[1:], q)
    return json_error(404, f"404 Not Found: {'/'.join(sub)}")


def _listing_or_item(conn: sqlite3.Connection, kind: str, sub: list[str], items: list[dict],
                     rows: list[sqlite3.Row]) -> Response:
    if len(sub) == 1:
        return JSONResponse(items)
    if not items:
        return json_error(404, f"404 {kind} Not Found")
    if len(sub) == 2:
        return JSONResponse(items[0])
    if sub[2] == "notes":
        notes = conn.execute("SELECT n.*, u.username FROM gitlab_notes n JOIN gitlab_users u ON u.id = n.author_id "
                             "WHERE n.noteable_type = ? AND n.noteable_id = ? ORDER BY n.created_at DESC, n.id DESC",
                             (kind, rows[0]["id"])).fetchall()
        return JSONResponse([{"id": n["id"], "body": n["body"], "author": {"username": n["username"]},
                              "created_at": _iso(n["created_at"])} for n in notes])
    return json_error(404, f"404 Not Found: {'/'.join(sub)}")


def _repository(conn: sqlite3.Connection, p: sqlite3.Row, sub: list[str], q: Any) -> Response:
    branch = q.get("ref_name") or q.get("ref") or p["default_branch"]
    if sub == ["branches"]:
        names = [r[0] for r in conn.execute("SELECT name FROM gitlab_branches WHERE project_id = ? ORDER BY name",
                                            (p["id"],))]
        return JSONResponse([{"name": n, "default": n == p["default_branch"]} for n in names])
    if sub == ["commits"]:
        return JSONResponse([{"id": c["sha"], "short_id": c["sha"][:8], "title": c["title"],
                              "author_name": c["author_name"], "author_email": c["author_email"],
                              "created_at": _iso(c["created_at"])} for c in branch_commits(conn, p["id"], branch)])
    if sub == ["tree"]:
        prefix = q.get("path", "").strip("/")
        prefix = prefix + "/" if prefix else ""
        seen: dict[str, str] = {}
        for f in branch_files(conn, p["id"], branch):
            if f["path"].startswith(prefix):
                rest = f["path"][len(prefix):]
                name = rest.split("/", 1)[0]
                seen.setdefault(name, "tree" if "/" in rest else "blob")
        return JSONResponse([{"name": n, "type": t, "path": prefix + n} for n, t in sorted(seen.items())])
    if len(sub) >= 3 and sub[0] == "files" and sub[-1] == "raw":
        path = "/".join(sub[1:-1])
        f = next((f for f in branch_files(conn, p["id"], branch) if f["path"] == path), None)
        if f is None:
            return json_error(404, "404 File Not Found")
        return PlainTextResponse(f["content"])
    return json_error(404, f"404 Not Found: repository/{'/'.join(sub)}")
