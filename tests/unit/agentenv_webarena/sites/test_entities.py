"""WebArena's named entities on the code host and the forum (`sites.gitlab.entities`, `sites.forum.entities`).

They are seeded deterministically after the base rows, answer at WebArena's URLs, are large enough that
their lists paginate, stay out of the primary users' way, and the task templates never draw from them.
"""
from __future__ import annotations

import re
import sqlite3

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites import forum, gitlab
from agentenv_webarena.sites.apps import _control_routes, build_database
from agentenv_webarena.sites.forum import entities as forum_entities
from agentenv_webarena.sites.forum.data import PRIMARY_USER as FORUM_USER
from agentenv_webarena.sites.forum.entities import title_from_slug
from agentenv_webarena.sites.gitlab import data as gitlab_data
from agentenv_webarena.sites.gitlab import entities as gitlab_entities
from agentenv_webarena.sites.gitlab.layout import PER_PAGE
from agentenv_webarena.sites.store import INSTANCE_HEADER
from agentenv_webarena.tasks.templates import common


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    build_database(conn)
    return conn


@pytest.fixture(scope="module")
def db() -> sqlite3.Connection:
    return _db()


def _client(store, app, instance: str) -> TestClient:
    client = TestClient(app, headers={INSTANCE_HEADER: instance})
    client.post("/__control/reset", params={"instance": instance})
    return client


@pytest.fixture(scope="module")
def gl(store):
    return _client(store, Starlette(routes=[*_control_routes(store), Mount("/", app=gitlab.create_app(store))]),
                   "entities-gitlab")


@pytest.fixture(scope="module")
def fm(store):
    return _client(store, Starlette(routes=[*_control_routes(store), Mount("/", app=forum.create_app(store))]),
                   "entities-forum")


def _entity_rows(conn: sqlite3.Connection) -> list[tuple]:
    out = [tuple(r) for r in conn.execute("SELECT * FROM gitlab_users WHERE id > ? ORDER BY id",
                                          (len(gitlab_data.USERS),))]
    out += [tuple(r) for r in conn.execute("SELECT * FROM gitlab_issues ORDER BY id")]
    out += [tuple(r) for r in conn.execute("SELECT * FROM forum_submissions ORDER BY id")]
    return out + [tuple(r) for r in conn.execute("SELECT * FROM forum_comments ORDER BY id")]


def test_entities_are_deterministic(db):
    assert _entity_rows(db) == _entity_rows(_db())


def test_gitlab_entities_counts_and_no_primary_user(db):
    names = {(p.project.namespace, p.project.path) for p in gitlab_entities.SCALED_PROJECTS}
    projects = db.execute("SELECT id, namespace, path, default_branch FROM gitlab_projects").fetchall()
    found = {(r["namespace"], r["path"]): r["id"] for r in projects}
    branch = {r["id"]: r["default_branch"] for r in projects}
    assert names <= set(found)
    for spec in gitlab_entities.SCALED_PROJECTS:
        pid = found[(spec.project.namespace, spec.project.path)]
        counts = [db.execute(f"SELECT COUNT(*) FROM {table} WHERE project_id = ?{extra}", (pid, *args)).fetchone()[0]
                  for table, extra, args in (("gitlab_issues", "", ()), ("gitlab_merge_requests", "", ()),
                                             ("gitlab_commits", " AND branch = ?", (branch[pid],)))]
        assert counts == [spec.issues, spec.mrs, spec.commits]
    ids = tuple(found[n] for n in names)
    marks = ",".join("?" * len(ids))
    # byteblaze owns his own WebArena repositories and nothing else here; he wrote no issue, comment or review
    owned = {r[0] for r in db.execute(f"SELECT project_id FROM gitlab_project_members WHERE user_id = ? AND "
                                      f"project_id IN ({marks})", (common.ME, *ids))}
    assert owned == {found[n] for n in names if n[0] == gitlab_data.PRIMARY_USER} and len(owned) == 4
    for sql in (f"SELECT author_id FROM gitlab_notes WHERE noteable_id IN (SELECT id FROM gitlab_issues WHERE "
                f"project_id IN ({marks})) AND noteable_type = 'Issue'",
                f"SELECT author_id FROM gitlab_issues WHERE project_id IN ({marks})",
                f"SELECT a.user_id FROM gitlab_issue_assignees a JOIN gitlab_issues i ON i.id = a.issue_id "
                f"WHERE i.project_id IN ({marks})",
                f"SELECT reviewer_id FROM gitlab_merge_requests WHERE project_id IN ({marks})",
                f"SELECT user_id FROM gitlab_stars WHERE project_id IN ({marks})",
                f"SELECT user_id FROM gitlab_todos WHERE project_id IN ({marks})"):
        assert common.ME not in {r[0] for r in db.execute(sql, ids)}, sql
    # the site clock (newest timestamp) is where the base data put it
    assert db.execute(f"SELECT MAX(created_at) FROM gitlab_issues WHERE project_id IN ({marks})",
                      ids).fetchone()[0] < "2023-06-30"


def test_gitlab_issue_list_paginates(gl, db):
    opened = db.execute("SELECT COUNT(*) FROM gitlab_issues i JOIN gitlab_projects p ON p.id = i.project_id "
                        "WHERE p.namespace = 'root' AND p.path = 'metaseq' AND i.state = 'opened'").fetchone()[0]
    assert opened > PER_PAGE
    seen, page = [], 1
    while True:
        html = gl.get("/root/metaseq/-/issues", params={"page": page}).text
        titles = re.findall(r'href="/root/metaseq/-/issues/(\d+)" class="issue-title-text"', html)
        assert 0 < len(titles) <= PER_PAGE
        seen += titles
        if 'rel="next"' not in html:
            break
        page += 1
    assert page == -(-opened // PER_PAGE) and len(seen) == len(set(seen)) == opened
    # a small project has no pager
    assert "gl-pagination" not in gl.get("/byteblaze/timeit/-/issues").text


@pytest.mark.parametrize("path,label", [("/keycloak/keycloak", "flaky-test"),
                                        ("/OpenAPITools/openapi-generator", "OpenAPI Generator CLI"),
                                        ("/umano/AndroidSlidingUpPanel", "BUG"), ("/root/metaseq", "question")])
def test_gitlab_webarena_label_filters(gl, path, label):
    r = gl.get(path + "/-/issues", params={"label_name[]": label, "state": "all"})
    assert r.status_code == 200
    rows = re.findall(r'<li class="issue">.*?</li>', r.text)
    assert rows and all(f'<span class="gl-label">{label}</span>' in row.replace("&#x27;", "'") for row in rows)


@pytest.mark.parametrize("path", ["/root/metaseq", "/eriklindernoren/PyTorch-GAN/-/graphs/main",
                                  "/amwhalen/archive-my-tweets/-/tree/php52", "/groups/keycloak/-/group_members",
                                  "/vinta/awesome-python/-/raw/main/README.md", "/sayakpaul",
                                  "/CellularPrivacy/Android-IMSI-Catcher-Detector/-/commits/gh-page"])
def test_gitlab_webarena_urls_answer(gl, path):
    assert gl.get(path).status_code == 200


def test_forum_named_posts_and_comments_answer(fm, db):
    for name, pid, slug in forum_entities.NAMED_POSTS:
        r = fm.get(f"/f/{name}/{pid}/{slug}")
        assert r.status_code == 200 and title_from_slug(slug) in r.text.replace("&#x27;", "'")
    for cid, pid in forum_entities.NAMED_COMMENTS:
        assert db.execute("SELECT submission_id FROM forum_comments WHERE id = ?", (cid,)).fetchone()[0] == pid


def test_forum_entities_paginate_and_stay_behind_the_base_posts(fm, db):
    big = [f for f in forum_entities.ENTITY_FORUMS if f.posts > forum.PAGE_SIZE]
    assert len(big) >= 10
    for f in big:
        n = db.execute("SELECT COUNT(*) FROM forum_submissions s JOIN forum_forums f ON f.id = s.forum_id "
                       "WHERE f.name = ?", (f.name,)).fetchone()[0]
        assert n >= f.posts
        assert "Next page" in fm.get(f"/f/{f.name}").text
        assert fm.get(f"/f/{f.name}", params={"page": 2}).text.count('class="submission') > 0
    entity = {f.name.lower() for f in forum_entities.ENTITY_FORUMS}
    for sort in ("hot", "new"):  # the front page lists every base post before any new one
        flags = [r["forum"].lower() in entity for r in forum.submission_list(db, sort=sort)]
        assert flags == sorted(flags)
    primary = db.execute("SELECT id FROM forum_users WHERE username = ?", (FORUM_USER,)).fetchone()[0]
    marks = ",".join("?" * len(entity))
    in_entity = f"(SELECT s.id FROM forum_submissions s JOIN forum_forums f ON f.id = s.forum_id " \
                f"WHERE lower(f.name) IN ({marks}))"
    for sql in (f"SELECT user_id FROM forum_submission_votes WHERE submission_id IN {in_entity}",
                f"SELECT user_id FROM forum_comments WHERE submission_id IN {in_entity}"):
        assert primary not in {r[0] for r in db.execute(sql, sorted(entity))}


def test_templates_draw_from_the_base_rows_only(db):
    projects = {(p["namespace"], p["path"]) for p in common.visible_projects(db)}
    assert not projects & {(s.project.namespace, s.project.path) for s in gitlab_entities.SCALED_PROJECTS}
    assert {f["name"] for f in common.forums_by_name(db)}.isdisjoint(f.name for f in forum_entities.ENTITY_FORUMS)
    posts = common.post_list(db, sort="new")
    assert posts and not {p["id"] for p in posts} & {pid for _, pid, _ in forum_entities.NAMED_POSTS}
    assert common.post_list(db, sort="new", limit=5, offset=2) == posts[2:7]
