"""The forum's listings: the front page, the list of forums, one forum's page, search, subscriptions and
new forums.

Owns the pages that list submissions (sorted, 20 a page) and the forum-level actions
((un)subscribe, create a forum, a moderator's edit of a forum). A submission's own page and its comments
live in `threads`.
"""
from __future__ import annotations

import re
from typing import Optional
from urllib.parse import quote

from starlette.responses import RedirectResponse, Response

from agentenv_webarena.sites.common import esc, login_required, redirect
from agentenv_webarena.sites.forum.layout import (
    Ctx,
    forum_sidebar,
    not_found,
    page_number,
    pagination,
    render_page,
    safe_next,
    sort_nav,
    submission_listing,
    subscriptions_section,
)
from agentenv_webarena.sites.forum.model import (
    PAGE_SIZE,
    SORT_LABELS,
    SORTS,
    count_submissions,
    forum_row,
    is_moderator,
    site_now,
    submission_list,
)

__all__ = ["front", "forums", "forum_page", "search", "subscription", "create_forum", "edit_forum"]


def front(ctx: Ctx, sort: str = "hot") -> Response:
    """GET `/` and `/<sort>`: every forum's submissions, sorted, 20 a page."""
    if sort not in SORTS:
        return not_found(ctx, f"There is no page {ctx.request.url.path}.")
    page = page_number(ctx.request)
    rows = submission_list(ctx.conn, sort=sort, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
    total = count_submissions(ctx.conn)
    main = (f"<h1>All forums: {SORT_LABELS[sort].lower()} submissions</h1>{sort_nav('/', sort)}"
            f"{submission_listing(ctx, rows)}{pagination(ctx, page, total)}")
    sidebar = (subscriptions_section(ctx) + '<section class="about"><h2>About</h2>'
               "<p>Postmill is a forum for communities of every kind.</p>"
               '<p><a href="/create_forum">Create a forum</a></p></section>')
    return render_page(ctx, "Postmill", main, sidebar)


def forums(ctx: Ctx) -> Response:
    """GET `/forums`: the table of forums."""
    rows = ctx.conn.execute(
        "SELECT f.name, f.title, f.description, f.sidebar, "
        "(SELECT COUNT(*) FROM forum_submissions s WHERE s.forum_id = f.id) AS submissions, "
        "(SELECT COUNT(*) FROM forum_subscriptions x WHERE x.forum_id = f.id) AS subscribers "
        "FROM forum_forums f ORDER BY f.name COLLATE NOCASE").fetchall()
    body = "".join(
        f'<tr><td><a href="/f/{quote(r["name"])}">{esc(r["name"])}</a></td><td>{esc(r["title"])}</td>'
        f'<td class="forum-list__description"><p>{esc(r["description"])}</p><p>{esc(r["sidebar"])}</p></td>'
        f'<td>{r["submissions"]}</td><td>{r["subscribers"]}</td></tr>' for r in rows)
    main = ("<h1>List of forums</h1><table class=\"forum-list\"><thead><tr><th>Forum</th><th>Title</th>"
            "<th>Description</th><th>Submissions</th><th>Subscribers</th></tr></thead>"
            f"<tbody>{body}</tbody></table>"
            '<p><a href="/create_forum">Create a forum</a></p>')
    return render_page(ctx, "List of forums", main)


def forum_page(ctx: Ctx, forum: str, sort: str = "hot") -> Response:
    """GET `/f/<forum>[/<sort>]`: one forum's submissions and its sidebar card."""
    name = forum
    page = page_number(ctx.request)
    forum = forum_row(ctx.conn, name)
    if forum is None or sort not in SORTS:
        return not_found(ctx, f"The forum {name} does not exist." if forum is None
                         else f"Unknown sort {sort}; use one of {', '.join(SORTS)}.")
    if forum["name"] != name:
        return RedirectResponse(ctx.request.url.path.replace(f"/f/{name}", f"/f/{forum['name']}", 1), 301)
    rows = submission_list(ctx.conn, sort=sort, forum=forum["name"], limit=PAGE_SIZE,
                           offset=(page - 1) * PAGE_SIZE)
    total = count_submissions(ctx.conn, forum=forum["name"])
    main = (f'<h1 class="forum-title">{esc(forum["title"])}</h1><p class="forum-name">f/{esc(forum["name"])}</p>'
            f'{sort_nav("/f/" + quote(forum["name"]), sort)}{submission_listing(ctx, rows)}'
            f'{pagination(ctx, page, total)}')
    return render_page(ctx, f"f/{forum['name']}", main, forum_sidebar(ctx, forum))


def search(ctx: Ctx) -> Response:
    """GET `/search?q=`: submissions whose title or body holds every word."""
    q = ctx.q.get("q", "").strip()
    page = page_number(ctx.request)
    if not q:
        return render_page(ctx, "Search", "<h1>Search</h1><p>Type words to look for in the search box.</p>")
    rows = submission_list(ctx.conn, sort="new", search=q, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
    total = count_submissions(ctx.conn, search=q)
    main = (f'<h1>Search results for "{esc(q)}"</h1><p>{total} submission{"" if total == 1 else "s"} found.</p>'
            f"{submission_listing(ctx, rows)}{pagination(ctx, page, total)}")
    return render_page(ctx, f"Search: {q}", main)


@login_required
def subscription(ctx: Ctx, forum: str) -> Response:
    """POST `/f/<forum>/subscribe` or `/unsubscribe`: (un)subscribe the signed-in user."""
    subscribe = ctx.request.url.path.endswith("/subscribe")
    row = forum_row(ctx.conn, forum)
    if row is None:
        return not_found(ctx, f"The forum {forum} does not exist.")
    if subscribe:
        ctx.conn.execute("INSERT OR IGNORE INTO forum_subscriptions VALUES (?,?)", (ctx.account["id"], row["id"]))
    else:
        ctx.conn.execute("DELETE FROM forum_subscriptions WHERE user_id = ? AND forum_id = ?",
                         (ctx.account["id"], row["id"]))
    return redirect(safe_next(str(ctx.form.get("next", "")), f"/f/{quote(row['name'])}"))


_FORUM_FIELDS = ("name", "title", "description", "sidebar")


def _forum_values(ctx: Ctx) -> dict[str, str]:
    return {k: str(ctx.form.get(f"forum[{k}]", "")).strip() for k in _FORUM_FIELDS}


def _forum_errors(ctx: Ctx, values: dict[str, str], forum_id: Optional[int] = None) -> list[str]:
    """What is wrong with a new or edited forum (`forum_id`: the forum being edited, which may keep its name)."""
    errors = []
    if not re.fullmatch(r"[A-Za-z0-9_]{3,25}", values["name"]):
        errors.append("The name must be 3 to 25 letters, digits or underscores.")
    else:
        same = forum_row(ctx.conn, values["name"])
        if same is not None and same["id"] != forum_id:
            errors.append("A forum with that name already exists.")
    if not values["title"]:
        errors.append("The title must not be empty.")
    elif len(values["title"]) > 100:
        errors.append("The title must be at most 100 characters.")
    if len(values["description"]) > 1500:
        errors.append("The description must be at most 1500 characters.")
    if len(values["sidebar"]) > 10000:
        errors.append("The sidebar must be at most 10000 characters.")
    return errors


def _forum_form(ctx: Ctx, heading: str, action: str, button: str, values: dict[str, str],
                errors: list[str]) -> Response:
    """Postmill's forum form (create and edit): name, title, description, sidebar; 400 when `errors`."""
    err = "".join(f"<li>{esc(e)}</li>" for e in errors)
    main = (f"<h1 class=\"page-heading\">{heading}</h1>" +
            (f'<ul class="errors" role="alert">{err}</ul>' if err else "") +
            f'<form action="{esc(action)}" method="post" class="forum-form" name="forum">'
            '<label for="forum_name">Name</label><input type="text" id="forum_name" name="forum[name]" '
            f'required value="{esc(values["name"])}">'
            '<label for="forum_title">Title</label><input type="text" id="forum_title" name="forum[title]" '
            f'required value="{esc(values["title"])}">'
            '<label for="forum_description">Description</label><textarea id="forum_description" '
            f'name="forum[description]" rows="3">{esc(values["description"])}</textarea>'
            '<label for="forum_sidebar">Sidebar</label><textarea id="forum_sidebar" name="forum[sidebar]" '
            f'rows="3">{esc(values["sidebar"])}</textarea>'
            f'<p><button type="submit">{esc(button)}</button></p></form>')
    title = re.sub(r"<[^>]+>", "", heading)
    return render_page(ctx, title, main, status_code=400 if errors else 200)


@login_required
def create_forum(ctx: Ctx) -> Response:
    """GET or POST `/create_forum`: the new-forum form, and creating the forum (its creator moderates it)."""
    values = _forum_values(ctx) if ctx.posted else dict.fromkeys(_FORUM_FIELDS, "")
    errors = _forum_errors(ctx, values) if ctx.posted else []
    if ctx.posted and not errors:
        cur = ctx.conn.execute("INSERT INTO forum_forums (name, title, description, sidebar, created_at) "
                               "VALUES (?,?,?,?,?)", (values["name"], values["title"], values["description"],
                                                      values["sidebar"], site_now(ctx.conn)))
        ctx.conn.execute("INSERT INTO forum_subscriptions VALUES (?,?)", (ctx.account["id"], cur.lastrowid))
        ctx.conn.execute("INSERT INTO forum_moderators (forum_id, user_id) VALUES (?,?)",
                         (cur.lastrowid, ctx.account["id"]))
        return redirect(f"/f/{quote(values['name'])}")
    return _forum_form(ctx, "Create forum", "/create_forum", "Create forum", values, errors)


@login_required
def edit_forum(ctx: Ctx, forum: str) -> Response:
    """GET or POST `/f/<forum>/edit`: a moderator edits the forum's name, title, description and sidebar."""
    row = forum_row(ctx.conn, forum)
    if row is None:
        return not_found(ctx, f"The forum {forum} does not exist.")
    if not is_moderator(ctx.conn, row["id"], ctx.account["id"]):
        return render_page(ctx, "Forbidden", f"<h1>Forbidden</h1><p>Only the moderators of f/{esc(row['name'])} "
                           "may edit it.</p>", status_code=403)
    action = f"/f/{quote(row['name'])}/edit"
    heading = f'Editing forum <a href="/f/{quote(row["name"])}">/f/{esc(row["name"])}</a>'
    if not ctx.posted:
        return _forum_form(ctx, heading, action, "Save", {k: row[k] for k in _FORUM_FIELDS}, [])
    values = _forum_values(ctx)
    errors = _forum_errors(ctx, values, row["id"])
    if errors:
        return _forum_form(ctx, heading, action, "Save", values, errors)
    ctx.conn.execute("UPDATE forum_forums SET name = ?, title = ?, description = ?, sidebar = ? WHERE id = ?",
                     (values["name"], values["title"], values["description"], values["sidebar"], row["id"]))
    return redirect(f"/f/{quote(values['name'])}")
