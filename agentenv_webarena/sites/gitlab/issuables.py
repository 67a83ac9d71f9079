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

from agentenv_webarena.sites.common import esc, login_required, query_url, redirect, to_int
from agentenv_webarena.sites.gitlab import data
from agentenv_webarena.sites.gitlab.layout import (
    Ctx,
    area_field,
    form_page,
    load_project,
    markdown,
    not_found,
    paginate,
    post_form,
    project_base,
    project_page,
    render_page,
    text_field,
    user_link,
)
from agentenv_webarena.sites.gitlab.model import (
    add_todo,
    display_date,
    issue_list,
    member_level,
    mentioned_users,
    mr_list,
    site_now,
    user_by_name,
)

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


def issues(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET `/<ns>/<proj>/-/issues` (`state`, `label_name[]`, `assignee_username`, `author_username`, `search`)."""
    state = ctx.q.get("state", "opened")
    filters = _issue_filters(ctx.request)
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    base = project_base(p)
    counts = {s: len(issue_list(ctx.conn, project_id=p["id"], state=s, **filters)) for s in _ISSUE_STATES}
    rows, pager = paginate(ctx, issue_list(ctx.conn, project_id=p["id"], state=state, **filters))
    extra = {"label_name[]": filters["label"] or None, "assignee_username": filters["assignee"] or None,
             "search": filters["search"] or None}
    labels = [r[0] for r in ctx.conn.execute("SELECT name FROM gitlab_labels WHERE project_id = ? ORDER BY name",
                                             (p["id"],))]
    label_nav = " ".join(f'<a href="{esc(query_url(base + "/-/issues", **{"label_name[]": n}))}">{esc(n)}</a>'
                         for n in labels)
    main = (f'<h1>Issues</h1><p><a href="{base}/-/issues/new">New issue</a></p>'
            f'{_state_tabs(base + "/-/issues", counts, _ISSUE_STATES, state, extra)}'
            f'<form action="{base}/-/issues" method="get"><input type="search" name="search" '
            f'value="{esc(filters["search"])}" aria-label="Search or filter results" '
            'placeholder="Search or filter results"></form>'
            f'<nav aria-label="Filter by label" class="label-filter">Labels: {label_nav}</nav>'
            f'{_issue_rows(rows, ctx.conn)}{pager}')
    return project_page(ctx, p, "Issues", main)


def _notes_html(conn: sqlite3.Connection, kind: str, target_id: int, action: str, signed_in: bool) -> str:
    rows = conn.execute("SELECT n.*, u.username, u.name FROM gitlab_notes n JOIN gitlab_users u ON u.id = n.author_id "
                        "WHERE n.noteable_type = ? AND n.noteable_id = ? ORDER BY n.created_at, n.id",
                        (kind, target_id)).fetchall()
    items = "".join(f'<li class="note timeline-entry" id="note_{r["id"]}"><p class="note-header">'
                    f'{user_link(r["username"], r["name"])} '
                    f'<span class="note-headline-light">@{esc(r["username"])}</span> · {display_date(r["created_at"])}'
                    f'</p><div class="timeline-discussion-body note-body"><div class="note-text">{markdown(r["body"])}'
                    '</div></div></li>' for r in rows)
    form = ""
    if signed_in:
        form = (f'<form action="{action}" method="post" class="new-note">'
                + area_field("note_note", "note[note]", "Comment", rows=4)
                + '<p><button type="submit">Comment</button></p></form>')
    return (f'<section class="notes-section" id="notes"><h2>Activity</h2><ul class="notes main-notes-list timeline" '
            f'id="notes-list">{items}</ul>'
            f"{form}</section>")


def _state_button(action: str, label: str) -> str:
    return (f'<form action="{action}" method="post" class="state-form"><button type="submit">{esc(label)}</button>'
            "</form>")


def _load_issue(ctx: Ctx, namespace: str, project: str, iid: str):
    p = load_project(ctx, namespace, project)
    if p is None:
        return None, None
    rows = issue_list(ctx.conn, project_id=p["id"], state="all", iid=to_int(iid, -1))
    return p, (rows[0] if rows else None)


def issue_page(ctx: Ctx, namespace: str, project: str, iid: str) -> Response:
    """GET `/<ns>/<proj>/-/issues/<iid>`: an issue, its sidebar (assignees, labels, milestone, due date) and notes."""
    p, issue = _load_issue(ctx, namespace, project, iid)
    if p is None or issue is None:
        return not_found(ctx)
    here = issue_path(p["namespace"], p["path"], issue["iid"])
    status = "Open" if issue["state"] == "opened" else "Closed"
    controls = ""
    if ctx.account is not None:
        toggle = ("close", "Close issue") if issue["state"] == "opened" else ("reopen", "Reopen issue")
        controls = (_state_button(f"{here}/{toggle[0]}", toggle[1])
                    + f'<form action="{here}/assign" method="post" class="assign-form">'
                    + text_field("assignee_username", "assignee_username", "Assign to", placeholder="username")
                    + '<button type="submit">Assign</button></form>'
                    + f'<form action="{here}/labels" method="post" class="label-form">'
                    + text_field("label_name", "label_name", "Add label", placeholder="label name")
                    + '<button type="submit">Add label</button></form>')
    assignees = ", ".join(
        user_link(r["username"], r["name"]) for r in ctx.conn.execute(
            "SELECT u.username, u.name FROM gitlab_issue_assignees a JOIN gitlab_users u ON u.id = a.user_id "
            "WHERE a.issue_id = ? ORDER BY u.username", (issue["id"],))) or "None"
    sidebar = (f'<aside class="issuable-sidebar" aria-label="Issue details"><div class="block assignee">'
               f'<h3>Assignees</h3><p class="assignees">{assignees}</p></div>'
               f'<div class="block labels"><h3>Labels</h3><p class="labels-list">'
               f'{_label_spans(issue["labels"]) or "None"}</p></div>'
               f'<div class="block milestone"><h3>Milestone</h3><p class="milestone-title">'
               f'{esc(issue["milestone"] or "None")}</p></div>'
               f'<div class="block due-date" data-testid="sidebar-due-date"><h3>Due date</h3>'
               f'<p class="due-date-value">{esc(issue["due_date"] or "None")}</p></div>{controls}</aside>')
    main = (f'<div class="detail-page-description content-block"><h1 class="title" data-testid="issue-title" '
            f'data-qa-selector="title_content">{esc(issue["title"])}</h1>'
            f'<p><span class="badge issuable-status-badge" data-testid="issue-state">{status}</span> '
            f'Issue #{issue["iid"]} created {display_date(issue["created_at"])} by '
            f'{user_link(issue["author_username"], issue["author_name"])}</p>'
            f'<div class="description">{markdown(issue["description"])}</div></div>{sidebar}'
            f'{_notes_html(ctx.conn, "Issue", issue["id"], here + "/notes", ctx.account is not None)}')
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
    return post_form(
        f"{project_base(p)}/-/issues/new", "issue-form",
        text_field("issue_title", "issue[title]", "Title", values.get("issue[title]", ""), required=True)
        + area_field("issue_description", "issue[description]", "Description", values.get("issue[description]", ""))
        + text_field("issue_assignee", "issue[assignee_username]", "Assignee username",
                     values.get("issue[assignee_username]", ""))
        + text_field("issue_labels", "issue[label_names]", "Labels (comma-separated)",
                     values.get("issue[label_names]", ""))
        + text_field("issue_milestone", "issue[milestone_title]", "Milestone title",
                     values.get("issue[milestone_title]", ""))
        + text_field("issue_due_date", "issue[due_date]", "Due date (YYYY-MM-DD)",
                     values.get("issue[due_date]", "")),
        "Create issue")


@login_required
def new_issue(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET/POST `/<ns>/<proj>/-/issues/new`: open an issue (title, description, assignee, labels, milestone, due)."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    if not ctx.posted:
        return form_page(ctx, p, "New issue", _issue_form(p, {}))
    title = ctx.form.get("issue[title]", "").strip()
    assignee_name = ctx.form.get("issue[assignee_username]", "").strip().lstrip("@")
    milestone_title = ctx.form.get("issue[milestone_title]", "").strip()
    due = ctx.form.get("issue[due_date]", "").strip()
    assignee = user_by_name(ctx.conn, assignee_name) if assignee_name else None
    milestone = ctx.conn.execute("SELECT id FROM gitlab_milestones WHERE project_id = ? AND title = ?",
                                 (p["id"], milestone_title)).fetchone() if milestone_title else None
    label_ids, error = _label_ids(ctx.conn, p["id"], ctx.form.get("issue[label_names]", ""))
    if not title:
        error = "Title can't be blank."
    elif assignee_name and assignee is None:
        error = f"There is no user {assignee_name!r} to assign."
    elif milestone_title and milestone is None:
        error = f"There is no milestone {milestone_title!r} in this project."
    elif due and not _date_ok(due):
        error = f"Due date {due!r} is invalid: use YYYY-MM-DD."
    if error:
        return form_page(ctx, p, "New issue", _issue_form(p, ctx.form), error)
    now = site_now(ctx.conn)
    iid = ctx.conn.execute("SELECT COALESCE(MAX(iid), 0) + 1 FROM gitlab_issues WHERE project_id = ?",
                           (p["id"],)).fetchone()[0]
    issue_id = ctx.conn.execute(
        "INSERT INTO gitlab_issues (project_id, iid, title, description, author_id, milestone_id, due_date, "
        "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
        (p["id"], iid, title, ctx.form.get("issue[description]", "").strip(), ctx.user_id,
         milestone[0] if milestone else None, due, now, now)).lastrowid
    for lid in label_ids:
        ctx.conn.execute("INSERT OR IGNORE INTO gitlab_issue_labels (issue_id, label_id) VALUES (?,?)", (issue_id, lid))
    if assignee is not None:
        ctx.conn.execute("INSERT INTO gitlab_issue_assignees (issue_id, user_id) VALUES (?,?)",
                         (issue_id, assignee["id"]))
        add_todo(ctx.conn, assignee["id"], ctx.user_id, p["id"], "Issue", issue_id, "assigned", now)
    _mention_todos(ctx.conn, p["id"], "Issue", issue_id, ctx.user_id, ctx.form.get("issue[description]", ""), now)
    return redirect(issue_path(p["namespace"], p["path"], iid))


def _mention_todos(conn: sqlite3.Connection, project_id: int, kind: str, target_id: int, author_id: int, text: str,
                   at: str) -> None:
    """A 'mentioned you' to-do for every user `text` mentions as `@username`."""
    for user in mentioned_users(conn, text):
        add_todo(conn, user["id"], author_id, project_id, kind, target_id, "mentioned", at)


def _add_note(conn: sqlite3.Connection, project_id: int, kind: str, target_id: int, user_id: int, body: str) -> None:
    now = site_now(conn)
    conn.execute("INSERT INTO gitlab_notes (noteable_type, noteable_id, author_id, body, created_at) "
                 "VALUES (?,?,?,?,?)",
                 (kind, target_id, user_id, body, now))
    _mention_todos(conn, project_id, kind, target_id, user_id, body, now)


def _bad_request(ctx: Ctx, p: sqlite3.Row, message: str, back: str, status: int = 422) -> Response:
    return project_page(ctx, p, "Error", '<h1>Could not save</h1>'
                        f'<p class="flash-alert" role="alert">{esc(message)}</p>'
                        f'<p><a href="{esc(back)}">Go back</a></p>', status_code=status)


@login_required
def issue_action(ctx: Ctx, namespace: str, project: str, iid: str, action: str) -> Response:
    """POST `/<ns>/<proj>/-/issues/<iid>/<action>`: notes (`note[note]`), close, reopen, assign
    (`assignee_username`), labels (`label_name`)."""
    p, issue = _load_issue(ctx, namespace, project, iid)
    if p is None or issue is None or action not in ("notes", "close", "reopen", "assign", "labels"):
        return not_found(ctx)
    here = issue_path(p["namespace"], p["path"], issue["iid"])
    allowed = member_level(ctx.conn, p["id"], ctx.user_id) >= 20 or issue["author_id"] == ctx.user_id
    if action != "notes" and not allowed:
        return _bad_request(ctx, p, "You need the Reporter role or higher to change this issue.", here, 403)
    now = site_now(ctx.conn)
    if action == "notes":
        body = ctx.form.get("note[note]", "").strip()
        if not body:
            return _bad_request(ctx, p, "Comment can't be blank.", here)
        _add_note(ctx.conn, p["id"], "Issue", issue["id"], ctx.user_id, body)
    elif action in ("close", "reopen"):
        ctx.conn.execute("UPDATE gitlab_issues SET state = ?, updated_at = ? WHERE id = ?",
                         ("closed" if action == "close" else "opened", now, issue["id"]))
    elif action == "assign":
        name = ctx.form.get("assignee_username", "").strip().lstrip("@")
        user = user_by_name(ctx.conn, name) if name else None
        if user is None:
            return _bad_request(ctx, p, f"There is no user {name!r} to assign.", here)
        added = ctx.conn.execute("INSERT OR IGNORE INTO gitlab_issue_assignees (issue_id, user_id) VALUES (?,?)",
                                 (issue["id"], user["id"])).rowcount
        if added:
            add_todo(ctx.conn, user["id"], ctx.user_id, p["id"], "Issue", issue["id"], "assigned", now)
    else:
        ids, error = _label_ids(ctx.conn, p["id"], ctx.form.get("label_name", ""))
        if error or not ids:
            return _bad_request(ctx, p, error or "Label name can't be blank.", here)
        for lid in ids:
            ctx.conn.execute("INSERT OR IGNORE INTO gitlab_issue_labels (issue_id, label_id) VALUES (?,?)",
                             (issue["id"], lid))
    ctx.conn.execute("UPDATE gitlab_issues SET updated_at = ? WHERE id = ?", (now, issue["id"]))
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


def merge_requests(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET `/<ns>/<proj>/-/merge_requests?state=opened|merged|closed|all`."""
    state = ctx.q.get("state", "opened")
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    base = project_base(p)
    counts = {s: len(mr_list(ctx.conn, project_id=p["id"], state=s)) for s in _MR_STATES}
    rows, pager = paginate(ctx, mr_list(ctx.conn, project_id=p["id"], state=state))
    main = (f'<h1>Merge requests</h1><p><a href="{base}/-/merge_requests/new">New merge request</a></p>'
            f'{_state_tabs(base + "/-/merge_requests", counts, _MR_STATES, state, {})}'
            f'{_mr_rows(rows, ctx.conn)}{pager}')
    return project_page(ctx, p, "Merge requests", main)


def _load_mr(ctx: Ctx, namespace: str, project: str, iid: str):
    p = load_project(ctx, namespace, project)
    if p is None:
        return None, None
    rows = mr_list(ctx.conn, project_id=p["id"], state="all", iid=to_int(iid, -1))
    return p, (rows[0] if rows else None)


def mr_page(ctx: Ctx, namespace: str, project: str, iid: str) -> Response:
    """GET `/<ns>/<proj>/-/merge_requests/<iid>`: a merge request, its reviewers and notes."""
    p, mr = _load_mr(ctx, namespace, project, iid)
    if p is None or mr is None:
        return not_found(ctx)
    here = f"{project_base(p)}/-/merge_requests/{mr['iid']}"
    status = _MR_STATES[mr["state"]]
    controls = ""
    if ctx.account is not None:
        if mr["state"] == "opened":
            controls += _state_button(f"{here}/merge", "Merge") + _state_button(f"{here}/close",
                                                                                "Close merge request")
        elif mr["state"] == "closed":
            controls += _state_button(f"{here}/reopen", "Reopen merge request")
        controls += (f'<form action="{here}/reviewer" method="post" class="reviewer-form">'
                     + text_field("reviewer_username", "reviewer_username", "Reviewer username")
                     + '<button type="submit">Request review</button></form>')

    def branch_ref(name: str, role: str) -> str:
        """A branch name as GitLab's header shows it: a link to its files while the branch exists."""
        classes = f"ref-name {role} gl-link gl-font-monospace"
        if not _branch_exists(ctx.conn, p["id"], name):
            return f'<span class="{classes}">{esc(name)}</span>'
        return f'<a href="{project_base(p)}/-/tree/{quote(name, safe="")}" class="{classes}">{esc(name)}</a>'

    def person(username: Optional[str]) -> str:
        if not username:
            return "None"
        u = user_by_name(ctx.conn, username)
        return user_link(u["username"], u["name"])

    main = (f'<h1 class="title" data-testid="mr-title">{esc(mr["title"])}</h1>'
            f'<p class="detail-page-description"><span class="badge issuable-status-badge" data-testid="mr-state">'
            f'{status}</span> {user_link(mr["author_username"], mr["author_name"])} requested to merge '
            f'{branch_ref(mr["source_branch"], "source-branch")} into '
            f'{branch_ref(mr["target_branch"], "target-branch")} {display_date(mr["created_at"])}</p>'
            f'<div class="description">{markdown(mr["description"])}</div>'
            f'<aside class="issuable-sidebar" aria-label="Merge request details"><div class="block assignee">'
            f'<h3>Assignee</h3><p class="assignees">{person(mr["assignee_username"])}</p></div>'
            f'<div class="block reviewer"><h3>Reviewer</h3><p class="reviewers">{person(mr["reviewer_username"])}'
            f'</p></div>{controls}</aside>'
            f'{_notes_html(ctx.conn, "MergeRequest", mr["id"], here + "/notes", ctx.account is not None)}')
    return project_page(ctx, p, mr["title"], main)


def _branch_exists(conn: sqlite3.Connection, project_id: int, name: str) -> bool:
    return conn.execute("SELECT 1 FROM gitlab_branches WHERE project_id = ? AND name = ?",
                        (project_id, name)).fetchone() is not None


def _mr_form(p: sqlite3.Row, values: dict[str, str]) -> str:
    return post_form(
        f"{project_base(p)}/-/merge_requests/new", "mr-form",
        text_field("mr_source", "merge_request[source_branch]", "Source branch",
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
                     values.get("merge_request[reviewer_username]", "")),
        "Create merge request")


@login_required
def new_mr(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET/POST `/<ns>/<proj>/-/merge_requests/new`: open a merge request between two branches."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    if not ctx.posted:
        return form_page(ctx, p, "New merge request", _mr_form(p, {}))
    source = ctx.form.get("merge_request[source_branch]", "").strip()
    target = ctx.form.get("merge_request[target_branch]", "").strip() or p["default_branch"]
    title = ctx.form.get("merge_request[title]", "").strip()
    people = {}
    error = ""
    for key in ("assignee", "reviewer"):
        name = ctx.form.get(f"merge_request[{key}_username]", "").strip().lstrip("@")
        people[key] = user_by_name(ctx.conn, name) if name else None
        if name and people[key] is None:
            error = f"There is no user {name!r} to make {key}."
    if not _branch_exists(ctx.conn, p["id"], source):
        error = f"Source branch {source!r} does not exist."
    elif not _branch_exists(ctx.conn, p["id"], target):
        error = f"Target branch {target!r} does not exist."
    elif source == target:
        error = "Source and target branch must differ."
    elif not title:
        error = "Title can't be blank."
    if error:
        return form_page(ctx, p, "New merge request", _mr_form(p, ctx.form), error)
    now = site_now(ctx.conn)
    iid = ctx.conn.execute("SELECT COALESCE(MAX(iid), 0) + 1 FROM gitlab_merge_requests WHERE project_id = ?",
                           (p["id"],)).fetchone()[0]
    description = ctx.form.get("merge_request[description]", "").strip()
    mr_id = ctx.conn.execute(
        "INSERT INTO gitlab_merge_requests (project_id, iid, title, description, author_id, assignee_id, "
        "reviewer_id, source_branch, target_branch, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (p["id"], iid, title, description, ctx.user_id, people["assignee"]["id"] if people["assignee"] else None,
         people["reviewer"]["id"] if people["reviewer"] else None, source, target, now, now)).lastrowid
    for key, action in (("assignee", "assigned"), ("reviewer", "review_requested")):
        if people[key] is not None:
            add_todo(ctx.conn, people[key]["id"], ctx.user_id, p["id"], "MergeRequest", mr_id, action, now)
    _mention_todos(ctx.conn, p["id"], "MergeRequest", mr_id, ctx.user_id, description, now)
    return redirect(f"{project_base(p)}/-/merge_requests/{iid}")


@login_required
def mr_action(ctx: Ctx, namespace: str, project: str, iid: str, action: str) -> Response:
    """POST `/<ns>/<proj>/-/merge_requests/<iid>/<action>`: notes, merge, close, reopen, reviewer."""
    p, mr = _load_mr(ctx, namespace, project, iid)
    if p is None or mr is None or action not in ("notes", "merge", "close", "reopen", "reviewer"):
        return not_found(ctx)
    here = f"{project_base(p)}/-/merge_requests/{mr['iid']}"
    level = member_level(ctx.conn, p["id"], ctx.user_id)
    if action != "notes" and level < 30 and mr["author_id"] != ctx.user_id:
        return _bad_request(ctx, p, "You need the Developer role or higher to change this merge request.",
                            here, 403)
    now = site_now(ctx.conn)
    if action == "notes":
        body = ctx.form.get("note[note]", "").strip()
        if not body:
            return _bad_request(ctx, p, "Comment can't be blank.", here)
        _add_note(ctx.conn, p["id"], "MergeRequest", mr["id"], ctx.user_id, body)
    elif action == "reviewer":
        name = ctx.form.get("reviewer_username", "").strip().lstrip("@")
        user = user_by_name(ctx.conn, name) if name else None
        if user is None:
            return _bad_request(ctx, p, f"There is no user {name!r} to request a review from.", here)
        ctx.conn.execute("UPDATE gitlab_merge_requests SET reviewer_id = ? WHERE id = ?", (user["id"], mr["id"]))
        if user["id"] != mr["reviewer_id"]:
            add_todo(ctx.conn, user["id"], ctx.user_id, p["id"], "MergeRequest", mr["id"], "review_requested", now)
    else:
        if (action == "reopen") != (mr["state"] == "closed") or (action != "reopen" and mr["state"] != "opened"):
            return _bad_request(ctx, p, f"A {mr['state']} merge request cannot be {action}d.", here)
        state = {"merge": "merged", "close": "closed", "reopen": "opened"}[action]
        ctx.conn.execute("UPDATE gitlab_merge_requests SET state = ? WHERE id = ?", (state, mr["id"]))
    ctx.conn.execute("UPDATE gitlab_merge_requests SET updated_at = ? WHERE id = ?", (now, mr["id"]))
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


def milestones(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET `/<ns>/<proj>/-/milestones`: every milestone with its dates and issue counts."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    main = (f'<h1>Milestones</h1><p><a href="{project_base(p)}/-/milestones/new">New milestone</a></p>'
            f'{_milestone_rows(p, _milestones_of(ctx.conn, p["id"]))}')
    return project_page(ctx, p, "Milestones", main)


def milestone_page(ctx: Ctx, namespace: str, project: str, iid: str) -> Response:
    """GET `/<ns>/<proj>/-/milestones/<iid>`: a milestone and its issues."""
    p = load_project(ctx, namespace, project)
    rows = _milestones_of(ctx.conn, p["id"], to_int(iid, -1)) if p is not None else []
    if not rows:
        return not_found(ctx)
    m = rows[0]
    issues_here = [i for i in issue_list(ctx.conn, project_id=p["id"], state="all") if i["milestone_id"] == m["id"]]
    main = (f'<h1 class="milestone-title" data-testid="milestone-title">{esc(m["title"])}</h1>'
            f'<p><span class="badge">{esc(m["state"])}</span></p><div class="description">'
            f'{markdown(m["description"])}</div><dl class="milestone-dates"><div class="block start_date">'
            f'<dt>Start date</dt><dd class="start-date">{esc(m["start_date"] or "None")}</dd></div>'
            f'<div class="block due_date"><dt>Due date</dt><dd class="due-date">{esc(m["due_date"] or "None")}</dd>'
            f'</div></dl><h2>Issues</h2>'
            f'{_issue_rows(issues_here, ctx.conn)}')
    return project_page(ctx, p, m["title"], main)


def _milestone_form(p: sqlite3.Row, values: dict[str, str]) -> str:
    return post_form(
        f"{project_base(p)}/-/milestones/new", "milestone-form",
        text_field("milestone_title", "milestone[title]", "Title", values.get("milestone[title]", ""),
                   required=True)
        + area_field("milestone_description", "milestone[description]", "Description",
                     values.get("milestone[description]", ""), rows=3)
        + text_field("milestone_start_date", "milestone[start_date]", "Start date (YYYY-MM-DD)",
                     values.get("milestone[start_date]", ""))
        + text_field("milestone_due_date", "milestone[due_date]", "Due date (YYYY-MM-DD)",
                     values.get("milestone[due_date]", "")),
        "Create milestone")


@login_required
def new_milestone(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET/POST `/<ns>/<proj>/-/milestones/new`: create a milestone (Reporters and above)."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    if member_level(ctx.conn, p["id"], ctx.user_id) < 20:
        return _bad_request(ctx, p, "You need the Reporter role or higher to create milestones.",
                            project_base(p), 403)
    if not ctx.posted:
        return form_page(ctx, p, "New milestone", _milestone_form(p, {}))
    title = ctx.form.get("milestone[title]", "").strip()
    start = ctx.form.get("milestone[start_date]", "").strip()
    due = ctx.form.get("milestone[due_date]", "").strip()
    error = ""
    if not title:
        error = "Title can't be blank."
    elif any(d and not _date_ok(d) for d in (start, due)):
        error = "Dates must be written YYYY-MM-DD."
    elif start and due and due < start:
        error = "Due date must be on or after the start date."
    elif ctx.conn.execute("SELECT 1 FROM gitlab_milestones WHERE project_id = ? AND title = ?",
                          (p["id"], title)).fetchone():
        error = f"Title {title!r} has already been taken."
    if error:
        return form_page(ctx, p, "New milestone", _milestone_form(p, ctx.form), error)
    iid = ctx.conn.execute("SELECT COALESCE(MAX(iid), 0) + 1 FROM gitlab_milestones WHERE project_id = ?",
                           (p["id"],)).fetchone()[0]
    ctx.conn.execute("INSERT INTO gitlab_milestones (project_id, iid, title, description, start_date, due_date) "
                     "VALUES (?,?,?,?,?,?)", (p["id"], iid, title, ctx.form.get("milestone[description]", "").strip(),
                                              start, due))
    return redirect(f"{project_base(p)}/-/milestones/{iid}")


def _visible_ids(conn: sqlite3.Connection, user_id: Optional[int]) -> set[int]:
    return {r[0] for r in conn.execute(
        "SELECT id FROM gitlab_projects p WHERE visibility != 'private' OR EXISTS (SELECT 1 "
        "FROM gitlab_project_members "
        "m WHERE m.project_id = p.id AND m.user_id = ?)", (user_id or -1,))}


@login_required
def dashboard_issues(ctx: Ctx) -> Response:
    """GET `/dashboard/issues` (`assignee_username`, `author_username`, `state`, `label_name[]`, `search`)."""
    state = ctx.q.get("state", "opened")
    filters = _issue_filters(ctx.request)
    visible = _visible_ids(ctx.conn, ctx.user_id)
    if not (filters["assignee"] or filters["author"]):
        filters["assignee"] = ctx.account["username"]
    counts = {s: sum(1 for i in issue_list(ctx.conn, state=s, **filters) if i["project_id"] in visible)
              for s in _ISSUE_STATES}
    rows = [i for i in issue_list(ctx.conn, state=state, **filters) if i["project_id"] in visible]
    extra = {"assignee_username": filters["assignee"] or None, "author_username": filters["author"] or None}
    main = (f'<h1>Issues</h1>{_state_tabs("/dashboard/issues", counts, _ISSUE_STATES, state, extra)}'
            f'{_issue_rows(rows, ctx.conn, with_project=True)}')
    return render_page(ctx, "Issues", main)


@login_required
def dashboard_mrs(ctx: Ctx) -> Response:
    """GET `/dashboard/merge_requests` (`assignee_username` or `reviewer_username`, `state`)."""
    state = ctx.q.get("state", "opened")
    q = ctx.q
    visible = _visible_ids(ctx.conn, ctx.user_id)
    reviewer = q.get("reviewer_username", "")
    assignee = q.get("assignee_username", "") or ("" if reviewer else ctx.account["username"])
    counts = {s: sum(1 for m in mr_list(ctx.conn, state=s, assignee=assignee, reviewer=reviewer)
                     if m["project_id"] in visible) for s in _MR_STATES}
    rows = [m for m in mr_list(ctx.conn, state=state, assignee=assignee, reviewer=reviewer)
            if m["project_id"] in visible]
    extra = {"assignee_username": assignee or None, "reviewer_username": reviewer or None}
    me = quote(ctx.account["username"])
    main = (f'<h1>Merge requests</h1><nav aria-label="Merge request scopes"><a href="/dashboard/merge_requests?'
            f'assignee_username={me}">Assigned to you</a> '
            f'<a href="/dashboard/merge_requests?reviewer_username={me}">Review requests for you</a></nav>'
            f'{_state_tabs("/dashboard/merge_requests", counts, _MR_STATES, state, extra)}'
            f'{_mr_rows(rows, ctx.conn, with_project=True)}')
    return render_page(ctx, "Merge requests", main)
