"""The code host's To-Do List: what assignments, review requests and @mentions ask of the signed-in user.

Owns GET `/dashboard/todos[?state=pending|done&type=Issue|MergeRequest&action_id=1|2|9&project_id=]`,
POST `/dashboard/todos/<id>/mark_as_done|restore` and POST `/dashboard/todos/mark_all_as_done`. The
to-dos themselves are made by `model.add_todo` (the seed, and the issue and merge request actions).
"""
from __future__ import annotations

import sqlite3
from urllib.parse import quote

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, query_url, redirect, to_int
from agentenv_webarena.sites.gitlab.layout import Ctx, not_found, render_page, user_link
from agentenv_webarena.sites.gitlab.model import TODO_ACTIONS, display_date

__all__ = ["dashboard_todos", "todo_action", "mark_all_done"]

_STATES = {"pending": "To Do", "done": "Done"}
_TYPES = {"Issue": "Issues", "MergeRequest": "Merge requests"}
_ACTION_TEXT = {"assigned": "assigned you", "mentioned": "mentioned you on", "review_requested":
                "requested a review of"}
_ACTION_NAMES = {"assigned": "Assigned", "mentioned": "Mentioned", "review_requested": "Review requested"}
_TODO_SELECT = (
    "SELECT t.*, a.username AS author_username, a.name AS author_name, p.namespace, p.path, p.name AS project_name, "
    "COALESCE(i.iid, m.iid) AS iid, COALESCE(i.title, m.title) AS title FROM gitlab_todos t "
    "JOIN gitlab_users a ON a.id = t.author_id JOIN gitlab_projects p ON p.id = t.project_id "
    "LEFT JOIN gitlab_issues i ON t.target_type = 'Issue' AND i.id = t.target_id "
    "LEFT JOIN gitlab_merge_requests m ON t.target_type = 'MergeRequest' AND m.id = t.target_id "
    "WHERE t.user_id = ?")


def _filters(ctx: Ctx) -> dict[str, str]:
    """The list's filters from the query string; unknown values count as no filter."""
    q = ctx.q
    action_ids = {str(n): name for name, n in TODO_ACTIONS.items()}
    return {"type": q.get("type", "") if q.get("type") in _TYPES else "",
            "action": action_ids.get(q.get("action_id", ""), ""),
            "project_id": str(to_int(q.get("project_id"), 0) or "")}


def _todos(conn: sqlite3.Connection, user_id: int, state: str, f: dict[str, str]) -> list[sqlite3.Row]:
    sql, args = _TODO_SELECT + " AND t.state = ?", [user_id, state]
    for column, value in (("t.target_type", f["type"]), ("t.action", f["action"]), ("t.project_id", f["project_id"])):
        if value:
            sql += f" AND {column} = ?"
            args.append(value)
    return conn.execute(sql + " ORDER BY t.created_at DESC, t.id DESC", args).fetchall()


def _todo_item(t: sqlite3.Row) -> str:
    kind, sigil = ("merge request", "!") if t["target_type"] == "MergeRequest" else ("issue", "#")
    segment = "merge_requests" if t["target_type"] == "MergeRequest" else "issues"
    href = f"/{quote(t['namespace'])}/{quote(t['path'])}/-/{segment}/{t['iid']}"
    if t["state"] == "pending":
        button = (f'<form action="/dashboard/todos/{t["id"]}/mark_as_done" method="post" class="todo-actions">'
                  '<button type="submit" class="js-done-todo">Mark as done</button></form>')
    else:
        button = (f'<form action="/dashboard/todos/{t["id"]}/restore" method="post" class="todo-actions">'
                  '<button type="submit" class="js-undo-todo">Undo</button></form>')
    return (f'<li class="todo todo-{t["state"]}" id="todo_{t["id"]}"><div class="todo-item todo-block">'
            f'<p class="todo-title">{user_link(t["author_username"], t["author_name"])} '
            f'<span class="action-name">{_ACTION_TEXT[t["action"]]}</span> {kind} '
            f'<a href="{href}" class="todo-target-link">{sigil}{t["iid"]} "{esc(t["title"])}"</a> at '
            f'<span class="todo-project">{esc(t["namespace"])} / {esc(t["project_name"])}</span> · '
            f'{display_date(t["created_at"])}</p></div>{button}</li>')


@login_required
def dashboard_todos(ctx: Ctx) -> Response:
    """GET `/dashboard/todos`: the user's pending (or `state=done`) to-dos, filtered by type, action, project."""
    state = ctx.q.get("state", "pending")
    state = state if state in _STATES else "pending"
    f = _filters(ctx)
    extra = {"type": f["type"] or None, "project_id": f["project_id"] or None,
             "action_id": TODO_ACTIONS[f["action"]] if f["action"] else None}
    lists = {s: _todos(ctx.conn, ctx.user_id, s, f) for s in _STATES}
    current = ' aria-current="page"'
    tabs = " ".join(f'<a href="{esc(query_url("/dashboard/todos", **extra, state=s))}"'
                    f'{current if s == state else ""}>{label} {len(lists[s])}</a>' for s, label in _STATES.items())
    filters = [("All", {**extra, "type": None, "action_id": None})]
    filters += [(label, {**extra, "type": t}) for t, label in _TYPES.items()]
    filters += [(label, {**extra, "action_id": TODO_ACTIONS[a]}) for a, label in _ACTION_NAMES.items()]
    filter_nav = " ".join(f'<a href="{esc(query_url("/dashboard/todos", **args, state=state))}">{label}</a>'
                          for label, args in filters)
    rows = lists[state]
    if rows:
        body = f'<ul class="content-list todos-list">{"".join(_todo_item(t) for t in rows)}</ul>'
    else:
        body = ('<p class="todos-empty">'
                + ("You're all done!" if state == "pending" else "There are no done to-dos yet.") + "</p>")
    mark_all = ('<form action="/dashboard/todos/mark_all_as_done" method="post" class="todos-mark-all">'
                '<button type="submit">Mark all as done</button></form>') if state == "pending" and rows else ""
    main = (f'<h1>To-Do List</h1><nav aria-label="To-do states" class="todos-filters">{tabs}</nav>{mark_all}'
            f'<nav aria-label="Filter to-dos" class="todos-type-filter">{filter_nav}</nav>'
            f'<div class="todos-list-container">{body}</div>')
    return render_page(ctx, "To-Do List", main)


@login_required
def todo_action(ctx: Ctx, todo_id: str, action: str) -> Response:
    """POST `/dashboard/todos/<id>/mark_as_done` and `/restore`: one of the user's to-dos."""
    row = ctx.conn.execute("SELECT id, state FROM gitlab_todos WHERE id = ? AND user_id = ?",
                           (to_int(todo_id, -1), ctx.user_id)).fetchone()
    if row is None or action not in ("mark_as_done", "restore"):
        return not_found(ctx)
    state = "done" if action == "mark_as_done" else "pending"
    ctx.conn.execute("UPDATE gitlab_todos SET state = ? WHERE id = ?", (state, row["id"]))
    return redirect("/dashboard/todos" if state == "done" else "/dashboard/todos?state=done")


@login_required
def mark_all_done(ctx: Ctx) -> Response:
    """POST `/dashboard/todos/mark_all_as_done`: every pending to-do of the user."""
    ctx.conn.execute("UPDATE gitlab_todos SET state = 'done' WHERE user_id = ? AND state = 'pending'", (ctx.user_id,))
    return redirect("/dashboard/todos")
