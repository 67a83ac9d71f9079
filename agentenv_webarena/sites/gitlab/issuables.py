"""The code host's issues, merge requests, milestones and comments (notes), per project and on the
dashboard.

Owns `/<ns>/<proj>/-/issues[/new|/<iid>[/notes|/close|/reopen|/assign|/labels]]`,
`/-/merge_requests[/new|/<iid>[/notes|/merge|/close|/reopen|/reviewer]]`, `/-/milestones[/new|/<iid>]`,
`/dashboard/issues` and `/dashboard/merge_requests`. Writing needs a signed-in user; changing an
issue's state, assignees or labels needs the Reporter role or authorship, merging the Developer role.
"""
from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Optional
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from agentenv_webarena.sites.common import db, esc, query_url, read_form, redirect, to_int
from agentenv_webarena.sites.gitlab import data
from agentenv_webarena.sites.gitlab.layout import (
    Ctx,
    area_field,
    load_project,
    login_required,
    markdown,
    not_found,
    project_base,
    project_page,
    render_page,
    text_field,
    user_link,
)
from agentenv_webarena.sites.gitlab.model import (
    display_date,
    issue_list,
    member_level,
    mr_list,
    site_now,
    user_by_name,
)
from agentenv_webarena.sites.store import InstanceStore

__all__ = ["ensure_labels", "issues", "issue_page", "new_issue", "issue_action", "merge_requests", "mr_page",
           "new_mr", "mr_action", "milestones", "milestone_page", "new_milestone", "dashboard_issues",
           "dashboard_mrs", "issue_path"]

_ISSUE_STATES = {"opened": "Open", "closed": "Closed", "all": "All"}
_MR_STATES = {"opened": "Open", "merged": "Merged", "closed": "Closed", "all": "All"}


def ensure_labels(conn: sqlite3.Connection, project_id: int) -> None:
    """Give a project GitLab's default label set (the seed's `data.LABELS`)."""
    for name, color in data.LABELS:
        conn.execute("INSERT OR IGNORE INTO gitlab_labels (project_id, name, color) VALUES (?,?,?)",
                     (project_id, name, color))


def issue_path(namespace: str, project: str, iid: int) -> str:
    """`/<ns>/<proj>/-/issues/<iid>`."""
    return f"/{quote(namespace)}/{quote(project)}/-/issues/{iid}"


def _project(ctx: Ctx, request: Request) -> Optional[sqlite3.Row]:
    return load_project(ctx, request.path_params["namespace"], request.path_params["project"])


def _state_tabs(path: str, counts: dict[str, int], names: dict[str, str], current: str, extra: dict) -> str:
    links = []
    for state, label in names.items():
        cur = ' aria-current="page"' if state == current else ""
        links.append(f'<a href="{esc(query_url(path, **extra, state=state))}"{cur}>{label} {counts[state]}</a>')
    return f'<nav aria-label="States" class="issues-state-filters">{" ".join(links)}</nav>'


def _label_spans(labels: Optional[str]) -> str:
    return "".join(f'<span class="gl-label">{esc(n)}</span>' for n in (labels or "").split(", ") if n)


def _issue_rows(rows: list[sqlite3.Row], conn: sqlite3.Connection, with_project: bool = False) -> str:
    if not rows:
        return '<p class="empty">Sorry, your filter produced no results.</p>'
    items = []
    projects: dict[int, sqlite3.Row] = {}
    for r in rows:
        p = projects.setdefault(r["project_id"], conn.execute(
            "SELECT namespace, path FROM gitlab_projects WHERE id = ?", (r["project_id"],)).fetchone())
        ref = f'{esc(p["namespace"])}/{esc(p["path"])}#{r["iid"]}' if with_project else f"#{r['iid']}"
        closed = ' <span class="badge issuable-closed">CLOSED</span>' if r["state"] == "closed" else ""
        assignees = f' · Assignee: {esc(r["assignees"])}' if r["assignees"] else ""
        items.append(f'<li class="issue"><a href="{issue_path(p["namespace"], p["path"], r["iid"])}" '
                     f'class="issue-title-text">{esc(r["title"])}</a>{closed}<p class="issuable-info">{ref} · created '
                     f'{display_date(r["created_at"])} by {esc(r["author_name"])}{assignees} · {r["notes"]} comments'
                     f'</p><p class="issuable-labels">{_label_spans(r["labels"])}</p></li>')
    return f'<ul class="issues-list">{"".join(items)}</ul>'


def _issue_filters(request: Request) -> dict:
    q = request.query_params
    return {"label": q.get("label_name[]", ""), "assignee": q.get("assignee_username", ""),
            "author": q.get("author_username", ""), "search": q.get("search", "")}


def issues(store: InstanceStore, request: Request) -> Response:
    """GET `/<ns>/<proj>/-/issues` (`state`, `label_name[]`, `assignee_username`, `author_username`, `search`)."""
    state = request.query_params.get("state", "opened")
    filters = _issue_filters(request)
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        p = _project(ctx, request)
        if p is None:
            return not_found(ctx)
        base = project_base(p)
        counts = {s: len(issue_list(conn, project_id=p["id"], state=s, **filters)) for s in _ISSUE_STATES}
        rows = issue_list(conn, project_id=p["id"], state=state, **filters)
        extra = {"label_name[]": filters["label"] or None, "assignee_username": filters["assignee"] or None,
                 "search": filters["search"] or None}
        labels = [r[0] for r in conn.execute("SELECT name FROM gitlab_labels WHERE project_id = ? ORDER BY name",
                                             (p["id"],))]
        label_nav = " ".join(f'<a href="{esc(query_url(base + "/-/issues", **{"label_name[]": n}))}">{esc(n)}</a>'
                             for n in labels)
        main = (f'<h1>Issues</h1><p><a href="{base}/-/issues/new">New issue</a></p>'
                f'{_state_tabs(base + "/-/issues", counts, _ISSUE_STATES, state, extra)}'
                f'<form action="{base}/-/issues" method="get"><input type="search" name="search" '
                f'value="{esc(filters["search"])}" aria-label="Search or filter results" '
                'placeholder="Search or filter results"></form>'
                f'<nav aria-label="Filter by label" class="label-filter">Labels: {label_nav}</nav>'
                f'{_issue_rows(rows, conn)}')
        return project_page(ctx, p, "Issues", main)


def _notes_html(conn: sqlite3.Connection, kind: str, target_id: int, action: str, signed_in: bool) -> str:
    rows = conn.execute("SELECT n.*, u.username, u.name FROM gitlab_notes n JOIN gitlab_users u ON u.id = n.author_id "
                        "WHERE n.noteable_type = ? AND n.noteable_id = ? ORDER BY n.created_at, n.id",
                        (kind, target_id)).fetchall()
    items = "".join(f'<li class="note" id="note_{r["id"]}"><p class="note-header">'
                    f'{user_link(r["username"], r["name"])} '
                    f'<span class="note-headline-light">@{esc(r["username"])}</span> · {display_date(r["created_at"])}'
                    f'</p><div class="note-text">{markdown(r["body"])}</div></li>' for r in rows)
    form = ""
    if signed_in:
        form = (f'<form action="{action}" method="post" class="new-note">'
                + area_field("note_note", "note[note]", "Comment", rows=4)
                + '<p><button type="submit">Comment</button></p></form>')
    return (f'<section class="notes-section" id="notes"><h2>Activity</h2><ul class="notes main-notes-list">{items}</ul>'
            f"{form}</section>")


def _state_button(action: str, label: str) -> str:
    return (f'<form action="{action}" method="post" class="state-form"><button type="submit">{esc(label)}</button>'
            "</form>")


def _load_issue(ctx: Ctx, request: Request):
    p = _project(ctx, request)
    if p is None:
        return None, None
    rows = issue_list(ctx.conn, project_id=p["id"], state="all", iid=to_int(request.path_params["iid"], -1))
    return p, (rows[0] if rows else None)


def issue_page(store: InstanceStore, request: Request) -> Response:
    """GET `/<ns>/<proj>/-/issues/<iid>`: an issue, its sidebar (assignees, labels, milestone, due date) and notes."""
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        p, issue = _load_issue(ctx, request)
        if p is None or issue is None:
            return not_found(ctx)
        here = issue_path(p["namespace"], p["path"], issue["iid"])
        status = "Open" if issue["state"] == "opened" else "Closed"
        controls = ""
        if ctx.user is not None:
            toggle = ("close", "Close issue") if issue["state"] == "opened" else ("reopen", "Reopen issue")
            controls = (_state_button(f"{here}/{toggle[0]}", toggle[1])
                        + f'<form action="{here}/assign" method="post" class="assign-form">'
                        + text_field("assignee_username", "assignee_username", "Assign to", placeholder="username")
                        + '<button type="submit">Assign</button></form>'
                        + f'<form action="{here}/labels" method="post" class="label-form">'
                        + text_field("label_name", "label_name", "Add label", placeholder="label name")
                        + '<button type="submit">Add label</button></form>')
        assignees = ", ".join(
            user_link(r["username"], r["name"]) for r in conn.execute(
                "SELECT u.username, u.name FROM gitlab_issue_assignees a JOIN gitlab_users u ON u.id = a.user_id "
                "WHERE a.issue_id = ? ORDER BY u.username", (issue["id"],))) or "None"
        sidebar = (f'<aside class="issuable-sidebar" aria-label="Issue details"><div class="block assignee">'
                   f'<h3>Assignees</h3><p class="assignees">{assignees}</p></div>'
                   f'<div class="block labels"><h3>Labels</h3><p class="labels-list">'
                   f'{_label_spans(issue["labels"]) or "None"}</p></div>'
                   f'<div class="block milestone"><h3>Milestone</h3><p class="milestone-title">'
                   f'{esc(issue["milestone"] or "None")}</p></div><div class="block due-date"><h3>Due date</h3>'
                   f'<p class="due-date-value">{esc(issue["due_date"] or "None")}</p></div>{controls}</aside>')
        main = (f'<h1 class="title" data-testid="issue-title">{esc(issue["title"])}</h1>'
                f'<p><span class="badge issuable-status-badge" data-testid="issue-state">{status}</span> '
                f'Issue #{issue["iid"]} created {display_date(issue["created_at"])} by '
                f'{user_link(issue["author_username"], issue["author_name"])}</p>'
                f'<div class="description">{markdown(issue["description"])}</div>{sidebar}'
                f'{_notes_html(conn, "Issue", issue["id"], here + "/notes", ctx.user is not None)}')
        return project_page(ctx, p, issue["title"], main)


def _date_ok(value: str) -> bool:
    try:
        dt.date.fromisoformat(value)
        return len(value) == 10
    except ValueError:
        return False


def _label_ids(conn: sqlite3.Connection, project_id: int, names: str) -> tuple[list[int], str]:
    ids = []
    for name in (n.strip() for n in names.split(",")):
        if not name:
            continue
        row = conn.execute("SELECT id FROM gitlab_labels WHERE project_id = ? AND name = ?",
                           (project_id, name)).fetchone()
        if row is None:
            known = [r[0] for r in conn.execute("SELECT name FROM gitlab_labels WHERE project_id = ? ORDER BY name",
                                                (project_id,))]
            return [], f"Label {name!r} does not exist in this project; choose from {', '.join(known)}."
        ids.append(row[0])
    return ids, ""


def _issue_form(p: sqlite3.Row, values: dict[str, str]) -> str:
    return (f'<form action="{project_base(p)}/-/issues/new" method="post" class="issue-form">'
            + text_field("issue_title", "issue[title]", "Title", values.get("issue[title]", ""), required=True)
            + area_field("issue_description", "issue[description]", "Description", values.get("issue[description]", ""))
            + text_field("issue_assignee", "issue[assignee_username]", "Assignee username",
                         values.get("issue[assignee_username]", ""))
            + text_field("issue_labels", "issue[label_names]", "Labels (comma-separated)",
                         values.get("issue[label_names]", ""))
            + text_field("issue_milestone", "issue[milestone_title]", "Milestone title",
                         values.get("issue[milestone_title]", ""))
            + text_field("issue_due_date", "issue[due_date]", "Due date (YYYY-MM-DD)",
                         values.get("issue[due_date]", ""))
            + '<p><button type="submit">Create issue</button></p></form>')


async def new_issue(store: InstanceStore, request: Request) -> Response:
    """GET/POST `/<ns>/<proj>/-/issues/new`: open an issue (title, description, assignee, labels, milestone, due)."""
    form = await read_form(request) if request.method == "POST" else None
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        need = login_required(ctx)
        if need:
            return need
        p = _project(ctx, request)
        if p is None:
            return not_found(ctx)
        if form is None:
            return project_page(ctx, p, "New issue", "<h1>New issue</h1>" + _issue_form(p, {}))
        title = form.get("issue[title]", "").strip()
        assignee_name = form.get("issue[assignee_username]", "").strip().lstrip("@")
        milestone_title = form.get("issue[milestone_title]", "").strip()
        due = form.get("issue[due_date]", "").strip()
        assignee = user_by_name(conn, assignee_name) if assignee_name else None
        milestone = conn.execute("SELECT id FROM gitlab_milestones WHERE project_id = ? AND title = ?",
                                 (p["id"], milestone_title)).fetchone() if milestone_title else None
        label_ids, error = _label_ids(conn, p["id"], form.get("issue[label_names]", ""))
        if not title:
            error = "Title can't be blank."
        elif assignee_name and assignee is None:
            error = f"There is no user {assignee_name!r} to assign."
        elif milestone_title and milestone is None:
            error = f"There is no milestone {milestone_title!r} in this project."
        elif due and not _date_ok(due):
            error = f"Due date {due!r} is invalid: use YYYY-MM-DD."
        if error:
            alert = f'<div class="flash-alert" role="alert">{esc(error)}</div>'
            return project_page(ctx, p, "New issue", "<h1>New issue</h1>" + alert + _issue_form(p, form),
                                status_code=422)
        now = site_now(conn)
        iid = conn.execute("SELECT COALESCE(MAX(iid), 0) + 1 FROM gitlab_issues WHERE project_id = ?",
                           (p["id"],)).fetchone()[0]
        issue_id = conn.execute(
            "INSERT INTO gitlab_issues (project_id, iid, title, description, author_id, milestone_id, due_date, "
            "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (p["id"], iid, title, form.get("issue[description]", "").strip(), ctx.user_id,
             milestone[0] if milestone else None, due, now, now)).lastrowid
        for lid in label_ids:
            conn.execute("INSERT OR IGNORE INTO gitlab_issue_labels (issue_id, label_id) VALUES (?,?)", (issue_id, lid))
        if assignee is not None:
            conn.execute("INSERT INTO gitlab_issue_assignees (issue_id, user_id) VALUES (?,?)",
                         (issue_id, assignee["id"]))
        return redirect(issue_path(p["namespace"], p["path"], iid))


def _add_note(conn: sqlite3.Connection, kind: str, target_id: int, user_id: int, body: str) -> None:
    conn.execute("INSERT INTO gitlab_notes (noteable_type, noteable_id, author_id, body, created_at) "
                 "VALUES (?,?,?,?,?)",
                 (kind, target_id, user_id, body, site_now(conn)))


def _bad_request(ctx: Ctx, p: sqlite3.Row, message: str, back: str, status: int = 422) -> Response:
    return project_page(ctx, p, "Error", '<h1>Could not save</h1>'
                        f'<p class="flash-alert" role="alert">{esc(message)}</p>'
                        f'<p><a href="{esc(back)}">Go back</a></p>', status_code=status)


async def issue_action(store: InstanceStore, request: Request) -> Response:
    """POST `/<ns>/<proj>/-/issues/<iid>/<action>`: notes (`note[note]`), close, reopen, assign
    (`assignee_username`), labels (`label_name`)."""
    form = await read_form(request)
    action = request.path_params["action"]
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        need = login_required(ctx)
        if need:
            return need
        p, issue = _load_issue(ctx, request)
        if p is None or issue is None or action not in ("notes", "close", "reopen", "assign", "labels"):
            return not_found(ctx)
        here = issue_path(p["namespace"], p["path"], issue["iid"])
        allowed = member_level(conn, p["id"], ctx.user_id) >= 20 or issue["author_id"] == ctx.user_id
        if action != "notes" and not allowed:
            return _bad_request(ctx, p, "You need the Reporter role or higher to change this issue.", here, 403)
        now = site_now(conn)
        if action == "notes":
            body = form.get("note[note]", "").strip()
            if not body:
                return _bad_request(ctx, p, "Comment can't be blank.", here)
            _add_note(conn, "Issue", issue["id"], ctx.user_id, body)
        elif action in ("close", "reopen"):
            conn.execute("UPDATE gitlab_issues SET state = ?, updated_at = ? WHERE id = ?",
                         ("closed" if action == "close" else "opened", now, issue["id"]))
        elif action == "assign":
            name = form.get("assignee_username", "").strip().lstrip("@")
            user = user_by_name(conn, name) if name else None
            if user is None:
                return _bad_request(ctx, p, f"There is no user {name!r} to assign.", here)
            conn.execute("INSERT OR IGNORE INTO gitlab_issue_assignees (issue_id, user_id) VALUES (?,?)",
                         (issue["id"], user["id"]))
        else:
            ids, error = _label_ids(conn, p["id"], form.get("label_name", ""))
            if error or not ids:
                return _bad_request(ctx, p, error or "Label name can't be blank.", here)
            for lid in ids:
                conn.execute("INSERT OR IGNORE INTO gitlab_issue_labels (issue_id, label_id) VALUES (?,?)",
                             (issue["id"], lid))
        conn.execute("UPDATE gitlab_issues SET updated_at = ? WHERE id = ?", (now, issue["id"]))
        return redirect(here)


def _mr_rows(rows: list[sqlite3.Row], conn: sqlite3.Connection, with_project: bool = False) -> str:
    if not rows:
        return '<p class="empty">There are no merge requests to show.</p>'
    items = []
    for r in rows:
        p = conn.execute("SELECT namespace, path FROM gitlab_projects WHERE id = ?", (r["project_id"],)).fetchone()
        ref = f'{esc(p["namespace"])}/{esc(p["path"])}!{r["iid"]}' if with_project else f"!{r['iid']}"
        state = "" if r["state"] == "opened" else f' <span class="badge">{r["state"].upper()}</span>'
        items.append(f'<li class="merge-request"><a href="/{quote(p["namespace"])}/{quote(p["path"])}/-/merge_requests/'
                     f'{r["iid"]}" class="merge-request-title">{esc(r["title"])}</a>{state}<p class="issuable-info">'
                     f'{ref} · created {display_date(r["created_at"])} by {esc(r["author_name"])} · '
                     f'{esc(r["source_branch"])} into {esc(r["target_branch"])}</p></li>')
    return f'<ul class="mr-list">{"".join(items)}</ul>'


def merge_requests(store: InstanceStore, request: Request) -> Response:
    """GET `/<ns>/<proj>/-/merge_requests?state=opened|merged|closed|all`."""
    state = request.query_params.get("state", "opened")
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        p = _project(ctx, request)
        if p is None:
            return not_found(ctx)
        base = project_base(p)
        counts = {s: len(mr_list(conn, project_id=p["id"], state=s)) for s in _MR_STATES}
        main = (f'<h1>Merge requests</h1><p><a href="{base}/-/merge_requests/new">New merge request</a></p>'
                f'{_state_tabs(base + "/-/merge_requests", counts, _MR_STATES, state, {})}'
                f'{_mr_rows(mr_list(conn, project_id=p["id"], state=state), conn)}')
        return project_page(ctx, p, "Merge requests", main)


def _load_mr(ctx: Ctx, request: Request):
    p = _project(ctx, request)
    if p is None:
        return None, None
    rows = mr_list(ctx.conn, project_id=p["id"], state="all", iid=to_int(request.path_params["iid"], -1))
    return p, (rows[0] if rows else None)


def mr_page(store: InstanceStore, request: Request) -> Response:
    """GET `/<ns>/<proj>/-/merge_requests/<iid>`: a merge request, its reviewers and notes."""
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        p, mr = _load_mr(ctx, request)
        if p is None or mr is None:
            return not_found(ctx)
        here = f"{project_base(p)}/-/merge_requests/{mr['iid']}"
        status = _MR_STATES[mr["state"]]
        controls = ""
        if ctx.user is not None:
            if mr["state"] == "opened":
                controls += _state_button(f"{here}/merge", "Merge") + _state_button(f"{here}/close",
                                                                                      "Close merge request")
            elif mr["state"] == "closed":
                controls += _state_button(f"{here}/reopen", "Reopen merge request")
            controls += (f'<form action="{here}/reviewer" method="post" class="reviewer-form">'
                         + text_field("reviewer_username", "reviewer_username", "Reviewer username")
                         + '<button type="submit">Request review</button></form>')

        def person(username: Optional[str]) -> str:
            if not username:
                return "None"
            u = user_by_name(conn, username)
            return user_link(u["username"], u["name"])

        main = (f'<h1 class="title" data-testid="mr-title">{esc(mr["title"])}</h1>'
                f'<p><span class="badge issuable-status-badge" data-testid="mr-state">{status}</span> '
                f'{user_link(mr["author_username"], mr["author_name"])} requested to merge '
                f'<span class="ref-name source-branch">{esc(mr["source_branch"])}</span> into '
                f'<span class="ref-name target-branch">{esc(mr["target_branch"])}</span> '
                f'{display_date(mr["created_at"])}</p><div class="description">{markdown(mr["description"])}</div>'
                f'<aside class="issuable-sidebar" aria-label="Merge request details"><div class="block assignee">'
                f'<h3>Assignee</h3><p class="assignees">{person(mr["assignee_username"])}</p></div>'
                f'<div class="block reviewer"><h3>Reviewer</h3><p class="reviewers">{person(mr["reviewer_username"])}'
                f'</p></div>{controls}</aside>'
                f'{_notes_html(conn, "MergeRequest", mr["id"], here + "/notes", ctx.user is not None)}')
        return project_page(ctx, p, mr["title"], main)


def _branch_exists(conn: sqlite3.Connection, project_id: int, name: str) -> bool:
    return conn.execute("SELECT 1 FROM gitlab_branches WHERE project_id = ? AND name = ?",
                        (project_id, name)).fetchone() is not None


def _mr_form(p: sqlite3.Row, values: dict[str, str]) -> str:
    return (f'<form action="{project_base(p)}/-/merge_requests/new" method="post" class="mr-form">'
            + text_field("mr_source", "merge_request[source_branch]", "Source branch",
                         values.get("merge_request[source_branch]", ""), required=True)
            + text_field("mr_target", "merge_request[target_branch]", "Target branch",
                         values.get("merge_request[target_branch]", ""), placeholder=p["default_branch"])
            + text_field("mr_title", "merge_request[title]", "Title", values.get("merge_request[title]", ""),
                         required=True)
            + area_field("mr_description", "merge_request[description]", "Description",
                         values.get("merge_request[description]", ""))
            + text_field("mr_assignee", "merge_request[assignee_username]", "Assignee username",
                         values.get("merge_request[assignee_username]", ""))
            + text_field("mr_reviewer", "merge_request[reviewer_username]", "Reviewer username",
                         values.get("merge_request[reviewer_username]", ""))
            + '<p><button type="submit">Create merge request</button></p></form>')


async def new_mr(store: InstanceStore, request: Request) -> Response:
    """GET/POST `/<ns>/<proj>/-/merge_requests/new`: open a merge request between two branches."""
    form = await read_form(request) if request.method == "POST" else None
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        need = login_required(ctx)
        if need:
            return need
        p = _project(ctx, request)
        if p is None:
            return not_found(ctx)
        if form is None:
            return project_page(ctx, p, "New merge request", "<h1>New merge request</h1>" + _mr_form(p, {}))
        source = form.get("merge_request[source_branch]", "").strip()
        target = form.get("merge_request[target_branch]", "").strip() or p["default_branch"]
        title = form.get("merge_request[title]", "").strip()
        people = {}
        error = ""
        for key in ("assignee", "reviewer"):
            name = form.get(f"merge_request[{key}_username]", "").strip().lstrip("@")
            people[key] = user_by_name(conn, name) if name else None
            if name and people[key] is None:
                error = f"There is no user {name!r} to make {key}."
        if not _branch_exists(conn, p["id"], source):
            error = f"Source branch {source!r} does not exist."
        elif not _branch_exists(conn, p["id"], target):
            error = f"Target branch {target!r} does not exist."
        elif source == target:
            error = "Source and target branch must differ."
        elif not title:
            error = "Title can't be blank."
        if error:
            alert = f'<div class="flash-alert" role="alert">{esc(error)}</div>'
            return project_page(ctx, p, "New merge request", "<h1>New merge request</h1>" + alert + _mr_form(p, form),
                                status_code=422)
        now = site_now(conn)
        iid = conn.execute("SELECT COALESCE(MAX(iid), 0) + 1 FROM gitlab_merge_requests WHERE project_id = ?",
                           (p["id"],)).fetchone()[0]
        conn.execute("INSERT INTO gitlab_merge_requests (project_id, iid, title, description, author_id, assignee_id, "
                     "reviewer_id, source_branch, target_branch, created_at, updated_at) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                     (p["id"], iid, title, form.get("merge_request[description]", "").strip(), ctx.user_id,
                      people["assignee"]["id"] if people["assignee"] else None,
                      people["reviewer"]["id"] if people["reviewer"] else None, source, target, now, now))
        return redirect(f"{project_base(p)}/-/merge_requests/{iid}")


async def mr_action(store: InstanceStore, request: Request) -> Response:
    """POST `/<ns>/<proj>/-/merge_requests/<iid>/<action>`: notes, merge, close, reopen, reviewer."""
    form = await read_form(request)
    action = request.path_params["action"]
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        need = login_required(ctx)
        if need:
            return need
        p, mr = _load_mr(ctx, request)
        if p is None or mr is None or action not in ("notes", "merge", "close", "reopen", "reviewer"):
            return not_found(ctx)
        here = f"{project_base(p)}/-/merge_requests/{mr['iid']}"
        level = member_level(conn, p["id"], ctx.user_id)
        if action != "notes" and level < 30 and mr["author_id"] != ctx.user_id:
            return _bad_request(ctx, p, "You need the Developer role or higher to change this merge request.",
                                here, 403)
        now = site_now(conn)
        if action == "notes":
            body = form.get("note[note]", "").strip()
            if not body:
                return _bad_request(ctx, p, "Comment can't be blank.", here)
            _add_note(conn, "MergeRequest", mr["id"], ctx.user_id, body)
        elif action == "reviewer":
            name = form.get("reviewer_username", "").strip().lstrip("@")
            user = user_by_name(conn, name) if name else None
            if user is None:
                return _bad_request(ctx, p, f"There is no user {name!r} to request a review from.", here)
            conn.execute("UPDATE gitlab_merge_requests SET reviewer_id = ? WHERE id = ?", (user["id"], mr["id"]))
        else:
            if (action == "reopen") != (mr["state"] == "closed") or (action != "reopen" and mr["state"] != "opened"):
                return _bad_request(ctx, p, f"A {mr['state']} merge request cannot be {action}d.", here)
            state = {"merge": "merged", "close": "closed", "reopen": "opened"}[action]
            conn.execute("UPDATE gitlab_merge_requests SET state = ? WHERE id = ?", (state, mr["id"]))
        conn.execute("UPDATE gitlab_merge_requests SET updated_at = ? WHERE id = ?", (now, mr["id"]))
        return redirect(here)


def _milestone_rows(p: sqlite3.Row, rows: list[sqlite3.Row]) -> str:
    if not rows:
        return '<p class="empty">No milestones to show.</p>'
    items = "".join(
        f'<li class="milestone"><a href="{project_base(p)}/-/milestones/{r["iid"]}" class="milestone-title">'
        f'{esc(r["title"])}</a> <span class="milestone-dates">{esc(r["start_date"] or "no start date")} – '
        f'{esc(r["due_date"] or "no due date")}</span> <span class="badge">{esc(r["state"])}</span> '
        f'<span class="milestone-issues">{r["open"]} open, {r["closed"]} closed issues</span></li>' for r in rows)
    return f'<ul class="milestones">{items}</ul>'


def _milestones_of(conn: sqlite3.Connection, project_id: int, iid: Optional[int] = None) -> list[sqlite3.Row]:
    sql = ("SELECT m.*, (SELECT COUNT(*) FROM gitlab_issues i WHERE i.milestone_id = m.id AND i.state = 'opened') "
           "AS open, (SELECT COUNT(*) FROM gitlab_issues i WHERE i.milestone_id = m.id AND i.state = 'closed') "
           "AS closed "
           "FROM gitlab_milestones m WHERE m.project_id = ?")
    args: tuple = (project_id,)
    if iid is not None:
        sql += " AND m.iid = ?"
        args += (iid,)
    return conn.execute(sql + " ORDER BY m.due_date, m.iid", args).fetchall()


def milestones(store: InstanceStore, request: Request) -> Response:
    """GET `/<ns>/<proj>/-/milestones`: every milestone with its dates and issue counts."""
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        p = _project(ctx, request)
        if p is None:
            return not_found(ctx)
        main = (f'<h1>Milestones</h1><p><a href="{project_base(p)}/-/milestones/new">New milestone</a></p>'
                f'{_milestone_rows(p, _milestones_of(conn, p["id"]))}')
        return project_page(ctx, p, "Milestones", main)


def milestone_page(store: InstanceStore, request: Request) -> Response:
    """GET `/<ns>/<proj>/-/milestones/<iid>`: a milestone and its issues."""
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        p = _project(ctx, request)
        rows = _milestones_of(conn, p["id"], to_int(request.path_params["iid"], -1)) if p is not None else []
        if not rows:
            return not_found(ctx)
        m = rows[0]
        issues_here = [i for i in issue_list(conn, project_id=p["id"], state="all") if i["milestone_id"] == m["id"]]
        main = (f'<h1 class="milestone-title" data-testid="milestone-title">{esc(m["title"])}</h1>'
                f'<p><span class="badge">{esc(m["state"])}</span></p><div class="description">'
                f'{markdown(m["description"])}</div><dl class="milestone-dates"><dt>Start date</dt>'
                f'<dd class="start-date">{esc(m["start_date"] or "None")}</dd><dt>Due date</dt>'
                f'<dd class="due-date">{esc(m["due_date"] or "None")}</dd></dl><h2>Issues</h2>'
                f'{_issue_rows(issues_here, conn)}')
        return project_page(ctx, p, m["title"], main)


def _milestone_form(p: sqlite3.Row, values: dict[str, str]) -> str:
    return (f'<form action="{project_base(p)}/-/milestones/new" method="post" class="milestone-form">'
            + text_field("milestone_title", "milestone[title]", "Title", values.get("milestone[title]", ""),
                         required=True)
            + area_field("milestone_description", "milestone[description]", "Description",
                         values.get("milestone[description]", ""), rows=3)
            + text_field("milestone_start_date", "milestone[start_date]", "Start date (YYYY-MM-DD)",
                         values.get("milestone[start_date]", ""))
            + text_field("milestone_due_date", "milestone[due_date]", "Due date (YYYY-MM-DD)",
                         values.get("milestone[due_date]", ""))
            + '<p><button type="submit">Create milestone</button></p></form>')


async def new_milestone(store: InstanceStore, request: Request) -> Response:
    """GET/POST `/<ns>/<proj>/-/milestones/new`: create a milestone (Reporters and above)."""
    form = await read_form(request) if request.method == "POST" else None
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        need = login_required(ctx)
        if need:
            return need
        p = _project(ctx, request)
        if p is None:
            return not_found(ctx)
        if member_level(conn, p["id"], ctx.user_id) < 20:
            return _bad_request(ctx, p, "You need the Reporter role or higher to create milestones.",
                                project_base(p), 403)
        if form is None:
            return project_page(ctx, p, "New milestone", "<h1>New milestone</h1>" + _milestone_form(p, {}))
        title = form.get("milestone[title]", "").strip()
        start = form.get("milestone[start_date]", "").strip()
        due = form.get("milestone[due_date]", "").strip()
        error = ""
        if not title:
            error = "Title can't be blank."
        elif any(d and not _date_ok(d) for d in (start, due)):
            error = "Dates must be written YYYY-MM-DD."
        elif start and due and due < start:
            error = "Due date must be on or after the start date."
        elif conn.execute("SELECT 1 FROM gitlab_milestones WHERE project_id = ? AND title = ?",
                          (p["id"], title)).fetchone():
            error = f"Title {title!r} has already been taken."
        if error:
            alert = f'<div class="flash-alert" role="alert">{esc(error)}</div>'
            return project_page(ctx, p, "New milestone", "<h1>New milestone</h1>" + alert + _milestone_form(p, form),
                                status_code=422)
        iid = conn.execute("SELECT COALESCE(MAX(iid), 0) + 1 FROM gitlab_milestones WHERE project_id = ?",
                           (p["id"],)).fetchone()[0]
        conn.execute("INSERT INTO gitlab_milestones (project_id, iid, title, description, start_date, due_date) "
                     "VALUES (?,?,?,?,?,?)", (p["id"], iid, title, form.get("milestone[description]", "").strip(),
                                              start, due))
        return redirect(f"{project_base(p)}/-/milestones/{iid}")


def _visible_ids(conn: sqlite3.Connection, user_id: Optional[int]) -> set[int]:
    return {r[0] for r in conn.execute(
        "SELECT id FROM gitlab_projects p WHERE visibility != 'private' OR EXISTS (SELECT 1 "
        "FROM gitlab_project_members "
        "m WHERE m.project_id = p.id AND m.user_id = ?)", (user_id or -1,))}


def dashboard_issues(store: InstanceStore, request: Request) -> Response:
    """GET `/dashboard/issues` (`assignee_username`, `author_username`, `state`, `label_name[]`, `search`)."""
    state = request.query_params.get("state", "opened")
    filters = _issue_filters(request)
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        need = login_required(ctx)
        if need:
            return need
        visible = _visible_ids(conn, ctx.user_id)
        if not (filters["assignee"] or filters["author"]):
            filters["assignee"] = ctx.user["username"]
        counts = {s: sum(1 for i in issue_list(conn, state=s, **filters) if i["project_id"] in visible)
                  for s in _ISSUE_STATES}
        rows = [i for i in issue_list(conn, state=state, **filters) if i["project_id"] in visible]
        extra = {"assignee_username": filters["assignee"] or None, "author_username": filters["author"] or None}
        main = (f'<h1>Issues</h1>{_state_tabs("/dashboard/issues", counts, _ISSUE_STATES, state, extra)}'
                f'{_issue_rows(rows, conn, with_project=True)}')
        return render_page(ctx, "Issues", main)


def dashboard_mrs(store: InstanceStore, request: Request) -> Response:
    """GET `/dashboard/merge_requests` (`assignee_username` or `reviewer_username`, `state`)."""
    state = request.query_params.get("state", "opened")
    q = request.query_params
    with db(store, request) as conn:
        ctx = Ctx(request, conn)
        need = login_required(ctx)
        if need:
            return need
        visible = _visible_ids(conn, ctx.user_id)
        reviewer = q.get("reviewer_username", "")
        assignee = q.get("assignee_username", "") or ("" if reviewer else ctx.user["username"])
        counts = {s: sum(1 for m in mr_list(conn, state=s, assignee=assignee, reviewer=reviewer)
                         if m["project_id"] in visible) for s in _MR_STATES}
        rows = [m for m in mr_list(conn, state=state, assignee=assignee, reviewer=reviewer)
                if m["project_id"] in visible]
        extra = {"assignee_username": assignee or None, "reviewer_username": reviewer or None}
        me = quote(ctx.user["username"])
        main = (f'<h1>Merge requests</h1><nav aria-label="Merge request scopes"><a href="/dashboard/merge_requests?'
                f'assignee_username={me}">Assigned to you</a> '
                f'<a href="/dashboard/merge_requests?reviewer_username={me}">Review requests for you</a></nav>'
                f'{_state_tabs("/dashboard/merge_requests", counts, _MR_STATES, state, extra)}'
                f'{_mr_rows(rows, conn, with_project=True)}')
        return render_page(ctx, "Merge requests", main)
