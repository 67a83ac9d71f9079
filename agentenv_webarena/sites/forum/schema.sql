-- The embedded forum's tables (`forum_*`).
CREATE TABLE forum_users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password TEXT NOT NULL,
    biography TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE TABLE forum_sessions (
    token TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES forum_users(id) ON DELETE CASCADE
);
CREATE TABLE forum_forums (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    sidebar TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE TABLE forum_moderators (
    forum_id INTEGER NOT NULL REFERENCES forum_forums(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    PRIMARY KEY (forum_id, user_id)
);
CREATE TABLE forum_submissions (
    id INTEGER PRIMARY KEY,
    forum_id INTEGER NOT NULL REFERENCES forum_forums(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    title TEXT NOT NULL,
    url TEXT NOT NULL DEFAULT '',
    body TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    edited_at TEXT
);
CREATE INDEX forum_submissions_forum ON forum_submissions(forum_id);
CREATE INDEX forum_submissions_user ON forum_submissions(user_id);
CREATE TABLE forum_comments (
    id INTEGER PRIMARY KEY,
    submission_id INTEGER NOT NULL REFERENCES forum_submissions(id) ON DELETE CASCADE,
    parent_id INTEGER REFERENCES forum_comments(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    edited_at TEXT
);
CREATE INDEX forum_comments_submission ON forum_comments(submission_id);
CREATE INDEX forum_comments_user ON forum_comments(user_id);
CREATE TABLE forum_submission_votes (
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    submission_id INTEGER NOT NULL REFERENCES forum_submissions(id) ON DELETE CASCADE,
    choice INTEGER NOT NULL CHECK (choice IN (-1, 1)),
    PRIMARY KEY (user_id, submission_id)
);
CREATE INDEX forum_submission_votes_target ON forum_submission_votes(submission_id);
CREATE TABLE forum_comment_votes (
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    comment_id INTEGER NOT NULL REFERENCES forum_comments(id) ON DELETE CASCADE,
    choice INTEGER NOT NULL CHECK (choice IN (-1, 1)),
    PRIMARY KEY (user_id, comment_id)
);
CREATE INDEX forum_comment_votes_target ON forum_comment_votes(comment_id);
CREATE TABLE forum_subscriptions (
    user_id INTEGER NOT NULL REFERENCES forum_users(id),
    forum_id INTEGER NOT NULL REFERENCES forum_forums(id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, forum_id)
);
