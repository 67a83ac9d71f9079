"""The embedded code host: a GitLab-like site (WebArena's `gitlab` site).

Owns the code host's tables (`schema.sql`, every table prefixed `gitlab_`), their deterministic seed
(`seed`, drawing from `data`: 40 users led by byteblaze, 8 groups, 60 projects plus forks, with
repositories, stars, issues, merge requests, milestones, comments, to-dos and access tokens; then from
`entities`: WebArena's named accounts, groups and projects, such as `root/metaseq` and `keycloak/keycloak`,
large enough that their issue lists paginate) and its Starlette app (`app`).
It does not own instances or resets (`sites.store.InstanceStore`), the control endpoints
(`sites.apps`), or the env's logins (`agentenv_webarena.tasks.auth`, whose recipe this site answers:
POST `/users/sign_in` with `user[login]` and `user[password]`, cookie `_gitlab_session`).

Modules: `data` (static vocabulary, a stable API other sites read), `entities` (WebArena's named entities and
their seed), `model` (constants, clock,
shared queries), `layout` (request context, shared markup), `projects` (listings, project home,
new project, settings, stars, forks), `repository` (tree, files, commits, branches, contributors,
web editor), `issuables` (issues, merge requests, milestones, comments, dashboards), `todos` (the To-Do
List), `people` (sign in, profiles, follows, groups, members, search), `tokens` (personal access tokens),
`api` (`/api/v4` subset), `app`.

URLs (GitLab's shapes; `<p>` = `/<namespace>/<project>`):

- GET `/` (signed in: `/dashboard/projects`, else `/explore`), `/dashboard/projects[/starred]`,
  `/explore`, `/explore/projects[?sort=stars_desc|name_asc|latest_activity_desc|created_desc&name=]`,
  `/explore/groups`, `/dashboard/groups`, `/dashboard/issues?assignee_username=&author_username=&state=`,
  `/dashboard/merge_requests?assignee_username=|reviewer_username=&state=`
- GET/POST `/projects/new`: `project[name]`, `project[path]` (slug, default from the name),
  `project[description]`, `project[visibility]` (private | internal | public), `initialize_with_readme` (1/0);
  "Create from template" (`#create_from_template`): the built-in templates (`project_templates`), each with a
  "Use template" link to `/projects/new?template_name=<key>`, whose form posts `project[template_name]` (the files
  land in one commit "Initialized from '<title>' project template")
- GET `<p>`: name (`h1.project-title`), visibility (`.visibility-badge`), `.project-description`,
  "Star"/"Unstar" button, "N stars" (`a.star-count`), "Fork", "N forks", "N Commits", "N Branches",
  language, license, topics, clone URLs (`code.clone-ssh` `ssh://git@gitlab.local:2222/<ns>/<proj>.git`,
  `code.clone-http`), the file table and the README (`article#readme`)
- GET/POST `<p>/-/edit` (settings: `project[name]`, `project[description]`, `project[visibility]`),
  POST `<p>/-/star` (toggles), GET `<p>/-/starrers`, `<p>/-/forks`, GET/POST `<p>/-/forks/new`
- GET `<p>/-/tree/<branch>[/<dir>]`, `<p>/-/blob/<branch>/<path>`, `<p>/-/raw/<branch>/<path>` (text),
  `<p>/-/commits/<branch>[?author=<username>]` (grouped by day), `<p>/-/commit/<sha>`, `<p>/-/branches`,
  `<p>/-/graphs/<branch>` (contributors by commits)
- GET/POST `<p>/-/new/<branch>[/<dir>]` (`file_name`, `content`, `commit_message`),
  `<p>/-/create_dir/<branch>[/<dir>]` (`dir_name`), `<p>/-/edit/<branch>/<path>` (`content`)
- GET `<p>/-/issues[?state=opened|closed|all&label_name[]=&assignee_username=&search=&page=]` (20 a page),
  `<p>/-/issues/<iid>`; GET/POST `<p>/-/issues/new` (`issue[title]`, `issue[description]`,
  `issue[assignee_username]`, `issue[label_names]`, `issue[milestone_title]`, `issue[due_date]`);
  POST `<p>/-/issues/<iid>/notes|close|reopen|assign|labels` (`note[note]`, `assignee_username`, `label_name`)
- GET `<p>/-/merge_requests[?state=opened|merged|closed|all&page=]` (20 a page), `<p>/-/merge_requests/<iid>`;
  GET/POST `<p>/-/merge_requests/new` (`merge_request[source_branch|target_branch|title|description|
  assignee_username|reviewer_username]`); POST `<p>/-/merge_requests/<iid>/notes|merge|close|reopen|reviewer`
- GET `<p>/-/milestones`, `<p>/-/milestones/<iid>`; GET/POST `<p>/-/milestones/new`
  (`milestone[title|description|start_date|due_date]`, dates YYYY-MM-DD)
- GET/POST `<p>/-/project_members` (invite: `usernames` comma-separated, `access_level` 10/20/30/40),
  GET/POST `<p>/-/project_members/<user id>/edit` (`access_level`), POST `.../<user id>/remove`
- GET `/dashboard/todos[?state=pending|done&type=Issue|MergeRequest&action_id=1|2|9&project_id=]` (to-dos from
  assignments, review requests and `@mentions`), POST `/dashboard/todos/<id>/mark_as_done|restore`,
  POST `/dashboard/todos/mark_all_as_done`
- GET `/<username>` (profile: `h1.user-name`, `.profile-bio`, `.user-status`), `/<group>` (group page with its
  `.visibility-badge`;
  `/groups/<group>` redirects there), GET/POST `/groups/<group>/-/group_members` (the members table; its
  Maintainers and Owners invite: `usernames`, `access_level` 10-50), GET/POST `/groups/new`
  (`group[name|path|description|visibility]`; the creator becomes Owner; "New group" on `/dashboard/groups`),
  `/users/<u>/starred|following|followers`, POST `/users/<u>/follow` (toggles), GET/POST `/-/profile`
  (`user[name|website_url|location|status|bio]`)
- GET/POST `/-/user_settings/personal_access_tokens` (linked from `/-/profile`: `personal_access_token[name]`,
  `personal_access_token[expires_at]`, `personal_access_token[scopes][<scope>]`; rows `tr.token-row[data-name]`
  of `#active-tokens` and `#revoked-tokens`), POST `/-/user_settings/personal_access_tokens/<id>/revoke`
- GET `/search?search=<words>&scope=projects|issues|users`
- GET/POST `/users/sign_in` (`user[login]`, `user[password]`; refused: 303 back to the form), POST `/users/sign_out`
- GET `/api/v4/...`: see `api`

Bad form input answers 422 with the form and a `[role=alert]` message; a page the visitor may not
see answers 404, an action they may not take 403; actions that need a user redirect to
`/users/sign_in`. The members table has the markup WebArena's `gitlab_get_project_memeber_role`
reads: `td[data-label='Account'] span.gl-avatar-labeled-sublabel` ("@user") and
`td.col-max-role span` (the role); pages also carry the classes, ids and attributes WebArena's other
evaluator locators read (`.visibility-icon[title]`, `[data-qa-selector="title_content"]`,
`.detail-page-description`, `#notes-list .timeline-discussion-body`, `.block.start_date`, `.cover-status`,
`[itemprop="url"]`, ...; `bench/webarena_markup.py` measures them). New rows get the site clock: one minute
after the newest timestamp in the database, so the data stay deterministic.
"""
from agentenv_webarena.sites.gitlab.app import create_app
from agentenv_webarena.sites.gitlab.seed import SCHEMA, SEED, seed

__all__ = ["SCHEMA", "SEED", "seed", "create_app"]
