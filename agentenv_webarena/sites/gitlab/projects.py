"""The code host's project pages: listings (dashboard, explore, a user's starred projects), a project's
home, creating a project, its settings, stars and forks.

Owns `/`, `/dashboard/projects[/starred]`, `/explore[/projects]`, `/users/<u>/starred`,
`/projects/new`, `/<ns>/<proj>`, `/<ns>/<proj>/-/edit`, `/-/star`, `/-/starrers`, `/-/forks[/new]`.
"""
from __future__ import annotations

import sqlite3
from typing import Optional
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, redirect
from agentenv_webarena.sites.gitlab.issuables import ensure_labels
from agentenv_webarena.sites.gitlab.layout import (
    Ctx,
    area_field,
    form_error,
    form_page,
    load_project,
    markdown,
    not_found,
    post_form,
    project_base,
    project_page,
    radio_group,
    render_page,
    text_field,
    user_link,
    visibility_badge,
)
from agentenv_webarena.sites.gitlab.model import (
    branch_commits,
    branch_files,
    clone_urls,
    display_date,
    member_level,
    project_list,
    site_now,
    slugify,
    user_by_name,
    valid_path,
)
from agentenv_webarena.sites.gitlab.project_templates import PROJECT_TEMPLATES, ProjectTemplate, commit_template
from agentenv_webarena.sites.gitlab.repository import commit_file, tree_table
from agentenv_webarena.sites.gitlab.seed import fork_project_contents

__all__ = ["home", "dashboard_projects", "explore", "user_starred", "new_project", "project_home",
           "project_settings", "star", "starrers", "forks", "fork_new", "project_rows", "create_project"]

_VISIBILITY = [("private", "Private"), ("internal", "Internal"), ("public", "Public")]
_SORTS = {"latest_activity_desc": ("latest", "Updated date"), "name_asc": ("name", "Name"),
          "stars_desc": ("stars", "Most stars"), "created_desc": ("created", "Created date")}


def project_rows(rows: list[sqlite3.Row]) -> str:
    """Projects as GitLab's list: 'Namespace / Project' link, badge, description, stars, forks."""
    if not rows:
        return '<p class="empty">No projects found.</p>'
    items = []
    for p in rows:
        items.append(
            f'<li class="project-row"><h2 class="project-full-name"><a href="{project_base(p)}">'
            f'{esc(p["namespace"])} / {esc(p["name"])}</a></h2>{visibility_badge(p["visibility"])}'
            f'<p class="description">{esc(p["description"])}</p>'
            f'<p class="stats"><span class="star-count">{p["stars"]} stars</span> · '
            f'<span class="fork-count">{p["forks"]} forks</span> · '
            f'<span class="issue-count">{p["open_issues"]} open issues</span> · '
            f'updated {display_date(p["last_activity_at"])}</p></li>')
    return f'<ul class="projects-list content-list" data-qa-selector="projects_list">{"".join(items)}</ul>'


def _sort_nav(path: str, current: str) -> str:
    links = []
    for key, (_, label) in _SORTS.items():
        cur = ' aria-current="page"' if key == current else ""
        links.append(f'<a href="{path}?sort={key}"{cur}>{label}</a>')
    return f'<nav aria-label="Sort projects" class="sort-nav">Sort by: {" ".join(links)}</nav>'


def _listing(ctx: Ctx, heading: str, tabs: str, rows: list[sqlite3.Row], path: str, sort: str) -> Response:
    name = esc(ctx.request.query_params.get("name", ""))
    filt = (f'<form action="{path}" method="get" class="project-filter"><input type="search" name="name" '
            f'value="{name}" aria-label="Filter by name" placeholder="Filter by name"></form>')
    main = f"<h1>{esc(heading)}</h1>{tabs}{filt}{_sort_nav(path, sort)}{project_rows(rows)}"
    return render_page(ctx, heading, main)


def _sort_of(request: Request) -> tuple[str, str]:
    key = request.query_params.get("sort", "latest_activity_desc")
    if key not in _SORTS:
        key = "latest_activity_desc"
    return key, _SORTS[key][0]


def home(ctx: Ctx) -> Response:
    """GET `/`: the signed-in user's projects, else the public projects."""
    return dashboard_projects(ctx) if ctx.account is not None else explore(ctx)


@login_required
def dashboard_projects(ctx: Ctx) -> Response:
    """GET `/dashboard/projects[/starred]`: projects the user is a member of / has starred."""
    starred = ctx.request.url.path.rstrip("/").endswith("/starred")
    key, sort = _sort_of(ctx.request)
    search = ctx.q.get("name", "")
    if starred:
        rows = project_list(ctx.conn, viewer_id=ctx.user_id, starred_by=ctx.user_id, search=search, sort=sort)
    else:
        rows = project_list(ctx.conn, viewer_id=ctx.user_id, member_of=ctx.user_id, search=search, sort=sort)
    tabs = ('<nav aria-label="Project tabs" class="tabs"><a href="/dashboard/projects">Your projects</a>'
            '<a href="/dashboard/projects/starred">Starred projects</a>'
            '<a href="/explore/projects">Explore projects</a></nav>')
    path = "/dashboard/projects/starred" if starred else "/dashboard/projects"
    return _listing(ctx, "Starred projects" if starred else "Projects", tabs, rows, path, key)


def explore(ctx: Ctx) -> Response:
    """GET `/explore`, `/explore/projects`: every public project (and the viewer's internal and own ones)."""
    key, sort = _sort_of(ctx.request)
    rows = project_list(ctx.conn, viewer_id=ctx.user_id, search=ctx.q.get("name", ""), sort=sort,
                        public_only=ctx.q.get("visibility") == "public")
    tabs = ('<nav aria-label="Explore tabs" class="tabs"><a href="/explore/projects">All projects</a>'
            '<a href="/explore/projects?sort=stars_desc">Most starred</a>'
            '<a href="/explore/projects?visibility=public">Public projects</a>'
            '<a href="/explore/groups">Groups</a></nav>')
    return _listing(ctx, "Explore projects", tabs, rows, "/explore/projects", key)


def user_starred(ctx: Ctx, username: str) -> Response:
    """GET `/users/<u>/starred`: the projects a user has starred."""
    user = user_by_name(ctx.conn, username)
    if user is None:
        return not_found(ctx)
    rows = project_list(ctx.conn, viewer_id=ctx.user_id, starred_by=user["id"], sort="name")
    main = (f'<h1>Projects starred by {esc(user["name"])}</h1><p><a href="/{quote(user["username"])}">'
            f'@{esc(user["username"])}</a></p>{project_rows(rows)}')
    return render_page(ctx, f"{user['name']} starred projects", main)


def _new_project_form(values: dict[str, str], template: Optional[ProjectTemplate] = None) -> str:
    """The new-project form: blank (with the README option) or from `template` (its key in a hidden field)."""
    readme = " checked" if values.get("initialize_with_readme", "1") == "1" else ""
    init = ('<input type="hidden" name="initialize_with_readme" value="0">'
            f'<label><input type="checkbox" name="initialize_with_readme" value="1"{readme}> '
            "Initialize repository with a README</label>")
    if template is not None:
        init = (f'<input type="hidden" name="project[template_name]" value="{esc(template.key)}">'
                f'<p class="selected-template">Template: <strong>{esc(template.title)}</strong> '
                '<a href="/projects/new#create_from_template">Change template</a></p>')
    return ('<form action="/projects/new" method="post" class="new-project-form">'
            + text_field("project_name", "project[name]", "Project name", values.get("project[name]", ""),
                         required=True, placeholder="My awesome project")
            + text_field("project_path", "project[path]", "Project slug", values.get("project[path]", ""),
                         placeholder="my-awesome-project")
            + area_field("project_description", "project[description]", "Project description (optional)",
                         values.get("project[description]", ""), rows=3)
            + radio_group("project[visibility]", "Visibility Level", _VISIBILITY,
                          values.get("project[visibility]", "private"))
            + init + '<p><button type="submit">Create project</button></p></form>')


def _template_list() -> str:
    """The "Create from template" pane: the built-in templates, each with its "Use template" link."""
    items = "".join(f'<li class="template-option" data-template="{esc(t.key)}"><strong>{esc(t.title)}</strong>'
                    f'<p>{esc(t.description)}</p><a href="/projects/new?template_name={esc(t.key)}'
                    f'#create_from_template" aria-label="Use template {esc(t.title)}">Use template</a></li>'
                    for t in PROJECT_TEMPLATES.values())
    return (f'<section id="create_from_template" class="project-templates"><h2>Create from template</h2>'
            f'<p>Create a project pre-populated with the necessary files to get you started quickly.</p>'
            f'<h3>Built-in</h3><ul>{items}</ul></section>')


def _new_project_page(values: dict[str, str], template: Optional[ProjectTemplate]) -> str:
    if template is not None:
        return "<h1>Create from template</h1>" + _new_project_form(values, template)
    tabs = ('<nav class="new-project-tabs" aria-label="Project creation"><a href="/projects/new#blank_project">'
            'Create blank project</a> <a href="/projects/new#create_from_template">Create from template</a></nav>')
    return (f'<h1>Create blank project</h1><section id="blank_project">{_new_project_form(values)}</section>{tabs}'
            f'{_template_list()}')


def create_project(conn: sqlite3.Connection, owner: sqlite3.Row, name: str, path: str, description: str,
                   visibility: str, with_readme: bool) -> int:
    """Insert a project in `owner`'s namespace (owner as Owner, a `main` branch, optionally a README commit)."""
    now = site_now(conn)
    pid = conn.execute("INSERT INTO gitlab_projects (namespace, path, name, description, visibility, creator_id, "
                       "created_at, last_activity_at) VALUES (?,?,?,?,?,?,?,?)",
                       (owner["username"], path, name, description, visibility, owner["id"], now, now)).lastrowid
    conn.execute("INSERT INTO gitlab_project_members (project_id, user_id, access_level, created_at) VALUES (?,?,50,?)",
                 (pid, owner["id"], now))
    conn.execute("INSERT INTO gitlab_branches (project_id, name, forked_at) VALUES (?, 'main', NULL)", (pid,))
    if with_readme:
        text = f"# {name}\n\n{description}\n" if description else f"# {name}\n"
        commit_file(conn, pid, "main", "README.md", text, "Initial commit", owner["id"])
    ensure_labels(conn, pid)
    return pid


@login_required
def new_project(ctx: Ctx) -> Response:
    """GET/POST `/projects/new`: create a project in the user's namespace, blank or from a built-in template
    (`?template_name=<key>` shows that template's form; the form posts `project[template_name]`)."""
    key = ctx.form.get("project[template_name]", "") if ctx.posted else ctx.q.get("template_name", "")
    template = PROJECT_TEMPLATES.get(key)
    if not ctx.posted:
        return render_page(ctx, "New project", _new_project_page({}, template))
    name = ctx.form.get("project[name]", "").strip()
    path = ctx.form.get("project[path]", "").strip() or slugify(name)
    visibility = ctx.form.get("project[visibility]", "private")
    error = ""
    if key and template is None:
        error = f"Template {key!r} does not exist: choose one of the built-in templates."
    elif not name:
        error = "Project name can't be blank."
    elif not valid_path(path):
        error = f"Project slug {path!r} is invalid: use letters, digits, '_', '-' and '.'."
    elif visibility not in dict(_VISIBILITY):
        error = f"Visibility {visibility!r} is invalid: choose private, internal or public."
    elif ctx.conn.execute("SELECT 1 FROM gitlab_projects WHERE namespace = ? AND path = ?",
                          (ctx.account["username"], path)).fetchone():
        error = f"Project path {path!r} has already been taken in your namespace."
    if error:
        return form_error(ctx, "New project", error, _new_project_page(ctx.form, template))
    pid = create_project(ctx.conn, ctx.account, name, path, ctx.form.get("project[description]", "").strip(),
                         visibility, template is None and ctx.form.get("initialize_with_readme", "0") == "1")
    if template is not None:
        commit_template(ctx.conn, pid, "main", template, ctx.user_id)
    return redirect(f"/{quote(ctx.account['username'])}/{quote(path)}")


def project_home(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET `/<ns>/<proj>`: the project's overview: stats, clone URLs, files and README."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    base = project_base(p)
    branch = p["default_branch"]
    commits = branch_commits(ctx.conn, p["id"], branch)
    files = branch_files(ctx.conn, p["id"], branch)
    n_branches = ctx.conn.execute("SELECT COUNT(*) FROM gitlab_branches WHERE project_id = ?", (p["id"],)).fetchone()[0]
    starred = ctx.account is not None and ctx.conn.execute(
        "SELECT 1 FROM gitlab_stars WHERE user_id = ? AND project_id = ?", (ctx.user_id, p["id"])).fetchone()
    ssh, https = clone_urls(p["namespace"], p["path"])
    star_btn = ""
    if ctx.account is not None:
        star_btn = (f'<form action="{base}/-/star" method="post" class="star-form"><button type="submit" '
                    f'class="star-btn">{"Unstar" if starred else "Star"}</button></form>')
    forked = ""
    if p["forked_from_id"]:
        src = ctx.conn.execute("SELECT namespace, path, name FROM gitlab_projects WHERE id = ?",
                               (p["forked_from_id"],)).fetchone()
        if src is not None:
            forked = (f'<p class="forked-from">Forked from <a href="{project_base(src)}">'
                      f'{esc(src["namespace"])} / {esc(src["name"])}</a></p>')
    lic = ""
    if p["license"]:
        lic = (f'<li>License: <a href="{base}/-/blob/{quote(branch)}/LICENSE" class="license-link">'
               f'{esc(p["license"])}</a></li>')
    last = ""
    if commits:
        c = commits[0]
        last = (f'<p class="last-commit">Last commit: <a href="{base}/-/commit/{c["sha"]}">{esc(c["title"])}</a> '
                f'by {user_link(c["author_username"], c["author_name"])} on {display_date(c["created_at"])}</p>')
    readme = next((f["content"] for f in files if f["path"].lower() == "readme.md"), None)
    readme_html = (f'<article class="readme" id="readme"><h2>README.md</h2>{markdown(readme)}</article>'
                   if readme is not None else '<p class="empty-repo">The repository for this project is empty.</p>')
    main = (f'<h1 class="project-title" data-testid="project-name">{esc(p["name"])}</h1>'
            f'{visibility_badge(p["visibility"])}<p class="project-id">Project ID: {p["id"]}</p>{forked}'
            f'<p class="project-description home-panel-description-markdown" data-testid="project-description">'
            f'{esc(p["description"])}</p>'
            f'<div class="project-actions">{star_btn}<a href="{base}/-/starrers" class="star-count">'
            f'{p["stars"]} stars</a> <a href="{base}/-/forks/new">Fork</a> '
            f'<a href="{base}/-/forks" class="fork-count">{p["forks"]} forks</a></div>'
            f'<ul class="project-stats"><li><a href="{base}/-/commits/{quote(branch)}">'
            f'{len(commits)} Commits</a></li>'
            f'<li><a href="{base}/-/branches">{n_branches} Branches</a></li>'
            f'<li>Language: <span class="repository-language">{esc(p["language"] or "None")}</span></li>{lic}'
            f'<li>Topics: <span class="topics">{esc(p["topics"] or "none")}</span></li>'
            f'<li>Created on {display_date(p["created_at"])}</li></ul>'
            f'<section class="clone-panel"><h2>Clone</h2>'
            f'<label for="ssh_project_clone">Clone with SSH</label>'
            f'<input type="text" id="ssh_project_clone" readonly value="{esc(ssh)}"><code class="clone-ssh">'
            f'{esc(ssh)}</code><label for="http_project_clone">Clone with HTTPS</label>'
            f'<input type="text" id="http_project_clone" readonly value="{esc(https)}"><code class="clone-http">'
            f'{esc(https)}</code></section>{last}'
            f'<p class="repo-actions"><a href="{base}/-/new/{quote(branch)}/">New file</a> '
            f'<a href="{base}/-/tree/{quote(branch)}">Browse files</a></p>'
            f'{tree_table(p, branch, "", files)}{readme_html}')
    return project_page(ctx, p, "Project", main)


def _settings_form(p: sqlite3.Row, values: dict[str, str]) -> str:
    return post_form(
        f"{project_base(p)}/-/edit", "project-settings-form",
        text_field("project_name_edit", "project[name]", "Project name", values.get("project[name]", p["name"]),
                   required=True)
        + area_field("project_description_edit", "project[description]", "Project description",
                     values.get("project[description]", p["description"]), rows=3)
        + radio_group("project[visibility]", "Project visibility", _VISIBILITY,
                      values.get("project[visibility]", p["visibility"])),
        "Save changes")


@login_required
def project_settings(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET/POST `/<ns>/<proj>/-/edit`: name, description and visibility (Maintainers and Owners)."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    if member_level(ctx.conn, p["id"], ctx.user_id) < 40:
        return project_page(ctx, p, "Forbidden", "<h1>403: Forbidden</h1><p>Only Maintainers and Owners can "
                            "change the project settings.</p>", status_code=403)
    if not ctx.posted:
        return form_page(ctx, p, "General settings", _settings_form(p, {}))
    name = ctx.form.get("project[name]", "").strip()
    visibility = ctx.form.get("project[visibility]", p["visibility"])
    error = ("Project name can't be blank." if not name else
             f"Visibility {visibility!r} is invalid: choose private, internal or public."
             if visibility not in dict(_VISIBILITY) else "")
    if error:
        return form_page(ctx, p, "General settings", _settings_form(p, ctx.form), error)
    ctx.conn.execute("UPDATE gitlab_projects SET name = ?, description = ?, visibility = ?, last_activity_at = ? "
                     "WHERE id = ?", (name, ctx.form.get("project[description]", "").strip(), visibility,
                                      site_now(ctx.conn), p["id"]))
    return redirect(project_base(p))


@login_required
def star(ctx: Ctx, namespace: str, project: str) -> Response:
    """POST `/<ns>/<proj>/-/star`: star the project, or unstar it when already starred."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    done = ctx.conn.execute("DELETE FROM gitlab_stars WHERE user_id = ? AND project_id = ?", (ctx.user_id, p["id"]))
    if done.rowcount == 0:
        ctx.conn.execute("INSERT INTO gitlab_stars (user_id, project_id, created_at) VALUES (?,?,?)",
                         (ctx.user_id, p["id"], site_now(ctx.conn)))
    return redirect(project_base(p))


def starrers(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET `/<ns>/<proj>/-/starrers`: who starred the project."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    rows = ctx.conn.execute("SELECT u.username, u.name, s.created_at FROM gitlab_stars s JOIN gitlab_users u "
                            "ON u.id = s.user_id WHERE s.project_id = ? ORDER BY s.created_at DESC",
                            (p["id"],)).fetchall()
    items = "".join(f'<li class="starrer">{user_link(r["username"], r["name"])} @{esc(r["username"])} '
                    f'starred on {display_date(r["created_at"])}</li>' for r in rows)
    main = f'<h1>Starrers</h1><p class="count">{len(rows)} stars</p><ul class="starrers">{items}</ul>'
    return project_page(ctx, p, "Starrers", main)


def forks(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET `/<ns>/<proj>/-/forks`: the project's forks."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    rows = [r for r in project_list(ctx.conn, viewer_id=ctx.user_id, sort="created") if r["forked_from_id"] == p["id"]]
    return project_page(ctx, p, "Forks", f"<h1>Forks</h1>{project_rows(rows)}")


@login_required
def fork_new(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET/POST `/<ns>/<proj>/-/forks/new`: fork the project into the user's namespace."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    form_html = (f'<h1>Fork project</h1><p>Fork {esc(p["namespace"])} / {esc(p["name"])} into your namespace '
                 f'{esc(ctx.account["username"])}.</p><form action="{project_base(p)}/-/forks/new" method="post">'
                 '<button type="submit">Fork project</button></form>')
    if not ctx.posted:
        return project_page(ctx, p, "Fork project", form_html)
    if ctx.conn.execute("SELECT 1 FROM gitlab_projects WHERE namespace = ? AND path = ?",
                        (ctx.account["username"], p["path"])).fetchone():
        alert = (f'<div class="flash-alert" role="alert">You already have a project named {esc(p["path"])}; '
                 "rename or delete it before forking.</div>")
        return project_page(ctx, p, "Fork project", alert + form_html, status_code=422)
    now = site_now(ctx.conn)
    new_id = ctx.conn.execute(
        "INSERT INTO gitlab_projects (namespace, path, name, description, language, license, topics, visibility, "
        "default_branch, forked_from_id, creator_id, created_at, last_activity_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (ctx.account["username"], p["path"], p["name"], p["description"], p["language"], p["license"], p["topics"],
         p["visibility"], p["default_branch"], p["id"], ctx.user_id, now, now)).lastrowid
    fork_project_contents(ctx.conn, p["id"], new_id, p["default_branch"], ctx.user_id, now)
    return redirect(f"/{quote(ctx.account['username'])}/{quote(p['path'])}")
