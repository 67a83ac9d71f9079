"""The code host's request context and shared markup: top bar, page frame, project header and sidebar,
Markdown rendering, error pages.

Owns `Ctx` (one request: its instance DB, the signed-in user, the posted form) and every piece of
markup more than one page uses. The pages live in `projects`, `repository`, `issuables`, `people`.
"""
from __future__ import annotations

import re
import sqlite3
from typing import Optional
from urllib.parse import quote

from starlette.responses import HTMLResponse, Response

from agentenv_webarena.sites.common import RequestContext, SessionTable, esc, html_page, query_url, to_int
from agentenv_webarena.sites.gitlab.model import COOKIE, member_level, project_by_path

__all__ = ["Ctx", "PER_PAGE", "paginate",
           "render_page", "not_found", "alert", "form_error", "markdown", "project_page", "load_project",
           "form_page", "post_form", "visibility_badge", "user_link", "radio_group", "text_field", "area_field"]



class Ctx(RequestContext):
    """One code-host request: its instance DB, the posted form and the signed-in user (`account`, or None)."""

    SESSIONS = SessionTable(cookie=COOKIE, table="gitlab_sessions", accounts="gitlab_users", account_column="user_id")
    LOGIN_URL = "/users/sign_in"

    @property
    def user_id(self) -> Optional[int]:
        return None if self.account is None else self.account["id"]


def _top_bar(ctx: Ctx) -> str:
    if ctx.account is not None:
        name = ctx.account["username"]
        account = (f'<a href="/dashboard/issues?assignee_username={quote(name)}">Your issues</a>'
                   f'<a href="/dashboard/merge_requests?assignee_username={quote(name)}">Your merge requests</a>'
                   '<a href="/dashboard/todos" class="shortcuts-todos">To-Do List</a>'
                   '<a href="/projects/new">New project</a>'
                   f'<a href="/{quote(name)}" class="header-user-link" aria-label="Your profile">{esc(name)}</a>'
                   '<a href="/-/profile">Edit profile</a>'
                   '<form action="/users/sign_out" method="post"><button type="submit">Sign out</button></form>')
    else:
        account = '<a href="/users/sign_in">Sign in</a>'
    return ('<header class="top-bar"><nav aria-label="Main" class="top-bar">'
            '<a href="/" class="brand-logo"><strong>GitLab</strong></a>'
            '<a href="/dashboard/projects">Projects</a><a href="/dashboard/groups">Groups</a>'
            '<a href="/explore">Explore</a>'
            '<form role="search" action="/search" method="get" class="search-form">'
            '<input type="search" name="search" aria-label="Search GitLab" placeholder="Search GitLab"></form>'
            f"{account}</nav></header>")


def render_page(ctx: Ctx, title: str, main: str, sidebar: str = "", status_code: int = 200) -> HTMLResponse:
    """A page: top bar, an optional left sidebar (a project's menu) and `main`."""
    side = f'<aside class="nav-sidebar">{sidebar}</aside>' if sidebar else ""
    body = f'{_top_bar(ctx)}<div class="layout">{side}<main class="content" id="content-body">{main}</main></div>'
    return html_page(f"{title} · GitLab", body, status_code=status_code, site="gitlab")


def not_found(ctx: Ctx, what: str = "The page could not be found or you don't have permission to view it.") -> Response:
    """GitLab's 404 page."""
    return render_page(ctx, "Not Found", f"<h1>404: Page not found</h1><p>{esc(what)}</p>", status_code=404)


def alert(message: str) -> str:
    """A refused form's error message (nothing without one)."""
    return f'<div class="flash-alert" role="alert">{esc(message)}</div>' if message else ""


def form_error(ctx: Ctx, title: str, message: str, form_html: str, sidebar: str = "") -> Response:
    """A form page re-rendered with an error (HTTP 422)."""
    return render_page(ctx, title, alert(message) + form_html, sidebar, status_code=422)


_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def _inline(text: str) -> str:
    out, last = [], 0
    for m in _LINK.finditer(text):
        out.append(esc(text[last:m.start()]))
        out.append(f'<a href="{esc(m.group(2))}">{esc(m.group(1))}</a>')
        last = m.end()
    out.append(esc(text[last:]))
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", "".join(out))


def markdown(text: str) -> str:
    """A small Markdown subset as HTML: `#` headings, `-` lists, paragraphs, links and inline code."""
    html, para, items = [], [], []

    def flush() -> None:
        if para:
            html.append(f"<p>{_inline(' '.join(para))}</p>")
            para.clear()
        if items:
            html.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    for line in (text or "").splitlines():
        stripped = line.strip()
        heading = re.match(r"^(#{1,6})\s+(.*)$", stripped)
        if heading:
            flush()
            level = len(heading.group(1))
            html.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif stripped.startswith(("- ", "* ")):
            if para:
                flush()
            items.append(stripped[2:])
        elif not stripped or stripped.startswith("<!--"):
            flush()
        else:
            if items:
                flush()
            para.append(stripped)
    flush()
    return "".join(html)


_VISIBILITY_TITLES = {
    "private": "Private - Project access must be granted explicitly to each user. If this project is part of a "
               "group, access is granted to members of the group.",
    "internal": "Internal - The project can be accessed by any logged in user except external users.",
    "public": "Public - The project can be accessed without any authentication.",
}


PER_PAGE = 20  # GitLab's default page size of issue and merge-request lists


def paginate(ctx: Ctx, rows: list) -> tuple[list, str]:
    """The `?page=` slice of `rows` (PER_PAGE a page) and GitLab's pager under the list ("" on a single page)."""
    pages = max(1, -(-len(rows) // PER_PAGE))
    page = min(max(1, to_int(ctx.q.get("page", "1"), 1)), pages)
    if pages == 1:
        return rows, ""
    path = ctx.request.url.path
    params = {k: v for k, v in ctx.q.items() if k != "page"}

    def item(label: str, number: int, rel: str = "") -> str:
        if number == page and not rel:
            return f'<li class="page-item active"><span class="page-link" aria-current="page">{number}</span></li>'
        attrs = f' rel="{rel}"' if rel else ""
        href = esc(query_url(path, **params, page=number if number > 1 else None))
        return f'<li class="page-item"><a class="page-link" href="{href}"{attrs}>{label}</a></li>'

    links = ([item("‹ Prev", page - 1, "prev")] if page > 1 else []) + [item(str(n), n) for n in range(1, pages + 1)]
    links += [item("Next ›", page + 1, "next")] if page < pages else []
    nav = f'<nav aria-label="Pagination" class="gl-pagination"><ul class="pagination">{"".join(links)}</ul></nav>'
    return rows[(page - 1) * PER_PAGE:page * PER_PAGE], nav


def visibility_badge(visibility: str) -> str:
    """The project's visibility as a badge ('Private', 'Internal', 'Public'), GitLab's description as its title."""
    label = visibility.capitalize()
    return (f'<span class="badge visibility-badge visibility-icon" data-testid="visibility-badge" '
            f'title="{esc(_VISIBILITY_TITLES.get(visibility, label))}">{label}</span>')


def user_link(username: str, name: str) -> str:
    """A link to a user's profile, named by their full name."""
    return f'<a href="/{quote(username)}" class="author-link">{esc(name)}</a>'


def load_project(ctx: Ctx, namespace: str, path: str) -> Optional[sqlite3.Row]:
    """The project if it exists and the viewer may see it (private projects: members only)."""
    project = project_by_path(ctx.conn, namespace, path)
    if project is None:
        return None
    if project["visibility"] == "private" and member_level(ctx.conn, project["id"], ctx.user_id) == 0:
        return None
    return project


def project_base(project: sqlite3.Row) -> str:
    """`/<namespace>/<path>` of a project."""
    return f"/{quote(project['namespace'])}/{quote(project['path'])}"


def _project_menu(ctx: Ctx, project: sqlite3.Row) -> str:
    base = project_base(project)
    branch = quote(project["default_branch"], safe="")
    links = [("Project information", base), ("Repository", f"{base}/-/tree/{branch}"),
             ("Commits", f"{base}/-/commits/{branch}"), ("Branches", f"{base}/-/branches"),
             ("Contributors", f"{base}/-/graphs/{branch}"),
             (f"Issues {project['open_issues']}", f"{base}/-/issues"),
             (f"Merge requests {project['open_mrs']}", f"{base}/-/merge_requests"),
             ("Milestones", f"{base}/-/milestones"), ("Members", f"{base}/-/project_members")]
    if member_level(ctx.conn, project["id"], ctx.user_id) >= 40:
        links.append(("Settings", f"{base}/-/edit"))
    items = "".join(f'<li><a href="{esc(href)}">{esc(label)}</a></li>' for label, href in links)
    return (f'<nav aria-label="Project navigation"><p class="sidebar-context-title">{esc(project["name"])}</p>'
            f"<ul>{items}</ul></nav>")


def project_page(ctx: Ctx, project: sqlite3.Row, title: str, main: str, status_code: int = 200) -> HTMLResponse:
    """A page inside a project: breadcrumbs, the project menu and `main`."""
    crumbs = (f'<nav aria-label="Breadcrumbs" class="breadcrumbs"><a href="/{quote(project["namespace"])}">'
              f'{esc(project["namespace"])}</a> / <a href="{project_base(project)}">{esc(project["name"])}</a></nav>')
    return render_page(ctx, f"{title} · {project['namespace']} / {project['name']}", crumbs + main,
                       _project_menu(ctx, project), status_code=status_code)


def form_page(ctx: Ctx, project: sqlite3.Row, title: str, form_html: str, error: str = "") -> HTMLResponse:
    """A project page holding a form under the heading `title`; with `error`, the form refused: its alert
    above the form and HTTP 422."""
    return project_page(ctx, project, title, f"<h1>{esc(title)}</h1>{alert(error)}{form_html}",
                        status_code=422 if error else 200)


def post_form(action: str, cls: str, fields: str, button: str) -> str:
    """A POST form to `action` (trusted markup: already quoted) of class `cls` holding `fields` and a submit
    `button`."""
    return (f'<form action="{action}" method="post" class="{esc(cls)}">{fields}'
            f'<p><button type="submit">{esc(button)}</button></p></form>')


def radio_group(name: str, legend: str, options: list[tuple[str, str]], checked: str) -> str:
    """A fieldset of radio buttons (value, label) with `checked` selected."""
    radios = "".join(
        f'<label><input type="radio" name="{esc(name)}" value="{esc(v)}"{" checked" if v == checked else ""}> '
        f"{esc(label)}</label>" for v, label in options)
    return f"<fieldset><legend>{esc(legend)}</legend>{radios}</fieldset>"


def text_field(field_id: str, name: str, label: str, value: str = "", *, required: bool = False,
               placeholder: str = "") -> str:
    """A labelled text input."""
    req = " required" if required else ""
    ph = f' placeholder="{esc(placeholder)}"' if placeholder else ""
    return (f'<label for="{field_id}">{esc(label)}</label>'
            f'<input type="text" id="{field_id}" name="{esc(name)}" value="{esc(value)}"{req}{ph}>')


def area_field(field_id: str, name: str, label: str, value: str = "", rows: int = 5) -> str:
    """A labelled textarea."""
    return (f'<label for="{field_id}">{esc(label)}</label>'
            f'<textarea id="{field_id}" name="{esc(name)}" rows="{rows}">{esc(value)}</textarea>')
