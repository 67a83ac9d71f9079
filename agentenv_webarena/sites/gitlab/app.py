"""The code host's Starlette app: every route of the site, bound to an `InstanceStore`.

Owns the URL table (GitLab's paths; specific routes before the `/<name>` and `/<ns>/<proj>`
catch-alls) and binds each page handler of `projects`, `repository`, `issuables`, `todos`, `people`, `tokens`
and `api`
to the store (`sites.common.page`: handlers take `(ctx, **path_params)`).
"""
from __future__ import annotations

from typing import Callable

from starlette.applications import Starlette
from starlette.routing import Route

from agentenv_webarena.sites.common import page
from agentenv_webarena.sites.gitlab import api, issuables, people, projects, repository, todos, tokens
from agentenv_webarena.sites.gitlab.layout import Ctx
from agentenv_webarena.sites.store import InstanceStore

__all__ = ["create_app"]

_P = "/{namespace}/{project}"
_GP = ["GET", "POST"]


def create_app(store: InstanceStore) -> Starlette:
    """The code host's Starlette app over `store` (every request uses its `X-Webarena-Instance` DB)."""

    def route(path: str, handler: Callable, methods: list[str] | None = None) -> Route:
        return Route(path, page(store, Ctx, handler), methods=methods or ["GET"])

    routes = [
        route("/", projects.home),
        route("/users/sign_in", people.sign_in),
        route("/users/sign_in", people.sign_in_post, ["POST"]),
        route("/users/sign_out", people.sign_out, ["POST"]),
        route("/users/{username}/starred", projects.user_starred),
        route("/users/{username}/follow", people.follow, ["POST"]),
        route("/users/{username}/{which}", people.follow_list),
        route("/-/profile", people.profile_edit, _GP),
        route(tokens.TOKENS_PATH, tokens.access_tokens, _GP),
        route(tokens.TOKENS_PATH + "/{token_id}/revoke", tokens.revoke_token, ["POST"]),
        route("/dashboard/projects", projects.dashboard_projects),
        route("/dashboard/projects/starred", projects.dashboard_projects),
        route("/dashboard/groups", people.groups_list),
        route("/dashboard/issues", issuables.dashboard_issues),
        route("/dashboard/merge_requests", issuables.dashboard_mrs),
        route("/dashboard/todos", todos.dashboard_todos),
        route("/dashboard/todos/mark_all_as_done", todos.mark_all_done, ["POST"]),
        route("/dashboard/todos/{todo_id}/{action}", todos.todo_action, ["POST"]),
        route("/groups/new", people.new_group, _GP),
        route("/groups/{group}", people.group_page),
        route("/groups/{group}/-/group_members", people.group_members, _GP),
        route("/explore", projects.explore),
        route("/explore/projects", projects.explore),
        route("/explore/groups", people.groups_list),
        route("/projects/new", projects.new_project, _GP),
        route("/search", people.search),
        route("/api/v4/user", api.api_user),
        route("/api/v4/users", api.api_users),
        route("/api/v4/users/{rest:path}", api.api_users),
        route("/api/v4/projects", api.api_projects),
        route("/api/v4/projects/{rest:path}", api.api_project),
        route("/{name}", people.namespace_page),
        route(_P, projects.project_home),
        route(_P + "/-/edit", projects.project_settings, _GP),
        route(_P + "/-/star", projects.star, ["POST"]),
        route(_P + "/-/starrers", projects.starrers),
        route(_P + "/-/forks", projects.forks),
        route(_P + "/-/forks/new", projects.fork_new, _GP),
        route(_P + "/-/tree/{ref:path}", repository.tree),
        route(_P + "/-/blob/{ref:path}", repository.blob),
        route(_P + "/-/raw/{ref:path}", repository.raw),
        route(_P + "/-/commits", repository.commits),
        route(_P + "/-/commits/{ref:path}", repository.commits),
        route(_P + "/-/commit/{sha}", repository.commit_page),
        route(_P + "/-/branches", repository.branches),
        route(_P + "/-/graphs/{ref:path}", repository.contributors),
        route(_P + "/-/new/{ref:path}", repository.new_file, _GP),
        route(_P + "/-/create_dir/{ref:path}", repository.new_dir, _GP),
        route(_P + "/-/edit/{ref:path}", repository.edit_file, _GP),
        route(_P + "/-/issues", issuables.issues),
        route(_P + "/-/issues/new", issuables.new_issue, _GP),
        route(_P + "/-/issues/{iid}", issuables.issue_page),
        route(_P + "/-/issues/{iid}/{action}", issuables.issue_action, ["POST"]),
        route(_P + "/-/merge_requests", issuables.merge_requests),
        route(_P + "/-/merge_requests/new", issuables.new_mr, _GP),
        route(_P + "/-/merge_requests/{iid}", issuables.mr_page),
        route(_P + "/-/merge_requests/{iid}/{action}", issuables.mr_action, ["POST"]),
        route(_P + "/-/milestones", issuables.milestones),
        route(_P + "/-/milestones/new", issuables.new_milestone, _GP),
        route(_P + "/-/milestones/{iid}", issuables.milestone_page),
        route(_P + "/-/project_members", people.members, _GP),
        route(_P + "/-/project_members/{uid}/edit", people.member_edit, _GP),
        route(_P + "/-/project_members/{uid}/remove", people.member_remove, ["POST"]),
    ]
    return Starlette(routes=routes)
