"""Later task families of the code host, forum and map (intent_template_id 9100-9199), and multi-site tasks
that start on one site only (the agent reaches the other by its URL, as in WebArena).

Code host: the To-Do List (counts, review requests, marking to-dos done), groups (roles, members, inviting,
creating a group), personal access tokens (create, revoke, expiry); forum: a moderator editing their forum,
image-link posts; map: the visiting order that minimises driving time. Dict shape: `templates.base.task`;
facts come from the sites' own queries, so pages and answers agree. State-changing tasks pick targets whose
pristine state fails the check.
"""
from __future__ import annotations

import itertools
import sqlite3
from typing import Any, Optional, Sequence

from agentenv_webarena.sites.forum.data import MODERATORS
from agentenv_webarena.sites.forum.data import PRIMARY_USER as FORUM_USER
from agentenv_webarena.sites.gitlab.model import ROLES, project_list, slugify
from agentenv_webarena.sites.gitlab.tokens import SCOPES, TOKENS_PATH
from agentenv_webarena.sites.map import directions_url
from agentenv_webarena.tasks.templates.base import (
    DONE,
    clear_and_type,
    click,
    goto,
    html_eval,
    pick,
    stop,
    string_eval,
    target,
    task,
    type_text,
    typeable,
)
from agentenv_webarena.tasks.templates.common import (
    BASE_FORUMS,
    BASE_GITLAB_GROUPS,
    BASE_GITLAB_USERS,
    ENGINE_OF,
    GITLAB,
    MAP,
    ME,
    POST_URL_FUNC,
    REDDIT,
    TITLE,
    TITLE_LOCATOR,
    directions_steps,
    full_path,
    landmarks,
    post_list,
    project_url,
    route_between,
    rows,
    visible_projects,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

N = 6  # instances per template (fewer when the data offer fewer)
TODOS = f"{GITLAB}/dashboard/todos"
TODO_COUNT = "document.querySelectorAll('li.todo').length"
INFEASIBLE = "the task cannot be done: the site has no such thing"


def _task(intent_template: str, values: dict, start_url: str, ev: dict, sequence: list,
          sites: Sequence[str]) -> dict:
    return task(sites=list(sites), start_url=start_url, intent_template=intent_template, values=values, eval=ev,
                sequence=sequence)


def _na(note: str = INFEASIBLE) -> dict:
    return string_eval(fuzzy="N/A", note=note)


def _role_func(username: str) -> str:
    return f"func:gitlab_get_project_memeber_role(__page__, '{username}')"


# --- code host: the To-Do List ----------------------------------------------------------------------

def _todos(db: sqlite3.Connection, state: str = "pending") -> list[dict]:
    """byteblaze's to-dos in `state`, in the list's order (newest first), with target title, project and author."""
    return rows(db, "SELECT t.id, t.action, t.target_type, t.project_id, p.namespace, p.path, p.name AS project, "
                    "a.name AS author, COALESCE(i.title, m.title) AS title FROM gitlab_todos t "
                    "JOIN gitlab_users a ON a.id = t.author_id JOIN gitlab_projects p ON p.id = t.project_id "
                    "LEFT JOIN gitlab_issues i ON t.target_type = 'Issue' AND i.id = t.target_id "
                    "LEFT JOIN gitlab_merge_requests m ON t.target_type = 'MergeRequest' AND m.id = t.target_id "
                    "WHERE t.user_id = ? AND t.state = ? ORDER BY t.created_at DESC, t.id DESC", (ME, state))


def _project_label(t: dict) -> str:
    return f"{t['namespace']}/{t['path']}"


def t9100_todo_count(db, rng):
    tpl = "How many {{kind}} are waiting in my GitLab to-do list?"
    pending = _todos(db)
    kinds = [("to-dos", None, lambda t: True),
             ("review requests", "Review requested", lambda t: t["action"] == "review_requested"),
             ("to-dos about merge requests", "Merge requests", lambda t: t["target_type"] == "MergeRequest"),
             ("to-dos about issues", "Issues", lambda t: t["target_type"] == "Issue")]
    out = []
    for kind, link, keep in kinds:
        n = str(sum(map(keep, pending)))
        steps = [goto(TODOS)] + ([click("link", link)] if link else [])
        out.append(_task(tpl, {"kind": kind}, GITLAB, string_eval(exact=n), steps + [stop(n)], ["gitlab"]))
    projects = sorted({t["project_id"]: t for t in pending}.values(), key=lambda t: t["project_id"])
    for t in pick(rng, projects, N - len(out)):
        n = str(sum(x["project_id"] == t["project_id"] for x in pending))
        out.append(_task(tpl, {"kind": f"to-dos from the {_project_label(t)} project"}, GITLAB, string_eval(exact=n),
                         [goto(f"{TODOS}?project_id={t['project_id']}"), stop(n)], ["gitlab"]))
    return out


def t9101_review_waiting(db, rng):
    tpl = "Which merge request in {{project}} is still waiting for my review? Give its title."
    pending = [t for t in _todos(db) if t["action"] == "review_requested"]
    out = [_task(tpl, {"project": _project_label(t)}, GITLAB, string_eval(must_include=[t["title"]]),
                 [goto(TODOS), click("link", "Review requested"), stop(t["title"])], ["gitlab"])
           for t in pending if sum(x["project_id"] == t["project_id"] for x in pending) == 1]
    # review requests I already handled: nothing is waiting there any more
    done = [t for t in _todos(db, "done") if t["action"] == "review_requested"
            and all(x["project_id"] != t["project_id"] for x in _todos(db))]
    for t in pick(rng, done, 1):
        out.append(_task(tpl, {"project": _project_label(t)}, GITLAB,
                         _na("nothing in that project waits for my review"),
                         [goto(TODOS), click("link", "Review requested"), stop("N/A")], ["gitlab"]))
    return out


def _todo_state(todo_id: int) -> str:
    return f"document.querySelector('#todo_{todo_id}').className"  # a missing element reads as ""


def _mark_done(pending: list[dict], todo: dict) -> list[dict]:
    """Open the list filtered to the to-do's project (a short list), then its "Mark as done" button."""
    same = [t for t in pending if t["project_id"] == todo["project_id"]]
    return [goto(f"{TODOS}?project_id={todo['project_id']}"), click("button", "Mark as done", nth=same.index(todo))]


def t9102_mark_todo_done(db, rng):
    tpl = "In my GitLab to-do list, mark {{todo}} as done."
    pending = _todos(db)
    unique = [t for t in pending if typeable(t["title"]) and [x["title"] for x in pending].count(t["title"]) == 1]
    out = []
    for k, t in enumerate(pick(rng, unique, N)):
        kind = "merge request" if t["target_type"] == "MergeRequest" else "issue"
        latest_from = next(x for x in pending if x["author"] == t["author"])
        if k % 2 and latest_from is t:  # vaguer: describe the to-do by who made it
            what = f"the newest to-do {t['author']} gave me"
        else:
            what = f'the one about the {kind} "{t["title"]}"'
        ev = html_eval([target(f"{TODOS}?state=done", _todo_state(t["id"]), exact="todo todo-done"),
                        target(TODOS, TODO_COUNT, exact=str(len(pending) - 1))])
        out.append(_task(tpl, {"todo": what}, GITLAB, ev, _mark_done(pending, t) + [stop(DONE)], ["gitlab"]))
    return out


def t9103_clear_project_todos(db, rng):
    tpl = "Mark all my pending to-dos from the {{project}} project as done, and leave the other to-dos alone."
    pending = _todos(db)
    by_project: dict[int, list[dict]] = {}
    for t in pending:
        by_project.setdefault(t["project_id"], []).append(t)
    out = []
    for pid, mine in sorted(by_project.items()):
        if len(mine) < 2:
            continue
        steps, left = [], list(pending)
        for t in mine:
            steps += _mark_done(left, t)
            left.remove(t)
        ev = html_eval([target(f"{TODOS}?project_id={pid}", TODO_COUNT, exact="0"),
                        target(TODOS, TODO_COUNT, exact=str(len(left)))])
        out.append(_task(tpl, {"project": _project_label(mine[0])}, GITLAB, ev, steps + [stop(DONE)], ["gitlab"]))
    return pick(rng, out, N)


# --- code host: groups ------------------------------------------------------------------------------

def _groups(db: sqlite3.Connection) -> list[dict]:
    return rows(db, "SELECT id, path, name FROM gitlab_groups WHERE id <= ? ORDER BY id", (BASE_GITLAB_GROUPS,))


def _group_members(db: sqlite3.Connection, group_id: int) -> list[dict]:
    return rows(db, "SELECT u.username, u.name, m.access_level FROM gitlab_group_members m JOIN gitlab_users u "
                    "ON u.id = m.user_id WHERE m.group_id = ? ORDER BY u.id", (group_id,))


def _members_page(g: dict) -> str:
    return f"{GITLAB}/groups/{g['path']}/-/group_members"


def t9104_group_role(db, rng):
    tpl = "What role does {{user}} have in the {{group}} group on GitLab?"
    cases = [(g, m) for g in _groups(db) for m in _group_members(db, g["id"]) if m["username"] != "byteblaze"]
    out = [_task(tpl, {"user": m["name"], "group": g["name"]}, GITLAB, string_eval(exact=ROLES[m["access_level"]]),
                 [goto(_members_page(g)), stop(ROLES[m["access_level"]])], ["gitlab"])
           for g, m in pick(rng, cases, N)]
    g = rng.choice(_groups(db))
    members = {m["username"] for m in _group_members(db, g["id"])}
    outsider = rng.choice([u for u in rows(db, "SELECT username, name FROM gitlab_users WHERE id <= ? ORDER BY id",
                                                (BASE_GITLAB_USERS,))
                           if u["username"] not in members])
    out.append(_task(tpl, {"user": outsider["name"], "group": g["name"]}, GITLAB,
                     _na(f"{outsider['name']} is not a member of {g['name']}"),
                     [goto(_members_page(g)), stop("N/A")], ["gitlab"]))
    return out


def t9105_group_of_project_role(db, rng):
    tpl = "Who are the {{role}}s of the group that the GitLab project {{project}} belongs to? Give their full names."
    groups = {g["path"]: g for g in _groups(db)}
    cases = []
    for p in visible_projects(db):
        g = groups.get(p["namespace"])
        for level in (40, 30):
            names = [m["name"] for m in _group_members(db, g["id"]) if m["access_level"] == level] if g else []
            if names:
                cases.append((p, g, ROLES[level], names))
    out = []
    seen = set()
    for p, g, role, names in pick(rng, cases, len(cases)):
        if (g["id"], role) in seen or len(out) >= N:
            continue
        seen.add((g["id"], role))
        out.append(_task(tpl, {"role": role, "project": p["name"]}, GITLAB, string_eval(must_include=names),
                         [goto(project_url(p)), goto(_members_page(g)), stop(", ".join(names))], ["gitlab"]))
    return out


def _invite_steps(usernames: Sequence[str], role: str) -> list[dict]:
    return [type_text("textbox", "Usernames (comma-separated)", ", ".join(usernames), enter=False),
            click("radio", role), click("button", "Invite")]


def _managed_groups(db: sqlite3.Connection) -> list[dict]:
    """Groups where byteblaze may invite members (Maintainer or Owner)."""
    return [g for g in _groups(db) if any(m["username"] == "byteblaze" and m["access_level"] >= 40
                                           for m in _group_members(db, g["id"]))]


def t9106_add_group_member(db, rng):
    tpl = "Add {{user}} to the GitLab group {{group}} as a {{role}}."
    out = []
    users = rows(db, "SELECT username, name FROM gitlab_users WHERE id != ? AND id <= ? ORDER BY id",
                 (ME, BASE_GITLAB_USERS))
    for g in _managed_groups(db):
        members = {m["username"] for m in _group_members(db, g["id"])}
        for u in pick(rng, [u for u in users if u["username"] not in members], N):
            role = rng.choice(["Guest", "Reporter", "Developer", "Maintainer"])
            ev = html_eval([target(_members_page(g), _role_func(u["username"]), exact=role)])
            seq = [goto(_members_page(g)), *_invite_steps([u["username"]], role), stop(DONE)]
            out.append(_task(tpl, {"user": u["name"], "group": g["name"], "role": role}, GITLAB, ev, seq, ["gitlab"]))
    return pick(rng, out, N)


_GROUP_NAMES = ["Accessibility Guild", "Frontend Friends", "Data Wranglers", "Open Docs Crew", "Release Team",
                "Night Owls Lab", "Pixel Pushers", "Infra Circle"]


def t9107_create_group(db, rng):
    tpl = "Create a GitLab group called {{name}} with {{visibility}} visibility and add {{users}} to it as Developers."
    out = []
    users = rows(db, "SELECT username, name FROM gitlab_users WHERE id != ? AND id <= ? ORDER BY id",
                 (ME, BASE_GITLAB_USERS))
    for name in pick(rng, _GROUP_NAMES, N):
        visibility = rng.choice(["Private", "Internal", "Public"])
        chosen = pick(rng, users, rng.choice([2, 3]))
        path = slugify(name)
        page = f"{GITLAB}/groups/{path}/-/group_members"
        ev = html_eval([target(f"{GITLAB}/{path}", "document.querySelector('.group-title').outerText",
                               must_include=[name, visibility]),
                        target(page, _role_func("byteblaze"), exact="Owner"),
                        *(target(page, _role_func(u["username"]), exact="Developer") for u in chosen)])
        listed = ", ".join(u["username"] for u in chosen[:-1]) + f" and {chosen[-1]['username']}"
        seq = [click("link", "Groups"), click("link", "New group"),
               type_text("textbox", "Group name", name, enter=False),
               click("radio", visibility), click("button", "Create group"), click("link", "Members"),
               *_invite_steps([u["username"] for u in chosen], "Developer"), stop(DONE)]
        out.append(_task(tpl, {"visibility": visibility, "name": name, "users": listed}, GITLAB, ev, seq, ["gitlab"]))
    return out


# --- code host: personal access tokens ---------------------------------------------------------------

TOKENS = GITLAB + TOKENS_PATH
# How intents describe byteblaze's seeded tokens (never by name).
_TOKEN_USES = {"ci-pipeline": "my CI pipeline uses", "old-laptop": "I made for my old laptop",
               "backup-script": "my backup script uses", "ide-plugin": "my IDE plugin uses"}
_NEW_TOKENS = ["release-bot", "docs-deploy", "metrics-export", "issue-sync", "mirror-job", "local-dev"]


def _tokens(db: sqlite3.Connection) -> list[dict]:
    return rows(db, "SELECT name, scopes, expires_at FROM gitlab_access_tokens WHERE user_id = ? AND revoked = 0 "
                    "ORDER BY created_at, id", (ME,))


def _token_cell(name: str, cell: str) -> str:
    return f"document.querySelector('#active-tokens tr[data-name=\"{name}\"] td.token-{cell}').outerText"


def _open_tokens() -> list[dict]:
    return [click("link", "Edit profile"), click("link", "Access tokens")]


def t9113_create_token(db, rng):
    tpl = ("Create a GitLab personal access token named {{name}} that expires on {{date}}, with only these scopes: "
           "{{scopes}}.")
    out = []
    for name in pick(rng, _NEW_TOKENS, N):
        scopes = sorted(pick(rng, list(SCOPES), rng.choice([1, 2])), key=list(SCOPES).index)
        date = f"{rng.choice([2023, 2024])}-{rng.randint(8, 12):02d}-{rng.randint(1, 28):02d}"
        ev = html_eval([target(TOKENS, _token_cell(name, "scopes"), exact=", ".join(scopes)),
                        target(TOKENS, _token_cell(name, "expires"), exact=date)])
        seq = [*_open_tokens(), type_text("textbox", "Token name", name, enter=False),
               type_text("textbox", "Expiration date", date, enter=False), *(click("checkbox", s) for s in scopes),
               click("button", "Create personal access token"), stop(DONE)]
        out.append(_task(tpl, {"name": name, "scopes": ", ".join(scopes), "date": date}, GITLAB, ev, seq,
                         ["gitlab"]))
    return out


def t9114_revoke_token(db, rng):
    tpl = "Revoke the GitLab access token {{use}}; keep my other tokens."
    names = [t["name"] for t in _tokens(db)]
    out = []
    for name in names:
        ev = html_eval([target(TOKENS, "document.querySelector('#revoked-tokens').outerText", must_include=[name]),
                        target(TOKENS, "document.querySelector('#active-tokens').outerText",
                               must_include=[n for n in names if n != name])])
        out.append(_task(tpl, {"use": _TOKEN_USES[name]}, GITLAB, ev,
                         [*_open_tokens(), click("button", f"Revoke {name}"), stop(DONE)], ["gitlab"]))
    return out


def t9115_token_expiry(db, rng):
    tpl = "When does the GitLab access token {{use}} expire?"
    out = [_task(tpl, {"use": _TOKEN_USES[t["name"]]}, GITLAB, string_eval(fuzzy=[t["expires_at"]]),
                 [*_open_tokens(), stop(t["expires_at"])], ["gitlab"]) for t in _tokens(db)]
    out.append(_task(tpl, {"use": "my deploy bot uses"}, GITLAB, _na("byteblaze has no token for a deploy bot"),
                     [*_open_tokens(), stop("N/A")], ["gitlab"]))
    return out


# --- forum: moderators and image posts ----------------------------------------------------------------

# How an intent describes each forum the primary user moderates (never by its name).
_MODERATED = {"books": "the forum I moderate about reading", "pittsburgh": "the forum I moderate about my city",
              "Music": "the music forum I moderate"}
_FORUM_TEXTS = {
    "description": ["A friendly place to talk about {x}.", "News, questions and recommendations about {x}.",
                    "Everything {x}: share, ask and discuss."],
    "sidebar": ["Be kind. No spam. Posts about {x} only.", "Read the rules before posting about {x}.",
                "Weekly threads about {x} are pinned."],
}
_TOPIC = {"books": "books", "pittsburgh": "Pittsburgh", "Music": "music", "space": "space", "gaming": "games"}
_FIELD = {"description": "Description", "sidebar": "Sidebar"}


def t9108_moderator_edit_forum(db, rng):
    tpl = 'Set the {{field}} of {{forum}} to "{{text}}".'
    assert all(FORUM_USER in MODERATORS[f] for f in _MODERATED)
    out = []
    for name, field in pick(rng, list(itertools.product(_MODERATED, _FIELD)), N):
        text = rng.choice(_FORUM_TEXTS[field]).format(x=_TOPIC[name])
        ev = html_eval([target(f"{REDDIT}/f/{name}/edit", f"document.querySelector('#forum_{field}').value",
                               exact=text)])
        seq = [goto(f"{REDDIT}/f/{name}"), click("link", "Edit forum"),
               *clear_and_type("textbox", _FIELD[field], text), click("button", "Save"), stop(DONE)]
        out.append(_task(tpl, {"field": field, "forum": _MODERATED[name], "text": text}, REDDIT, ev, seq, ["reddit"]))
    # a forum the user does not moderate: the edit page is forbidden
    name = rng.choice([f for f in _TOPIC if FORUM_USER not in MODERATORS.get(f, [])])
    text = _FORUM_TEXTS["sidebar"][0].format(x=_TOPIC[name])
    out.append(_task(tpl, {"field": "sidebar", "forum": f"the forum I moderate about {_TOPIC[name]}", "text": text},
                     REDDIT, _na(f"the user does not moderate f/{name}"),
                     [goto(f"{REDDIT}/forums"), stop("N/A")], ["reddit"]))
    return out


_IMAGES = [("https://i.imgur.com/Xq3vR7a.jpg", "gaming", "My retro setup after the weekend rebuild"),
           ("https://i.imgur.com/b81LkPz.png", "space", "Saturn through my backyard telescope"),
           ("https://i.imgur.com/4TnWq2c.jpg", "food", "First attempt at a sourdough loaf"),
           ("https://i.imgur.com/mZ0pYeE.jpg", "pittsburgh", "The Incline at sunset"),
           ("https://i.imgur.com/Ku7s9Ad.png", "DIY", "Finished the garden bench today"),
           ("https://i.imgur.com/Hd2Lw0Q.jpg", "books", "My reading nook, finally done")]


def t9109_image_post(db, rng):
    tpl = 'Share the picture at {{url}} in the {{forum}} forum as a link post titled "{{title}}".'
    out = []
    for url, forum_name, title in pick(rng, _IMAGES, N):
        ev = html_eval([target(POST_URL_FUNC, TITLE_LOCATOR, exact=title),
                        target(POST_URL_FUNC, "document.querySelector('.submission__url a').href", exact=url)],
                       with_url=f"{REDDIT}/f/{forum_name}")
        seq = [goto(f"{REDDIT}/f/{forum_name}"), click("link", "Submit a post"),
               type_text("textbox", "Title", title, enter=False), type_text("textbox", "URL", url, enter=False),
               click("button", "Create submission"), stop(DONE)]
        out.append(_task(tpl, {"url": url, "forum": forum_name, "title": title}, REDDIT, ev, seq, ["reddit"]))
    return out


# --- map: visiting order ------------------------------------------------------------------------------

def _minutes(a: Any, b: Any) -> int:
    h, m = route_between(a, b, "car").time_text.split(":")
    return int(h) * 60 + int(m)


def _best_order(start: Any, stops: Sequence[Any]) -> Optional[tuple]:
    """The order of `stops` minimising the drive from `start` (leg minutes as the map shows them), when it is
    at least 2 minutes better than any other order and every leg takes as long both ways."""
    pairs = [(start, s) for s in stops] + list(itertools.combinations(stops, 2))
    if any(_minutes(a, b) != _minutes(b, a) for a, b in pairs[len(stops):]):
        return None
    totals = sorted(((sum(_minutes(a, b) for a, b in zip((start, *order), order, strict=False)), order)
                     for order in itertools.permutations(stops)), key=lambda t: t[0])
    return totals[0][1] if totals[1][0] - totals[0][0] >= 2 else None


def t9110_visiting_order(db, rng):
    tpl = ("Starting from {{start}}, I want to drive to {{a}}, {{b}} and {{c}} (in any order) and end at the last "
           "one. In which order should I visit them to spend the least time driving? Answer with the three names in "
           "visiting order, separated by commas.")
    out = []
    places = landmarks()
    for _ in range(200):
        if len(out) >= N:
            break
        start, *stops = rng.sample(places, 4)
        order = _best_order(start, stops)
        if order is None:
            continue
        answer = ", ".join(p.name for p in order)
        pairs = [(start, s) for s in stops] + list(itertools.combinations(stops, 2))
        # the directions form geocodes the names and redirects to this URL: one step per leg looked up
        seq = directions_steps(*pairs[0], "car") + [goto(MAP + directions_url(a, b, ENGINE_OF["car"]))
                                                    for a, b in pairs[1:]]
        values = {"start": start.name, "a": stops[0].name, "b": stops[1].name, "c": stops[2].name}
        out.append(_task(tpl, values, MAP, string_eval(exact=answer), seq + [stop(answer)], ["map"]))
    return out


# --- multi-site tasks that start on one site ----------------------------------------------------------

def _top_starred(db: sqlite3.Connection, namespace: str) -> Optional[Any]:
    ranked = sorted(project_list(db, viewer_id=ME, namespace=namespace), key=lambda p: -p["stars"])
    return ranked[0] if len(ranked) == 1 or (ranked and ranked[0]["stars"] > ranked[1]["stars"]) else None


def t9111_share_repo_from_forum(db, rng):
    tpl = ("Share the most starred project of the GitLab group {{group}} in the {{forum}} forum: a link post whose "
           "title is the project's name and whose URL is the project's GitLab page.")
    cases = [(g, p) for g in _groups(db) if (p := _top_starred(db, g["path"])) is not None]
    out = []
    for g, p in pick(rng, cases, N):
        forum_name = "technology"
        ev = html_eval([target(POST_URL_FUNC, TITLE_LOCATOR, exact=p["name"]),
                        target(POST_URL_FUNC, "document.querySelector('.submission__url a').href",
                               must_include=[f"/{full_path(p)}"])], with_url=f"{REDDIT}/f/{forum_name}")
        seq = [goto(f"{GITLAB}/{g['path']}"), goto(project_url(p)), goto(f"{REDDIT}/f/{forum_name}"),
               click("link", "Submit a post"), type_text("textbox", "Title", p["name"], enter=False),
               type_text("textbox", "URL", project_url(p), enter=False), click("button", "Create submission"),
               stop(DONE)]
        out.append(_task(tpl, {"group": g["name"], "forum": forum_name}, REDDIT, ev, seq, ["reddit", "gitlab"]))
    return out


def t9112_issue_from_most_commented(db, rng):
    tpl = ("Open an issue in my GitLab project {{project}} whose title is the title of the most commented post in "
           "the {{forum}} forum.")
    mine = [p for p in visible_projects(db) if p["namespace"] == "byteblaze"]
    forums = []
    for f in rows(db, "SELECT name FROM forum_forums WHERE id <= ? ORDER BY id", (BASE_FORUMS,)):
        ranked = post_list(db, forum=f["name"], sort="most_commented", limit=2)
        if ranked and typeable(ranked[0]["title"]) and (len(ranked) == 1 or
                                                        ranked[0]["comment_count"] > ranked[1]["comment_count"]):
            forums.append((f["name"], ranked[0]["title"]))
    out = []
    for p, (forum_name, title) in zip(pick(rng, mine, N), pick(rng, forums, N), strict=False):
        ev = html_eval([target("last", TITLE, exact=title)], with_url=project_url(p, "/-/issues"))
        seq = [goto(f"{REDDIT}/f/{forum_name}/most_commented"), goto(project_url(p, "/-/issues/new")),
               type_text("textbox", "Title", title, enter=False), click("button", "Create issue"), stop(DONE)]
        out.append(_task(tpl, {"project": p["name"], "forum": forum_name}, GITLAB, ev, seq, ["gitlab", "reddit"]))
    return out


# Held out: every instance of these goes to the test split (templates never seen in training).
TEST_ONLY_TEMPLATES = {9101, 9105, 9112, 9115}

# Every `t91NN_*` function above, in id order.
TEMPLATES = [(int(name[1:5]), fn) for name, fn in sorted(globals().items()) if name.startswith("t91") and callable(fn)]
