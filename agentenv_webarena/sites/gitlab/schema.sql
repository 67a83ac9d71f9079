-- The embedded code host's tables (`gitlab_*`). Access levels: 10 Guest, 20 Reporter, 30 Developer,
-- 40 Maintainer, 50 Owner (GitLab's numbers). Timestamps are 'YYYY-MM-DD HH:MM:SS' (UTC).
CREATE TABLE gitlab_users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    password TEXT NOT NULL,
    bio TEXT NOT NULL DEFAULT '',
    location TEXT NOT NULL DEFAULT '',
    website TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE TABLE gitlab_sessions (
    token TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES gitlab_users(id) ON DELETE CASCADE
);
CREATE TABLE gitlab_follows (
    follower_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    followee_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    PRIMARY KEY (follower_id, followee_id)
);
CREATE TABLE gitlab_groups (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    visibility TEXT NOT NULL DEFAULT 'public',
    created_at TEXT NOT NULL
);
CREATE TABLE gitlab_group_members (
    group_id INTEGER NOT NULL REFERENCES gitlab_groups(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    access_level INTEGER NOT NULL,
    created_at TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (group_id, user_id)
);
CREATE TABLE gitlab_projects (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL COLLATE NOCASE,
    path TEXT NOT NULL COLLATE NOCASE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL DEFAULT '',
    license TEXT NOT NULL DEFAULT '',
    topics TEXT NOT NULL DEFAULT '',
    visibility TEXT NOT NULL DEFAULT 'public' CHECK (visibility IN ('private', 'internal', 'public')),
    default_branch TEXT NOT NULL DEFAULT 'main',
    forked_from_id INTEGER REFERENCES gitlab_projects(id),
    creator_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    created_at TEXT NOT NULL,
    last_activity_at TEXT NOT NULL,
    UNIQUE (namespace, path)
);
CREATE TABLE gitlab_project_members (
    project_id INTEGER NOT NULL REFERENCES gitlab_projects(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    access_level INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE TABLE gitlab_branches (
    project_id INTEGER NOT NULL REFERENCES gitlab_projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    forked_at TEXT,  -- NULL for the default branch; else the last default-branch commit it contains
    PRIMARY KEY (project_id, name)
);
CREATE TABLE gitlab_commits (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES gitlab_projects(id) ON DELETE CASCADE,
    branch TEXT NOT NULL,
    sha TEXT NOT NULL,
    title TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    created_at TEXT NOT NULL
);
CREATE INDEX gitlab_commits_project ON gitlab_commits(project_id, branch);
CREATE TABLE gitlab_files (
    project_id INTEGER NOT NULL REFERENCES gitlab_projects(id) ON DELETE CASCADE,
    branch TEXT NOT NULL,
    path TEXT NOT NULL,
    content TEXT NOT NULL,
    commit_id INTEGER NOT NULL REFERENCES gitlab_commits(id),
    PRIMARY KEY (project_id, branch, path)
);
CREATE TABLE gitlab_stars (
    user_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    project_id INTEGER NOT NULL REFERENCES gitlab_projects(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, project_id)
);
CREATE TABLE gitlab_labels (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES gitlab_projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL COLLATE NOCASE,
    color TEXT NOT NULL,
    UNIQUE (project_id, name)
);
CREATE TABLE gitlab_milestones (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES gitlab_projects(id) ON DELETE CASCADE,
    iid INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    start_date TEXT NOT NULL DEFAULT '',
    due_date TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'active',
    UNIQUE (project_id, iid)
);
CREATE TABLE gitlab_issues (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES gitlab_projects(id) ON DELETE CASCADE,
    iid INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    author_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    state TEXT NOT NULL DEFAULT 'opened' CHECK (state IN ('opened', 'closed')),
    milestone_id INTEGER REFERENCES gitlab_milestones(id),
    due_date TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, iid)
);
CREATE TABLE gitlab_issue_labels (
    issue_id INTEGER NOT NULL REFERENCES gitlab_issues(id) ON DELETE CASCADE,
    label_id INTEGER NOT NULL REFERENCES gitlab_labels(id) ON DELETE CASCADE,
    PRIMARY KEY (issue_id, label_id)
);
CREATE TABLE gitlab_issue_assignees (
    issue_id INTEGER NOT NULL REFERENCES gitlab_issues(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    PRIMARY KEY (issue_id, user_id)
);
CREATE TABLE gitlab_merge_requests (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES gitlab_projects(id) ON DELETE CASCADE,
    iid INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    author_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    assignee_id INTEGER REFERENCES gitlab_users(id),
    reviewer_id INTEGER REFERENCES gitlab_users(id),
    source_branch TEXT NOT NULL,
    target_branch TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'opened' CHECK (state IN ('opened', 'merged', 'closed')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, iid)
);
CREATE TABLE gitlab_notes (
    id INTEGER PRIMARY KEY,
    noteable_type TEXT NOT NULL CHECK (noteable_type IN ('Issue', 'MergeRequest')),
    noteable_id INTEGER NOT NULL,
    author_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX gitlab_notes_target ON gitlab_notes(noteable_type, noteable_id);
CREATE TABLE gitlab_todos (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    author_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    project_id INTEGER NOT NULL REFERENCES gitlab_projects(id) ON DELETE CASCADE,
    target_type TEXT NOT NULL CHECK (target_type IN ('Issue', 'MergeRequest')),
    target_id INTEGER NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('assigned', 'mentioned', 'review_requested')),
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
    created_at TEXT NOT NULL
);
CREATE INDEX gitlab_todos_user ON gitlab_todos(user_id, state);
CREATE TABLE gitlab_access_tokens (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES gitlab_users(id),
    name TEXT NOT NULL,
    scopes TEXT NOT NULL,
    token TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
