"""WebArena's named code-host entities the base vocabulary (`data`) lacks, and the scale they bring.

Owns the users, groups and projects WebArena's gitlab tasks and evaluator URLs name that are in its
initial state (`root/metaseq`, `eriklindernoren/PyTorch-GAN`, `keycloak/keycloak`, the accounts its group
tasks invite, ...; names and facts only, every text is generated here) and `seed_entities`, which inserts
them after the base rows with its own `random.Random(ENTITY_SEED)`, so the base rows, their ids and
everything the task templates select from stay as they were. Projects WebArena's tasks *create* or *fork*
(`byteblaze/AGISite`, `byteblaze/metaseq`, the `n-lab` group, ...) are left out: they do not exist before
the task runs.

The larger projects' issue and merge-request lists paginate (`layout.PER_PAGE`, GitLab's 20 a page).
Besides owning (and committing to) his own four, byteblaze takes part in none of their rows (no issue,
comment, assignment, review, star or follow), and every timestamp is before `seed.SEED_END`, so
byteblaze's issue and merge-request dashboards, to-dos and the site clock are unchanged.
"""
from __future__ import annotations

import datetime as dt
import random
import sqlite3
from typing import NamedTuple

from agentenv_webarena.sites.gitlab import data
from agentenv_webarena.sites.gitlab.model import commit_sha, format_ts

__all__ = ["ENTITY_SEED", "Account", "Scaled", "ACCOUNTS", "ENTITY_GROUPS", "SCALED_PROJECTS", "seed_entities"]

ENTITY_SEED = 5051
_MASTER_BRANCH = {"dehenne"}  # namespaces whose default branch is "master" (WebArena's URL names it)
_END = dt.datetime(2023, 5, 31, 12, 0, 0)  # before seed.SEED_END: the site clock stays where the base data put it


class Account(NamedTuple):
    """A user WebArena's tasks name (`email` "" = `<username>@example.com`)."""

    username: str
    name: str
    bio: str
    location: str
    email: str = ""


class Scaled(NamedTuple):
    """A project with its scale: how many issues, merge requests and commits, its own labels (besides the
    base set), the subjects its issue titles talk about, extra branches, and who commits most (first) to it."""

    project: data.Project
    issues: int
    mrs: int
    commits: int
    labels: tuple[str, ...]
    subjects: tuple[str, ...]
    branches: tuple[str, ...]
    committers: tuple[str, ...]


ACCOUNTS: list[Account] = [
    Account("root", "Administrator", "Instance administrator.", ""),
    Account("eriklindernoren", "Erik Linder-Noren", "Machine learning engineer; GAN implementations.",
            "Stockholm, Sweden", "eriklindernoren@live.se"),
    Account("pinnacle_chen", "Pinnacle Chen", "Deep learning student.", "Shanghai, China", "pinnacle.chen@qq.com"),
    Account("kkroening", "Karl Kroening", "Video tooling in Python.", "San Francisco, CA"),
    Account("umano", "Umano", "Mobile apps team.", "San Francisco, CA"),
    Account("0ang3el", "Mikhail Egorov", "Security researcher, web application testing.", "Moscow, Russia"),
    Account("amwhalen", "Andrew M. Whalen", "PHP and web archiving.", "Massachusetts", "github@amwhalen.com"),
    Account("chtitux", "Theophile Helleboid", "Sysadmin and PHP hacker.", "Paris, France"),
    Account("secupwn", "secupwn", "Mobile network privacy.", "", "secupwn@users.noreply.github.com"),
    Account("dehenne", "Henning Leutz", "Web developer.", "Germany"),
    Account("akilesh", "Akilesh Kannan", "Computer architecture student: caches and simulators.", "Chennai, India"),
    Account("bblanchon", "Benoit Blanchon", "Embedded C++ libraries.", "Lyon, France"),
    Account("R1kk3r", "R1kk3r", "Reverse engineering.", ""),
    Account("patou", "Patrick Ou", "Frontend developer.", ""),
    Account("egpast", "Elena Pastor", "Data scientist.", ""),
    Account("westurner", "Wes Turner", "Python, linked data and documentation.", ""),
    Account("jontutcher", "Jon Tutcher", "Web developer.", "London, UK"),
    Account("JonasVautherin", "Jonas Vautherin", "Drones and robotics software.", "Zurich, Switzerland"),
    Account("dilipchandima", "Dilip Chandima", "Full-stack developer.", "Colombo, Sri Lanka"),
    Account("dawiss1337", "Dawid Sobczak", "Security and CTF player.", "Poland"),
    Account("bmyun", "Byungmin Yun", "Systems programmer.", "Seoul, South Korea"),
    Account("DCMJY", "DCMJY", "Student developer.", ""),
    Account("ASWATFZLLC", "ASWAT FZ LLC", "Software company account.", "Dubai, UAE"),
    Account("patrickhlauke", "Patrick H. Lauke", "Accessibility and touch events.", "Manchester, UK"),
    Account("linkmatrix", "Link Matrix", "Networking tools.", ""),
    Account("qhduan", "Qihang Duan", "NLP researcher.", "Beijing, China"),
    Account("Agnes-U", "Agnes U", "Design and illustration.", ""),
    Account("pandey2000", "Ankit Pandey", "Machine learning student.", "India"),
    Account("sayakpaul", "Sayak Paul", "Machine learning engineer.", "India"),
    Account("mwilliams", "Mark Williams", "Keycloak contributor.", ""),
    Account("stianst", "Stian Thorgersen", "Identity and access management.", "Norway"),
    Account("wing328", "William Cheng", "API tooling maintainer.", "Hong Kong"),
    Account("jkiddo", "Jens Kristian", "Java and Spring.", "Denmark"),
    Account("tperson", "Tom Person", "Android developer.", ""),
    Account("shriyash", "Shriyash Jalukar", "Student developer.", "India"),
]

ENTITY_GROUPS: list[data.Group] = [
    data.Group("keycloak", "Keycloak", "Open source identity and access management."),
    data.Group("OpenAPITools", "OpenAPI Tools", "Tools for the OpenAPI specification."),
    data.Group("CellularPrivacy", "Cellular Privacy", "Detecting fake base stations on Android."),
    data.Group("auth0", "Auth0", "Identity libraries and SDKs."),
]

_P = data.Project
SCALED_PROJECTS: list[Scaled] = [
    Scaled(_P("root", "metaseq", "metaseq", "A codebase for working with Open Pre-trained Transformers (OPT).",
              "Python", "MIT", "2022-05-03", ("nlp", "language-models")), 64, 24, 60,
           ("OPT", "needs triage"), ("OPT-175B", "OPT-30B", "OPT-6.7B", "the tokenizer", "FSDP", "model parallel",
                                     "checkpoint loading", "Llama", "the API server", "fine-tuning"),
           ("opt-release",), ("root", "qhduan", "sayakpaul")),
    Scaled(_P("eriklindernoren", "PyTorch-GAN", "PyTorch-GAN", "PyTorch implementations of Generative Adversarial "
              "Network varieties presented in research papers.", "Python", "MIT", "2018-04-21", ("gan", "pytorch")),
           38, 12, 90, (), ("CycleGAN", "DCGAN", "WGAN-GP", "Pix2Pix", "StarGAN", "the data loader",
                            "saved images", "ESRGAN"),
           (), ("eriklindernoren", "pinnacle_chen", "pandey2000")),
    Scaled(_P("convexegg", "chatgpt", "chatgpt", "Reverse-engineered client for a chat assistant API.", "Python",
              "GPL-3.0", "2022-12-05", ("chatbot", "api")), 30, 8, 40, (),
           ("login", "the conversation API", "rate limits", "the CLI", "proxies", "streaming replies"),
           (), ("convexegg", "DCMJY")),
    Scaled(_P("vinta", "awesome-python", "awesome-python", "A curated list of awesome Python frameworks, libraries, "
              "software and resources.", "Python", "CC-BY-4.0", "2018-06-27", ("awesome", "python")), 36, 30, 120,
           (), ("Python 3.11", "web frameworks", "testing tools", "data science", "the contributing guide",
                "dead links", "async libraries"), (), ("vinta", "westurner", "shriyash")),
    Scaled(_P("kkroening", "ffmpeg-python", "ffmpeg-python", "Python bindings for FFmpeg with complex filtering "
              "support.", "Python", "Apache-2.0", "2018-07-01", ("ffmpeg", "video")), 42, 10, 50, (),
           ("filter graphs", "audio streams", "probe", "hardware encoding", "subtitles", "pipes"), (),
           ("kkroening", "jkiddo")),
    Scaled(_P("keycloak", "keycloak", "keycloak", "Open Source Identity and Access Management for modern "
              "applications and services.", "Java", "Apache-2.0", "2018-08-10", ("identity", "sso")), 58, 20, 80,
           ("flaky-test", "area/admin-ui", "kind/bug"), ("the admin console", "LDAP federation", "token exchange",
                                                         "the account console", "WebAuthn", "realm import"),
           (), ("stianst", "mwilliams")),
    Scaled(_P("OpenAPITools", "openapi-generator", "openapi-generator", "Generate API client libraries, server stubs "
              "and documentation from OpenAPI specifications.", "Java", "Apache-2.0", "2018-09-12",
              ("openapi", "codegen")), 52, 22, 70, ("OpenAPI Generator CLI", "Client: Java", "Server: Python"),
           ("the Java client", "the CLI", "the Python server", "oneOf schemas", "enums", "the Maven plugin"), (),
           ("wing328", "jkiddo")),
    Scaled(_P("umano", "AndroidSlidingUpPanel", "AndroidSlidingUpPanel", "A sliding up panel widget for Android.",
              "Java", "Apache-2.0", "2018-10-02", ("android", "ui")), 34, 8, 45, ("BUG", "FEATURE"),
           ("the drag view", "scrollable children", "the shadow", "anchor points", "RecyclerView"), (),
           ("umano", "tperson")),
    Scaled(_P("0ang3el", "aem-hacker", "aem-hacker", "Tools to find vulnerabilities in Adobe Experience Manager "
              "installations.", "Python", "", "2019-03-18", ("security", "aem")), 22, 4, 25, (),
           ("the scanner", "SSRF checks", "the callback server", "proxies"), (), ("0ang3el", "dawiss1337")),
    Scaled(_P("CellularPrivacy", "Android-IMSI-Catcher-Detector", "Android-IMSI-Catcher-Detector", "Detect and "
              "avoid fake base stations (IMSI catchers) in mobile networks.", "Java", "GPL-3.0", "2018-05-14",
              ("privacy", "android")), 40, 10, 70, (), ("cell tower database", "the map view", "root access",
                                                         "notifications"),
           ("gh-page",), ("secupwn", "R1kk3r")),
    Scaled(_P("amwhalen", "archive-my-tweets", "archive-my-tweets", "Archive your tweets to a local database and "
              "browse them.", "PHP", "MIT", "2018-11-20", ("php", "archive")), 12, 4, 30, (),
           ("the importer", "search", "RSS"), ("php52", "github/fork/chtitux/addRs"), ("amwhalen", "chtitux")),
    Scaled(_P("auth0", "angular-storage", "angular-storage", "A storage library for AngularJS done right.",
              "JavaScript", "MIT", "2018-12-01", ("angular", "storage")), 14, 4, 20, (),
           ("session storage", "cookies"), (), ("jontutcher",)),
    Scaled(_P("koush", "AndroidAsync", "AndroidAsync", "Asynchronous socket, HTTP(S) and websocket library for "
              "Android.", "Java", "Apache-2.0", "2018-06-03", ("android", "networking")), 26, 6, 40, (),
           ("websockets", "SSL", "the HTTP server", "timeouts"), (), ("koush", "tperson")),
    Scaled(_P("lahwaacz", "arch-wiki-docs", "arch-wiki-docs", "A script to download pages from the Arch wiki for "
              "offline browsing.", "Python", "GPL-3.0", "2018-08-22", ("archlinux", "wiki")), 10, 3, 25, (),
           ("the downloader", "CSS"), (), ("lahwaacz",)),
    Scaled(_P("dehenne", "awesome-visibility", "awesome-visibility", "A curated list of tools for visibility and "
              "observability.", "Markdown", "CC0-1.0", "2019-02-02", ("awesome", "observability")), 6, 2, 15, (),
           ("the list",), (), ("dehenne",)),
    # byteblaze's own repositories in WebArena's initial state that the base seed lacks
    Scaled(_P("byteblaze", "a11y-syntax-highlighting", "a11y-syntax-highlighting", "Syntax highlighting themes "
              "that keep code readable for people with low vision.", "CSS", "MIT", "2021-02-19",
              ("accessibility", "theme")), 6, 2, 16, (), ("the theme editor", "contrast ratios", "the dark theme"),
           (), ("byteblaze", "patrickhlauke")),
    Scaled(_P("byteblaze", "accessible-html-content-patterns", "accessible-html-content-patterns", "Notes on "
              "writing HTML elements so assistive technology announces them well.", "HTML", "MIT", "2021-03-08",
              ("accessibility", "html")), 5, 2, 14, (), ("tables", "landmarks", "forms"), (),
           ("byteblaze", "westurner")),
    Scaled(_P("byteblaze", "millennials-to-snake-people", "millennials-to-snake-people", "Browser extension that "
              "swaps one generational label for another on every page.", "JavaScript", "MIT", "2020-05-02",
              ("browser-extension", "humor")), 4, 1, 12, (), ("the word list", "the manifest"), (),
           ("byteblaze", "jontutcher")),
    Scaled(_P("byteblaze", "remove-board-movement-events-from-the-github-issue-timeline",
              "remove-board-movement-events-from-the-github-issue-timeline", "Browser extension that hides "
              "project-board movements from issue timelines.", "JavaScript", "MIT", "2021-07-15",
              ("browser-extension",)), 3, 1, 10, (), ("the timeline filter", "the options page"), (),
           ("byteblaze", "patou")),
    Scaled(_P("akilesh", "SimCache", "SimCache", "A cache simulator for computer architecture coursework.", "C++",
              "MIT", "2020-09-01", ("cache", "simulation")), 6, 2, 18, (), ("replacement policies",), (),
           ("akilesh",)),
    Scaled(_P("akilesh", "dots", "dots", "Dotfiles for a tiling window manager setup.", "Shell", "MIT",
              "2020-10-11", ("dotfiles",)), 3, 1, 12, (), ("the installer",), (), ("akilesh",)),
    Scaled(_P("akilesh", "CacheEval", "CacheEval", "Scripts to evaluate cache configurations on benchmark traces.",
              "Python", "MIT", "2021-01-15", ("cache", "benchmark")), 4, 1, 14, (), ("the trace parser",), (),
           ("akilesh",)),
]

_ISSUE_PATTERNS = (
    "Error when using {s}", "Support for {s}", "Question about {s}", "{s} fails on Windows", "Document {s}",
    "Crash in {s} with large inputs", "Add an example for {s}", "{s} is slow", "Deprecation warning from {s}",
    "How to configure {s}?", "Unexpected output from {s}", "Flaky test around {s}", "Request: better {s}",
    "Memory leak in {s}", "Typo in the docs of {s}", "Update {s} to the latest version",
)
_MR_PATTERNS = ("Fix {s}", "Add tests for {s}", "Improve {s}", "Document {s}", "Refactor {s}", "Speed up {s}")
_COMMIT_PATTERNS = ("Update {s}", "Fix {s}", "Add {s}", "Clean up {s}", "Test {s}", "Merge pull request: {s}")
_LANG_FILES = {"Java": ("src/main/java/Main.java", "// {name}\npublic class Main {{\n  public static void main("
                        "String[] a) {{ System.out.println(\"{name}\"); }}\n}}\n"),
               "PHP": ("index.php", "<?php\n// {name}\necho '{name}';\n")}


def seed_entities(conn: sqlite3.Connection) -> None:
    """Insert WebArena's named accounts, groups and projects (issues, merge requests, commits, labels, members)
    after the base rows, with `random.Random(ENTITY_SEED)`."""
    rng = random.Random(ENTITY_SEED)
    users = {r["username"]: r["id"] for r in conn.execute("SELECT id, username FROM gitlab_users")}
    first_user = max(users.values()) + 1
    for i, a in enumerate(ACCOUNTS):
        uid = first_user + i
        conn.execute("INSERT INTO gitlab_users (id, username, name, email, password, bio, location, created_at) "
                     "VALUES (?,?,?,?,?,?,?,?)",
                     (uid, a.username, a.name, a.email or f"{a.username.lower()}@example.com", "hello1234", a.bio,
                      a.location, format_ts(dt.datetime(2018, 3, 1) + dt.timedelta(days=3 * i, hours=i % 5))))
        users[a.username] = uid
    new_users = [users[a.username] for a in ACCOUNTS]
    for g in ENTITY_GROUPS:
        created = format_ts(dt.datetime(2018, 4, 1) + dt.timedelta(days=len(g.path)))
        gid = conn.execute("INSERT INTO gitlab_groups (path, name, description, created_at) VALUES (?,?,?,?)",
                           (g.path, g.name, g.description, created)).lastrowid
        for uid in [new_users[0]] + rng.sample(new_users[1:], 3):
            conn.execute("INSERT OR IGNORE INTO gitlab_group_members (group_id, user_id, access_level, created_at) "
                         "VALUES (?,?,?,?)", (gid, uid, 50 if uid == new_users[0] else 30, created))
    first_project = conn.execute("SELECT MAX(id) FROM gitlab_projects").fetchone()[0] + 1
    for k, spec in enumerate(SCALED_PROJECTS):
        _seed_scaled(conn, rng, first_project + k, spec, users, new_users)


def _at(rng: random.Random, start: dt.datetime) -> dt.datetime:
    return start + dt.timedelta(seconds=rng.randrange(int((_END - start).total_seconds())))


def _seed_scaled(conn: sqlite3.Connection, rng: random.Random, pid: int, spec: Scaled, users: dict[str, int],
                 new_users: list[int]) -> None:
    proj = spec.project
    created = dt.datetime.fromisoformat(proj.created) + dt.timedelta(hours=9, minutes=pid % 60)
    committers = [users[u] for u in spec.committers]
    owner = committers[0]  # the namespace owner or, for a group, its first committer
    branch = "master" if proj.namespace in _MASTER_BRANCH else "main"
    conn.execute("INSERT INTO gitlab_projects (id, namespace, path, name, description, language, license, topics, "
                 "visibility, default_branch, creator_id, created_at, last_activity_at) "
                 "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                 (pid, proj.namespace, proj.path, proj.name, proj.description, proj.language, proj.license,
                  ", ".join(proj.topics), "public", branch, owner,
                  format_ts(created), format_ts(_END - dt.timedelta(days=pid % 30))))
    members = [(owner, 50)] + [(u, 40) for u in committers[1:] if u != owner]
    members += [(u, rng.choice((10, 20, 30))) for u in rng.sample(new_users, 3) if u not in dict(members)]
    for uid, level in members:
        conn.execute("INSERT INTO gitlab_project_members (project_id, user_id, access_level, created_at) "
                     "VALUES (?,?,?,?)", (pid, uid, level, format_ts(created)))
    commit_ids = _seed_history(conn, rng, pid, spec, branch, committers, created)
    _seed_repository(conn, rng, pid, spec, branch, commit_ids, owner)
    for name in spec.branches:
        conn.execute("INSERT INTO gitlab_branches (project_id, name, forked_at) VALUES (?,?,?)",
                     (pid, name, format_ts(created + dt.timedelta(days=30))))
        _seed_history(conn, rng, pid, spec, name, committers, created, n=max(4, spec.commits // 4))
        conn.execute("INSERT INTO gitlab_files (project_id, branch, path, content, commit_id) "
                     "SELECT project_id, ?, path, content, commit_id FROM gitlab_files WHERE project_id = ? "
                     "AND branch = ?", (name, pid, branch))
    labels = {}
    own = {n.lower(): n for n in spec.labels}  # a project's own spelling wins ("BUG" over "bug")
    for name, color in [(own.pop(n.lower(), n), c) for n, c in data.LABELS] + [(n, "#6699cc") for n in own.values()]:
        labels[name] = conn.execute("INSERT INTO gitlab_labels (project_id, name, color) VALUES (?,?,?)",
                                    (pid, name, color)).lastrowid
    people = [uid for uid, _ in members if uid != users[data.PRIMARY_USER]]  # byteblaze's dashboards stay as they were
    _seed_issues(conn, rng, pid, spec, people, list(labels.values()), created)
    _seed_mrs(conn, rng, pid, spec, branch, people, created)
    for uid in rng.sample(new_users, rng.randint(0, 3)):
        conn.execute("INSERT OR IGNORE INTO gitlab_stars (user_id, project_id, created_at) VALUES (?,?,?)",
                     (uid, pid, format_ts(_at(rng, dt.datetime(2022, 1, 1)))))


def _seed_history(conn, rng, pid, spec, branch, committers, created, n=None) -> list[int]:
    """`n` commits on `branch` (default: the spec's count); the first committer writes about half of them."""
    n = n or spec.commits
    conn.execute("INSERT OR IGNORE INTO gitlab_branches (project_id, name, forked_at) VALUES (?,?,NULL)",
                 (pid, branch))
    times = sorted(_at(rng, created) for _ in range(n))
    ids = []
    for k, at in enumerate(times):
        title = "Initial commit" if k == 0 else rng.choice(_COMMIT_PATTERNS).format(s=rng.choice(spec.subjects))
        author = committers[0] if (k == 0 or rng.random() < 0.5) else rng.choice(committers)
        ids.append(conn.execute("INSERT INTO gitlab_commits (project_id, branch, sha, title, author_id, created_at) "
                                "VALUES (?,?,?,?,?,?)", (pid, branch, commit_sha(pid, k, title + branch), title,
                                                         author, format_ts(at))).lastrowid)
    return ids


def _seed_repository(conn, rng, pid, spec, branch, commit_ids, owner) -> None:
    proj = spec.project
    owner_name = conn.execute("SELECT name FROM gitlab_users WHERE id = ?", (owner,)).fetchone()[0]
    src_path, src = _LANG_FILES.get(proj.language) or data.LANGUAGE_FILES[proj.language]
    readme = "\n".join([f"# {proj.name}", "", proj.description, "", "## Topics", ""]
                       + [f"- {s}" for s in spec.subjects] + ["", f"Maintained by {owner_name}.", ""])
    files = {"README.md": readme, src_path: src.format(name=proj.name), ".gitignore": "build/\n*.log\n"}
    if proj.license:
        files["LICENSE"] = f"{data.LICENSES.get(proj.license, proj.license)}\n\nCopyright (c) {proj.created[:4]} " \
                           f"{owner_name}\n"
    for path, content in files.items():
        conn.execute("INSERT INTO gitlab_files (project_id, branch, path, content, commit_id) VALUES (?,?,?,?,?)",
                     (pid, branch, path, content, rng.choice(commit_ids)))


def _seed_issues(conn, rng, pid, spec, people, labels, created) -> None:
    titles = sorted({rng.choice(_ISSUE_PATTERNS).format(s=rng.choice(spec.subjects)) for _ in range(spec.issues * 3)})
    rng.shuffle(titles)
    rows = sorted((_at(rng, created), t) for t in (titles * 2)[:spec.issues])
    for iid, (at, title) in enumerate(rows, start=1):
        issue_id = conn.execute(
            "INSERT INTO gitlab_issues (project_id, iid, title, description, author_id, state, created_at, "
            "updated_at) VALUES (?,?,?,?,?,?,?,?)",
            (pid, iid, title, f"{title}. Seen with the latest release; details below.", rng.choice(people),
             "closed" if rng.random() < 0.4 else "opened", format_ts(at),
             format_ts(min(_END, at + dt.timedelta(days=rng.randint(0, 30)))))).lastrowid
        for lid in rng.sample(labels, rng.choice((0, 1, 1, 2))):
            conn.execute("INSERT INTO gitlab_issue_labels (issue_id, label_id) VALUES (?,?)", (issue_id, lid))
        if rng.random() < 0.4:
            conn.execute("INSERT INTO gitlab_issue_assignees (issue_id, user_id) VALUES (?,?)",
                         (issue_id, rng.choice(people)))
        _notes(conn, rng, "Issue", issue_id, people, at)


def _seed_mrs(conn, rng, pid, spec, branch, people, created) -> None:
    rows = sorted((_at(rng, created), rng.choice(_MR_PATTERNS).format(s=rng.choice(spec.subjects)))
                  for _ in range(spec.mrs))
    for iid, (at, title) in enumerate(rows, start=1):
        author = rng.choice(people)
        mr_id = conn.execute(
            "INSERT INTO gitlab_merge_requests (project_id, iid, title, description, author_id, reviewer_id, "
            "source_branch, target_branch, state, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (pid, iid, title, f"This merge request: {title[0].lower() + title[1:]}.", author,
             rng.choice(people) if rng.random() < 0.5 else None, f"patch-{iid}", branch,
             rng.choice(("opened", "merged", "merged", "closed")), format_ts(at),
             format_ts(min(_END, at + dt.timedelta(days=rng.randint(0, 9)))))).lastrowid
        _notes(conn, rng, "MergeRequest", mr_id, people, at)


def _notes(conn, rng, kind, target_id, people, start) -> None:
    at = start
    for body in rng.sample(data.COMMENTS, rng.randint(0, 3)):
        at = at + dt.timedelta(hours=rng.randint(1, 72))
        if at >= _END:
            return
        conn.execute("INSERT INTO gitlab_notes (noteable_type, noteable_id, author_id, body, created_at) "
                     "VALUES (?,?,?,?,?)", (kind, target_id, rng.choice(people), body, format_ts(at)))
