"""Code-host task templates (intent_template_id 5000-5199) over the embedded gitlab site's seed data,
including its gitlab + reddit multi-site tasks (5100-5199).

Each template is `(template_id, fn(db, rng) -> list[task dict])`: `fn` reads the pristine database
(every site's tables) and instantiates tasks in WebArena's `config_files/test.raw.json` format with a
`reference_action_sequence` whose elements are named by accessibility role and name as Chromium
exposes them on `sites/gitlab`'s pages (dict shape: `templates.base.task`). The account is
byteblaze; facts come from the site's own queries (`sites.gitlab.model`), so pages and answers agree.
"""
from __future__ import annotations

import sqlite3
from typing import Any, Optional
from urllib.parse import urlencode

from agentenv_webarena.sites.forum import post_path
from agentenv_webarena.sites.gitlab.data import PRIMARY_USER
from agentenv_webarena.sites.gitlab.model import (
    ROLES,
    branch_commits,
    branch_files,
    clone_urls,
    display_date,
    issue_list,
    mr_list,
    project_members,
)
from agentenv_webarena.sites.gitlab.repository import contributor_counts
from agentenv_webarena.tasks.templates.base import (
    DONE,
    clear_and_type,
    click,
    goto,
    html_eval,
    pick,
    stop,
    string_eval,
    tab_focus,
    target,
    task,
    type_text,
    typeable,
    url_eval,
)
from agentenv_webarena.tasks.templates.common import (
    ALL_COMMENT_BODIES,
    BASE_FORUMS,
    BASE_GITLAB_GROUPS,
    BASE_GITLAB_USERS,
    GITLAB,
    ME,
    POST_URL_FUNC,
    REDDIT,
    TITLE,
    full_path,
    project_url,
    rows,
    visible_projects,
)

__all__ = ["TEMPLATES", "TEST_ONLY_TEMPLATES"]

INSTANCES = 6  # instances per template (fewer when the data offer fewer)
STATE = "document.querySelector('.issuable-status-badge').outerText"
NOTES = "[...document.querySelectorAll('.note-text')].map(e => e.outerText).join(' | ')"
ASSIGNEES = "document.querySelector('.assignees').outerText"
PROJECT_TITLE = "document.querySelector('h1.project-title').outerText"
VISIBILITY = "document.querySelector('.visibility-badge').outerText"


def _role_func(username: str) -> str:
    return f"func:gitlab_get_project_memeber_role(__page__, '{username}')"


def _task(intent_template: str, values: dict, start_url: str, ev: dict, sequence: list,
          sites: Optional[list[str]] = None) -> dict:
    return task(sites=sites or ["gitlab"], start_url=start_url, intent_template=intent_template, values=values,
                eval=ev, sequence=sequence)


# --- facts ------------------------------------------------------------------------------------------

def _mine(db: sqlite3.Connection) -> list[sqlite3.Row]:
    return [p for p in visible_projects(db) if p["namespace"] == PRIMARY_USER]


def _open(p: Any) -> list[dict]:
    """Reach a project's page as a user would: search for its path, then click its row in the results."""
    return [type_text("searchbox", "Search GitLab", p["path"]), click("link", f"{p['namespace']} / {p['name']}")]


def _unique_top(items: list, key) -> Optional[Any]:
    ranked = sorted(items, key=key, reverse=True)
    if not ranked or (len(ranked) > 1 and key(ranked[0]) == key(ranked[1])):
        return None
    return ranked[0]


def _issues(db: sqlite3.Connection, p: Any, state: str = "all") -> list[sqlite3.Row]:
    return issue_list(db, project_id=p["id"], state=state)


def _unique_titles(items: list) -> list:
    """Items whose title is unique in their list (so a title names one issue)."""
    titles = [i["title"] for i in items]
    return [i for i in items if titles.count(i["title"]) == 1 and typeable(i["title"])]


def _all_issues(db: sqlite3.Connection, state: str = "all") -> list[tuple[Any, Any]]:
    out = []
    for p in visible_projects(db):
        out += [(p, i) for i in _unique_titles(_issues(db, p, state))]
    return out


def _all_mrs(db: sqlite3.Connection) -> list[tuple[Any, Any]]:
    out = []
    for p in visible_projects(db):
        out += [(p, m) for m in _unique_titles(mr_list(db, project_id=p["id"], state="all"))]
    return out


def _side_branches(db: sqlite3.Connection, p: Any) -> list[dict]:
    """A project's branches other than the default one."""
    return rows(db, "SELECT name FROM gitlab_branches WHERE project_id = ? AND forked_at IS NOT NULL ORDER BY name",
                (p["id"],))


def _can_write(db: sqlite3.Connection, p: Any, level: int = 30) -> bool:
    return any(m["id"] == ME and m["access_level"] >= level for m in project_members(db, p["id"]))


def _user_name(db: sqlite3.Connection, username: str) -> str:
    return rows(db, "SELECT name FROM gitlab_users WHERE username = ?", (username,))[0]["name"]


def _others(db: sqlite3.Connection) -> list[dict]:
    return rows(db, "SELECT id, username, name, location FROM gitlab_users WHERE id != ? AND id <= ? ORDER BY id",
                (ME, BASE_GITLAB_USERS))


def _open_issue(p: Any, issue: Any) -> list[dict]:
    return [goto(project_url(p, "/-/issues?state=all")), click("link", issue["title"])]


def _open_mr(p: Any, mr: Any) -> list[dict]:
    return [goto(project_url(p, "/-/merge_requests?state=all")), click("link", mr["title"])]


# --- information seeking ----------------------------------------------------------------------------

def t5000_description(db, rng):
    tpl = "What does the GitLab project {{project}} say it is about?"
    return [_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(must_include=[p["description"]]),
                  [*_open(p), stop(p["description"])]) for p in pick(rng, visible_projects(db), INSTANCES)]


def t5001_ssh_clone(db, rng):
    tpl = "Show me the command to clone {{project}} with SSH."
    out = []
    for p in pick(rng, visible_projects(db), INSTANCES):
        ssh = clone_urls(p["namespace"], p["path"])[0]
        out.append(_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(must_include=[ssh]),
                         [*_open(p), stop(f"git clone {ssh}")]))
    return out


def t5002_commit_count(db, rng):
    tpl = "How many commits are there on the default branch of {{project}}?"
    out = []
    for p in pick(rng, visible_projects(db), INSTANCES):
        n = str(len(branch_commits(db, p["id"], p["default_branch"])))
        out.append(_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(exact=n), [*_open(p), stop(n)]))
    return out


def t5003_top_contributor(db, rng):
    tpl = "Who has made the most commits to {{project}}? Give their full name."
    out = []
    for p in visible_projects(db):
        top = _unique_top(contributor_counts(db, p["id"], p["default_branch"]), key=lambda r: r["commits"])
        if top is not None:
            out.append(_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(must_include=[top["name"]]),
                             [goto(project_url(p)), click("link", "Contributors"), stop(top["name"])]))
    return pick(rng, out, INSTANCES)


def t5004_commits_by_user_on_day(db, rng):
    tpl = "How many commits did {{user}} make to {{project}} on {{date}}?"
    cases = []
    for p in visible_projects(db):
        counts: dict[tuple[str, str], int] = {}
        for c in branch_commits(db, p["id"], p["default_branch"]):
            key = (c["author_name"], c["created_at"][:10])
            counts[key] = counts.get(key, 0) + 1
        cases += [(p, user, day, n) for (user, day), n in counts.items()]
    out = []
    for p, user, day, n in pick(rng, cases, INSTANCES):
        when = display_date(day + " 00:00:00")
        out.append(_task(tpl, {"user": user, "project": full_path(p), "date": when}, GITLAB, string_eval(exact=str(n)),
                         [goto(project_url(p)), click("link", "Commits"), stop(str(n))]))
    return out


def t5005_star_count(db, rng):
    tpl = "How many stars does the project {{project}} have?"
    return [_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(exact=str(p["stars"])),
                  [*_open(p), stop(str(p["stars"]))]) for p in pick(rng, visible_projects(db), INSTANCES)]


def t5006_open_issue_count(db, rng):
    tpl = "How many open issues does {{project}} have?"
    return [_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(exact=str(p["open_issues"])),
                  [goto(project_url(p)), click("link", contains="Issues "), stop(str(p["open_issues"]))])
            for p in pick(rng, visible_projects(db), INSTANCES)]


def t5007_issue_assignee(db, rng):
    tpl = 'Who is assigned to the issue "{{title}}" in {{project}}?'
    cases = [(p, i) for p, i in _all_issues(db) if i["assignees"] and "," not in i["assignees"]]
    out = []
    for p, i in pick(rng, cases, INSTANCES):
        name = _user_name(db, i["assignees"])
        out.append(_task(tpl, {"title": i["title"], "project": full_path(p)}, GITLAB,
                         string_eval(must_include=[name]), _open_issue(p, i) + [stop(name)]))
    return out


def t5008_milestone_due(db, rng):
    tpl = 'When is the milestone "{{milestone}}" of {{project}} due? Answer as YYYY-MM-DD.'
    out = []
    for p in visible_projects(db):
        ms = rows(db, "SELECT title, due_date FROM gitlab_milestones WHERE project_id = ?", (p["id"],))
        out += [_task(tpl, {"milestone": m["title"], "project": full_path(p)}, GITLAB,
                      string_eval(must_include=[m["due_date"]]),
                      [goto(project_url(p)), click("link", "Milestones"), stop(m["due_date"])]) for m in ms]
    return pick(rng, out, INSTANCES)


def t5009_latest_commit_on_branch(db, rng):
    tpl = "What is the message of the latest commit on the {{branch}} branch of {{project}}?"
    out = []
    for p in visible_projects(db):
        for b in _side_branches(db, p):
            c = branch_commits(db, p["id"], b["name"])[0]
            out.append(_task(tpl, {"branch": b["name"], "project": full_path(p)}, GITLAB,
                             string_eval(must_include=[c["title"]]),
                             [goto(project_url(p)), click("link", "Branches"), stop(c["title"])]))
    return pick(rng, out, INSTANCES)


def t5010_license(db, rng):
    tpl = "Which license does {{project}} use? Give its SPDX identifier."
    return [_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(must_include=[p["license"]]),
                  [*_open(p), stop(p["license"])])
            for p in pick(rng, [p for p in visible_projects(db) if p["license"]], INSTANCES)]


def t5011_user_detail(db, rng):
    tpl = "What is the {{detail}} of the GitLab user {{user}}?"
    note = "GitLab profiles here show no phone numbers."
    users = pick(rng, _others(db), INSTANCES + 2)
    out = []
    for k, u in enumerate(users):
        steps = [goto(f"{GITLAB}/{u['username']}")]
        if k < 2:
            out.append(_task(tpl, {"detail": "phone number", "user": u["username"]}, GITLAB,
                             string_eval(fuzzy="N/A", note=note), steps + [stop("N/A")]))
        else:
            out.append(_task(tpl, {"detail": "location", "user": u["username"]}, GITLAB,
                             string_eval(must_include=[u["location"]]), steps + [stop(u["location"])]))
    rng.shuffle(out)
    return out


def t5012_who_has_access(db, rng):
    tpl = "Who else has access to my project {{project}}? List their usernames."
    out = []
    for p in pick(rng, _mine(db), INSTANCES):
        names = [m["username"] for m in project_members(db, p["id"]) if m["id"] != ME]
        if names:
            out.append(_task(tpl, {"project": p["path"]}, GITLAB, string_eval(must_include=names),
                             [goto(project_url(p)), click("link", "Members"), stop(", ".join(names))]))
    return out


def t5013_fork_count(db, rng):
    tpl = "How many forks does {{project}} have?"
    return [_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(exact=str(p["forks"])),
                  [*_open(p), stop(str(p["forks"]))]) for p in pick(rng, visible_projects(db), INSTANCES)]


def t5014_mr_status(db, rng):
    tpl = 'What is the status of the merge request "{{title}}" in {{project}}: open, merged or closed?'
    words = {"opened": "open", "merged": "merged", "closed": "closed"}
    out = []
    by_state: dict[str, list] = {}
    for p, m in _all_mrs(db):
        by_state.setdefault(m["state"], []).append((p, m))
    for state, cases in sorted(by_state.items()):
        for p, m in pick(rng, cases, 2):
            out.append(_task(tpl, {"title": m["title"], "project": full_path(p)}, GITLAB,
                             string_eval(exact=words[state]), _open_mr(p, m) + [stop(words[state])]))
    return out


def t5015_mr_branches(db, rng):
    tpl = 'From which branch into which branch does the merge request "{{title}}" in {{project}} merge?'
    out = []
    for p, m in pick(rng, [c for c in _all_mrs(db) if c[1]["state"] == "opened"], INSTANCES):
        answer = f"{m['source_branch']} into {m['target_branch']}"
        out.append(_task(tpl, {"title": m["title"], "project": full_path(p)}, GITLAB,
                         string_eval(must_include=[m["source_branch"], m["target_branch"]]),
                         _open_mr(p, m) + [stop(answer)]))
    return out


def t5016_branch_count(db, rng):
    tpl = "How many branches does {{project}} have?"
    out = []
    for p in pick(rng, visible_projects(db), INSTANCES):
        n = str(rows(db, "SELECT COUNT(*) AS n FROM gitlab_branches WHERE project_id = ?", (p["id"],))[0]["n"])
        out.append(_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(exact=n), [*_open(p), stop(n)]))
    return out


def t5017_most_starred_in_group(db, rng):
    tpl = "Which project of the {{group}} group has the most stars?"
    out = []
    for g in rows(db, "SELECT path, name FROM gitlab_groups WHERE id <= ? ORDER BY id", (BASE_GITLAB_GROUPS,)):
        top = _unique_top([p for p in visible_projects(db) if p["namespace"] == g["path"]], key=lambda p: p["stars"])
        if top is not None:
            out.append(_task(tpl, {"group": g["name"]}, GITLAB, string_eval(must_include=[top["name"]]),
                             [goto(f"{GITLAB}/{g['path']}"), stop(top["name"])]))
    return pick(rng, out, INSTANCES)


def t5018_language(db, rng):
    tpl = "What is the main programming language of {{project}}?"
    return [_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(exact=p["language"]),
                  [*_open(p), stop(p["language"])]) for p in pick(rng, visible_projects(db), INSTANCES)]


def t5019_issue_comment_count(db, rng):
    tpl = 'How many comments does the issue "{{title}}" in {{project}} have?'
    out = []
    for p, i in pick(rng, _all_issues(db), INSTANCES):
        out.append(_task(tpl, {"title": i["title"], "project": full_path(p)}, GITLAB,
                         string_eval(exact=str(i["notes"])), _open_issue(p, i) + [stop(str(i["notes"]))]))
    return out


def t5020_closed_with_label(db, rng):
    tpl = 'How many closed issues labeled "{{label}}" does {{project}} have?'
    out = []
    for p in visible_projects(db):
        for label in ("bug", "enhancement", "documentation"):
            n = len(issue_list(db, project_id=p["id"], state="closed", label=label))
            if n:
                out.append(_task(tpl, {"label": label, "project": full_path(p)}, GITLAB, string_eval(exact=str(n)),
                                 [goto(project_url(p, "/-/issues")), click("link", label),
                                  click("link", contains="Closed"), stop(str(n))]))
    return pick(rng, out, INSTANCES)


def t5021_group_owner(db, rng):
    tpl = "Who is the owner of the {{group}} group? Give the username."
    out = []
    for g in rows(db, "SELECT g.id, g.path, g.name, u.username FROM gitlab_groups g JOIN gitlab_group_members m "
                      "ON m.group_id = g.id JOIN gitlab_users u ON u.id = m.user_id WHERE m.access_level = 50 "
                      "AND g.id <= ? ORDER BY g.id", (BASE_GITLAB_GROUPS,)):
        out.append(_task(tpl, {"group": g["name"]}, GITLAB, string_eval(must_include=[g["username"]]),
                         [goto(f"{GITLAB}/explore/groups"), click("link", g["name"]), stop(g["username"])]))
    return pick(rng, out, INSTANCES)


def t5022_created_on(db, rng):
    tpl = "On which day was the project {{project}} created?"
    out = []
    for p in pick(rng, visible_projects(db), INSTANCES):
        when = display_date(p["created_at"])
        out.append(_task(tpl, {"project": full_path(p)}, GITLAB, string_eval(must_include=[when]),
                         [*_open(p), stop(when)]))
    return out


def t5023_my_more_starred(db, rng):
    tpl = "Which of my projects {{a}} and {{b}} has more stars?"
    mine = [p for p in _mine(db) if p["visibility"] == "public"]
    pairs = [(a, b) for a in mine for b in mine if a["id"] < b["id"] and a["stars"] != b["stars"]]
    out = []
    for a, b in pick(rng, pairs, INSTANCES):
        top = a if a["stars"] > b["stars"] else b
        out.append(_task(tpl, {"a": a["path"], "b": b["path"]}, GITLAB, string_eval(exact=top["path"]),
                         [click("link", "Your profile"), stop(top["path"])]))
    return out


def t5024_top3_contributors(db, rng):
    tpl = "List the {{attribute}} of the top 3 contributors to {{project}}, ranked by number of commits."
    out = []
    for p in visible_projects(db):
        ranked = contributor_counts(db, p["id"], p["default_branch"])
        if len(ranked) < 4 or ranked[2]["commits"] == ranked[3]["commits"]:
            continue
        attr, key = rng.choice((("usernames", "username"), ("emails", "email")))
        answers = [r[key] for r in ranked[:3]]
        out.append(_task(tpl, {"attribute": attr, "project": full_path(p)}, GITLAB, string_eval(must_include=answers),
                         [goto(project_url(p)), click("link", "Contributors"), stop(", ".join(answers))]))
    return pick(rng, out, INSTANCES)


# --- navigation (url_match) -----------------------------------------------------------------------

def t5030_issues_with_label(db, rng):
    tpl = 'Display the issues of {{project}} labeled "{{label}}".'
    out = []
    for p in visible_projects(db):
        for label in ("bug", "enhancement", "accessibility", "good first issue"):
            if issue_list(db, project_id=p["id"], label=label):
                ref = project_url(p, "/-/issues?" + urlencode({"label_name[]": label}))
                out.append(_task(tpl, {"project": full_path(p), "label": label}, project_url(p), url_eval(ref),
                                 [click("link", contains="Issues "), click("link", label), stop(DONE)]))
    return pick(rng, out, INSTANCES)


def t5031_open_mrs_page(db, rng):
    tpl = "Show me the {{state}} merge requests of {{project}}."
    states = {"open": "opened", "merged": "merged", "closed": "closed"}
    out = []
    for p in visible_projects(db):
        for word, state in states.items():
            if mr_list(db, project_id=p["id"], state=state):
                out.append(_task(tpl, {"state": word, "project": full_path(p)}, project_url(p),
                                 url_eval(project_url(p, f"/-/merge_requests?state={state}")),
                                 [click("link", contains="Merge requests "),
                                  click("link", contains={"open": "Open ", "merged": "Merged ",
                                                          "closed": "Closed "}[word]), stop(DONE)]))
    return pick(rng, out, INSTANCES)


def t5032_my_work(db, rng):
    tpl = "Check out the {{kind}} assigned to me that are {{state}}."
    out = []
    for kind, link, path in (("issues", "Your issues", "/dashboard/issues"),
                             ("merge requests", "Your merge requests", "/dashboard/merge_requests")):
        states = {"open": ("opened", "Open "), "closed": ("closed", "Closed ")}
        if kind == "merge requests":
            states["merged"] = ("merged", "Merged ")
        for word, (state, tab) in states.items():
            ref = f"{GITLAB}{path}?assignee_username={PRIMARY_USER}&state={state}"
            out.append(_task(tpl, {"kind": kind, "state": word}, f"{GITLAB}/explore", url_eval(ref),
                             [click("link", link), click("link", contains=tab), stop(DONE)]))
    return out


def t5033_branch_commits_page(db, rng):
    tpl = "Open the list of commits on the {{branch}} branch of {{project}}."
    out = []
    for p in visible_projects(db):
        for b in _side_branches(db, p):
            out.append(_task(tpl, {"branch": b["name"], "project": full_path(p)}, project_url(p),
                             url_eval(project_url(p, f"/-/commits/{b['name']}")),
                             [click("link", "Commits"), click("link", b["name"]), stop(DONE)]))
    return pick(rng, out, INSTANCES)


def t5034_open_file(db, rng):
    tpl = "Open the file {{file}} of {{project}}."
    out = []
    for p in visible_projects(db):
        for f in branch_files(db, p["id"], p["default_branch"]):
            if "/" not in f["path"] and f["path"] != "README.md":
                out.append(_task(tpl, {"file": f["path"], "project": full_path(p)}, project_url(p),
                                 url_eval(project_url(p, f"/-/blob/{p['default_branch']}/{f['path']}")),
                                 [click("link", f["path"]), stop(DONE)]))
    return pick(rng, out, INSTANCES)


def t5035_issue_author_profile(db, rng):
    tpl = 'Show me the profile of the person who opened the issue "{{title}}" in {{project}}.'
    out = []
    for p, i in pick(rng, [c for c in _all_issues(db) if c[1]["author_username"] != PRIMARY_USER], INSTANCES):
        out.append(_task(tpl, {"title": i["title"], "project": full_path(p)}, GITLAB,
                         url_eval(f"{GITLAB}/{i['author_username']}"),
                         _open_issue(p, i) + [click("link", i["author_name"]), stop(DONE)]))
    return out


def t5036_issue_closed_check(db, rng):
    tpl = 'Open the issue of {{project}} titled "{{title}}" and tell me whether it is open or closed.'
    out = []
    for p, i in pick(rng, _all_issues(db), INSTANCES):
        word = "open" if i["state"] == "opened" else "closed"
        ev = url_eval(project_url(p, f"/-/issues/{i['iid']}"), answers={"exact_match": word})
        out.append(_task(tpl, {"project": full_path(p), "title": i["title"]}, GITLAB, ev,
                         _open_issue(p, i) + [stop(word)]))
    return out


def t5037_milestone_page(db, rng):
    tpl = 'Go to the milestone "{{milestone}}" of {{project}}.'
    out = []
    for p in visible_projects(db):
        for m in rows(db, "SELECT iid, title FROM gitlab_milestones WHERE project_id = ?", (p["id"],)):
            out.append(_task(tpl, {"milestone": m["title"], "project": full_path(p)}, project_url(p),
                             url_eval(project_url(p, f"/-/milestones/{m['iid']}")),
                             [click("link", "Milestones"), click("link", m["title"]), stop(DONE)]))
    return pick(rng, out, INSTANCES)


# --- state changing (program_html) ----------------------------------------------------------------

_NEW_PROJECTS = ["planner", "web-arena-notes", "reading-list", "garden-tracker", "trip-planner", "habit-log",
                 "photo-sorter", "meal-planner", "quiz-app", "link-saver"]


def t5050_create_project(db, rng):
    tpl = "Create a new {{visibility}} project named {{name}}."
    taken = {p["path"] for p in _mine(db)}
    out = []
    for name in pick(rng, [n for n in _NEW_PROJECTS if n not in taken], INSTANCES):
        vis = rng.choice(("public", "private"))
        ev = html_eval([target(f"{GITLAB}/{PRIMARY_USER}/{name}", PROJECT_TITLE, exact=name),
                        target(f"{GITLAB}/{PRIMARY_USER}/{name}", VISIBILITY, exact=vis.capitalize())])
        seq = [click("link", "New project"), type_text("textbox", "Project name", name, enter=False),
               click("radio", vis.capitalize()), click("button", "Create project"), stop(DONE)]
        out.append(_task(tpl, {"visibility": vis, "name": name}, GITLAB, ev, seq))
    return out


def _invite_steps(usernames: list[str], role: str) -> list[dict]:
    return [click("link", "Members"), type_text("textbox", "Usernames (comma-separated)", ", ".join(usernames),
                                                enter=False), click("radio", role), click("button", "Invite")]


def t5051_create_project_with_members(db, rng):
    tpl = 'Create a new private project "{{name}}" and add {{members}} to it as {{role}}s.'
    taken = {p["path"] for p in _mine(db)}
    out = []
    for name in pick(rng, [n for n in _NEW_PROJECTS if n not in taken], INSTANCES):
        users = [u["username"] for u in pick(rng, _others(db), 2)]
        role = rng.choice(("Guest", "Reporter", "Developer", "Maintainer"))
        members_url = f"{GITLAB}/{PRIMARY_USER}/{name}/-/project_members"
        ev = html_eval([target(members_url, _role_func(u), exact=role) for u in users])
        seq = ([click("link", "New project"), type_text("textbox", "Project name", name, enter=False),
                click("button", "Create project")] + _invite_steps(users, role) + [stop(DONE)])
        out.append(_task(tpl, {"name": name, "members": " and ".join(users), "role": role}, GITLAB, ev, seq))
    return out


def t5052_invite_member(db, rng):
    tpl = "Invite {{user}} to my project {{project}} as a {{role}}."
    out = []
    for p in _mine(db):
        current = {m["username"] for m in project_members(db, p["id"])}
        for u in pick(rng, [u for u in _others(db) if u["username"] not in current], 2):
            role = rng.choice(("Guest", "Reporter", "Developer", "Maintainer"))
            ev = html_eval([target(project_url(p, "/-/project_members"), _role_func(u["username"]), exact=role)])
            out.append(_task(tpl, {"user": u["username"], "project": p["path"], "role": role}, project_url(p), ev,
                             _invite_steps([u["username"]], role) + [stop(DONE)]))
    return pick(rng, out, INSTANCES)


def t5053_change_role(db, rng):
    tpl = "Change the role of {{user}} in my project {{project}} to {{role}}."
    out = []
    for p in _mine(db):
        for m in project_members(db, p["id"]):
            if m["access_level"] >= 50:
                continue
            role = rng.choice([r for lvl, r in ROLES.items() if lvl not in (50, m["access_level"])])
            ev = html_eval([target(project_url(p, "/-/project_members"), _role_func(m["username"]), exact=role)])
            seq = [click("link", "Members"), click("link", f"Edit role of {m['username']}"), click("radio", role),
                   click("button", "Update role"), stop(DONE)]
            out.append(_task(tpl, {"user": m["username"], "project": p["path"], "role": role}, project_url(p), ev, seq))
    return pick(rng, out, INSTANCES)


_ISSUES_TO_OPEN = ["Add a search box to the settings page", "Document the release process",
                   "Support exporting data as JSON", "Crash when the network is offline",
                   "Add a high contrast theme", "Translate the README into Spanish", "Improve loading time on mobile",
                   "Add unit tests for the parser module"]


def _issue_page_targets(title: str) -> list[dict]:
    return [target("last", TITLE, exact=title)]


def t5054_open_issue(db, rng):
    tpl = 'Open an issue in {{project}} titled "{{title}}".'
    out = []
    for p, title in zip(pick(rng, visible_projects(db), INSTANCES), pick(rng, _ISSUES_TO_OPEN, INSTANCES),
                        strict=False):
        ev = html_eval(_issue_page_targets(title), with_url=project_url(p, "/-/issues"))
        seq = [click("link", contains="Issues "), click("link", "New issue"),
               type_text("textbox", "Title", title, enter=False), click("button", "Create issue"), stop(DONE)]
        out.append(_task(tpl, {"project": full_path(p), "title": title}, project_url(p), ev, seq))
    return out


def t5055_issue_with_assignee_due(db, rng):
    tpl = ('Create an issue in {{project}} titled "{{title}}", assign it to {{user}} and set its due date to '
           '{{due}}.')
    out = []
    for p, title in zip(pick(rng, _mine(db), INSTANCES), pick(rng, _ISSUES_TO_OPEN, INSTANCES), strict=False):
        members = [m for m in project_members(db, p["id"]) if m["id"] != ME]
        if not members:
            continue
        m = rng.choice(members)
        due = f"2023-{rng.randint(7, 12):02d}-{rng.randint(1, 28):02d}"
        ev = html_eval([target("last", TITLE, exact=title), target("last", ASSIGNEES, must_include=[m["name"]]),
                        target("last", "document.querySelector('.due-date-value').outerText", exact=due)],
                       with_url=project_url(p, "/-/issues"))
        seq = [click("link", contains="Issues "), click("link", "New issue"),
               type_text("textbox", "Title", title, enter=False),
               type_text("textbox", "Assignee username", m["username"], enter=False),
               type_text("textbox", "Due date (YYYY-MM-DD)", due, enter=False), click("button", "Create issue"),
               stop(DONE)]
        out.append(_task(tpl, {"project": full_path(p), "title": title, "user": m["username"], "due": due},
                         project_url(p), ev, seq))
    return out


_COMMENTS = ["Thanks, I will take a look this week.", "Can you attach a screenshot?", "This is still happening for me.",
             "Fixed in the latest release, please retest.", "I agree, let us prioritise this.",
             "Good idea, I can help with this.", "Please rebase on the main branch.", "Looks great, approving now."]


def t5056_comment_issue(db, rng):
    tpl = 'Post the comment "{{comment}}" on the issue "{{title}}" in {{project}}.'
    out = []
    for (p, i), text in zip(pick(rng, _all_issues(db), INSTANCES), pick(rng, _COMMENTS, INSTANCES), strict=False):
        ev = html_eval([target(project_url(p, f"/-/issues/{i['iid']}"), NOTES, must_include=[text])])
        seq = _open_issue(p, i) + [type_text("textbox", "Comment", text, enter=False), click("button", "Comment"),
                                   stop(DONE)]
        out.append(_task(tpl, {"comment": text, "title": i["title"], "project": full_path(p)}, GITLAB, ev, seq))
    return out


def t5057_comment_mr(db, rng):
    tpl = 'Post "{{comment}}" on the merge request "{{title}}" in {{project}}.'
    out = []
    for (p, m), text in zip(pick(rng, _all_mrs(db), INSTANCES), pick(rng, _COMMENTS, INSTANCES), strict=False):
        ev = html_eval([target(project_url(p, f"/-/merge_requests/{m['iid']}"), NOTES, must_include=[text])])
        seq = _open_mr(p, m) + [type_text("textbox", "Comment", text, enter=False), click("button", "Comment"),
                                stop(DONE)]
        out.append(_task(tpl, {"comment": text, "title": m["title"], "project": full_path(p)}, GITLAB, ev, seq))
    return out


def _my_issues(db: sqlite3.Connection, state: str) -> list[tuple[Any, Any]]:
    return [(p, i) for p, i in _all_issues(db, state) if _can_write(db, p, 20)]


def t5058_close_issue(db, rng):
    tpl = 'Close the issue "{{title}}" in {{project}}.'
    out = []
    for p, i in pick(rng, _my_issues(db, "opened"), INSTANCES):
        ev = html_eval([target(project_url(p, f"/-/issues/{i['iid']}"), STATE, exact="Closed")])
        out.append(_task(tpl, {"title": i["title"], "project": full_path(p)}, GITLAB, ev,
                         _open_issue(p, i) + [click("button", "Close issue"), stop(DONE)]))
    return out


def t5059_reopen_issue(db, rng):
    tpl = 'Reopen the closed issue "{{title}}" in {{project}}.'
    out = []
    for p, i in pick(rng, _my_issues(db, "closed"), INSTANCES):
        ev = html_eval([target(project_url(p, f"/-/issues/{i['iid']}"), STATE, exact="Open")])
        out.append(_task(tpl, {"title": i["title"], "project": full_path(p)}, GITLAB, ev,
                         _open_issue(p, i) + [click("button", "Reopen issue"), stop(DONE)]))
    return out


def t5060_assign_issue(db, rng):
    tpl = 'Assign the issue "{{title}}" in {{project}} to {{user}}.'
    out = []
    for p, i in pick(rng, _my_issues(db, "opened"), INSTANCES):
        current = set((i["assignees"] or "").split(", "))
        u = rng.choice([u for u in _others(db) if u["username"] not in current])
        ev = html_eval([target(project_url(p, f"/-/issues/{i['iid']}"), ASSIGNEES, must_include=[u["name"]])])
        seq = _open_issue(p, i) + [type_text("textbox", "Assign to", u["username"], enter=False),
                                   click("button", "Assign"), stop(DONE)]
        out.append(_task(tpl, {"title": i["title"], "project": full_path(p), "user": u["username"]}, GITLAB, ev, seq))
    return out


def t5061_label_issue(db, rng):
    tpl = 'Add the label "{{label}}" to the issue "{{title}}" in {{project}}.'
    out = []
    for p, i in pick(rng, _my_issues(db, "opened"), INSTANCES):
        have = set((i["labels"] or "").split(", "))
        label = rng.choice([n for n in ("bug", "enhancement", "documentation", "question", "help wanted")
                            if n not in have])
        ev = html_eval([target(project_url(p, f"/-/issues/{i['iid']}"),
                               "document.querySelector('.labels-list').outerText", must_include=[label])])
        seq = _open_issue(p, i) + [type_text("textbox", "Add label", label, enter=False),
                                   click("button", "Add label"), stop(DONE)]
        out.append(_task(tpl, {"label": label, "title": i["title"], "project": full_path(p)}, GITLAB, ev, seq))
    return out


_MILESTONES = [("Summer release", "2023-07-01", "2023-08-31"), ("Accessibility audit", "2023-07-10", "2023-07-24"),
               ("Hackathon", "2023-08-05", "2023-08-06"), ("v3.0", "2023-09-01", "2023-11-30"),
               ("Bug bash", "2023-07-17", "2023-07-21"), ("Docs week", "2023-10-02", "2023-10-06")]


def t5062_create_milestone(db, rng):
    tpl = 'Create a milestone "{{title}}" in {{project}} starting on {{start}} and ending on {{due}}.'
    out = []
    for p, (title, start, due) in zip(pick(rng, _mine(db), INSTANCES), _MILESTONES, strict=False):
        ev = html_eval([target("last", "document.querySelector('h1.milestone-title').outerText", exact=title),
                        target("last", "document.querySelector('.start-date').outerText", exact=start),
                        target("last", "document.querySelector('dd.due-date').outerText", exact=due)],
                       with_url=project_url(p, "/-/milestones"))
        seq = [click("link", "Milestones"), click("link", "New milestone"),
               type_text("textbox", "Title", title, enter=False),
               type_text("textbox", "Start date (YYYY-MM-DD)", start, enter=False),
               type_text("textbox", "Due date (YYYY-MM-DD)", due, enter=False), click("button", "Create milestone"),
               stop(DONE)]
        out.append(_task(tpl, {"title": title, "project": full_path(p), "start": start, "due": due}, project_url(p),
                         ev, seq))
    return out


_NEW_FILES = [("CHANGELOG.md", "# Changelog"), ("AUTHORS", "Byte Blaze"), ("CODE_OF_CONDUCT.md", "Be kind."),
              ("notes.txt", "Remember to update the docs."), ("TODO.md", "- write more tests"),
              ("SECURITY.md", "Report issues privately.")]


def t5063_create_file(db, rng):
    tpl = 'Create a file named {{file}} in {{project}} that contains "{{content}}".'
    out = []
    for p, (name, text) in zip(pick(rng, _mine(db), INSTANCES), pick(rng, _NEW_FILES, INSTANCES), strict=False):
        if any(f["path"] == name for f in branch_files(db, p["id"], p["default_branch"])):
            continue
        ev = html_eval([target(project_url(p, f"/-/raw/{p['default_branch']}/{name}"), "", must_include=[text])])
        seq = [click("link", "New file"), type_text("textbox", "File name", name, enter=False),
               type_text("textbox", "File content", text, enter=False), click("button", "Commit changes"), stop(DONE)]
        out.append(_task(tpl, {"file": name, "project": full_path(p), "content": text}, project_url(p), ev, seq))
    return out


_FOLDERS = [("news", "https://news.example.com"), ("recipes", "https://food.example.org"),
            ("links", "https://example.net/reading"), ("music", "https://radio.example.com"),
            ("papers", "https://arxiv.example.org/list"), ("tools", "https://tools.example.dev")]


def t5064_create_folder_with_file(db, rng):
    tpl = 'Create a folder named {{folder}} in {{project}} and, inside it, a file urls.txt containing "{{url}}".'
    out = []
    for p, (folder, url) in zip(pick(rng, _mine(db), INSTANCES), pick(rng, _FOLDERS, INSTANCES), strict=False):
        ev = html_eval([target(project_url(p, f"/-/raw/{p['default_branch']}/{folder}/urls.txt"), "",
                               must_include=[url])])
        seq = [click("link", "Browse files"), click("link", "New directory"),
               type_text("textbox", "Directory name", folder, enter=False), click("button", "Create directory"),
               click("link", "New file"), type_text("textbox", "File name", "urls.txt", enter=False),
               type_text("textbox", "File content", url, enter=False), click("button", "Commit changes"), stop(DONE)]
        out.append(_task(tpl, {"folder": folder, "project": full_path(p), "url": url}, project_url(p), ev, seq))
    return out


def _starred(db: sqlite3.Connection) -> set[int]:
    return {r["project_id"] for r in rows(db, "SELECT project_id FROM gitlab_stars WHERE user_id = ?", (ME,))}


def t5065_star(db, rng):
    tpl = "Star the project {{project}}."
    starred = _starred(db)
    out = []
    for p in pick(rng, [p for p in visible_projects(db) if p["id"] not in starred], INSTANCES):
        ev = html_eval([target(f"{GITLAB}/users/{PRIMARY_USER}/starred",
                               "document.querySelector('.projects-list').outerText",
                               must_include=[f"{p['namespace']} / {p['name']}"])])
        out.append(_task(tpl, {"project": full_path(p)}, GITLAB, ev,
                         [goto(project_url(p)), click("button", "Star"), stop(DONE)]))
    return out


def t5066_star_top_n(db, rng):
    tpl = "Star the {{n}} most starred projects in the {{group}} group."
    starred = _starred(db)
    out = []
    for g in rows(db, "SELECT path, name FROM gitlab_groups WHERE id <= ? ORDER BY id", (BASE_GITLAB_GROUPS,)):
        ranked = sorted([p for p in visible_projects(db) if p["namespace"] == g["path"]], key=lambda p: -p["stars"])
        n = 2
        if len(ranked) <= n or ranked[n - 1]["stars"] == ranked[n]["stars"]:
            continue
        top = ranked[:n]
        if any(p["id"] in starred for p in top):
            continue
        ev = html_eval([target(f"{GITLAB}/users/{PRIMARY_USER}/starred",
                               "document.querySelector('.projects-list').outerText",
                               must_include=[f"{p['namespace']} / {p['name']}" for p in top])])
        seq = [goto(f"{GITLAB}/{g['path']}")]
        for p in top:
            seq += [goto(project_url(p)), click("button", "Star")]
        out.append(_task(tpl, {"n": "two", "group": g["name"]}, GITLAB, ev, seq + [stop(DONE)]))
    return out


def t5067_fork(db, rng):
    tpl = "Fork {{project}} into my namespace."
    mine = {p["path"] for p in _mine(db)}
    out = []
    for p in pick(rng, [p for p in visible_projects(db) if p["namespace"] != PRIMARY_USER and p["path"] not in mine
                        and p["visibility"] == "public"], INSTANCES):
        fork_url = f"{GITLAB}/{PRIMARY_USER}/{p['path']}"
        ev = html_eval([target(fork_url, PROJECT_TITLE, exact=p["name"]),
                        target(fork_url, "document.querySelector('.forked-from').outerText",
                               must_include=[f"{p['namespace']} / {p['name']}"])])
        out.append(_task(tpl, {"project": full_path(p)}, GITLAB, ev,
                         [goto(project_url(p)), click("link", "Fork"), click("button", "Fork project"), stop(DONE)]))
    return out


def t5068_visibility(db, rng):
    tpl = "Make my project {{project}} {{visibility}}."
    out = []
    for p in pick(rng, _mine(db), INSTANCES):
        vis = "public" if p["visibility"] == "private" else "private"
        ev = html_eval([target(project_url(p), VISIBILITY, exact=vis.capitalize())])
        seq = [click("link", "Settings"), click("radio", vis.capitalize()), click("button", "Save changes"),
               stop(DONE)]
        out.append(_task(tpl, {"project": p["path"], "visibility": vis}, project_url(p), ev, seq))
    return out


_DESCRIPTIONS = ["A small tool I maintain in my spare time.", "Personal experiments, not for production use.",
                 "Work in progress: contributions welcome.", "Archived: see the newer project instead.",
                 "Notes and scripts for my daily workflow.", "A weekend project that grew."]


def t5069_edit_description(db, rng):
    tpl = 'Change the description of my project {{project}} to "{{description}}".'
    out = []
    for p, text in zip(pick(rng, _mine(db), INSTANCES), pick(rng, _DESCRIPTIONS, INSTANCES), strict=False):
        ev = html_eval([target(project_url(p), "document.querySelector('.project-description').outerText", exact=text)])
        seq = ([click("link", "Settings")] + clear_and_type("textbox", "Project description", text)
               + [click("button", "Save changes"), stop(DONE)])
        out.append(_task(tpl, {"project": p["path"], "description": text}, project_url(p), ev, seq))
    return out


_STATUSES = ["Busy", "On vacation until Monday", "Working from home", "Reviewing merge requests",
             "Out sick", "Focusing, replies may be slow"]


def t5070_set_status(db, rng):
    tpl = 'Set my GitLab status to "{{status}}".'
    out = []
    for text in pick(rng, _STATUSES, INSTANCES):
        ev = html_eval([target(f"{GITLAB}/{PRIMARY_USER}", "document.querySelector('.user-status').outerText",
                               exact=text)])
        seq = ([click("link", "Edit profile")] + clear_and_type("textbox", "Status message", text)
               + [click("button", "Update profile settings"), stop(DONE)])
        out.append(_task(tpl, {"status": text}, GITLAB, ev, seq))
    return out


def t5071_set_website(db, rng):
    tpl = "Set the website URL on my GitLab profile to {{url}}."
    sites = ["https://byteblaze.example.com", "https://blog.byteblaze.dev", "https://byteblaze.example.org/about",
             "https://www.example.com/~byteblaze", "https://byteblaze.example.net", "https://portfolio.example.io"]
    out = []
    for url in pick(rng, sites, INSTANCES):
        ev = html_eval([target(f"{GITLAB}/{PRIMARY_USER}", "document.querySelector('.profile-website').outerText",
                               exact=url)])
        seq = ([click("link", "Edit profile")] + clear_and_type("textbox", "Website URL", url)
               + [click("button", "Update profile settings"), stop(DONE)])
        out.append(_task(tpl, {"url": url}, GITLAB, ev, seq))
    return out


def t5072_follow(db, rng):
    tpl = "Follow {{users}} on GitLab."
    following = {r["username"] for r in rows(db, "SELECT u.username FROM gitlab_follows f JOIN gitlab_users u ON "
                                                  "u.id = f.followee_id WHERE f.follower_id = ?", (ME,))}
    pool = [u["username"] for u in _others(db) if u["username"] not in following]
    out = []
    for _ in range(INSTANCES):
        users = pick(rng, pool, 2)
        ev = html_eval([target(f"{GITLAB}/users/{PRIMARY_USER}/following",
                               "document.querySelector('.users-list').outerText",
                               must_include=[f"@{u}" for u in users])])
        seq = []
        for u in users:
            seq += [goto(f"{GITLAB}/{u}"), click("button", "Follow")]
        out.append(_task(tpl, {"users": " and ".join(users)}, GITLAB, ev, seq + [stop(DONE)]))
    return out


def t5073_readme_line(db, rng):
    tpl = 'Replace the README of my project {{project}} with the single line "{{text}}".'
    texts = ["This project is no longer maintained.", "Moved to a new home, see my profile.",
             "Read the docs folder to get started.", "Under construction.", "Pull requests are welcome.",
             "Thanks for visiting!"]
    out = []
    for p, text in zip(pick(rng, [p for p in _mine(db) if p["default_branch"] == "main"], INSTANCES),
                       pick(rng, texts, INSTANCES), strict=False):
        ev = html_eval([target(project_url(p, "/-/raw/main/README.md"), "", must_include=[text])])
        seq = ([click("link", "README.md"), click("link", "Edit")] + clear_and_type("textbox", "File content", text)
               + [click("button", "Commit changes"), stop(DONE)])
        out.append(_task(tpl, {"project": p["path"], "text": text}, project_url(p), ev, seq))
    return out


def t5074_create_mr(db, rng):
    tpl = ("Submit a merge request in {{project}} to merge the {{source}} branch into {{target}}, titled "
           '"{{title}}", with {{reviewer}} as reviewer.')
    titles = ["Ready for review", "Merge latest work", "Bring the feature branch in", "Prepare the release",
              "Land the docs update", "Merge fixes"]
    out = []
    for p in visible_projects(db):
        if not _can_write(db, p):
            continue
        for b in _side_branches(db, p):
            members = [m for m in project_members(db, p["id"]) if m["id"] != ME]
            if not members:
                continue
            m = rng.choice(members)
            title = rng.choice(titles)
            ev = html_eval([target("last", TITLE, exact=title),
                            target("last", "document.querySelector('.source-branch').outerText", exact=b["name"]),
                            target("last", "document.querySelector('.target-branch').outerText",
                                   exact=p["default_branch"]),
                            target("last", "document.querySelector('.reviewers').outerText", must_include=[m["name"]])],
                           with_url=project_url(p, "/-/merge_requests"))
            seq = [click("link", contains="Merge requests "), click("link", "New merge request"),
                   type_text("textbox", "Source branch", b["name"], enter=False),
                   type_text("textbox", "Target branch", p["default_branch"], enter=False),
                   type_text("textbox", "Title", title, enter=False),
                   type_text("textbox", "Reviewer username", m["username"], enter=False),
                   click("button", "Create merge request"), stop(DONE)]
            out.append(_task(tpl, {"project": full_path(p), "source": b["name"], "target": p["default_branch"],
                                   "title": title, "reviewer": m["username"]}, project_url(p), ev, seq))
    return pick(rng, out, INSTANCES)


def t5075_merge_mr(db, rng):
    tpl = 'Merge the merge request "{{title}}" in {{project}}.'
    cases = [(p, m) for p, m in _all_mrs(db) if m["state"] == "opened" and _can_write(db, p)]
    out = []
    for p, m in pick(rng, cases, INSTANCES):
        ev = html_eval([target(project_url(p, f"/-/merge_requests/{m['iid']}"), STATE, exact="Merged")])
        out.append(_task(tpl, {"title": m["title"], "project": full_path(p)}, GITLAB, ev,
                         _open_mr(p, m) + [click("button", "Merge"), stop(DONE)]))
    return out


def t5076_request_review(db, rng):
    tpl = 'Ask {{user}} to review the merge request "{{title}}" in {{project}}.'
    cases = [(p, m) for p, m in _all_mrs(db) if m["state"] == "opened" and _can_write(db, p)]
    out = []
    for p, m in pick(rng, cases, INSTANCES):
        u = rng.choice([u for u in _others(db) if u["username"] != m["reviewer_username"]])
        ev = html_eval([target(project_url(p, f"/-/merge_requests/{m['iid']}"),
                               "document.querySelector('.reviewers').outerText", must_include=[u["name"]])])
        seq = _open_mr(p, m) + [type_text("textbox", "Reviewer username", u["username"], enter=False),
                                click("button", "Request review"), stop(DONE)]
        out.append(_task(tpl, {"user": u["username"], "title": m["title"], "project": full_path(p)}, GITLAB, ev, seq))
    return out


# --- gitlab + reddit --------------------------------------------------------------------------------

_MULTI = ["gitlab", "reddit"]
_FORUM_FOR = {"Python": "MachineLearning", "JavaScript": "technology", "TypeScript": "technology",
              "Rust": "technology", "Go": "technology", "C": "technology", "C++": "gaming", "CSS": "technology",
              "HTML": "technology", "Shell": "technology", "Markdown": "books"}
_SUBMISSION_TITLE = "document.querySelector('.submission__title').outerText"


def _submit_steps(title: str, body: str = "") -> list[dict]:
    steps = [click("link", "Submit a post"), type_text("textbox", "Title", title, enter=False)]
    if body:
        steps.append(type_text("textbox", "Body", body, enter=False))
    return steps + [click("button", "Create submission")]


def t5100_promote_project(db, rng):
    tpl = ('Promote the GitLab project {{project}} in the {{forum}} forum: post its description as the title and '
           "its path as the text.")
    out = []
    for p in pick(rng, [p for p in visible_projects(db) if p["language"] in _FORUM_FOR and typeable(p["description"])],
                  INSTANCES):
        forum_name = _FORUM_FOR[p["language"]]
        ev = html_eval([target(POST_URL_FUNC, _SUBMISSION_TITLE, exact=p["description"]),
                        target(POST_URL_FUNC, "document.querySelector('.submission__body').outerText",
                               must_include=[full_path(p)])], with_url=f"{REDDIT}/f/{forum_name}")
        seq = [tab_focus(1)] + _submit_steps(p["description"], full_path(p)) + [stop(DONE)]
        out.append(_task(tpl, {"project": full_path(p), "forum": forum_name},
                         f"{project_url(p)} |AND| {REDDIT}/f/{forum_name}", ev, seq, sites=_MULTI))
    return out


def t5101_issue_from_forum_post(db, rng):
    tpl = "Open an issue in {{project}} whose title is the title of the newest post in the {{forum}} forum."
    forums = rows(db, "SELECT f.name, (SELECT s.title FROM forum_submissions s WHERE s.forum_id = f.id "
                      "ORDER BY s.created_at DESC, s.id DESC LIMIT 1) AS newest FROM forum_forums f WHERE f.id <= ? "
                      "ORDER BY f.id", (BASE_FORUMS,))
    forums = [f for f in forums if f["newest"] and typeable(f["newest"])]
    out = []
    for p, f in zip(pick(rng, _mine(db), INSTANCES), pick(rng, forums, INSTANCES), strict=False):
        ev = html_eval([target("last", TITLE, exact=f["newest"])], with_url=project_url(p, "/-/issues"))
        seq = [click("link", "New"), tab_focus(1), type_text("textbox", "Title", f["newest"], enter=False),
               click("button", "Create issue"), stop(DONE)]
        out.append(_task(tpl, {"project": full_path(p), "forum": f["name"]},
                         f"{REDDIT}/f/{f['name']} |AND| {project_url(p, '/-/issues/new')}", ev, seq, sites=_MULTI))
    return out


def t5102_reply_with_clone_url(db, rng):
    tpl = 'Comment on the forum post "{{title}}" with the SSH clone URL of the GitLab project {{project}}.'
    posts = rows(db, "SELECT s.id, s.title, f.name AS forum FROM forum_submissions s JOIN forum_forums f "
                     "ON f.id = s.forum_id WHERE f.name IN ('technology', 'MachineLearning') ORDER BY s.id")
    out = []
    for p, post in zip(pick(rng, visible_projects(db), INSTANCES),
                       pick(rng, [x for x in posts if typeable(x["title"])], INSTANCES), strict=False):
        ssh = clone_urls(p["namespace"], p["path"])[0]
        post_url = REDDIT + post_path(post["forum"], post["id"], post["title"])
        ev = html_eval([target(post_url, ALL_COMMENT_BODIES, must_include=[ssh])])
        seq = [tab_focus(1), type_text("textbox", "Comment", ssh, enter=False), click("button", "Post"), stop(DONE)]
        out.append(_task(tpl, {"title": post["title"], "project": full_path(p)}, f"{project_url(p)} |AND| {post_url}",
                         ev, seq, sites=_MULTI))
    return out


def t5103_post_star_count(db, rng):
    tpl = ('Ask in the technology forum whether {{project}} is worth trying; the post title must include how many '
           "stars it has on GitLab.")
    out = []
    for p in pick(rng, [p for p in visible_projects(db) if p["stars"] >= 2], INSTANCES):
        title = f"Is {p['name']} worth trying? It has {p['stars']} stars on GitLab"
        ev = html_eval([target(POST_URL_FUNC, _SUBMISSION_TITLE, must_include=[f"{p['stars']} stars"])],
                       with_url=f"{REDDIT}/f/technology")
        seq = [tab_focus(1)] + _submit_steps(title) + [stop(DONE)]
        out.append(_task(tpl, {"project": full_path(p)}, f"{project_url(p)} |AND| {REDDIT}/f/technology", ev, seq,
                         sites=_MULTI))
    return out


# Held out: every instance of these goes to the test split (templates never seen in training).
TEST_ONLY_TEMPLATES = {5004, 5009, 5012, 5017, 5024, 5036, 5051, 5055, 5064, 5066, 5069, 5074, 5076, 5102}

# Every `t5NNN_*` function above, in id order.
TEMPLATES = [(int(name[1:5]), fn) for name, fn in sorted(globals().items()) if name.startswith("t5") and callable(fn)]
