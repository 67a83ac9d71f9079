"""The embedded forum (`agentenv_webarena.sites.forum`) through Starlette's TestClient.

Pages render, login sets `forum_session`, submit/comment/reply/vote/edit/bio/subscribe change the
instance's data, instances are isolated by `X-Webarena-Instance`, and `/__control/reset` restores
the seed. Runs on the forum's own tables (plus the control routes of `sites.apps`), so it does not
depend on the other sites.
"""
from __future__ import annotations

import re
import sqlite3

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites import forum
from agentenv_webarena.sites.apps import _control_routes, build_database
from agentenv_webarena.sites.common import esc
from agentenv_webarena.sites.forum import entities
from agentenv_webarena.sites.store import INSTANCE_HEADER, InstanceStore

USER, PASSWORD = "MarvelsGrantMan136", "test1234"


@pytest.fixture(scope="module")
def app(store):
    return Starlette(routes=[*_control_routes(store), Mount("/", app=forum.create_app(store))])


def _client(app, instance: str) -> TestClient:
    client = TestClient(app, headers={INSTANCE_HEADER: instance})
    client.post("/__control/reset", params={"instance": instance})
    return client


def _login(client: TestClient) -> None:
    r = client.post("/login_check", data={"_username": USER, "_password": PASSWORD}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    assert r.cookies.get(forum.COOKIE)


@pytest.fixture
def client(app, request):
    c = _client(app, "t-" + re.sub(r"[^A-Za-z0-9]", "", request.node.name)[:40])
    _login(c)
    return c


def _a_post(store: InstanceStore, *, author: str | None = None, exclude_author: str | None = None) -> sqlite3.Row:
    rows = forum.submission_list(store.pristine(), sort="new", author=author)
    return next(r for r in rows if exclude_author is None or r["author"] != exclude_author)


def _vote_class(html: str, submission_id: int) -> str:
    m = re.search(rf'<form action="/sv/{submission_id}" method="post" class="([^"]*)"', html)
    assert m, f"no vote form for submission {submission_id}"
    return m.group(1)


def _score(html: str, submission_id: int) -> int:
    m = re.search(rf'action="/sv/{submission_id}".*?class="vote__net-score">(-?\d+) point', html, re.S)
    return int(m.group(1))


def test_seed_is_deterministic_and_sized():
    a, b = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
    a.row_factory = b.row_factory = sqlite3.Row  # as the instance store opens them
    build_database(a)
    build_database(b)
    dump_a, dump_b = list(a.iterdump()), list(b.iterdump())
    assert dump_a == dump_b
    count = lambda table: a.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: E731
    # the base seed, then WebArena's named forums, users and posts (`forum.entities`)
    assert 10 <= count("forum_forums") - len(entities.ENTITY_FORUMS) <= 15
    assert count("forum_users") == 30 + len(entities.ENTITY_USERS)
    assert 200 <= count("forum_submissions") - a.execute(
        "SELECT COUNT(*) FROM forum_submissions s JOIN forum_forums f ON f.id = s.forum_id WHERE f.name IN (%s)"
        % ",".join("?" * len(entities.ENTITY_FORUMS)), [f.name for f in entities.ENTITY_FORUMS]).fetchone()[0] <= 400
    assert count("forum_comments") > 300
    assert a.execute("SELECT 1 FROM forum_users WHERE username = ? AND password = ?", (USER, PASSWORD)).fetchone()
    titles = [r[0].lower() for r in a.execute("SELECT title FROM forum_submissions")]
    assert len(titles) == len(set(titles)), "titles must be unique (tasks name posts by title)"


@pytest.mark.parametrize("path", ["/", "/new", "/top", "/most_commented", "/forums", "/f/books", "/f/books/new",
                                  "/search?q=dune", "/user/MarvelsGrantMan136", "/user/bookworm_88/comments",
                                  "/user/bookworm_88/submissions", "/login", "/submit", "/submit/books",
                                  "/create_forum", "/user/MarvelsGrantMan136/edit_biography"])
def test_pages_render(client, path):
    r = client.get(path)
    assert r.status_code == 200, r.text[:500]
    assert "<title>" in r.text and 'role="search"' in r.text


def test_unknown_pages_are_404(client):
    for path in ("/f/nosuchforum", "/user/nobody_here", "/f/books/99999/x", "/nosuchsort", "/f/books/nosort"):
        assert client.get(path).status_code == 404, path


def test_post_page_by_canonical_and_short_urls(client, store):
    post = _a_post(store)
    path = forum.post_path(post["forum"], post["id"], post["title"])
    for url in (path, f"/f/{post['forum']}/{post['id']}/", f"/f/{post['forum']}/{post['id']}"):
        r = client.get(url)
        assert r.status_code == 200
        assert 'class="submission__title"' in r.text and esc(post["title"]) in r.text
    comments = forum.comment_order(store.pristine(), post["id"])
    assert f'{len(comments)} comment' in client.get(path).text


def test_login_refused_redirects_to_login(app):
    c = _client(app, "t-refused")
    r = c.post("/login_check", data={"_username": USER, "_password": "wrong"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login"
    assert forum.COOKIE not in r.cookies


def test_anonymous_post_actions_redirect_to_login(app, store):
    c = _client(app, "t-anon")
    post = _a_post(store)
    for path in (f"/sv/{post['id']}", "/submit", f"/f/{post['forum']}/{post['id']}/-/comment", "/f/books/subscribe"):
        r = c.post(path, data={"choice": "1"}, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/login", path


def test_submit_creates_post_at_canonical_url(client):
    r = client.post("/submit/books", data={"submission[title]": "My shiny new post", "submission[body]": "Hello there",
                                           "submission[forum]": "books", "submission[url]": ""},
                    follow_redirects=False)
    assert r.status_code == 303
    location = r.headers["location"]
    assert re.fullmatch(r"/f/books/\d+/my-shiny-new-post", location)
    page = client.get(location).text
    assert '<h1 class="submission__title"><a class="submission__link"' in page
    assert "My shiny new post" in page and '<div class="submission__body"><p>Hello there</p></div>' in page
    new_id = int(location.split("/")[3])
    assert _vote_class(page, new_id) == "vote vote--user-upvoted"  # the author's own upvote
    assert "My shiny new post" in client.get("/f/books/new").text


def test_submit_validation(client):
    r = client.post("/submit", data={"submission[title]": "", "submission[forum]": "books"})
    assert r.status_code == 400 and "title must not be empty" in r.text
    r = client.post("/submit", data={"submission[title]": "x", "submission[forum]": "nosuchforum"})
    assert r.status_code == 400 and "forum that exists" in r.text


def test_comment_and_reply(client, store):
    post = _a_post(store)
    path = forum.post_path(post["forum"], post["id"], post["title"])
    r = client.post(f"/f/{post['forum']}/{post['id']}/-/comment", data={"comment[comment]": "A fresh comment"},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith(path + "#comment-")
    cid = int(r.headers["location"].rsplit("-", 1)[1])
    page = client.get(path).text
    assert '<div class="comment__body"><p>A fresh comment</p></div>' in page
    r = client.post(f"/f/{post['forum']}/{post['id']}/-/comment/{cid}", data={"reply[comment]": "A reply to it"},
                    follow_redirects=False)
    assert r.status_code == 303
    thread = client.get(f"/f/{post['forum']}/{post['id']}/-/comment/{cid}").text
    replies = thread.split(f'id="comment-{cid}"', 1)[1].split('class="comment__replies"', 1)[1]
    assert "A reply to it" in replies
    assert "reply_comment" in thread  # the reply form


def test_vote_changes_score_and_class(client, store):
    post = _a_post(store, exclude_author=USER)
    path = forum.post_path(post["forum"], post["id"], post["title"])
    before = client.get(path).text
    base, mine = _score(before, post["id"]), _vote_class(before, post["id"])
    if mine != "vote":  # retract a seeded vote first
        client.post(f"/sv/{post['id']}", data={"choice": "0", "next": path})
        base = _score(client.get(path).text, post["id"])
    r = client.post(f"/sv/{post['id']}", data={"choice": "1", "next": path}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == path
    page = client.get(path).text
    assert _vote_class(page, post["id"]) == "vote vote--user-upvoted" and _score(page, post["id"]) == base + 1
    assert "Retract upvote" in page
    client.post(f"/sv/{post['id']}", data={"choice": "-1", "next": path})
    page = client.get(path).text
    assert _vote_class(page, post["id"]) == "vote vote--user-downvoted" and _score(page, post["id"]) == base - 1
    client.post(f"/sv/{post['id']}", data={"choice": "0", "next": path})
    page = client.get(path).text
    assert _vote_class(page, post["id"]) == "vote" and _score(page, post["id"]) == base
    assert client.post(f"/sv/{post['id']}", data={"choice": "5"}).status_code == 400


def test_comment_vote(client, store):
    post = next(p for p in forum.submission_list(store.pristine(), sort="top") if p["comment_count"])
    comment = forum.comment_order(store.pristine(), post["id"])[0]
    path = forum.post_path(post["forum"], post["id"], post["title"])
    client.post(f"/cv/{comment['id']}", data={"choice": "1", "next": path})
    page = client.get(path).text
    assert re.search(rf'action="/cv/{comment["id"]}" method="post" class="vote vote--user-upvoted"', page)


def test_edit_and_delete_own_post(client, store):
    post = _a_post(store, author=USER)
    edit = f"/f/{post['forum']}/{post['id']}/-/edit"
    assert esc(post["title"]) in client.get(edit).text
    r = client.post(edit, data={"submission[title]": "Edited title here", "submission[body]": "New body",
                                "submission[url]": ""}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/f/{post['forum']}/{post['id']}/edited-title-here"
    page = client.get(r.headers["location"]).text
    assert "Edited title here" in page and "<p>New body</p>" in page and 'class="submission__edited"' in page
    r = client.post(f"/f/{post['forum']}/{post['id']}/-/delete", follow_redirects=False)
    assert r.status_code == 303
    assert client.get(f"/f/{post['forum']}/{post['id']}/").status_code == 404


def test_cannot_edit_someone_elses_post(client, store):
    post = _a_post(store, exclude_author=USER)
    assert client.get(f"/f/{post['forum']}/{post['id']}/-/edit").status_code == 403
    assert client.post(f"/f/{post['forum']}/{post['id']}/-/delete").status_code == 403


def test_edit_biography(client):
    r = client.post(f"/user/{USER}/edit_biography", data={"user_biography[biography]": "I read a lot"},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/user/{USER}"
    assert ('<div class="user-bio"><div class="user-bio__biography"><p>I read a lot</p></div></div>'
            in client.get(f"/user/{USER}").text)
    assert client.get("/user/bookworm_88/edit_biography").status_code == 403
    client.post(f"/user/{USER}/edit_biography", data={"user_biography[biography]": ""})
    page = client.get(f"/user/{USER}").text
    assert '<div class="user-bio"></div>' in page and "user-bio__biography" not in page


def test_subscribe_and_unsubscribe(client):
    sidebar = lambda: client.get("/").text.split('<aside id="sidebar">', 1)[1].split("</section>", 1)[0]  # noqa: E731
    assert "/f/science" not in sidebar()
    client.post("/f/science/subscribe")
    assert "/f/science" in sidebar()
    assert (
        '<form action="/f/science/unsubscribe" method="post" class="subscribe-form">'
        '<button type="submit">Unsubscribe'
    ) in client.get("/f/science").text
    client.post("/f/science/unsubscribe")
    assert "/f/science" not in sidebar()


def test_create_forum(client):
    r = client.post("/create_forum", data={"forum[name]": "origami", "forum[title]": "Origami",
                                           "forum[description]": "Folding paper", "forum[sidebar]": ""},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/f/origami"
    page = client.get("/f/origami").text
    assert '<h1 class="forum-title">Origami</h1>' in page and "Folding paper" in page
    assert client.post("/create_forum", data={"forum[name]": "books", "forum[title]": "x"}).status_code == 400
    # the creator moderates the new forum: its edit page answers with the saved fields
    edit = client.get("/f/origami/edit")
    assert edit.status_code == 200 and '<textarea id="forum_description" name="forum[description]" rows="3">' \
        'Folding paper</textarea>' in edit.text


def _forum_fields(**changes: str) -> dict[str, str]:
    fields = {"forum[name]": "books", "forum[title]": "Books", "forum[description]": "About books",
              "forum[sidebar]": "Be kind"}
    return {**fields, **{f"forum[{k}]": v for k, v in changes.items()}}


def test_a_moderator_edits_the_forum(client):
    page = client.get("/f/books").text
    assert '<a href="/f/books/edit" class="menu-item">Edit forum</a>' in page
    form = client.get("/f/Books/edit").text
    for field in ('id="forum_name"', 'id="forum_title"', 'textarea id="forum_description"',
                  'textarea id="forum_sidebar"', ">Save</button>"):
        assert field in form
    r = client.post("/f/books/edit", data=_forum_fields(description="Readers welcome", sidebar="New\n\nClassic"),
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/f/books"
    page = client.get("/f/books").text
    assert '<p class="forum-description">Readers welcome</p>' in page and "<p>New</p><p>Classic</p>" in page
    assert ">Readers welcome</textarea>" in client.get("/f/books/edit").text
    r = client.post("/f/books/edit", data=_forum_fields(name="bookclub"), follow_redirects=False)
    assert r.headers["location"] == "/f/bookclub" and client.get("/f/books").status_code == 404


@pytest.mark.parametrize("changes, message", [
    ({"name": "no spaces here"}, "The name must be 3 to 25 letters"),
    ({"name": "gaming"}, "A forum with that name already exists."),
    ({"title": ""}, "The title must not be empty."),
])
def test_forum_edits_are_validated(client, changes, message):
    r = client.post("/f/books/edit", data=_forum_fields(**changes))
    assert r.status_code == 400 and esc(message) in r.text
    assert '<p class="forum-description">A forum for readers' in client.get("/f/books").text


def test_only_moderators_edit_a_forum(app, client):
    assert client.get("/f/gaming/edit").status_code == 403
    assert client.post("/f/gaming/edit", data=_forum_fields(name="gaming")).status_code == 403
    assert "Edit forum" not in client.get("/f/gaming").text
    assert client.get("/f/nosuchforum/edit").status_code == 404
    anonymous = _client(app, "t-anon-edit")
    r = anonymous.get("/f/books/edit", follow_redirects=False)
    assert r.status_code in (302, 303) and r.headers["location"].endswith("/login")
    assert "Edit forum" not in anonymous.get("/f/books").text


def test_search_and_pagination(client, store):
    rows = forum.submission_list(store.pristine(), sort="hot")
    assert len(rows) > forum.PAGE_SIZE
    first = client.get("/").text
    assert first.count('class="submission"') == forum.PAGE_SIZE and "Next page" in first
    second = client.get("/?page=2").text
    assert esc(rows[forum.PAGE_SIZE]["title"]) in second and "Previous page" in second
    hits = client.get("/search", params={"q": "Dune"}).text
    assert "Dune" in hits and "found" in hits


def test_instances_are_isolated_and_reset_restores(app):
    a, b = _client(app, "t-iso-a"), _client(app, "t-iso-b")
    _login(a)
    _login(b)
    a.post(f"/user/{USER}/edit_biography", data={"user_biography[biography]": "only in a"})
    assert "only in a" in a.get(f"/user/{USER}").text
    assert "only in a" not in b.get(f"/user/{USER}").text
    r = a.post("/__control/reset", params={"instance": "t-iso-a"})
    assert r.status_code == 200 and r.json()["instance"] == "t-iso-a"
    assert "only in a" not in a.get(f"/user/{USER}").text
    # the session cookie lived in the reset instance, so it is gone too
    assert "Log in" in a.get("/").text


def test_logout(client):
    assert 'button type="submit">Log out' in client.get("/").text
    r = client.post("/logout", follow_redirects=False)
    assert r.status_code == 303
    assert ">Log in<" in client.get("/").text


def test_site_clock_puts_new_posts_first(client):
    r = client.post("/submit", data={"submission[title]": "Newest of all", "submission[forum]": "gaming"},
                    follow_redirects=False)
    new_id = int(r.headers["location"].split("/")[3])
    first = re.search(r'id="submission-(\d+)"', client.get("/new").text).group(1)
    assert int(first) == new_id
