"""The embedded code host (`agentenv_webarena.sites.gitlab`) through Starlette's TestClient.

The seed is deterministic and small, `data` is consistent, sign-in sets `_gitlab_session`, bad form
input answers 422 with a message (never a 500), permissions answer 403, and the members table has
the markup WebArena's `gitlab_get_project_memeber_role` reads. Runs on the code host's own tables
plus the forum's (its templates share the forum's helpers) and the control routes.
"""
from __future__ import annotations

import importlib
import re
import sqlite3

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites import gitlab
from agentenv_webarena.sites.apps import _control_routes
from agentenv_webarena.sites.gitlab import data, entities
from agentenv_webarena.sites.gitlab.model import COOKIE
from agentenv_webarena.sites.store import INSTANCE_HEADER, InstanceStore

gitlab_seed = importlib.import_module("agentenv_webarena.sites.gitlab.seed")


def _build(conn: sqlite3.Connection) -> None:
    conn.executescript(gitlab.SCHEMA)
    gitlab.seed(conn)


@pytest.fixture(scope="module")
def gl_store() -> InstanceStore:
    return InstanceStore(_build)


@pytest.fixture(scope="module")
def app(gl_store):
    return Starlette(routes=[*_control_routes(gl_store), Mount("/", app=gitlab.create_app(gl_store))])


def _client(app, instance: str, login: bool = True) -> TestClient:
    client = TestClient(app, headers={INSTANCE_HEADER: instance})
    client.post("/__control/reset", params={"instance": instance})
    if login:
        r = client.post("/users/sign_in", data={"user[login]": "byteblaze", "user[password]": "hello1234"},
                        follow_redirects=False)
        assert r.status_code == 303 and r.cookies.get(COOKIE)
    return client


def _dump(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'gitlab_%'"
    tables = [r[0] for r in conn.execute(sql)]
    return {t: [tuple(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY rowid")] for t in tables}


def test_seed_is_deterministic_small_and_prefixed():
    first, second = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
    first.row_factory = second.row_factory = sqlite3.Row  # as InstanceStore's connections
    _build(first)
    _build(second)
    dumped = _dump(first)
    assert dumped == _dump(second)
    assert all(name.startswith("gitlab_") for name in dumped)
    counts = {t: len(rows) for t, rows in dumped.items()}
    # the base seed (40 users, 8 groups, 60 projects plus forks), then WebArena's named entities
    assert counts["gitlab_users"] == 40 + len(entities.ACCOUNTS)
    assert counts["gitlab_groups"] == 8 + len(entities.ENTITY_GROUPS)
    assert 60 <= counts["gitlab_projects"] - len(entities.SCALED_PROJECTS) <= 75
    assert counts["gitlab_issues"] > 200 and counts["gitlab_merge_requests"] > 50 and counts["gitlab_stars"] > 100
    pages = first.execute("PRAGMA page_count").fetchone()[0] * first.execute("PRAGMA page_size").fetchone()[0]
    assert pages < 4 * 1024 * 1024  # every env instance copies it at reset


def test_data_api_is_consistent():
    namespaces = {u.username for u in data.USERS} | {g.path for g in data.GROUPS}
    assert data.USERS[0].username == data.PRIMARY_USER
    assert all(p.namespace in namespaces for p in data.PROJECTS)
    assert len({(p.namespace, p.path) for p in data.PROJECTS}) == len(data.PROJECTS)
    assert all(p.license == "" or p.license in data.LICENSES for p in data.PROJECTS)
    assert sum(p.namespace == data.PRIMARY_USER for p in data.PROJECTS) >= 5


def test_sign_in_refused_goes_back_to_the_form(app):
    client = _client(app, "gl-signin", login=False)
    r = client.post("/users/sign_in", data={"user[login]": "byteblaze", "user[password]": "nope"},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/users/sign_in")
    assert client.get("/-/profile", follow_redirects=False).headers["location"] == "/users/sign_in"


@pytest.mark.parametrize(("path", "form", "message"), [
    ("/projects/new", {"project[name]": ""}, "be blank"),
    ("/projects/new", {"project[name]": "x", "project[visibility]": "secret"}, "secret"),
    ("/projects/new", {"project[name]": "x", "project[path]": "bad path!"}, "invalid"),
    ("/projects/new", {"project[name]": "dotfiles"}, "already been taken"),
    ("/byteblaze/dotfiles/-/issues/new", {"issue[title]": ""}, "be blank"),
    ("/byteblaze/dotfiles/-/issues/new", {"issue[title]": "t", "issue[due_date]": "soon"}, "soon"),
    ("/byteblaze/dotfiles/-/issues/new", {"issue[title]": "t", "issue[label_names]": "nolabel"}, "nolabel"),
    ("/byteblaze/dotfiles/-/issues/new", {"issue[title]": "t", "issue[assignee_username]": "ghost"}, "ghost"),
    ("/byteblaze/dotfiles/-/milestones/new", {"milestone[title]": "m", "milestone[start_date]": "2023-05-02",
                                              "milestone[due_date]": "2023-05-01"}, "on or after"),
    ("/byteblaze/dotfiles/-/project_members", {"usernames": "ghost", "access_level": "30"}, "ghost"),
    ("/byteblaze/dotfiles/-/project_members", {"usernames": "vinta", "access_level": "99"}, "99"),
    ("/byteblaze/dotfiles/-/new/main/", {"file_name": "../x", "content": "y"}, "invalid"),
    ("/byteblaze/dotfiles/-/new/main/", {"file_name": "README.md", "content": "y"}, "already exists"),
    ("/byteblaze/dotfiles/-/merge_requests/new", {"merge_request[source_branch]": "main",
                                                  "merge_request[title]": "t"}, "must differ"),
    ("/byteblaze/dotfiles/-/issues/1/notes", {"note[note]": "  "}, "be blank"),
    ("/-/profile", {"user[name]": ""}, "be blank"),
    ("/groups/new", {"group[name]": ""}, "be blank"),
    ("/groups/new", {"group[name]": "x", "group[path]": "primer"}, "already been taken"),
    ("/groups/new", {"group[name]": "x", "group[path]": "vinta"}, "already been taken"),
    ("/groups/new", {"group[name]": "x", "group[path]": "dashboard"}, "invalid"),
    ("/groups/a11yproject/-/group_members", {"usernames": "ghost", "access_level": "30"}, "ghost"),
    ("/groups/a11yproject/-/group_members", {"usernames": "vinta", "access_level": "7"}, "7"),
])
def test_bad_form_input_answers_422_with_a_message(app, path, form, message):
    client = _client(app, "gl-forms")
    r = client.post(path, data=form, follow_redirects=False)
    assert r.status_code == 422, r.text[:300]
    assert 'role="alert"' in r.text and message in r.text


def test_forms_change_the_instance_and_members_table_has_helper_markup(app):
    client = _client(app, "gl-write")
    r = client.post("/projects/new", data={"project[name]": "Unit Test", "project[visibility]": "public",
                                           "initialize_with_readme": "1"}, follow_redirects=False)
    assert r.headers["location"] == "/byteblaze/unit-test"
    assert "Public" in client.get("/byteblaze/unit-test").text
    client.post("/byteblaze/unit-test/-/project_members", data={"usernames": "vinta, yjlou", "access_level": "30"})
    page = client.get("/byteblaze/unit-test/-/project_members").text
    assert "<span class=\"gl-avatar-labeled-sublabel\">@vinta</span>" in page
    assert page.count("<td class=\"col-max-role\" data-label=\"Max role\"><span>Developer</span>") == 2
    r = client.post("/byteblaze/unit-test/-/issues/new", data={"issue[title]": "First", "issue[label_names]": "bug"},
                    follow_redirects=False)
    assert r.headers["location"] == "/byteblaze/unit-test/-/issues/1"
    client.post("/byteblaze/unit-test/-/issues/1/close")
    assert ">Closed</span>" in client.get("/byteblaze/unit-test/-/issues/1").text
    client.post("/byteblaze/unit-test/-/new/main/docs", data={"file_name": "a.txt", "content": "hello"})
    assert client.get("/byteblaze/unit-test/-/raw/main/docs/a.txt").text == "hello"
    other = _client(app, "gl-other")
    assert other.get("/byteblaze/unit-test").status_code == 404


def test_permissions_answer_403(app):
    client = _client(app, "gl-perm")
    # byteblaze is not a member of vinta's project: no settings, no repository writes
    assert client.get("/vinta/awesome-python-tools/-/edit").status_code == 403
    r = client.post("/vinta/awesome-python-tools/-/new/main/", data={"file_name": "x", "content": "y"})
    assert r.status_code == 403


def test_private_projects_hide_from_strangers(app):
    anonymous = _client(app, "gl-anon", login=False)
    assert anonymous.get("/byteblaze/dotfiles").status_code == 404
    assert anonymous.get("/api/v4/projects/byteblaze%2Fdotfiles").json() == {"message": "404 Project Not Found"}
    assert anonymous.get("/byteblaze/timeit").status_code == 200


def test_api_subset(app):
    client = _client(app, "gl-api")
    project = client.get("/api/v4/projects/byteblaze%2Fdotfiles").json()
    assert project["path_with_namespace"] == "byteblaze/dotfiles" and project["visibility"] == "private"
    members = client.get(f"/api/v4/projects/{project['id']}/members/all").json()
    assert {"username": "byteblaze", "access_level": 50} in [{k: m[k] for k in ("username", "access_level")}
                                                            for m in members]
    readme = client.get("/api/v4/projects/byteblaze%2Fdotfiles/repository/files/README.md/raw", params={"ref": "main"})
    assert readme.text.startswith("# dotfiles")
    assert client.get("/api/v4/users", params={"username": "vinta"}).json()[0]["name"] == "Vinta Chen"
    assert client.get("/api/v4/projects/999999").status_code == 404


def _sign_in_as(client: TestClient, username: str) -> None:
    client.cookies.clear()
    r = client.post("/users/sign_in", data={"user[login]": username, "user[password]": "hello1234"},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"


def test_pages_carry_webarena_markup(app):
    """The classes, ids and attributes WebArena's evaluators read, on pages of the same kind."""
    client = _client(app, "gl-markup")
    home = client.get("/byteblaze/dotfiles").text
    assert 'visibility-icon" data-testid="visibility-badge" title="Private - Project access must be granted' in home
    assert 'class="project-description home-panel-description-markdown"' in home
    issue = client.get("/a11yproject/checklist/-/issues/7").text
    assert '<div class="detail-page-description content-block"><h1 class="title"' in issue
    assert 'data-qa-selector="title_content">Upgrade dependencies</h1>' in issue
    assert 'data-testid="sidebar-due-date"><h3>Due date</h3><p class="due-date-value">2022-08-18</p>' in issue
    assert re.search(r'<ul class="notes main-notes-list timeline" id="notes-list"><li class="note timeline-entry" '
                     r'id="note_\d+">.*?<div class="timeline-discussion-body note-body"><div class="note-text">', issue)
    mr = client.get("/a11yproject/a11yproject.com/-/merge_requests/1").text
    branches = re.findall(r'<a href="/a11yproject/a11yproject.com/-/tree/[^"]+" class="ref-name (source|target)-branch '
                          r'gl-link gl-font-monospace">([^<]+)</a>', mr)
    assert branches == [("source", "docs/update-readme"), ("target", "main")]
    milestone = client.get("/a11yproject/a11yproject.com/-/milestones/1").text
    assert '<div class="block start_date"><dt>Start date</dt>' in milestone
    assert '<div class="block due_date"><dt>Due date</dt>' in milestone
    profile = client.get("/byteblaze").text
    assert '<p class="user-status cover-status" data-testid="user-status">Writing accessible components</p>' in profile
    assert re.search(r'<div class="profile-header">.*<a href="https://gimmiethat.space" itemprop="url">', profile)
    assert 'data-qa-selector="projects_list"' in client.get("/dashboard/projects").text
    assert client.get("/users/byteblaze/following").text.count('<div class="user-profile">') == 1


def test_group_members_page(app):
    client = _client(app, "gl-groups", login=False)
    page = client.get("/groups/a11yproject/-/group_members").text
    assert '<span class="gl-avatar-labeled-sublabel">@byteblaze</span>' in page
    assert '<td class="col-max-role" data-label="Max role"><span>Maintainer</span>' in page
    assert 'href="/groups/a11yproject/-/group_members"' in client.get("/a11yproject").text
    assert client.get("/groups/a11yproject", follow_redirects=False).headers["location"] == "/a11yproject"
    assert client.get("/groups/nogroup/-/group_members").status_code == 404


def _todo_ids(page: str) -> list[str]:
    return re.findall(r'<li class="todo todo-\w+" id="todo_(\d+)">', page)


def test_todos_list_filter_and_mark_done(app):
    client = _client(app, "gl-todos")
    pending = client.get("/dashboard/todos").text
    ids = _todo_ids(pending)
    assert ids and "assigned you</span> issue" in pending and "requested a review of</span> merge request" in pending
    issues_only = client.get("/dashboard/todos", params={"type": "Issue"}).text
    assert _todo_ids(issues_only) and "merge request !" not in issues_only
    reviews = client.get("/dashboard/todos", params={"action_id": "9"}).text
    assert _todo_ids(reviews) and "assigned you</span>" not in reviews
    done_before = _todo_ids(client.get("/dashboard/todos", params={"state": "done"}).text)
    r = client.post(f"/dashboard/todos/{ids[0]}/mark_as_done", follow_redirects=False)
    assert r.status_code == 303
    assert ids[0] not in _todo_ids(client.get("/dashboard/todos").text)
    assert ids[0] in _todo_ids(client.get("/dashboard/todos", params={"state": "done"}).text)
    assert set(done_before) < set(_todo_ids(client.get("/dashboard/todos", params={"state": "done"}).text))
    client.post("/dashboard/todos/mark_all_as_done")
    assert _todo_ids(client.get("/dashboard/todos").text) == []
    assert client.post("/dashboard/todos/999999/mark_as_done").status_code == 404
    assert client.post(f"/dashboard/todos/{ids[0]}/explode").status_code == 404


def test_assignments_and_mentions_make_todos(app):
    client = _client(app, "gl-todo-make")
    client.post("/byteblaze/timeit/-/issues/new",
                data={"issue[title]": "Todo probe", "issue[assignee_username]": "jdoe"})
    client.post("/byteblaze/timeit/-/issues/1/notes", data={"note[note]": "Could @vinta have a look?"})
    client.post("/byteblaze/timeit/-/issues/1/assign", data={"assignee_username": "byteblaze"})  # oneself: no to-do
    own = client.get("/dashboard/todos").text
    assert "Todo probe" not in own
    _sign_in_as(client, "jdoe")
    assert 'Byte Blaze</a> <span class="action-name">assigned you</span> issue' in client.get("/dashboard/todos").text
    _sign_in_as(client, "vinta")
    mentioned = client.get("/dashboard/todos").text
    assert '<span class="action-name">mentioned you on</span> issue <a href="/byteblaze/timeit/-/issues/1"' in mentioned
    # a to-do is its owner's: another user cannot mark it done
    vinta_todo = _todo_ids(mentioned)[0]
    _sign_in_as(client, "jdoe")
    assert client.post(f"/dashboard/todos/{vinta_todo}/mark_as_done").status_code == 404


def test_groups_are_created_and_their_maintainers_invite_members(app):
    client = _client(app, "gl-groups")
    assert "New group" in client.get("/dashboard/groups").text
    r = client.post("/groups/new", data={"group[name]": "Unit Testers", "group[visibility]": "public"},
                    follow_redirects=False)
    assert r.headers["location"] == "/unit-testers"
    assert "Unit Testers" in client.get("/unit-testers").text and ">Public</span>" in client.get("/unit-testers").text
    client.post("/groups/unit-testers/-/group_members", data={"usernames": "vinta, @yjlou", "access_level": "20"})
    page = client.get("/groups/unit-testers/-/group_members").text
    assert "<span class=\"gl-avatar-labeled-sublabel\">@vinta</span>" in page and "Invite members" in page
    assert page.count("<td class=\"col-max-role\" data-label=\"Max role\"><span>Reporter</span>") == 2
    assert ">Owner</span>" in page
    # byteblaze is only a Developer of primer: no invite form, and a POST is refused
    assert "Invite members" not in client.get("/groups/primer/-/group_members").text
    r = client.post("/groups/primer/-/group_members", data={"usernames": "vinta", "access_level": "30"})
    assert r.status_code == 422 and "Maintainer role" in r.text


def test_personal_access_tokens_are_created_listed_and_revoked(app):
    client = _client(app, "gl-tokens")
    path = "/-/user_settings/personal_access_tokens"
    assert path in client.get("/-/profile").text
    page = client.get(path).text
    assert 'data-name="ci-pipeline"' in page and 'id="revoked-tokens" class="tokens-empty"' in page
    for form, message in [({"personal_access_token[name]": ""}, "be blank"),
                          ({"personal_access_token[name]": "x", "personal_access_token[expires_at]": "soon"}, "a date"),
                          ({"personal_access_token[name]": "x", "personal_access_token[expires_at]": "2020-01-01",
                            "personal_access_token[scopes][api]": "1"}, "in the future"),
                          ({"personal_access_token[name]": "x", "personal_access_token[expires_at]": "2030-01-01"},
                           "at least one scope")]:
        r = client.post(path, data=form)
        assert r.status_code == 422 and 'role="alert"' in r.text and message in r.text
    r = client.post(path, data={"personal_access_token[name]": "deploy", "personal_access_token[expires_at]":
                                "2030-01-01", "personal_access_token[scopes][read_api]": "1",
                                "personal_access_token[scopes][write_repository]": "1"})
    assert r.status_code == 200 and 'id="created-personal-access-token"' in r.text and "glpat-" in r.text
    row = re.search(r'<tr class="token-row" data-name="deploy">.*?</tr>', r.text).group(0)
    assert '<td class="token-scopes">read_api, write_repository</td>' in row and "2030-01-01" in row
    first = re.findall(r'action="/-/user_settings/personal_access_tokens/(\d+)/revoke"', r.text)[0]  # the oldest
    client.post(f"{path}/{first}/revoke")
    page = client.get(path).text
    assert page.count('class="token-row"') == 5
    assert re.search(r'id="revoked-tokens".*data-name="old-laptop"', page, re.S)
    assert client.post(f"{path}/999/revoke").status_code == 404
