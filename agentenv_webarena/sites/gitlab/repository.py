"""The code host's repository pages: file tree, file view, raw files, commits, a commit, branches,
contributors, and the web editor (new file, new directory, edit file).

Owns `/<ns>/<proj>/-/tree|blob|raw|commits|commit|branches|graphs|new|create_dir|edit/...` and
`commit_file`, the one way a commit and its file change are written. A ref path
(`<branch>/<path>`) is split at the longest branch name it starts with, so `feature/x` works.
"""
from __future__ import annotations

import sqlite3
from typing import Optional
from urllib.parse import quote

from starlette.responses import PlainTextResponse, Response

from agentenv_webarena.sites.common import esc, login_required, redirect
from agentenv_webarena.sites.gitlab.layout import (
    Ctx,
    alert,
    area_field,
    load_project,
    markdown,
    not_found,
    post_form,
    project_base,
    project_page,
    text_field,
    user_link,
)
from agentenv_webarena.sites.gitlab.model import (
    branch_commits,
    branch_files,
    commit_sha,
    display_date,
    member_level,
    site_now,
)

__all__ = ["tree_table", "commit_file", "tree", "blob", "raw", "commits", "commit_page", "branches",
           "contributors", "new_file", "new_dir", "edit_file", "contributor_counts"]


def commit_file(conn: sqlite3.Connection, project_id: int, branch: str, path: str, content: str, message: str,
                author_id: int) -> int:
    """Write `path` on `branch` in a new commit (created or replaced); returns the commit id."""
    now = site_now(conn)
    n = conn.execute("SELECT COUNT(*) FROM gitlab_commits WHERE project_id = ?", (project_id,)).fetchone()[0]
    cid = conn.execute("INSERT INTO gitlab_commits (project_id, branch, sha, title, author_id, created_at) "
                       "VALUES (?,?,?,?,?,?)", (project_id, branch, commit_sha(project_id, 1000 + n, message + path),
                                                message, author_id, now)).lastrowid
    conn.execute("INSERT OR REPLACE INTO gitlab_files (project_id, branch, path, content, commit_id) "
                 "VALUES (?,?,?,?,?)",
                 (project_id, branch, path, content, cid))
    conn.execute("UPDATE gitlab_projects SET last_activity_at = ? WHERE id = ?", (now, project_id))
    return cid


def _split_ref(conn: sqlite3.Connection, project_id: int, ref_path: str) -> Optional[tuple[str, str]]:
    names = sorted((r[0] for r in conn.execute("SELECT name FROM gitlab_branches WHERE project_id = ?",
                                               (project_id,))), key=len, reverse=True)
    for name in names:
        if ref_path == name or ref_path.startswith(name + "/"):
            return name, ref_path[len(name):].strip("/")
    return None


def tree_table(p: sqlite3.Row, branch: str, directory: str, files: list[sqlite3.Row]) -> str:
    """The entries of `directory` (directories first) with their last commit, as GitLab's file table."""
    prefix = f"{directory}/" if directory else ""
    dirs: dict[str, sqlite3.Row] = {}
    entries: list[tuple[str, sqlite3.Row]] = []
    for f in files:
        if not f["path"].startswith(prefix):
            continue
        rest = f["path"][len(prefix):]
        if "/" in rest:
            name = rest.split("/", 1)[0]
            if name not in dirs or f["commit_at"] > dirs[name]["commit_at"]:
                dirs[name] = f
        else:
            entries.append((rest, f))
    base = project_base(p)
    rows = []
    if directory:
        parent = directory.rsplit("/", 1)[0] if "/" in directory else ""
        rows.append(f'<tr><td><a href="{base}/-/tree/{quote(branch)}/{quote(parent)}">..</a></td>'
                    "<td></td><td></td></tr>")
    for name in sorted(dirs):
        f = dirs[name]
        rows.append(f'<tr class="tree-item"><td><a href="{base}/-/tree/{quote(branch)}/{quote(prefix + name)}" '
                    f'class="tree-item-link tree-folder">{esc(name)}</a></td><td>{esc(f["commit_title"])}</td>'
                    f'<td>{display_date(f["commit_at"])}</td></tr>')
    for name, f in sorted(entries, key=lambda e: e[0].lower()):
        rows.append(f'<tr class="tree-item"><td><a href="{base}/-/blob/{quote(branch)}/{quote(f["path"])}" '
                    f'class="tree-item-link">{esc(name)}</a></td><td>{esc(f["commit_title"])}</td>'
                    f'<td>{display_date(f["commit_at"])}</td></tr>')
    return ('<table class="tree-table" aria-label="Files"><thead><tr><th>Name</th><th>Last commit</th>'
            f'<th>Last update</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _load(ctx: Ctx, namespace: str, project: str,
          ref: str) -> tuple[Optional[sqlite3.Row], Optional[tuple[str, str]]]:
    p = load_project(ctx, namespace, project)
    if p is None:
        return None, None
    return p, _split_ref(ctx.conn, p["id"], ref or p["default_branch"])


def _branch_nav(conn: sqlite3.Connection, p: sqlite3.Row, current: str, kind: str) -> str:
    names = [r[0] for r in conn.execute("SELECT name FROM gitlab_branches WHERE project_id = ? ORDER BY name",
                                        (p["id"],))]
    cur = ' aria-current="page"'
    links = "".join(f'<a href="{project_base(p)}/-/{kind}/{quote(n)}"{cur if n == current else ""}>{esc(n)}</a> '
                    for n in names)
    return f'<nav aria-label="Switch branch" class="branch-nav">Branch: {links}</nav>'


def tree(ctx: Ctx, namespace: str, project: str, ref: str) -> Response:
    """GET `/<ns>/<proj>/-/tree/<branch>[/<dir>]`: a directory of a branch."""
    p, ref = _load(ctx, namespace, project, ref)
    if p is None or ref is None:
        return not_found(ctx)
    branch, directory = ref
    files = branch_files(ctx.conn, p["id"], branch)
    if directory and not any(f["path"].startswith(directory + "/") for f in files):
        return not_found(ctx, f"There is no directory {directory} on branch {branch}.")
    base = project_base(p)
    actions = (f'<p class="tree-actions"><a href="{base}/-/new/{quote(branch)}/{quote(directory)}">New file</a> '
               f'<a href="{base}/-/create_dir/{quote(branch)}/{quote(directory)}">New directory</a></p>')
    readme = next((f for f in files if f["path"] == (directory + "/" if directory else "") + "README.md"), None)
    readme_html = (f'<article class="readme"><h2>README.md</h2>{markdown(readme["content"])}</article>'
                   if readme else "")
    main = (f'<h1 class="tree-title">{esc(p["name"])}{" / " + esc(directory) if directory else ""}</h1>'
            f'{_branch_nav(ctx.conn, p, branch, "tree")}{actions}{tree_table(p, branch, directory, files)}'
            f"{readme_html}")
    return project_page(ctx, p, "Files", main)


def _file(conn: sqlite3.Connection, p: sqlite3.Row, branch: str, path: str) -> Optional[sqlite3.Row]:
    return next((f for f in branch_files(conn, p["id"], branch) if f["path"] == path), None)


def blob(ctx: Ctx, namespace: str, project: str, ref: str) -> Response:
    """GET `/<ns>/<proj>/-/blob/<branch>/<path>`: a file with its last commit."""
    p, ref = _load(ctx, namespace, project, ref)
    if p is None or ref is None:
        return not_found(ctx)
    branch, path = ref
    f = _file(ctx.conn, p, branch, path)
    if f is None:
        return not_found(ctx, f"There is no file {path} on branch {branch}.")
    base = project_base(p)
    body = (f'<div class="file-content md">{markdown(f["content"])}</div>' if path.lower().endswith(".md")
            else f'<pre class="file-content code">{esc(f["content"])}</pre>')
    main = (f'<h1 class="file-title-name">{esc(path.rsplit("/", 1)[-1])}</h1>'
            f'<p class="file-path">{esc(branch)} / {esc(path)}</p>'
            f'<p class="last-commit">Last commit: {esc(f["commit_title"])} on {display_date(f["commit_at"])}</p>'
            f'<p class="file-actions"><a href="{base}/-/raw/{quote(branch)}/{quote(path)}">Open raw</a> '
            f'<a href="{base}/-/edit/{quote(branch)}/{quote(path)}">Edit</a></p>{body}')
    return project_page(ctx, p, path, main)


def raw(ctx: Ctx, namespace: str, project: str, ref: str) -> Response:
    """GET `/<ns>/<proj>/-/raw/<branch>/<path>`: a file's text."""
    p, ref = _load(ctx, namespace, project, ref)
    f = _file(ctx.conn, p, *ref) if p is not None and ref is not None else None
    if f is None:
        return PlainTextResponse("404 File Not Found", status_code=404)
    return PlainTextResponse(f["content"])


def commits(ctx: Ctx, namespace: str, project: str, ref: str = "") -> Response:
    """GET `/<ns>/<proj>/-/commits[/<branch>][?author=<username>]`: a branch's commits (default: the project's
    default branch) grouped by day."""
    author = ctx.q.get("author", "")
    if not ref:
        p = load_project(ctx, namespace, project)
        if p is None:
            return not_found(ctx)
        ref = p["default_branch"]
    p, ref = _load(ctx, namespace, project, ref)
    if p is None or ref is None:
        return not_found(ctx)
    branch = ref[0]
    rows = [c for c in branch_commits(ctx.conn, p["id"], branch)
            if not author or c["author_username"].lower() == author.lower()]
    base = project_base(p)
    days: dict[str, list[sqlite3.Row]] = {}
    for c in rows:
        days.setdefault(c["created_at"][:10], []).append(c)
    blocks = []
    for day, items in days.items():
        lis = "".join(
            f'<li class="commit"><a href="{base}/-/commit/{c["sha"]}" class="commit-row-message">'
            f'{esc(c["title"])}</a><p class="committer">{user_link(c["author_username"], c["author_name"])} '
            f'authored on {display_date(c["created_at"])}</p><code class="commit-sha">{c["sha"][:8]}</code></li>'
            for c in items)
        n = len(items)
        blocks.append('<section class="commits-day"><h2 class="day-commits-title">'
                      f'{display_date(day + " 00:00:00")}'
                      f' <span class="day-count">{n} commit{"" if n == 1 else "s"}</span></h2>'
                      f'<ul class="commit-list">{lis}</ul></section>')
    filt = (f'<form action="{base}/-/commits/{quote(branch)}" method="get"><input type="search" name="author" '
            f'value="{esc(author)}" aria-label="Author username" placeholder="Author username"></form>')
    main = (f'<h1>Commits</h1>{_branch_nav(ctx.conn, p, branch, "commits")}{filt}'
            f'<p class="commit-count">{len(rows)} commits</p>{"".join(blocks)}')
    return project_page(ctx, p, "Commits", main)


def commit_page(ctx: Ctx, namespace: str, project: str, sha: str) -> Response:
    """GET `/<ns>/<proj>/-/commit/<sha>`: one commit."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    c = ctx.conn.execute("SELECT c.*, u.username, u.name FROM gitlab_commits c JOIN gitlab_users u "
                         "ON u.id = c.author_id WHERE c.project_id = ? AND c.sha LIKE ?",
                         (p["id"], sha + "%")).fetchone()
    if c is None:
        return not_found(ctx, "There is no such commit.")
    files = ctx.conn.execute("SELECT path FROM gitlab_files WHERE commit_id = ? ORDER BY path", (c["id"],)).fetchall()
    changed = "".join(f"<li>{esc(f['path'])}</li>" for f in files)
    main = (f'<h1 class="commit-title">{esc(c["title"])}</h1><p>Commit <code>{c["sha"]}</code> authored by '
            f'{user_link(c["username"], c["name"])} on {display_date(c["created_at"])} in branch '
            f'{esc(c["branch"])}</p><h2>Changed files</h2><ul>{changed}</ul>')
    return project_page(ctx, p, c["title"], main)


def branches(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET `/<ns>/<proj>/-/branches`: every branch with its newest commit."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    names = [r[0] for r in ctx.conn.execute("SELECT name FROM gitlab_branches WHERE project_id = ? ORDER BY name",
                                            (p["id"],))]
    items = []
    for name in names:
        cs = branch_commits(ctx.conn, p["id"], name)
        last = f'{esc(cs[0]["title"])} · {display_date(cs[0]["created_at"])}' if cs else "no commits"
        badge = ' <span class="badge">default</span>' if name == p["default_branch"] else ""
        items.append(f'<li class="branch-item"><a href="{project_base(p)}/-/tree/{quote(name)}" '
                     f'class="branch-name">{esc(name)}</a>{badge} <span class="branch-commit">{last}</span></li>')
    main = f'<h1>Branches</h1><p>{len(names)} branches</p><ul class="branches">{"".join(items)}</ul>'
    return project_page(ctx, p, "Branches", main)


def contributor_counts(conn: sqlite3.Connection, project_id: int, branch: str) -> list[dict]:
    """Authors of a branch's commits: name, username, email, commits; most commits first, then name."""
    counts: dict[str, dict] = {}
    for c in branch_commits(conn, project_id, branch):
        row = counts.setdefault(c["author_username"], {"name": c["author_name"], "username": c["author_username"],
                                                       "email": c["author_email"], "commits": 0})
        row["commits"] += 1
    return sorted(counts.values(), key=lambda r: (-r["commits"], r["name"].lower()))


def contributors(ctx: Ctx, namespace: str, project: str, ref: str) -> Response:
    """GET `/<ns>/<proj>/-/graphs/<branch>`: contributors ranked by commits."""
    p, ref = _load(ctx, namespace, project, ref)
    if p is None or ref is None:
        return not_found(ctx)
    rows = contributor_counts(ctx.conn, p["id"], ref[0])
    body = "".join(f'<tr class="contributor"><td>{esc(r["name"])}</td><td>@{esc(r["username"])}</td>'
                   f'<td>{esc(r["email"])}</td><td>{r["commits"]} commits</td></tr>' for r in rows)
    main = (f'<h1>Contributors</h1>{_branch_nav(ctx.conn, p, ref[0], "graphs")}'
            '<table class="contributors" aria-label="Contributors"><thead><tr><th>Name</th><th>Username</th>'
            f'<th>Email</th><th>Commits</th></tr></thead><tbody>{body}</tbody></table>')
    return project_page(ctx, p, "Contributors", main)


def _writable(ctx: Ctx, namespace: str, project: str, ref: str):
    """(project, (branch, path), error response) for the editor pages: Developers and above only."""
    p, ref = _load(ctx, namespace, project, ref)
    if p is None or ref is None:
        return None, None, not_found(ctx)
    if member_level(ctx.conn, p["id"], ctx.user_id) < 30:
        return None, None, project_page(ctx, p, "Forbidden", "<h1>403: Forbidden</h1><p>You need the Developer role "
                                        "or higher to change this repository.</p>", status_code=403)
    return p, ref, None


def _bad_name(name: str) -> str:
    parts = name.split("/")
    if not name or any(part in ("", ".", "..") for part in parts):
        return "is invalid: use a non-empty relative path without '..'"
    return ""


def _editor(action: str, heading: str, fields: str, button: str, error: str = "") -> str:
    commit = text_field("commit_message", "commit_message", "Commit message", placeholder="Add new file")
    return f'<h1>{esc(heading)}</h1>{alert(error)}' + post_form(esc(action), "file-editor", fields + commit, button)


def _editor_page(ctx: Ctx, p: sqlite3.Row, title: str, action: str, heading: str, fields: str, button: str,
                 error: str = "") -> Response:
    """The project page `title` holding the editor; with `error`, the editor refused it (HTTP 422)."""
    return project_page(ctx, p, title, _editor(action, heading, fields, button, error),
                        status_code=422 if error else 200)


def _new_path(ctx: Ctx, directory: str, field: str, noun: str) -> tuple[str, str, str]:
    """The name posted in `field`, its path under `directory` and the error when the name is invalid."""
    name = ctx.form.get(field, "").strip().strip("/")
    problem = _bad_name(name)
    return name, f"{directory}/{name}" if directory else name, f"{noun} name {name!r} {problem}." if problem else ""


def _message(ctx: Ctx, default: str) -> str:
    return ctx.form.get("commit_message", "").strip() or default


@login_required
def new_file(ctx: Ctx, namespace: str, project: str, ref: str) -> Response:
    """GET/POST `/<ns>/<proj>/-/new/<branch>[/<dir>]`: create a file (`file_name`, `content`, `commit_message`)."""
    p, ref, err = _writable(ctx, namespace, project, ref)
    if err:
        return err
    branch, directory = ref
    action = f"{project_base(p)}/-/new/{quote(branch)}/{quote(directory)}"
    values = ctx.form
    fields = (text_field("file_name", "file_name", "File name", values.get("file_name", ""), required=True)
              + area_field("file_content", "content", "File content", values.get("content", ""), rows=10))
    if not ctx.posted:
        return _editor_page(ctx, p, "New file", action, f"New file in {directory or '/'}", fields, "Commit changes")
    name, path, error = _new_path(ctx, directory, "file_name", "File")
    if not error and _file(ctx.conn, p, branch, path):
        error = f"A file named {path} already exists on {branch}."
    if error:
        return _editor_page(ctx, p, "New file", action, "New file", fields, "Commit changes", error)
    commit_file(ctx.conn, p["id"], branch, path, ctx.form.get("content", ""), _message(ctx, f"Add new file {name}"),
                ctx.user_id)
    return redirect(f"{project_base(p)}/-/blob/{quote(branch)}/{quote(path)}")


@login_required
def new_dir(ctx: Ctx, namespace: str, project: str, ref: str) -> Response:
    """GET/POST `/<ns>/<proj>/-/create_dir/<branch>[/<dir>]`: create a directory (holding `.gitkeep`)."""
    p, ref, err = _writable(ctx, namespace, project, ref)
    if err:
        return err
    branch, directory = ref
    action = f"{project_base(p)}/-/create_dir/{quote(branch)}/{quote(directory)}"
    fields = text_field("dir_name", "dir_name", "Directory name", ctx.form.get("dir_name", ""), required=True)
    heading, button = "Create new directory", "Create directory"
    if not ctx.posted:
        return _editor_page(ctx, p, "New directory", action, heading, fields, button)
    name, path, error = _new_path(ctx, directory, "dir_name", "Directory")
    if not error and any(f["path"].startswith(path + "/") or f["path"] == path
                         for f in branch_files(ctx.conn, p["id"], branch)):
        error = f"{path} already exists on {branch}."
    if error:
        return _editor_page(ctx, p, "New directory", action, heading, fields, button, error)
    commit_file(ctx.conn, p["id"], branch, f"{path}/.gitkeep", "", _message(ctx, f"Add new directory {name}"),
                ctx.user_id)
    return redirect(f"{project_base(p)}/-/tree/{quote(branch)}/{quote(path)}")


@login_required
def edit_file(ctx: Ctx, namespace: str, project: str, ref: str) -> Response:
    """GET/POST `/<ns>/<proj>/-/edit/<branch>/<path>`: replace a file's content (`content`, `commit_message`)."""
    p, ref, err = _writable(ctx, namespace, project, ref)
    if err:
        return err
    branch, path = ref
    f = _file(ctx.conn, p, branch, path)
    if f is None:
        return not_found(ctx, f"There is no file {path} on branch {branch}.")
    action = f"{project_base(p)}/-/edit/{quote(branch)}/{quote(path)}"
    fields = area_field("file_content", "content", "File content", f["content"], rows=14)
    if not ctx.posted:
        return _editor_page(ctx, p, f"Edit {path}", action, f"Edit {path}", fields, "Commit changes")
    commit_file(ctx.conn, p["id"], branch, path, ctx.form.get("content", ""), _message(ctx, f"Update {path}"),
                ctx.user_id)
    return redirect(f"{project_base(p)}/-/blob/{quote(branch)}/{quote(path)}")
