"""The code host's tables (`schema.sql`) and their deterministic seed: users, groups, projects with
repositories, stars, forks, issues, merge requests, milestones, comments and the to-dos they give.

Owns how the pristine code-host data is made from the vocabulary in `data` with a fixed
`random.Random(SEED)` (no clock), so every build yields the same rows and ids.
"""
from __future__ import annotations

import datetime as dt
import random
import sqlite3
from pathlib import Path

from agentenv_webarena.sites.gitlab import data
from agentenv_webarena.sites.gitlab.entities import seed_entities
from agentenv_webarena.sites.gitlab.model import add_todo, commit_sha, format_ts
from agentenv_webarena.sites.gitlab.tokens import seed_tokens

__all__ = ["SCHEMA", "SEED", "SEED_END", "seed"]

SCHEMA = (Path(__file__).parent / "schema.sql").read_text(encoding="utf-8")
SEED = 5050
SEED_END = dt.datetime(2023, 6, 30, 18, 0, 0)  # the newest seeded activity
_PRIVATE = {("byteblaze", "budget-tracker"), ("byteblaze", "recipe-box"), ("byteblaze", "dotfiles"),
            ("mlops", "gpu-monitor"), ("noah_b", "homelab")}
_BRANCH_NAMES = ("develop", "feature/{t}", "fix/{t}", "docs/update-readme", "release/v1")


def seed(conn: sqlite3.Connection) -> None:
    """Insert the deterministic code-host data: 40 users, 8 groups, 60 projects (+ forks) and their
    repositories, stars, issues, merge requests, milestones, comments, to-dos and byteblaze's access tokens;
    then WebArena's named accounts, groups and projects (`entities`)."""
    rng = random.Random(SEED)
    users = _seed_users(conn)
    groups = _seed_groups(conn, rng, users)
    for pid, proj in enumerate(data.PROJECTS, start=1):
        _seed_project(conn, rng, pid, proj, users, groups)
    _seed_forks(conn, rng, users, len(data.PROJECTS))
    _seed_stars(conn, rng, users)
    _seed_follows(conn, rng, users)
    _seed_todos(conn)
    seed_tokens(conn, users[data.PRIMARY_USER])
    seed_entities(conn)


def _ts(t: dt.datetime) -> str:
    return format_ts(t)


def _between(rng: random.Random, start: dt.datetime, end: dt.datetime) -> dt.datetime:
    span = max(60, int((end - start).total_seconds()))
    return start + dt.timedelta(seconds=rng.randrange(span))


def _seed_users(conn: sqlite3.Connection) -> dict[str, int]:
    ids = {}
    base = dt.datetime(2018, 6, 1, 9, 0, 0)
    for i, u in enumerate(data.USERS, start=1):
        conn.execute("INSERT INTO gitlab_users (id, username, name, email, password, bio, location, created_at) "
                     "VALUES (?,?,?,?,?,?,?,?)",
                     (i, u.username, u.name, f"{u.username.lower()}@example.com", "hello1234", u.bio, u.location,
                      _ts(base + dt.timedelta(days=13 * i, hours=i % 7))))
        ids[u.username] = i
    for username, (status, website) in data.PROFILES.items():
        conn.execute("UPDATE gitlab_users SET status = ?, website = ? WHERE username = ?", (status, website, username))
    return ids


def _seed_groups(conn: sqlite3.Connection, rng: random.Random, users: dict[str, int]) -> dict[str, list[tuple]]:
    """Groups and their members; returns group path -> [(user_id, access_level)]."""
    others = [uid for name, uid in users.items() if name != data.PRIMARY_USER]
    members: dict[str, list[tuple]] = {}
    for gid, g in enumerate(data.GROUPS, start=1):
        created = _ts(dt.datetime(2018, 12, 1) + dt.timedelta(days=9 * gid))
        conn.execute("INSERT INTO gitlab_groups (id, path, name, description, created_at) VALUES (?,?,?,?,?)",
                     (gid, g.path, g.name, g.description, created))
        chosen = rng.sample(others, rng.randint(3, 6))
        rows = [(chosen[0], 50)] + [(uid, rng.choice((30, 30, 40, 20))) for uid in chosen[1:]]
        if g.path in ("a11yproject", "primer", "webtools"):
            rows.append((users[data.PRIMARY_USER], 40 if g.path == "a11yproject" else 30))
        for uid, level in rows:
            conn.execute("INSERT INTO gitlab_group_members (group_id, user_id, access_level, created_at) "
                         "VALUES (?,?,?,?)", (gid, uid, level, created))
        members[g.path] = rows
    return members


def _readme(proj: data.Project, owner_name: str) -> str:
    lic = data.LICENSES.get(proj.license, "")
    parts = [f"# {proj.name}", "", proj.description, "", "## Installation", "",
             f"Clone the repository and read `{data.LANGUAGE_FILES[proj.language][0]}` to get started.", "",
             "## Topics", ""] + [f"- {t}" for t in proj.topics]
    parts += ["", "## License", "", f"{lic}, see LICENSE." if lic else "No license has been chosen yet.", "",
              f"Maintained by {owner_name}."]
    return "\n".join(parts) + "\n"


def _seed_project(conn: sqlite3.Connection, rng: random.Random, pid: int, proj: data.Project,
                  users: dict[str, int], groups: dict[str, list[tuple]]) -> None:
    created = dt.datetime.fromisoformat(proj.created) + dt.timedelta(hours=10 + pid % 8, minutes=pid)
    if proj.namespace in users:
        owner = users[proj.namespace]
        member_rows = [(owner, 50)]
        pool = [uid for uid in users.values() if uid != owner]
        n_extra = rng.randint(2, 5) if proj.namespace == data.PRIMARY_USER else rng.randint(0, 3)
        for uid in rng.sample(pool, n_extra):
            member_rows.append((uid, rng.choice((10, 20, 30, 30, 40))))
    else:
        member_rows = list(groups[proj.namespace])
        owner = member_rows[0][0]
    default = "master" if pid % 7 == 3 else "main"
    visibility = "private" if (proj.namespace, proj.path) in _PRIVATE else "public"
    conn.execute("INSERT INTO gitlab_projects (id, namespace, path, name, description, language, license, topics, "
                 "visibility, default_branch, creator_id, created_at, last_activity_at) "
                 "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                 (pid, proj.namespace, proj.path, proj.name, proj.description, proj.language, proj.license,
                  ", ".join(proj.topics), visibility, default, owner, _ts(created), _ts(SEED_END)))
    for uid, level in member_rows:
        conn.execute("INSERT INTO gitlab_project_members (project_id, user_id, access_level, created_at) "
                     "VALUES (?,?,?,?)", (pid, uid, level, _ts(created)))
    authors = [uid for uid, level in member_rows if level >= 30] or [owner]
    commits = _seed_commits(conn, rng, pid, default, owner, authors, created)
    owner_name = conn.execute("SELECT name FROM gitlab_users WHERE id = ?", (owner,)).fetchone()[0]
    files = _seed_files(conn, rng, pid, proj, default, commits, owner_name)
    branches = _seed_branches(conn, rng, pid, proj, default, commits, files, authors)
    _seed_labels_milestones(conn, rng, pid, created)
    _seed_issues(conn, rng, pid, proj, member_rows, users, created)
    _seed_mrs(conn, rng, pid, default, branches, authors, member_rows, users, created)


def _insert_commit(conn: sqlite3.Connection, pid: int, branch: str, n: int, title: str, author: int,
                   at: dt.datetime) -> int:
    cur = conn.execute("INSERT INTO gitlab_commits (project_id, branch, sha, title, author_id, created_at) "
                       "VALUES (?,?,?,?,?,?)",
                       (pid, branch, commit_sha(pid, n, title + branch), title, author, _ts(at)))
    return cur.lastrowid


def _seed_commits(conn, rng, pid, default, owner, authors, created) -> list[tuple[int, dt.datetime]]:
    n = rng.randint(6, 22)
    times = sorted(_between(rng, created + dt.timedelta(hours=1), SEED_END) for _ in range(n - 1))
    out = [(_insert_commit(conn, pid, default, 0, "Initial commit", owner, created), created)]
    titles = data.COMMIT_TITLES[1:]
    for i, at in enumerate(times, start=1):
        # a few commits share a day, so "how many commits on <day>" has answers above one
        if i > 1 and rng.random() < 0.25:
            at = out[-1][1] + dt.timedelta(minutes=rng.randint(5, 300))
        author = owner if rng.random() < 0.5 else rng.choice(authors)
        out.append((_insert_commit(conn, pid, default, i, rng.choice(titles), author, at), at))
    return out


def _seed_files(conn, rng, pid, proj, default, commits, owner_name) -> dict[str, tuple[str, int]]:
    src_path, src = data.LANGUAGE_FILES[proj.language]
    files = {"README.md": _readme(proj, owner_name), src_path: src.format(name=proj.name),
             ".gitignore": "*.log\n.cache/\nbuild/\n"}
    if proj.license:
        year = proj.created[:4]
        files["LICENSE"] = f"{data.LICENSES[proj.license]}\n\nCopyright (c) {year} {owner_name}\n"
    if rng.random() < 0.5:
        files["CONTRIBUTING.md"] = "# Contributing\n\nOpen an issue before sending a merge request.\n"
    if rng.random() < 0.5:
        files["docs/usage.md"] = f"# Using {proj.name}\n\n{proj.description}\n"
    out = {}
    for path, content in files.items():
        cid = commits[0][0] if path == "README.md" and rng.random() < 0.3 else rng.choice(commits)[0]
        conn.execute("INSERT INTO gitlab_files (project_id, branch, path, content, commit_id) VALUES (?,?,?,?,?)",
                     (pid, default, path, content, cid))
        out[path] = (content, cid)
    return out


def _seed_branches(conn, rng, pid, proj, default, commits, files, authors) -> list[str]:
    conn.execute("INSERT INTO gitlab_branches (project_id, name, forked_at) VALUES (?,?,NULL)", (pid, default))
    names = []
    topic = proj.topics[0] if proj.topics else "cleanup"
    for tmpl in rng.sample(_BRANCH_NAMES, rng.randint(0, 2)):
        name = tmpl.format(t=topic)
        base_idx = rng.randrange(len(commits) // 2, len(commits))
        base_at = commits[base_idx][1]
        conn.execute("INSERT INTO gitlab_branches (project_id, name, forked_at) VALUES (?,?,?)",
                     (pid, name, _ts(base_at)))
        last = None
        at = base_at
        for k in range(rng.randint(1, 3)):
            at = at + dt.timedelta(hours=rng.randint(2, 60))
            title = rng.choice(data.COMMIT_TITLES[2:])
            last = _insert_commit(conn, pid, name, 100 + 10 * len(names) + k, title, rng.choice(authors), at)
        changed = rng.choice(sorted(files))
        for path, (content, cid) in files.items():
            if path == changed:
                content, cid = content + f"\n<!-- work on {name} -->\n", last
            conn.execute("INSERT INTO gitlab_files (project_id, branch, path, content, commit_id) VALUES (?,?,?,?,?)",
                         (pid, name, path, content, cid))
        names.append(name)
    return names


def _seed_labels_milestones(conn, rng, pid, created) -> None:
    for name, color in data.LABELS:
        conn.execute("INSERT INTO gitlab_labels (project_id, name, color) VALUES (?,?,?)", (pid, name, color))
    for iid, (title, desc) in enumerate(rng.sample(data.MILESTONES, rng.randint(0, 3)), start=1):
        start = _between(rng, created, SEED_END).date()
        due = start + dt.timedelta(days=rng.choice((14, 30, 45, 60, 90)))
        state = "closed" if due < SEED_END.date() - dt.timedelta(days=60) else "active"
        conn.execute("INSERT INTO gitlab_milestones (project_id, iid, title, description, start_date, due_date, state) "
                     "VALUES (?,?,?,?,?,?,?)", (pid, iid, title, desc, start.isoformat(), due.isoformat(), state))


def _notes(conn, rng, kind, target_id, people, start) -> None:
    at = start
    for body in rng.sample(data.COMMENTS, rng.randint(0, 4)):
        at = at + dt.timedelta(hours=rng.randint(1, 72))
        if at > SEED_END:
            break
        conn.execute("INSERT INTO gitlab_notes (noteable_type, noteable_id, author_id, body, created_at) "
                     "VALUES (?,?,?,?,?)", (kind, target_id, rng.choice(people), body, _ts(at)))


def _seed_issues(conn, rng, pid, proj, member_rows, users, created) -> None:
    people = [uid for uid, _ in member_rows] + rng.sample(list(users.values()), 3)
    assignable = [uid for uid, level in member_rows if level >= 20] or [member_rows[0][0]]
    if proj.namespace != data.PRIMARY_USER and rng.random() < 0.35:
        assignable.append(users[data.PRIMARY_USER])
    labels = [r[0] for r in conn.execute("SELECT id FROM gitlab_labels WHERE project_id = ? ORDER BY id", (pid,))]
    milestones = [r[0] for r in conn.execute("SELECT id FROM gitlab_milestones WHERE project_id = ?", (pid,))]
    topic = proj.topics[0] if proj.topics else "settings"
    titles = rng.sample(data.ISSUE_TITLES, rng.randint(1, 11))
    issues = sorted((_between(rng, created, SEED_END - dt.timedelta(days=2)), t.format(x=topic)) for t in titles)
    for iid, (at, title) in enumerate(issues, start=1):
        state = "closed" if rng.random() < 0.35 else "opened"
        milestone = rng.choice(milestones) if milestones and rng.random() < 0.4 else None
        due = (at.date() + dt.timedelta(days=rng.choice((7, 14, 30)))).isoformat() if rng.random() < 0.2 else ""
        updated = min(SEED_END, at + dt.timedelta(days=rng.randint(0, 40)))
        cur = conn.execute("INSERT INTO gitlab_issues (project_id, iid, title, description, author_id, state, "
                           "milestone_id, due_date, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                           (pid, iid, title, f"{title}. Steps and details are in the thread below.",
                            rng.choice(people), state, milestone, due, _ts(at), _ts(updated)))
        issue_id = cur.lastrowid
        for lid in rng.sample(labels, rng.choice((0, 1, 1, 2))):
            conn.execute("INSERT INTO gitlab_issue_labels (issue_id, label_id) VALUES (?,?)", (issue_id, lid))
        if rng.random() < 0.6:
            conn.execute("INSERT INTO gitlab_issue_assignees (issue_id, user_id) VALUES (?,?)",
                         (issue_id, rng.choice(assignable)))
        _notes(conn, rng, "Issue", issue_id, people, at)


def _seed_mrs(conn, rng, pid, default, branches, authors, member_rows, users, created) -> None:
    reviewers = [uid for uid, level in member_rows if level >= 30] or [member_rows[0][0]]
    if rng.random() < 0.3:
        reviewers.append(users[data.PRIMARY_USER])
    specs = [(b, "opened") for b in branches]
    for k in range(rng.randint(0, 3)):
        specs.append((f"patch-{k + 1}", rng.choice(("merged", "merged", "closed"))))
    titles = rng.sample(data.MR_TITLES, len(specs))
    rows = sorted((_between(rng, created, SEED_END - dt.timedelta(days=1)), s, t)
                  for s, t in zip(specs, titles, strict=True))
    for iid, (at, (source, state), title) in enumerate(rows, start=1):
        author = rng.choice(authors)
        cur = conn.execute("INSERT INTO gitlab_merge_requests (project_id, iid, title, description, author_id, "
                           "assignee_id, reviewer_id, source_branch, target_branch, state, created_at, updated_at) "
                           "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                           (pid, iid, title.format(x="the options"), f"This merge request: {title.lower()}.",
                            author, rng.choice(reviewers) if rng.random() < 0.5 else None,
                            rng.choice(reviewers) if rng.random() < 0.6 else None, source, default, state,
                            _ts(at), _ts(min(SEED_END, at + dt.timedelta(days=rng.randint(0, 9))))))
        _notes(conn, rng, "MergeRequest", cur.lastrowid, authors + reviewers, at)


def _seed_forks(conn, rng, users, n_projects) -> None:
    public = [r[0] for r in conn.execute("SELECT id FROM gitlab_projects WHERE visibility = 'public' ORDER BY id")]
    made = 0
    for src in rng.sample(public, 10):
        p = conn.execute("SELECT * FROM gitlab_projects WHERE id = ?", (src,)).fetchone()
        user = rng.choice(list(users))
        if user == p["namespace"] or user == data.PRIMARY_USER:
            continue
        if conn.execute("SELECT 1 FROM gitlab_projects WHERE namespace = ? AND path = ?",
                        (user, p["path"])).fetchone():
            continue
        made += 1
        fid = n_projects + made
        at = _between(rng, dt.datetime.strptime(p["created_at"], "%Y-%m-%d %H:%M:%S"), SEED_END)
        _copy_project(conn, p, fid, user, users[user], _ts(at))


def _copy_project(conn: sqlite3.Connection, p: sqlite3.Row, new_id: int, namespace: str, user_id: int,
                  at: str) -> None:
    conn.execute("INSERT INTO gitlab_projects (id, namespace, path, name, description, language, license, topics, "
                 "visibility, default_branch, forked_from_id, creator_id, created_at, last_activity_at) "
                 "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                 (new_id, namespace, p["path"], p["name"], p["description"], p["language"], p["license"], p["topics"],
                  p["visibility"], p["default_branch"], p["id"], user_id, at, at))
    fork_project_contents(conn, p["id"], new_id, p["default_branch"], user_id, at)


def fork_project_contents(conn: sqlite3.Connection, src_id: int, new_id: int, branch: str, user_id: int,
                          at: str) -> None:
    """Copy a project's default branch (commits and files) and labels into the fork `new_id`, owned by `user_id`."""
    conn.execute("INSERT INTO gitlab_project_members (project_id, user_id, access_level, created_at) VALUES (?,?,50,?)",
                 (new_id, user_id, at))
    conn.execute("INSERT INTO gitlab_branches (project_id, name, forked_at) VALUES (?,?,NULL)", (new_id, branch))
    id_map = {}
    for c in conn.execute("SELECT * FROM gitlab_commits WHERE project_id = ? AND branch = ? ORDER BY id",
                          (src_id, branch)).fetchall():
        cur = conn.execute("INSERT INTO gitlab_commits (project_id, branch, sha, title, author_id, created_at) "
                           "VALUES (?,?,?,?,?,?)", (new_id, branch, c["sha"], c["title"], c["author_id"],
                                                    c["created_at"]))
        id_map[c["id"]] = cur.lastrowid
    for f in conn.execute("SELECT * FROM gitlab_files WHERE project_id = ? AND branch = ?",
                          (src_id, branch)).fetchall():
        conn.execute("INSERT INTO gitlab_files (project_id, branch, path, content, commit_id) VALUES (?,?,?,?,?)",
                     (new_id, branch, f["path"], f["content"], id_map[f["commit_id"]]))
    conn.execute("INSERT INTO gitlab_labels (project_id, name, color) SELECT ?, name, color FROM gitlab_labels "
                 "WHERE project_id = ?", (new_id, src_id))


def _seed_stars(conn, rng, users) -> None:
    projects = [r[0] for r in conn.execute("SELECT id FROM gitlab_projects WHERE visibility = 'public' ORDER BY id")]
    uids = list(users.values())
    for pid in projects:
        count = min(len(uids), int(rng.paretovariate(1.2) * 2) - 1)
        for uid in rng.sample(uids, max(0, count)):
            if uid == users[data.PRIMARY_USER]:
                continue
            conn.execute("INSERT INTO gitlab_stars (user_id, project_id, created_at) VALUES (?,?,?)",
                         (uid, pid, _ts(_between(rng, dt.datetime(2022, 1, 1), SEED_END))))
    for pid in rng.sample(projects, 6):
        conn.execute("INSERT OR IGNORE INTO gitlab_stars (user_id, project_id, created_at) VALUES (?,?,?)",
                     (users[data.PRIMARY_USER], pid, _ts(_between(rng, dt.datetime(2022, 1, 1), SEED_END))))


def _seed_follows(conn, rng, users) -> None:
    uids = list(users.values())
    for uid in uids:
        for other in rng.sample(uids, rng.randint(0, 4)):
            if other != uid:
                conn.execute("INSERT OR IGNORE INTO gitlab_follows (follower_id, followee_id) VALUES (?,?)",
                             (uid, other))


def _seed_todos(conn: sqlite3.Connection) -> None:
    """The to-dos GitLab would have made for the seeded assignments and review requests (done once the issue or
    merge request is no longer open; seeded comments mention nobody)."""
    issues = conn.execute("SELECT i.id, i.project_id, i.author_id, i.state, i.created_at, a.user_id AS assignee "
                          "FROM gitlab_issues i JOIN gitlab_issue_assignees a ON a.issue_id = i.id "
                          "ORDER BY i.created_at, i.id, a.user_id").fetchall()
    for i in issues:
        add_todo(conn, i["assignee"], i["author_id"], i["project_id"], "Issue", i["id"], "assigned", i["created_at"],
                 "pending" if i["state"] == "opened" else "done")
    for m in conn.execute("SELECT * FROM gitlab_merge_requests ORDER BY created_at, id").fetchall():
        state = "pending" if m["state"] == "opened" else "done"
        add_todo(conn, m["assignee_id"], m["author_id"], m["project_id"], "MergeRequest", m["id"], "assigned",
                 m["created_at"], state)
        add_todo(conn, m["reviewer_id"], m["author_id"], m["project_id"], "MergeRequest", m["id"],
                 "review_requested", m["created_at"], state)
