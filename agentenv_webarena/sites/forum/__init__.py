"""The embedded forum: a Postmill-like reddit clone (WebArena's `reddit` site).

Owns the forum's tables (`schema.sql`), their deterministic seed (`seed`, drawing from `data`, then
WebArena's named forums, users and posts from `entities`) and its Starlette app (`app`).
It does not own instances or resets (`sites.store.InstanceStore`), the
control endpoints (`sites.apps`), or logins of the env (`agentenv_webarena.tasks.auth`, whose recipe
this site answers: POST `/login_check` with `_username` and `_password`, cookie `forum_session`).

Modules: `data` (the base vocabulary), `entities` (WebArena's named forums and the posts that fill them),
`seed`, `model` (constants, the clock, shared queries), `layout` (request context, shared markup),
`listing` (front page, forums, search, subscriptions), `threads` (a submission, its comments,
votes, submit / edit / delete), `account` (user pages, biography, log in / out), `app`.

URLs (Postmill's shapes, so WebArena-style URL checks and `reddit_get_post_url` carry over):

- GET `/`, `/hot`, `/new`, `/top`, `/most_commented`: every forum's submissions, sorted (`?page=N`, 20 a page)
- GET `/forums`: table of forums: name, title, submissions, subscribers
- GET `/f/<forum>`, `/f/<forum>/<sort>`: one forum's submissions (sort as above, default hot)
- GET `/f/<forum>/<id>/<slug>` (also `/f/<forum>/<id>/`): a submission with its comment tree and comment form
- POST `/f/<forum>/<id>/-/comment`: top-level comment, field `comment[comment]`
- GET/POST `/f/<forum>/<id>/-/comment/<cid>`: one comment's thread and its reply form (`reply[comment]`)
- GET/POST `/f/<forum>/<id>/-/edit`: edit own submission (same fields as submit)
- POST `/f/<forum>/<id>/-/delete`: delete own submission (with its comments and votes)
- POST `/sv/<id>`, `/cv/<cid>`: vote on a submission / comment: `choice` 1, -1 or 0 (retract), `next` = where to
  return
- GET/POST `/submit`, `/submit/<forum>`: create a submission: `submission[title]`, `submission[url]`,
  `submission[body]`, `submission[forum]`
- POST `/f/<forum>/subscribe`, `/f/<forum>/unsubscribe`: (un)subscribe the logged-in user
- GET/POST `/create_forum`: new forum: `forum[name]`, `forum[title]`, `forum[description]`, `forum[sidebar]`;
  its creator moderates it
- GET/POST `/f/<forum>/edit`: a moderator edits the forum (same fields; button "Save"); others get 403
- GET `/user/<name>`, `/user/<name>/submissions`, `/user/<name>/comments`: user page (bio, latest posts and
  comments), full lists
- GET/POST `/user/<name>/edit_biography`: own biography, field `user_biography[biography]`
- GET `/search?q=...`: submissions whose title or body contains the words
- GET `/login`; POST `/login_check`; POST `/logout`: login form (`_username`, `_password`), session cookie
  `forum_session`

After a POST the site answers 303 to the page showing the result (a new submission: its
`/f/<forum>/<id>/<slug>`). Actions that need a user redirect anonymous visitors to `/login`.

CSS hooks (Postmill's class names, for WebArena-style `program_html` locators):

- submission: `article.submission#submission-<id>` > `div.submission__vote` (vote form) and
  `div.submission__inner` holding `.submission__title` (h1 on the post page, h2 in lists) with the
  link `a.submission__link`, `p.submission__url` (link posts: `a` to the URL), `p.submission__info`
  (`a.submission__author`, `time`, `a.submission__forum`, `span.submission__edited` when edited),
  `div.submission__body` (always present on the post page, empty for a title-only post) and
  `nav.submission__nav`. On a post page `document.querySelector('.submission__title').outerText`
  is the title and `.submission__body` the body.
- votes: `form.vote` whose class is exactly `vote`, `vote vote--user-upvoted` or
  `vote vote--user-downvoted` (the logged-in user's vote), buttons `.vote__up` / `.vote__down`
  (named "Upvote" / "Downvote", or "Retract upvote" / "Retract downvote" when active) and the
  score `span.vote__net-score` ("12 points": one text node, so WebArena's StaticText de-duplication
  never hides a bare number). `document.querySelector('div.submission__vote').querySelector('form')
  .getAttribute('class')` reads the user's vote on the post page's submission.
- comments: `section.comments` > `h2.comments__heading` ("N comments"), the comment form, then
  `article.comment#comment-<cid>` > `div.comment__vote`, `p.comment__info` (`a.comment__author`),
  `div.comment__body`, `nav.comment__nav` (a "Reply" link, named "Reply to <author>") and
  `div.comment__replies` (children).
  Each level is ordered oldest first (`created_at`, then id). A comment's page
  (`/f/<forum>/<id>/-/comment/<cid>`, its "Reply" link) shows the post without a vote form, then
  the reply form and that comment's thread, so its first "Upvote" button is the comment's.
- sidebar: `aside#sidebar > section`; the first section is "Subscribed forums" on the front pages
  and the forum card (`.forum-description`, `.forum-sidebar.forum-sidebar-content`, subscribe button
  `form.subscribe-form button`, exactly "Subscribe" or "Unsubscribe") on a forum page, whose main
  heading is `h1.forum-title`.
- user page: `h1.user-name`, `div.user-bio` (empty when no biography) holding `div.user-bio__biography` (the
  biography, only when set).
- forum edit (`/f/<forum>/edit`, moderators only) and create forum: `#forum_name`, `#forum_title`,
  `textarea#forum_description`, `textarea#forum_sidebar`; a moderator sees `section.forum-toolbox` ("Edit forum")
  after the forum card.

Sorts: hot = `epoch(created_at) + 43200 * score` descending (a point of score is worth twelve
hours); new = `created_at` descending; top = score descending, then newest; most_commented =
comment count descending, then newest. Score is the sum of the votes (+1 / -1); a new submission or
comment starts with its author's upvote, as in Postmill. New rows get the site clock: one minute
after the newest timestamp in the database, so the data stay deterministic.
"""
from agentenv_webarena.sites.forum.app import create_app
from agentenv_webarena.sites.forum.model import (
    COOKIE,
    PAGE_SIZE,
    SORT_LABELS,
    SORTS,
    TIME_FORMAT,
    comment_order,
    post_path,
    slugify,
    submission_list,
)
from agentenv_webarena.sites.forum.seed import SCHEMA, SEED, seed

__all__ = ["SCHEMA", "seed", "create_app", "COOKIE", "PAGE_SIZE", "SORTS", "SORT_LABELS", "slugify", "post_path",
           "submission_list", "comment_order", "SEED", "TIME_FORMAT"]
