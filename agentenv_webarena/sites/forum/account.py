"""The forum's accounts: user pages (biography, submissions, comments), editing one's biography, log in
and log out.

Owns `/user/<name>[/...]`, `/login`, `/login_check` (WebArena's login recipe: `_username`,
`_password`, cookie `forum_session`) and `/logout`.
"""
from __future__ import annotations

import sqlite3
from typing import Optional
from urllib.parse import quote

from starlette.responses import Response

from agentenv_webarena.sites.common import SignIn, esc, login_required, redirect
from agentenv_webarena.sites.forum.layout import (
    Ctx,
    not_found,
    page_number,
    pagination,
    paragraphs,
    render_page,
    submission_listing,
    when,
)
from agentenv_webarena.sites.forum.model import PAGE_SIZE, count_submissions, post_path, submission_list

__all__ = ["user_page", "edit_biography", "login_page", "login_check", "logout"]


def _user_row(conn: sqlite3.Connection, name: str) -> Optional[sqlite3.Row]:
    return conn.execute("SELECT * FROM forum_users WHERE username = ? COLLATE NOCASE", (name,)).fetchone()


def _user_comments(conn: sqlite3.Connection, user_id: int, limit: int, offset: int) -> list[sqlite3.Row]:
    return conn.execute(
        "SELECT c.id, c.body, c.created_at, s.id AS submission_id, s.title, f.name AS forum "
        "FROM forum_comments c JOIN forum_submissions s ON s.id = c.submission_id "
        "JOIN forum_forums f ON f.id = s.forum_id WHERE c.user_id = ? ORDER BY c.created_at DESC, c.id DESC "
        "LIMIT ? OFFSET ?", (user_id, limit, offset)).fetchall()


def _comment_items(rows: list[sqlite3.Row]) -> str:
    if not rows:
        return '<p class="empty">No comments yet.</p>'
    items = "".join(
        f'<li class="user-comment"><p>On <a href="{esc(post_path(r["forum"], r["submission_id"], r["title"]))}">'
        f'{esc(r["title"])}</a> in f/{esc(r["forum"])}, {when(r["created_at"])}</p>'
        f'<div class="comment__body">{paragraphs(r["body"])}</div></li>' for r in rows)
    return f'<ul class="user-comments">{items}</ul>'


def user_page(ctx: Ctx, name: str, section: Optional[str] = None) -> Response:
    """GET `/user/<name>[/submissions|/comments]`: a user's biography, submissions and comments."""
    page = page_number(ctx.request)
    user = _user_row(ctx.conn, name)
    if user is None or section not in (None, "submissions", "comments"):
        return not_found(ctx, f"There is no user {name}." if user is None else "Unknown page.")
    uname = user["username"]
    own = ctx.account is not None and ctx.account["id"] == user["id"]
    edit = (f'<p><a href="/user/{quote(uname)}/edit_biography">Edit biography</a></p>' if own else "")
    bio = f'<div class="user-bio__biography">{paragraphs(user["biography"])}</div>' if user["biography"] else ""
    head = (f'<h1 class="user-name">{esc(uname)}</h1><section class="user-about"><h2>Biography</h2>'
            f'<div class="user-bio">{bio}</div>{edit}</section>'
            f'<nav class="user-nav" aria-label="User"><a href="/user/{quote(uname)}">Overview</a>'
            f'<a href="/user/{quote(uname)}/submissions">Submissions</a>'
            f'<a href="/user/{quote(uname)}/comments">Comments</a></nav>')
    if section == "submissions":
        rows = submission_list(ctx.conn, sort="new", author=uname, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
        total = count_submissions(ctx.conn, author=uname)
        main = (head + f"<h2>Submissions by {esc(uname)}</h2>{submission_listing(ctx, rows)}"
                f"{pagination(ctx, page, total)}")
    elif section == "comments":
        rows = _user_comments(ctx.conn, user["id"], PAGE_SIZE, (page - 1) * PAGE_SIZE)
        total = ctx.conn.execute("SELECT COUNT(*) FROM forum_comments WHERE user_id = ?", (user["id"],)).fetchone()[0]
        main = head + f"<h2>Comments by {esc(uname)}</h2>{_comment_items(rows)}{pagination(ctx, page, total)}"
    else:
        rows = submission_list(ctx.conn, sort="new", author=uname, limit=5)
        comments = _user_comments(ctx.conn, user["id"], 5, 0)
        main = (head + f"<h2>Latest submissions</h2>{submission_listing(ctx, rows)}"
                f'<p><a href="/user/{quote(uname)}/submissions">All submissions</a></p>'
                f"<h2>Latest comments</h2>{_comment_items(comments)}"
                f'<p><a href="/user/{quote(uname)}/comments">All comments</a></p>')
    sidebar = (f'<section class="user-card"><h2>{esc(uname)}</h2>'
               f'<p>Registered {when(user["created_at"])}</p></section>')
    return render_page(ctx, uname, main, sidebar)


@login_required
def edit_biography(ctx: Ctx, name: str) -> Response:
    """GET or POST `/user/<name>/edit_biography`: edit one's own biography."""
    user = _user_row(ctx.conn, name)
    if user is None:
        return not_found(ctx, f"There is no user {name}.")
    if user["id"] != ctx.account["id"]:
        return render_page(ctx, "Forbidden", "<h1>Forbidden</h1><p>You can only edit your own biography.</p>",
                           status_code=403)
    if ctx.posted:
        bio = str(ctx.form.get("user_biography[biography]", "")).strip()
        ctx.conn.execute("UPDATE forum_users SET biography = ? WHERE id = ?", (bio, user["id"]))
        return redirect(f"/user/{quote(user['username'])}")
    main = (f"<h1>Edit biography</h1><form action=\"/user/{quote(user['username'])}/edit_biography\" "
            'method="post" class="biography-form"><label for="user_biography_biography">Biography</label>'
            '<textarea id="user_biography_biography" name="user_biography[biography]" rows="5">'
            f'{esc(user["biography"])}</textarea><p><button type="submit">Save</button></p></form>')
    return render_page(ctx, "Edit biography", main)


# WebArena's login recipe posts `_username` and `_password` to `/login_check`; a refused login goes back to
# the login page (tasks.auth reads that as a refused login).
SIGN_IN = SignIn(action="/login_check", user_field="_username", password_field="_password",
                 account_sql="SELECT id, password FROM forum_users WHERE username = ? COLLATE NOCASE",
                 signed_in_url="/", refused_url="/login", strip_login=False, user_id="login_username",
                 password_id="login_password", button="Log in", form_class="login-form",
                 user_attrs=' required autocomplete="username"',
                 password_attrs=' required autocomplete="current-password"')


def login_page(ctx: Ctx) -> Response:
    """GET `/login`: the login form."""
    err = '<p class="errors" role="alert">Invalid username or password.</p>' if ctx.q.get("error") else ""
    return render_page(ctx, "Log in", "<h1>Log in</h1>" + err + SIGN_IN.form())


def login_check(ctx: Ctx) -> Response:
    """POST `/login_check`: log in (`_username`, `_password`) and set the session cookie."""
    return SIGN_IN.post(ctx)


def logout(ctx: Ctx) -> Response:
    """POST `/logout`: end the session."""
    ctx.end_session()
    return redirect("/")
