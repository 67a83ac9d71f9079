"""The forum's request context and shared markup: header, page frame, votes, submission listings, sidebars.

Owns `Ctx` (one request: its instance DB and the signed-in user) and every piece of markup more
than one page uses (Postmill's class names, for WebArena-style `program_html` locators). The pages
live in `listing`, `threads` and `account`.
"""
from __future__ import annotations

import re
import sqlite3
from typing import Any, Iterable, Optional
from urllib.parse import quote, urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse

from agentenv_webarena.sites.common import RequestContext, SessionTable, esc, html_page, query_url
from agentenv_webarena.sites.forum.model import COOKIE, PAGE_SIZE, SORT_LABELS, SORTS, is_moderator, parse_ts, post_path

__all__ = ["Ctx", "render_page", "not_found", "paragraphs", "when", "vote_form", "my_votes", "submission_info",
           "submission_listing", "pagination", "page_number", "sort_nav", "subscriptions_section", "forum_sidebar",
           "safe_next"]



class Ctx(RequestContext):
    """One forum request: its instance DB, the posted form and the signed-in user (`account`, or None)."""

    SESSIONS = SessionTable(cookie=COOKIE, table="forum_sessions", accounts="forum_users", account_column="user_id")
    LOGIN_URL = "/login"

    @property
    def here(self) -> str:
        path = self.request.url.path
        return path + ("?" + self.request.url.query if self.request.url.query else "")


def _header(ctx: Ctx) -> str:
    if ctx.account is not None:
        name = esc(ctx.account["username"])
        account = (f'<a href="/user/{quote(ctx.account["username"])}" class="site-nav__user">{name}</a>'
                   '<form action="/logout" method="post"><button type="submit">Log out</button></form>')
    else:
        account = '<a href="/login">Log in</a>'
    return ('<header class="site-header"><nav class="site-nav" aria-label="Site">'
            '<a href="/" class="site-nav__home"><strong>Postmill</strong></a>'
            '<a href="/forums">Forums</a><a href="/submit">Submit</a>'
            '<form role="search" action="/search" method="get" class="search-form">'
            '<input type="search" name="q" aria-label="Search" placeholder="Search"></form>'
            f"{account}</nav></header>")


def render_page(ctx: Ctx, title: str, main: str, sidebar: str = "", status_code: int = 200) -> HTMLResponse:
    """A forum page: header, `main` and an optional sidebar."""
    aside = f'<aside id="sidebar">{sidebar}</aside>' if sidebar else ""
    body = f'{_header(ctx)}<div class="layout"><main id="main">{main}</main>{aside}</div>'
    return html_page(title, body, status_code=status_code, site="forum")


def not_found(ctx: Ctx, what: str) -> HTMLResponse:
    """The forum's 404 page saying what is missing."""
    return render_page(ctx, "Page not found", f"<h1>Page not found</h1><p>{esc(what)}</p>", status_code=404)


def paragraphs(text: str) -> str:
    """Text with blank-line-separated paragraphs as escaped `<p>` elements."""
    parts = [p.strip() for p in re.split(r"\n\s*\n", text or "") if p.strip()]
    return "".join(f"<p>{esc(p)}</p>" for p in parts)


def when(ts: str) -> str:
    """A stored timestamp as a `<time>` element."""
    t = parse_ts(ts)
    return f'<time datetime="{t.isoformat()}+00:00">{t.strftime("%Y-%m-%d %H:%M")}</time>'


def vote_form(kind: str, target_id: int, score: int, mine: int, back: str) -> str:
    """Postmill's vote form for a submission or comment, marked with the user's own vote."""
    state = {1: " vote--user-upvoted", -1: " vote--user-downvoted"}.get(mine, "")
    up_label, up_value = ("Retract upvote", 0) if mine == 1 else ("Upvote", 1)
    down_label, down_value = ("Retract downvote", 0) if mine == -1 else ("Downvote", -1)
    action = f"/{'sv' if kind == 'submission' else 'cv'}/{target_id}"
    return (f'<form action="{action}" method="post" class="vote{state}">'
            f'<input type="hidden" name="next" value="{esc(back)}">'
            f'<button type="submit" class="vote__button vote__up" name="choice" value="{up_value}">{up_label}</button>'
            f'<span class="vote__net-score">{score} point{"" if abs(score) == 1 else "s"}</span>'
            f'<button type="submit" class="vote__button vote__down" name="choice" value="{down_value}">'
            f'{down_label}</button>'
            "</form>")


def my_votes(ctx: Ctx, table: str, column: str, ids: Iterable[int]) -> dict[int, int]:
    """The signed-in user's votes on `ids` in `table`: id -> 1 or -1."""
    ids = list(ids)
    if ctx.account is None or not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = ctx.conn.execute(f"SELECT {column}, choice FROM {table} WHERE user_id = ? AND {column} IN ({marks})",
                            (ctx.account["id"], *ids)).fetchall()
    return {r[0]: r[1] for r in rows}


def submission_info(row: Any) -> str:
    """The `Submitted by ... in f/...` line of a submission."""
    edited = ' <span class="submission__edited">(edited)</span>' if row["edited_at"] else ""
    return (f'<p class="submission__info">Submitted by <a class="submission__author" '
            f'href="/user/{quote(row["author"])}">{esc(row["author"])}</a> on {when(row["created_at"])} in '
            f'<a class="submission__forum" href="/f/{quote(row["forum"])}">f/{esc(row["forum"])}</a>{edited}</p>')


def submission_listing(ctx: Ctx, rows: list[dict]) -> str:
    """Submissions as Postmill's list of `article.submission` elements."""
    if not rows:
        return '<p class="empty">There are no submissions here.</p>'
    mine = my_votes(ctx, "forum_submission_votes", "submission_id", (r["id"] for r in rows))
    items = []
    for row in rows:
        path = post_path(row["forum"], row["id"], row["title"])
        url = ""
        if row["url"]:
            host = urlsplit(row["url"]).netloc
            url = f' <span class="submission__host">({esc(host)})</span>'
        n = row["comment_count"]
        items.append(
            f'<article class="submission" id="submission-{row["id"]}">'
            '<div class="submission__vote">'
            f'{vote_form("submission", row["id"], row["score"], mine.get(row["id"], 0), ctx.here)}</div>'
            f'<div class="submission__inner"><h2 class="submission__title"><a class="submission__link" '
            f'href="{esc(path)}">{esc(row["title"])}</a>{url}</h2>{submission_info(row)}'
            f'<nav class="submission__nav"><a href="{esc(path)}">{n} comment{"" if n == 1 else "s"}</a></nav>'
            "</div></article>")
    return '<div class="submission-list">' + "".join(items) + "</div>"


def pagination(ctx: Ctx, page: int, total: int) -> str:
    """Previous / next page links for a listing of `total` submissions."""
    links = []
    path = ctx.request.url.path
    params = {k: v for k, v in ctx.request.query_params.items() if k != "page"}
    if page > 1:
        previous = query_url(path, **params, page=page - 1 if page > 2 else None)
        links.append(f'<a href="{esc(previous)}">Previous page</a>')
    if page * PAGE_SIZE < total:
        links.append(f'<a href="{esc(query_url(path, **params, page=page + 1))}">Next page</a>')
    return f'<nav class="pagination" aria-label="Pages">{"".join(links)}</nav>' if links else ""


def page_number(request: Request) -> int:
    """The `?page=` number of the request (1 when missing or invalid)."""
    try:
        return max(1, int(request.query_params.get("page", "1")))
    except ValueError:
        return 1


def sort_nav(base: str, current: str) -> str:
    """The links to the sorts of a listing at `base`."""
    links = []
    for sort in SORTS:
        label = SORT_LABELS[sort]
        href = f"{base.rstrip('/')}/{sort}" if base != "/" else f"/{sort}"
        current_attr = ' aria-current="page"' if sort == current else ""
        links.append(f'<a href="{esc(href)}"{current_attr}>{label}</a>')
    return f'<nav class="sort-nav" aria-label="Sort">{"".join(links)}</nav>'


def subscriptions_section(ctx: Ctx) -> str:
    """The sidebar section listing the user's subscribed forums."""
    if ctx.account is None:
        return ('<section class="subscriptions"><h2>Subscribed forums</h2>'
                '<p><a href="/login">Log in</a> to subscribe to forums.</p></section>')
    rows = ctx.conn.execute(
        "SELECT f.name FROM forum_subscriptions s JOIN forum_forums f ON f.id = s.forum_id WHERE s.user_id = ? "
        "ORDER BY f.name COLLATE NOCASE", (ctx.account["id"],)).fetchall()
    items = "".join(f'<li><a href="/f/{quote(r["name"])}">{esc(r["name"])}</a></li>' for r in rows)
    inner = f"<ul>{items}</ul>" if rows else "<p>You are not subscribed to any forum.</p>"
    return f'<section class="subscriptions"><h2>Subscribed forums</h2>{inner}</section>'


def forum_sidebar(ctx: Ctx, forum: sqlite3.Row) -> str:
    """A forum's sidebar card (description, subscribe button, sidebar text), then for its moderators a toolbox
    linking to the forum's edit page."""
    subscribers = ctx.conn.execute("SELECT COUNT(*) FROM forum_subscriptions WHERE forum_id = ?",
                                   (forum["id"],)).fetchone()[0]
    subscribed = ctx.account is not None and ctx.conn.execute(
        "SELECT 1 FROM forum_subscriptions WHERE forum_id = ? AND user_id = ?",
        (forum["id"], ctx.account["id"])).fetchone() is not None
    action, label = ("unsubscribe", "Unsubscribe") if subscribed else ("subscribe", "Subscribe")
    name = quote(forum["name"])
    toolbox = ""
    if is_moderator(ctx.conn, forum["id"], ctx.account["id"] if ctx.account is not None else None):
        toolbox = (f'<section class="forum-toolbox"><h2>Toolbox</h2><ul>'
                   f'<li><a href="/f/{name}/edit" class="menu-item">Edit forum</a></li></ul></section>')
    return (f'<section class="forum-card"><h2><a href="/f/{name}">f/{esc(forum["name"])}</a></h2>'
            f'<p class="forum-description">{esc(forum["description"])}</p>'
            f'<form action="/f/{name}/{action}" method="post" class="subscribe-form">'
            f'<button type="submit">{label}</button></form>'
            f'<p class="forum-subscribers">{subscribers} subscriber{"" if subscribers == 1 else "s"}</p>'
            f'<p><a href="/submit/{name}">Submit a post</a></p>'
            f'<div class="forum-sidebar forum-sidebar-content">{paragraphs(forum["sidebar"])}</div>'
            f'<p class="forum-created">Created {when(forum["created_at"])}</p></section>' + toolbox)


def safe_next(value: Optional[str], fallback: str) -> str:
    """Only same-site paths are followed after a POST."""
    if value and value.startswith("/") and not value.startswith("//"):
        return value
    return fallback
