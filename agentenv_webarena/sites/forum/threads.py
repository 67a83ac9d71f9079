"""The forum's threads: a submission's page with its comment tree, comments and replies, votes, and
creating, editing and deleting submissions.

Owns everything under `/f/<forum>/<id>/...`, `/submit` and the vote endpoints (`/sv/<id>`,
`/cv/<cid>`). A new submission or comment starts with its author's upvote, as in Postmill.
"""
from __future__ import annotations

import re
import sqlite3
from typing import Any, Optional
from urllib.parse import quote

from starlette.responses import Response

from agentenv_webarena.sites.common import esc, login_required, redirect
from agentenv_webarena.sites.forum.layout import (
    Ctx,
    forum_sidebar,
    my_votes,
    not_found,
    paragraphs,
    render_page,
    safe_next,
    submission_info,
    vote_form,
    when,
)
from agentenv_webarena.sites.forum.model import comment_order, forum_row, post_path, site_now, submission_row

__all__ = ["submission_page", "comment_post", "comment_page", "vote", "submit", "edit_submission", "delete_submission"]


def _load_post(ctx: Ctx, name: str, post_id: int) -> tuple[Optional[sqlite3.Row], Optional[Response]]:
    post = submission_row(ctx.conn, post_id)
    if post is None or post["forum"].lower() != name.lower():
        return None, not_found(ctx, "This submission does not exist (it may have been deleted).")
    return post, None


def _own_post(ctx: Ctx, forum: str, post_id: int, verb: str) -> tuple[Optional[sqlite3.Row], Optional[Response]]:
    """The signed-in user's own submission, else the page refusing it (404, or 403: one may only `verb` one's own)."""
    post, missing = _load_post(ctx, forum, post_id)
    if missing:
        return None, missing
    if post["user_id"] != ctx.account["id"]:
        refusal = f"<h1>Forbidden</h1><p>You can only {verb} your own submissions.</p>"
        return None, render_page(ctx, "Forbidden", refusal, status_code=403)
    return post, None


def _post_block(ctx: Ctx, post: sqlite3.Row, *, full: bool = True) -> str:
    path = post_path(post["forum"], post["id"], post["title"])
    mine = my_votes(ctx, "forum_submission_votes", "submission_id", [post["id"]]).get(post["id"], 0)
    url = (f'<p class="submission__url"><a href="{esc(post["url"])}" rel="nofollow">{esc(post["url"])}</a></p>'
           if post["url"] else "")
    own = ctx.account is not None and ctx.account["id"] == post["user_id"]
    nav = f'<a href="{esc(path)}">{post["comment_count"]} comment{"" if post["comment_count"] == 1 else "s"}</a>'
    if own and full:
        nav += (f'<a href="/f/{quote(post["forum"])}/{post["id"]}/-/edit">Edit</a>'
                f'<form action="/f/{quote(post["forum"])}/{post["id"]}/-/delete" method="post">'
                '<button type="submit">Delete</button></form>')
    vote = vote_form("submission", post["id"], post["score"], mine, ctx.here) if full else ""
    heading = "h1" if full else "h2"
    body = f'<div class="submission__body">{paragraphs(post["body"])}</div>' if full else ""
    return (f'<article class="submission submission--full" id="submission-{post["id"]}">'
            f'<div class="submission__vote">{vote}</div><div class="submission__inner">'
            f'<{heading} class="submission__title"><a class="submission__link" href="{esc(path)}">'
            f'{esc(post["title"])}</a></{heading}>{url}{submission_info(post)}{body}'
            f'<nav class="submission__nav">{nav}</nav></div></article>')


def _comment_tree(ctx: Ctx, post: sqlite3.Row, comments: list[dict], root: Optional[int] = None) -> str:
    mine = my_votes(ctx, "forum_comment_votes", "comment_id", (c["id"] for c in comments))
    by_parent: dict[Optional[int], list[dict]] = {}
    for c in comments:
        by_parent.setdefault(c["parent_id"], []).append(c)
    base = f"/f/{quote(post['forum'])}/{post['id']}/-/comment"

    def render(c: dict) -> str:
        edited = ' <span class="comment__edited">(edited)</span>' if c["edited_at"] else ""
        replies = "".join(render(child) for child in by_parent.get(c["id"], []))
        return (f'<article class="comment" id="comment-{c["id"]}"><div class="comment__row">'
                '<div class="comment__vote">'
                f'{vote_form("comment", c["id"], c["score"], mine.get(c["id"], 0), ctx.here)}</div>'
                f'<div class="comment__main"><p class="comment__info"><a class="comment__author" '
                f'href="/user/{quote(c["author"])}">{esc(c["author"])}</a> {when(c["created_at"])}{edited}</p>'
                f'<div class="comment__body">{paragraphs(c["body"])}</div>'
                f'<nav class="comment__nav"><a href="{base}/{c["id"]}" aria-label="Reply to {esc(c["author"])}">'
                'Reply</a></nav></div></div>'
                f'<div class="comment__replies">{replies}</div></article>')

    if root is not None:
        top = [c for c in comments if c["id"] == root]
    else:
        top = by_parent.get(None, [])
    return "".join(render(c) for c in top)


def submission_page(ctx: Ctx, forum: str, id: int, slug: Optional[str] = None) -> Response:
    """GET `/f/<forum>/<id>[/<slug>]`: a submission, its comment tree and the comment form."""
    post, missing = _load_post(ctx, forum, id)
    if missing:
        return missing
    comments = comment_order(ctx.conn, post["id"])
    n = len(comments)
    form = ""
    if ctx.account is not None:
        form = (f'<form action="/f/{quote(post["forum"])}/{post["id"]}/-/comment" method="post" '
                'class="comment-form"><label for="comment_comment">Comment</label>'
                '<textarea id="comment_comment" name="comment[comment]" rows="3" required></textarea>'
                '<button type="submit">Post</button></form>')
    main = (_post_block(ctx, post) + f'<section class="comments" aria-label="Comments">'
            f'<h2 class="comments__heading">{n} comment{"" if n == 1 else "s"}</h2>{form}'
            f'{_comment_tree(ctx, post, comments)}</section>')
    forum = forum_row(ctx.conn, post["forum"])
    return render_page(ctx, post["title"], main, forum_sidebar(ctx, forum))


@login_required
def comment_post(ctx: Ctx, forum: str, id: int) -> Response:
    """POST `/f/<forum>/<id>/-/comment`: a top-level comment."""
    post, missing = _load_post(ctx, forum, id)
    if missing:
        return missing
    text = str(ctx.form.get("comment[comment]", "")).strip()
    if not text:
        return redirect(post_path(post["forum"], post["id"], post["title"]))
    cid = _add_comment(ctx.conn, ctx.account["id"], post["id"], None, text)
    return redirect(post_path(post["forum"], post["id"], post["title"]) + f"#comment-{cid}")


def comment_page(ctx: Ctx, forum: str, id: int, cid: int) -> Response:
    """GET or POST `/f/<forum>/<id>/-/comment/<cid>`: one comment's thread, and replying to it."""
    post, missing = _load_post(ctx, forum, id)
    if missing:
        return missing
    comments = comment_order(ctx.conn, post["id"])
    target = next((c for c in comments if c["id"] == cid), None)
    if target is None:
        return not_found(ctx, "This comment does not exist.")
    if ctx.posted:
        if ctx.account is None:
            return redirect(ctx.LOGIN_URL)
        text = str(ctx.form.get("reply[comment]", "")).strip()
        if text:
            new_id = _add_comment(ctx.conn, ctx.account["id"], post["id"], cid, text)
            return redirect(post_path(post["forum"], post["id"], post["title"]) + f"#comment-{new_id}")
    reply = ""
    if ctx.account is not None:
        reply = (f'<form action="/f/{quote(post["forum"])}/{post["id"]}/-/comment/{cid}" method="post" '
                 f'class="comment-form reply-form"><label for="reply_comment">Reply to {esc(target["author"])}'
                 '</label><textarea id="reply_comment" name="reply[comment]" rows="3" required></textarea>'
                 '<button type="submit">Post</button></form>')
    path = post_path(post["forum"], post["id"], post["title"])
    main = (_post_block(ctx, post, full=False) +
            f'<section class="comments" aria-label="Comments"><h2 class="comments__heading">'
            f'Comment by {esc(target["author"])}</h2><p><a href="{esc(path)}">Show all comments</a></p>'
            f'{reply}{_comment_tree(ctx, post, comments, root=cid)}</section>')
    return render_page(ctx, f"Comment on {post['title']}", main)


def _add_comment(conn: sqlite3.Connection, user_id: int, submission_id: int, parent: Optional[int],
                 text: str) -> int:
    cur = conn.execute("INSERT INTO forum_comments (submission_id, parent_id, user_id, body, created_at) "
                       "VALUES (?,?,?,?,?)", (submission_id, parent, user_id, text, site_now(conn)))
    conn.execute("INSERT INTO forum_comment_votes VALUES (?,?,1)", (user_id, cur.lastrowid))
    return cur.lastrowid


@login_required
def vote(ctx: Ctx, id: int) -> Response:
    """POST `/sv/<id>` or `/cv/<cid>`: vote on a submission or comment (`choice` 1, -1 or 0)."""
    kind = "submission" if ctx.request.url.path.startswith("/sv/") else "comment"
    target = id
    table, column = (("forum_submission_votes", "submission_id") if kind == "submission"
                     else ("forum_comment_votes", "comment_id"))
    source = "forum_submissions" if kind == "submission" else "forum_comments"
    if ctx.conn.execute(f"SELECT 1 FROM {source} WHERE id = ?", (target,)).fetchone() is None:
        return not_found(ctx, f"There is no {kind} {target}.")
    try:
        choice = int(str(ctx.form.get("choice", "")))
    except ValueError:
        choice = 99
    if choice not in (-1, 0, 1):
        return render_page(ctx, "Bad vote", "<h1>Bad vote</h1><p>choice must be 1, -1 or 0.</p>", status_code=400)
    ctx.conn.execute(f"DELETE FROM {table} WHERE user_id = ? AND {column} = ?", (ctx.account["id"], target))
    if choice:
        ctx.conn.execute(f"INSERT INTO {table} (user_id, {column}, choice) VALUES (?,?,?)",
                         (ctx.account["id"], target, choice))
    fallback = "/"
    if kind == "submission":
        post = submission_row(ctx.conn, target)
        fallback = post_path(post["forum"], post["id"], post["title"])
    return redirect(safe_next(str(ctx.form.get("next", "")), fallback))


def _submission_form(ctx: Ctx, action: str, heading: str, button: str, values: dict[str, str],
                     errors: list[str], forum_choice: Optional[str], show_forum: bool = True) -> str:
    err = "".join(f"<li>{esc(e)}</li>" for e in errors)
    err = f'<ul class="errors" role="alert">{err}</ul>' if err else ""
    forum_field = ""
    if show_forum:
        names = [r["name"] for r in ctx.conn.execute("SELECT name FROM forum_forums ORDER BY name COLLATE NOCASE")]
        options = '<option value="">Choose a forum</option>' + "".join(
            f'<option value="{esc(n)}"{" selected" if forum_choice and n.lower() == forum_choice.lower() else ""}>'
            f"{esc(n)}</option>" for n in names)
        forum_field = (f'<label for="submission_forum">Forum</label>'
                       f'<select id="submission_forum" name="submission[forum]">{options}</select>')
    return (f"<h1>{esc(heading)}</h1>{err}<form action=\"{esc(action)}\" method=\"post\" class=\"submission-form\">"
            '<label for="submission_title">Title</label><input type="text" id="submission_title" '
            f'name="submission[title]" maxlength="300" required value="{esc(values.get("title", ""))}">'
            '<label for="submission_url">URL</label><input type="url" id="submission_url" name="submission[url]" '
            f'value="{esc(values.get("url", ""))}">'
            '<label for="submission_body">Body</label><textarea id="submission_body" name="submission[body]" '
            f'rows="6">{esc(values.get("body", ""))}</textarea>{forum_field}'
            f'<p><button type="submit">{esc(button)}</button></p></form>')


def _read_submission(form: Any) -> dict[str, str]:
    return {k: str(form.get(f"submission[{k}]", "")).strip() for k in ("title", "url", "body", "forum")}


def _check_submission(values: dict[str, str]) -> list[str]:
    errors = []
    if not values["title"]:
        errors.append("The title must not be empty.")
    elif len(values["title"]) > 300:
        errors.append("The title must be at most 300 characters.")
    if values["url"] and not re.match(r"^https?://[^\s/]+", values["url"]):
        errors.append("The URL must start with http:// or https://.")
    return errors


@login_required
def submit(ctx: Ctx, forum: Optional[str] = None) -> Response:
    """GET or POST `/submit[/<forum>]`: the submission form, and creating the submission."""
    preset = forum
    action = f"/submit/{quote(preset)}" if preset else "/submit"
    if preset and forum_row(ctx.conn, preset) is None:
        return not_found(ctx, f"The forum {preset} does not exist.")
    if not ctx.posted:
        return render_page(ctx, "Create submission",
                           _submission_form(ctx, action, "Create submission", "Create submission", {}, [], preset))
    values = _read_submission(ctx.form)
    forum = forum_row(ctx.conn, values["forum"] or preset or "")
    errors = _check_submission(values)
    if forum is None:
        errors.append("Choose a forum that exists.")
    if errors:
        page = _submission_form(ctx, action, "Create submission", "Create submission", values, errors,
                                values["forum"] or preset)
        return render_page(ctx, "Create submission", page, status_code=400)
    cur = ctx.conn.execute(
        "INSERT INTO forum_submissions (forum_id, user_id, title, url, body, created_at) VALUES (?,?,?,?,?,?)",
        (forum["id"], ctx.account["id"], values["title"], values["url"], values["body"], site_now(ctx.conn)))
    ctx.conn.execute("INSERT INTO forum_submission_votes VALUES (?,?,1)", (ctx.account["id"], cur.lastrowid))
    return redirect(post_path(forum["name"], cur.lastrowid, values["title"]))


@login_required
def edit_submission(ctx: Ctx, forum: str, id: int) -> Response:
    """GET or POST `/f/<forum>/<id>/-/edit`: edit one's own submission."""
    post, refused = _own_post(ctx, forum, id, "edit")
    if refused:
        return refused
    action = f"/f/{quote(post['forum'])}/{post['id']}/-/edit"
    if not ctx.posted:
        values = {"title": post["title"], "url": post["url"], "body": post["body"]}
        form_html = _submission_form(ctx, action, "Edit submission", "Save", values, [], None, show_forum=False)
        return render_page(ctx, "Edit submission", form_html)
    values = _read_submission(ctx.form)
    errors = _check_submission(values)
    if errors:
        return render_page(ctx, "Edit submission",
                           _submission_form(ctx, action, "Edit submission", "Save", values, errors, None,
                                            show_forum=False), status_code=400)
    ctx.conn.execute("UPDATE forum_submissions SET title = ?, url = ?, body = ?, edited_at = ? WHERE id = ?",
                     (values["title"], values["url"], values["body"], site_now(ctx.conn), post["id"]))
    return redirect(post_path(post["forum"], post["id"], values["title"]))


@login_required
def delete_submission(ctx: Ctx, forum: str, id: int) -> Response:
    """POST `/f/<forum>/<id>/-/delete`: delete one's own submission."""
    post, refused = _own_post(ctx, forum, id, "delete")
    if refused:
        return refused
    ctx.conn.execute("DELETE FROM forum_submissions WHERE id = ?", (post["id"],))
    return redirect(f"/f/{quote(post['forum'])}")
