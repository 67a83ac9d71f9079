"""The code host's people pages: sign in / out, profiles, the profile editor, following, groups,
project members (invite, change role, remove) and search.

Owns `/users/sign_in`, `/users/sign_out`, `/-/profile`, `/<username>` and `/<group>` (one catch-all
route: a user name first, then a group path), `/groups/<group>[/-/group_members]`,
`/users/<u>/following|followers|follow`, `/dashboard/groups`, `/explore/groups`,
`/groups/new` (create a group), `/<ns>/<proj>/-/project_members[/<uid>/edit|/<uid>/remove]` and `/search`.
"""
from __future__ import annotations

import sqlite3
from typing import Callable, Optional
from urllib.parse import quote

from starlette.responses import Response

from agentenv_webarena.sites.common import SignIn, esc, login_required, query_url, redirect, to_int
from agentenv_webarena.sites.gitlab.issuables import _issue_rows
from agentenv_webarena.sites.gitlab.layout import (
    Ctx,
    area_field,
    form_error,
    load_project,
    not_found,
    project_base,
    project_page,
    radio_group,
    render_page,
    text_field,
    user_link,
    visibility_badge,
)
from agentenv_webarena.sites.gitlab.model import (
    ROLES,
    display_date,
    issue_list,
    member_level,
    project_list,
    project_members,
    site_now,
    slugify,
    user_by_name,
    valid_path,
)
from agentenv_webarena.sites.gitlab.projects import project_rows

__all__ = ["sign_in", "sign_in_post", "sign_out", "profile_edit", "namespace_page", "group_page", "group_members",
           "new_group",
           "follow", "follow_list", "groups_list", "members", "member_edit", "member_remove", "search"]

_ROLE_OPTIONS = [(str(level), name) for level, name in ROLES.items()]


SIGN_IN = SignIn(action="/users/sign_in", user_field="user[login]", password_field="user[password]",
                 account_sql="SELECT id, password FROM gitlab_users WHERE username = ? COLLATE NOCASE OR email = ? "
                             "COLLATE NOCASE",
                 signed_in_url="/", refused_url="/users/sign_in?error=1", user_label="Username or email",
                 user_id="user_login", password_id="user_password", form_class="new_user",
                 user_attrs=' data-testid="username-field" autocomplete="username" required',
                 password_attrs=' data-testid="password-field" autocomplete="current-password" required',
                 button_attrs=' data-testid="sign-in-button"')


def sign_in(ctx: Ctx) -> Response:
    """GET `/users/sign_in`: the sign-in form (`user[login]`, `user[password]`)."""
    err = '<p class="flash-alert" role="alert">Invalid login or password.</p>' if ctx.q.get("error") else ""
    return render_page(ctx, "Sign in", "<h1>Sign in</h1>" + err + SIGN_IN.form())


def sign_in_post(ctx: Ctx) -> Response:
    """POST `/users/sign_in`: check the password and set the session cookie (refused: back to the form)."""
    return SIGN_IN.post(ctx)


def sign_out(ctx: Ctx) -> Response:
    """POST `/users/sign_out`: end the session."""
    ctx.end_session()
    return redirect("/users/sign_in")


_PROFILE_FIELDS = (("name", "user[name]", "Full name"), ("website", "user[website_url]", "Website URL"),
                   ("location", "user[location]", "Location"), ("status", "user[status]", "Status message"))


@login_required
def profile_edit(ctx: Ctx) -> Response:
    """GET/POST `/-/profile`: the signed-in user's name, website, location, status and bio."""
    u = ctx.account
    if ctx.posted:
        name = ctx.form.get("user[name]", "").strip()
        if not name:
            alert = '<p class="flash-alert" role="alert">Full name can\'t be blank.</p>'
            return render_page(ctx, "Edit profile", "<h1>Edit profile</h1>" + alert + _profile_form(u, ctx.form),
                               status_code=422)
        fields = [ctx.form.get(k, "").strip() for k in ("user[website_url]", "user[location]", "user[status]",
                                                        "user[bio]")]
        ctx.conn.execute("UPDATE gitlab_users SET name = ?, website = ?, location = ?, status = ?, bio = ? "
                         "WHERE id = ?", (name, *fields, u["id"]))
        return redirect(f"/{quote(u['username'])}")
    tokens = '<p><a href="/-/user_settings/personal_access_tokens">Access tokens</a></p>'
    return render_page(ctx, "Edit profile", "<h1>Edit profile</h1>" + tokens + _profile_form(u, {}))


def _profile_form(u: sqlite3.Row, values: dict[str, str]) -> str:
    fields = "".join(text_field(f"user_{col}", name, label, values.get(name, u[col]))
                     for col, name, label in _PROFILE_FIELDS)
    return ('<form action="/-/profile" method="post" class="edit-user">' + fields
            + area_field("user_bio", "user[bio]", "Bio", values.get("user[bio]", u["bio"]), rows=3)
            + f'<p class="email">Email: {esc(u["email"])}</p>'
            + '<p><button type="submit">Update profile settings</button></p></form>')


def _count(conn: sqlite3.Connection, sql: str, arg: int) -> int:
    return conn.execute(sql, (arg,)).fetchone()[0]


def _profile(ctx: Ctx, u: sqlite3.Row) -> Response:
    conn = ctx.conn
    name = quote(u["username"])
    following = _count(conn, "SELECT COUNT(*) FROM gitlab_follows WHERE follower_id = ?", u["id"])
    followers = _count(conn, "SELECT COUNT(*) FROM gitlab_follows WHERE followee_id = ?", u["id"])
    follow_btn = ""
    if ctx.account is not None and ctx.user_id != u["id"]:
        on = conn.execute("SELECT 1 FROM gitlab_follows WHERE follower_id = ? AND followee_id = ?",
                          (ctx.user_id, u["id"])).fetchone()
        follow_btn = (f'<form action="/users/{name}/follow" method="post"><button type="submit">'
                      f'{"Unfollow" if on else "Follow"}</button></form>')
    groups = conn.execute("SELECT g.path, g.name FROM gitlab_group_members m JOIN gitlab_groups g ON g.id = m.group_id "
                          "WHERE m.user_id = ? ORDER BY g.name", (u["id"],)).fetchall()
    group_links = ", ".join(f'<a href="/{quote(g["path"])}">{esc(g["name"])}</a>' for g in groups) or "None"
    website = (f'<p class="profile-website"><a href="{esc(u["website"])}" itemprop="url">{esc(u["website"])}</a></p>'
               if u["website"] else "")
    status = (f'<p class="user-status cover-status" data-testid="user-status">{esc(u["status"])}</p>'
              if u["status"] else "")
    rows = project_list(conn, viewer_id=ctx.user_id, namespace=u["username"], sort="name")
    main = (f'<div class="user-profile"><div class="profile-header">'
            f'<h1 class="user-name" data-testid="user-name">{esc(u["name"])}</h1>'
            f'<p class="user-username">@{esc(u["username"])}</p>{status}'
            f'<p class="profile-bio">{esc(u["bio"])}</p><p class="profile-location">{esc(u["location"])}</p>{website}'
            f'<p class="member-since">Member since {display_date(u["created_at"])}</p></div>'
            f'<p><a href="/users/{name}/followers">{followers} Followers</a> '
            f'<a href="/users/{name}/following">{following} Following</a> '
            f'<a href="/users/{name}/starred">Starred projects</a></p>{follow_btn}'
            f'<p class="user-groups">Groups: {group_links}</p></div>'
            f'<h2>Personal projects</h2>{project_rows(rows)}')
    return render_page(ctx, u["name"], main)


def _group_members(conn: sqlite3.Connection, group_id: int) -> list[sqlite3.Row]:
    return conn.execute("SELECT u.id, u.username, u.name, m.access_level, m.created_at FROM gitlab_group_members m "
                        "JOIN gitlab_users u ON u.id = m.user_id WHERE m.group_id = ? "
                        "ORDER BY m.access_level DESC, u.username COLLATE NOCASE", (group_id,)).fetchall()


def _group_menu(g: sqlite3.Row) -> str:
    path = quote(g["path"])
    return (f'<nav aria-label="Group navigation"><p class="sidebar-context-title">{esc(g["name"])}</p><ul>'
            f'<li><a href="/{path}">Group information</a></li>'
            f'<li><a href="/groups/{path}/-/group_members">Members</a></li></ul></nav>')


def _group_page(ctx: Ctx, g: sqlite3.Row) -> Response:
    conn = ctx.conn
    rows = project_list(conn, viewer_id=ctx.user_id, namespace=g["path"], sort="name")
    items = "".join(f'<li class="group-member">{user_link(m["username"], m["name"])} @{esc(m["username"])} · '
                    f'{ROLES[m["access_level"]]}</li>' for m in _group_members(conn, g["id"]))
    main = (f'<h1 class="group-title">{esc(g["name"])} {visibility_badge(g["visibility"])}</h1>'
            f'<p class="group-path">Group URL: /{esc(g["path"])}</p>'
            f'<p class="group-description">{esc(g["description"])}</p><h2>Projects</h2>{project_rows(rows)}'
            f'<h2>Members</h2><ul class="group-members">{items}</ul>')
    return render_page(ctx, g["name"], main, _group_menu(g))


def _group(ctx: Ctx, path: str) -> Optional[sqlite3.Row]:
    return ctx.conn.execute("SELECT * FROM gitlab_groups WHERE path = ?", (path,)).fetchone()


def group_page(ctx: Ctx, group: str) -> Response:
    """GET `/groups/<group>`: GitLab's long form of a group's URL, redirected to `/<group>`."""
    g = _group(ctx, group)
    return not_found(ctx) if g is None else redirect(f"/{quote(g['path'])}")


def _group_level(conn: sqlite3.Connection, group_id: int, user_id: Optional[int]) -> int:
    row = conn.execute("SELECT access_level FROM gitlab_group_members WHERE group_id = ? AND user_id = ?",
                       (group_id, user_id)).fetchone()
    return row[0] if row else 0


def _invite_members(conn: sqlite3.Connection, form: dict[str, str], table: str, key: str, owner_id: int,
                    level_of: Callable[[int], int], what: str, owners: bool) -> str:
    """Add the form's users (`usernames` comma-separated, `access_level`) to a project's or group's members table
    (`table`, keyed by `key` = `owner_id`); returns an error message, or "" when all were added. `level_of(user_id)`
    is a user's current level there (0: not a member); `owners` says whether Owner (50) may be given."""
    level = to_int(form.get("access_level"), -1)
    names = [n.strip().lstrip("@") for n in form.get("usernames", "").split(",") if n.strip()]
    if level not in ROLES or (level == 50 and not owners):
        roles = ("Guest, Reporter, Developer, Maintainer or Owner" if owners else
                 "Guest, Reporter, Developer or Maintainer")
        return f"Role {form.get('access_level')!r} is invalid: choose {roles}."
    if not names:
        return "Enter at least one username to invite."
    users = []
    for name in names:
        user = user_by_name(conn, name)
        if user is None:
            return f"There is no user {name!r}."
        if level_of(user["id"]):
            return f"{user['username']} is already a member of this {what}."
        users.append(user)
    now = site_now(conn)
    conn.executemany(f"INSERT INTO {table} ({key}, user_id, access_level, created_at) VALUES (?,?,?,?)",
                     [(owner_id, user["id"], level, now) for user in users])
    return ""


def _add_group_members(conn: sqlite3.Connection, group_id: int, form: dict[str, str]) -> str:
    """Add the form's users to the group; returns an error message, or "" when all were added."""
    return _invite_members(conn, form, "gitlab_group_members", "group_id", group_id,
                           lambda uid: _group_level(conn, group_id, uid), "group", owners=True)


def group_members(ctx: Ctx, group: str) -> Response:
    """GET/POST `/groups/<group>/-/group_members`: the members table; its Maintainers and Owners see an invite form
    (POST: `usernames` comma-separated, `access_level` 10-50)."""
    g = _group(ctx, group)
    if g is None:
        return not_found(ctx)
    can_invite = _group_level(ctx.conn, g["id"], ctx.user_id) >= 40
    action = f"/groups/{quote(g['path'])}/-/group_members"
    error = ""
    if ctx.posted:
        if ctx.account is None:
            return redirect(ctx.LOGIN_URL)
        error = (_add_group_members(ctx.conn, g["id"], ctx.form) if can_invite else
                 "You need the Maintainer role or higher in this group to invite members.")
        if not error:
            return redirect(action)
    alert = f'<p class="flash-alert" role="alert">{esc(error)}</p>' if error else ""
    invite = ""
    if can_invite:
        invite = (f'<form action="{action}" method="post" class="invite-members-form"><h2>Invite members</h2>'
                  + text_field("invite_usernames", "usernames", "Usernames (comma-separated)", required=True)
                  + radio_group("access_level", "Select a role", _ROLE_OPTIONS, "10")
                  + '<p><button type="submit">Invite</button></p></form>')
    rows = _group_members(ctx.conn, g["id"])
    main = (f'<h1>Group members</h1>{alert}<p class="members-count">{len(rows)} members of {esc(g["name"])}</p>'
            f'{invite}{_members_table(rows)}')
    return render_page(ctx, f"Members · {g['name']}", main, _group_menu(g), status_code=422 if error else 200)


_GROUP_VISIBILITY = [("private", "Private"), ("internal", "Internal"), ("public", "Public")]
_RESERVED = {"new", "dashboard", "explore", "users", "groups", "projects", "search", "api", "help", "admin", "-"}


def _new_group_form(values: dict[str, str]) -> str:
    return ('<form action="/groups/new" method="post" class="new-group-form">'
            + text_field("group_name", "group[name]", "Group name", values.get("group[name]", ""), required=True,
                         placeholder="My awesome group")
            + text_field("group_path", "group[path]", "Group URL", values.get("group[path]", ""),
                         placeholder="my-awesome-group")
            + area_field("group_description", "group[description]", "Group description (optional)",
                         values.get("group[description]", ""), rows=3)
            + radio_group("group[visibility]", "Visibility level", _GROUP_VISIBILITY,
                          values.get("group[visibility]", "private"))
            + '<p><button type="submit">Create group</button></p></form>')


def _new_group_error(conn: sqlite3.Connection, name: str, path: str, visibility: str) -> str:
    if not name:
        return "Group name can't be blank."
    if not valid_path(path) or path.lower() in _RESERVED:
        return f"Group URL {path!r} is invalid: use letters, digits, '_', '-' and '.'."
    if visibility not in dict(_GROUP_VISIBILITY):
        return f"Visibility {visibility!r} is invalid: choose private, internal or public."
    if user_by_name(conn, path) is not None or conn.execute("SELECT 1 FROM gitlab_groups WHERE path = ?",
                                                            (path,)).fetchone():
        return f"Group URL {path!r} has already been taken."
    return ""


@login_required
def new_group(ctx: Ctx) -> Response:
    """GET/POST `/groups/new`: create a group (`group[name|path|description|visibility]`) with its creator as Owner."""
    heading = "<h1>Create group</h1>"
    if not ctx.posted:
        return render_page(ctx, "New group", heading + _new_group_form({}))
    name = ctx.form.get("group[name]", "").strip()
    path = ctx.form.get("group[path]", "").strip() or slugify(name)
    visibility = ctx.form.get("group[visibility]", "private")
    error = _new_group_error(ctx.conn, name, path, visibility)
    if error:
        return form_error(ctx, "New group", error, heading + _new_group_form(ctx.form))
    now = site_now(ctx.conn)
    gid = ctx.conn.execute("INSERT INTO gitlab_groups (path, name, description, visibility, created_at) "
                           "VALUES (?,?,?,?,?)", (path, name, ctx.form.get("group[description]", "").strip(),
                                                  visibility, now)).lastrowid
    ctx.conn.execute("INSERT INTO gitlab_group_members (group_id, user_id, access_level, created_at) "
                     "VALUES (?,?,50,?)", (gid, ctx.user_id, now))
    return redirect(f"/{quote(path)}")


def namespace_page(ctx: Ctx, name: str) -> Response:
    """GET `/<name>`: a user's profile, else a group's page."""
    user = user_by_name(ctx.conn, name)
    if user is not None:
        return _profile(ctx, user)
    group = _group(ctx, name)
    if group is not None:
        return _group_page(ctx, group)
    return not_found(ctx)


@login_required
def follow(ctx: Ctx, username: str) -> Response:
    """POST `/users/<u>/follow`: follow the user, or unfollow when already following."""
    user = user_by_name(ctx.conn, username)
    if user is None:
        return not_found(ctx)
    if user["id"] != ctx.user_id:
        done = ctx.conn.execute("DELETE FROM gitlab_follows WHERE follower_id = ? AND followee_id = ?",
                                (ctx.user_id, user["id"]))
        if done.rowcount == 0:
            ctx.conn.execute("INSERT INTO gitlab_follows (follower_id, followee_id) VALUES (?,?)",
                             (ctx.user_id, user["id"]))
    return redirect(f"/{quote(user['username'])}")


def follow_list(ctx: Ctx, username: str, which: str) -> Response:
    """GET `/users/<u>/following` and `/users/<u>/followers`."""
    user = user_by_name(ctx.conn, username)
    if user is None or which not in ("following", "followers"):
        return not_found(ctx)
    mine, other = ("follower_id", "followee_id") if which == "following" else ("followee_id", "follower_id")
    rows = ctx.conn.execute(f"SELECT u.username, u.name FROM gitlab_follows f JOIN gitlab_users u ON u.id = f.{other} "
                            f"WHERE f.{mine} = ? ORDER BY u.username", (user["id"],)).fetchall()
    items = "".join(f'<li class="user-row">{user_link(r["username"], r["name"])} @{esc(r["username"])}</li>'
                    for r in rows)
    title = f"{user['name']} · {'Following' if which == 'following' else 'Followers'}"
    return render_page(ctx, title, f'<div class="user-profile"><h1>{esc(title)}</h1><ul class="users-list">{items}</ul>'
                       "</div>")


def groups_list(ctx: Ctx) -> Response:
    """GET `/dashboard/groups` (the user's groups) and `/explore/groups` (all groups)."""
    mine = ctx.request.url.path.startswith("/dashboard")
    if mine:
        if ctx.account is None:
            return redirect(ctx.LOGIN_URL)
        rows = ctx.conn.execute("SELECT g.* FROM gitlab_groups g JOIN gitlab_group_members m ON m.group_id = g.id "
                                "WHERE m.user_id = ? ORDER BY g.name", (ctx.user_id,)).fetchall()
    else:
        rows = ctx.conn.execute("SELECT * FROM gitlab_groups ORDER BY name").fetchall()
    items = "".join(f'<li class="group-row"><a href="/{quote(g["path"])}">{esc(g["name"])}</a> '
                    f'<p class="description">{esc(g["description"])}</p></li>' for g in rows)
    heading = "Your groups" if mine else "Explore groups"
    new = '<p><a href="/groups/new" class="new-group-link">New group</a></p>' if ctx.account is not None else ""
    return render_page(ctx, heading, f'<h1>{heading}</h1>{new}<ul class="groups-list">{items}</ul>')


def _members_table(rows: list[sqlite3.Row], edit_base: str = "") -> str:
    """GitLab's members table (the markup `gitlab_get_project_memeber_role` reads); with `edit_base` (a project's
    `/-/project_members`), edit and remove controls for members below Owner."""
    body = []
    for m in rows:
        edit = ""
        if edit_base and m["access_level"] < 50:
            edit = (f'<a href="{edit_base}/{m["id"]}/edit">Edit role of {esc(m["username"])}</a>'
                    f'<form action="{edit_base}/{m["id"]}/remove" method="post">'
                    f'<button type="submit">Remove {esc(m["username"])}</button></form>')
        body.append(f'<tr class="member-row"><td data-label="Account"><span class="gl-avatar-labeled-label">'
                    f'{esc(m["name"])}</span> <span class="gl-avatar-labeled-sublabel">@{esc(m["username"])}</span>'
                    "</td>"
                    f'<td data-label="Source">Direct member</td>'
                    f'<td class="col-max-role" data-label="Max role"><span>{ROLES[m["access_level"]]}</span></td>'
                    f'<td data-label="Member since">{display_date(m["created_at"])}</td><td>{edit}</td></tr>')
    return ('<table class="members-table" aria-label="Members"><thead><tr><th>Account</th><th>Source</th>'
            '<th>Max role</th><th>Member since</th><th>Actions</th></tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def _invite_form(p: sqlite3.Row) -> str:
    return (f'<form action="{project_base(p)}/-/project_members" method="post" class="invite-members-form">'
            '<h2>Invite members</h2>'
            + text_field("invite_usernames", "usernames", "Usernames (comma-separated)", required=True)
            + radio_group("access_level", "Select a role", _ROLE_OPTIONS[:4], "10")
            + '<p><button type="submit">Invite</button></p></form>')


def members(ctx: Ctx, namespace: str, project: str) -> Response:
    """GET/POST `/<ns>/<proj>/-/project_members`: the members table; POST invites `usernames` at `access_level`."""
    p = load_project(ctx, namespace, project)
    if p is None:
        return not_found(ctx)
    can_edit = member_level(ctx.conn, p["id"], ctx.user_id) >= 40
    error = ""
    if ctx.posted:
        if ctx.account is None:
            return redirect("/users/sign_in")
        if not can_edit:
            error = "You need the Maintainer role or higher to invite members."
        else:
            error = _invite(ctx.conn, p, ctx.form)
        if not error:
            return redirect(f"{project_base(p)}/-/project_members")
    alert = f'<p class="flash-alert" role="alert">{esc(error)}</p>' if error else ""
    rows = project_members(ctx.conn, p["id"])
    main = (f'<h1>Project members</h1>{alert}<p class="members-count">{len(rows)} members</p>'
            f'{_invite_form(p) if can_edit else ""}'
            f'{_members_table(rows, f"{project_base(p)}/-/project_members" if can_edit else "")}')
    return project_page(ctx, p, "Members", main, status_code=422 if error else 200)


def _invite(conn: sqlite3.Connection, p: sqlite3.Row, form: dict[str, str]) -> str:
    """Add the form's users as members; returns an error message, or "" when all were added."""
    return _invite_members(conn, form, "gitlab_project_members", "project_id", p["id"],
                           lambda uid: member_level(conn, p["id"], uid), "project", owners=False)


@login_required
def member_edit(ctx: Ctx, namespace: str, project: str, uid: str) -> Response:
    """GET/POST `/<ns>/<proj>/-/project_members/<uid>/edit`: change a member's role (`access_level`)."""
    p = load_project(ctx, namespace, project)
    uid = to_int(uid, -1)
    current = member_level(ctx.conn, p["id"], uid) if p is not None else 0
    if p is None or current == 0:
        return not_found(ctx)
    if member_level(ctx.conn, p["id"], ctx.user_id) < 40 or current == 50:
        return project_page(ctx, p, "Forbidden", "<h1>403: Forbidden</h1><p>Only Maintainers can change roles, "
                            "and an Owner's role cannot be changed here.</p>", status_code=403)
    user = ctx.conn.execute("SELECT username FROM gitlab_users WHERE id = ?", (uid,)).fetchone()
    action = f"{project_base(p)}/-/project_members/{uid}/edit"
    page = (f'<h1>Edit role of {esc(user["username"])}</h1><form action="{action}" method="post">'
            + radio_group("access_level", "Role", _ROLE_OPTIONS[:4], str(current))
            + '<p><button type="submit">Update role</button></p></form>')
    if not ctx.posted:
        return project_page(ctx, p, "Edit role", page)
    level = to_int(ctx.form.get("access_level"), -1)
    if level not in ROLES or level == 50:
        return project_page(ctx, p, "Edit role", f'<p class="flash-alert" role="alert">Role '
                            f'{esc(ctx.form.get("access_level"))} is invalid.</p>' + page, status_code=422)
    ctx.conn.execute("UPDATE gitlab_project_members SET access_level = ? WHERE project_id = ? AND user_id = ?",
                     (level, p["id"], uid))
    return redirect(f"{project_base(p)}/-/project_members")


@login_required
def member_remove(ctx: Ctx, namespace: str, project: str, uid: str) -> Response:
    """POST `/<ns>/<proj>/-/project_members/<uid>/remove`: remove a (non-Owner) member."""
    p = load_project(ctx, namespace, project)
    uid = to_int(uid, -1)
    if p is None or member_level(ctx.conn, p["id"], uid) == 0:
        return not_found(ctx)
    if member_level(ctx.conn, p["id"], ctx.user_id) < 40 or member_level(ctx.conn, p["id"], uid) == 50:
        return project_page(ctx, p, "Forbidden", "<h1>403: Forbidden</h1><p>Only Maintainers can remove "
                            "members, and Owners cannot be removed.</p>", status_code=403)
    ctx.conn.execute("DELETE FROM gitlab_project_members WHERE project_id = ? AND user_id = ?", (p["id"], uid))
    return redirect(f"{project_base(p)}/-/project_members")


_SCOPES = {"projects": "Projects", "issues": "Issues", "users": "Users"}


def search(ctx: Ctx) -> Response:
    """GET `/search?search=<words>&scope=projects|issues|users`."""
    q = ctx.q.get("search", "").strip()
    scope = ctx.q.get("scope", "projects")
    scope = scope if scope in _SCOPES else "projects"
    found = {"projects": project_list(ctx.conn, viewer_id=ctx.user_id, search=q, sort="stars") if q else [],
             "issues": [], "users": []}
    if q:
        visible = {p["id"] for p in project_list(ctx.conn, viewer_id=ctx.user_id)}
        found["issues"] = [i for i in issue_list(ctx.conn, state="all", search=q) if i["project_id"] in visible]
        like = f"%{q}%"
        found["users"] = ctx.conn.execute("SELECT username, name FROM gitlab_users WHERE username LIKE ? "
                                          "OR name LIKE ? "
                                          "ORDER BY username", (like, like)).fetchall()
    tabs = " ".join(f'<a href="{esc(query_url("/search", search=q, scope=s))}">{label} {len(found[s])}</a>'
                    for s, label in _SCOPES.items())
    if scope == "projects":
        results = project_rows(found["projects"])
    elif scope == "issues":
        results = _issue_rows(found["issues"], ctx.conn, with_project=True)
    else:
        results = '<ul class="users-list">' + "".join(
            f'<li class="user-row">{user_link(u["username"], u["name"])} @{esc(u["username"])}</li>'
            for u in found["users"]) + "</ul>"
    main = ('<h1>Search</h1><form action="/search" method="get">'
            f'<input type="search" name="search" value="{esc(q)}" '
            f'aria-label="Search for projects, issues, etc." placeholder="Search for projects, issues, etc.">'
            f'<input type="hidden" name="scope" value="{scope}"></form>'
            f'<nav aria-label="Search scopes" class="search-scopes">{tabs}</nav>'
            f'<p class="results-summary">Showing results for "{esc(q)}"</p>{results}')
    return render_page(ctx, "Search", main)

