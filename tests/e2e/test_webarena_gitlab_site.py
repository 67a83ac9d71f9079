"""The embedded code host with real Chromium: sign in, create a project and see it listed, per-instance
isolation and reset, WebArena's `gitlab_get_project_memeber_role` helper and the `/api/v4` subset, and a
replay of the gitlab task templates' reference sequences through the env server (`expert.play_task`).

The default run replays one task of a few kinds (string, URL, page state with a `func:` helper,
gitlab + reddit); the `slow` test replays one task of every template, right and deliberately wrong.
"""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from helpers import launched_server, require_chromium

require_chromium()
from agentenv.controller.types import is_success  # noqa: E402
from agentenv.envs.webarena import WebarenaEnvClient  # noqa: E402
from agentenv_webarena.expert import play_task  # noqa: E402
from agentenv_webarena.sites import reset_instance  # noqa: E402
from agentenv_webarena.sites.store import INSTANCE_HEADER  # noqa: E402
from agentenv_webarena.tasks.auth import login  # noqa: E402
from agentenv_webarena.tasks.generate import generate_tasks  # noqa: E402
from agentenv_webarena.webarena.browser_env import CHROMIUM_ARGS, default_chromium  # noqa: E402
from agentenv_webarena.webarena.evaluation_harness.helper_functions import HelperContext, call_helper  # noqa: E402


@pytest.fixture(scope="module")
def gitlab_tasks(tmp_path_factory):
    tasks = generate_tasks(only=["gitlab"])
    path = tmp_path_factory.mktemp("gitlab_tasks") / "tasks.json"
    path.write_text(json.dumps(tasks))
    return tasks, str(path)


@pytest.fixture(scope="module")
def env_server(gitlab_tasks):
    """The env server over the gitlab tasks (it starts the embedded sites): (base URL, site URLs)."""
    with launched_server("agentenv_webarena.launch", "--task-file", gitlab_tasks[1]) as (base, _proc):
        yield base, httpx.get(base + "/tasks", timeout=60).json()["site_urls"]


@pytest.fixture(scope="module")
def sites(env_server):
    return env_server[1]


async def _with_contexts(instances: list[str], body):
    """Run `body(browser_contexts)`: one signed-in context per instance name."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=default_chromium(), args=list(CHROMIUM_ARGS))
        try:
            contexts = [await browser.new_context(extra_http_headers={INSTANCE_HEADER: name}) for name in instances]
            return await body(contexts)
        finally:
            await browser.close()


def test_create_project_listed_isolated_and_reset(sites):
    base = sites["gitlab"]
    for name in ("gl-e2e-a", "gl-e2e-b"):
        reset_instance(base, name)

    async def body(contexts):
        a, b = contexts
        for ctx in contexts:
            await login(ctx, "gitlab", base, embedded=True)
        page = await a.new_page()
        await page.goto(base + "/projects/new")
        await page.get_by_label("Project name").fill("Browser Made")
        await page.get_by_label("Public").check()
        await page.get_by_role("button", name="Create project").click()
        await page.wait_for_url(base + "/byteblaze/browser-made")
        heading = await page.locator("h1.project-title").inner_text()
        await page.goto(base + "/dashboard/projects")
        listed = await page.get_by_role("link", name="byteblaze / Browser Made").count()
        other = await (await b.new_page()).goto(base + "/byteblaze/browser-made")
        reset_instance(base, "gl-e2e-a")
        after_reset = await page.goto(base + "/byteblaze/browser-made")
        return heading, listed, other.status, after_reset.status

    heading, listed, other_status, reset_status = asyncio.run(_with_contexts(["gl-e2e-a", "gl-e2e-b"], body))
    assert heading == "Browser Made" and listed == 1
    assert other_status == 404  # another instance never sees it
    assert reset_status == 404  # and a reset removes it


def test_member_role_helper_and_api(sites):
    base = sites["gitlab"]
    reset_instance(base, "gl-e2e-helper")

    async def body(contexts):
        ctx = contexts[0]
        await login(ctx, "gitlab", base, embedded=True)
        page = await ctx.new_page()
        await page.goto(base + "/byteblaze/dotfiles/-/project_members")
        helper = HelperContext(page, {"gitlab": base})
        roles = [await call_helper(f"func:gitlab_get_project_memeber_role(__page__, '{u}')", helper)
                 for u in ("byteblaze", "olivia_w", "vinta")]
        api = await ctx.request.get(base + "/api/v4/projects/byteblaze%2Fdotfiles/members/all")
        return roles, await api.json()

    roles, members = asyncio.run(_with_contexts(["gl-e2e-helper"], body))
    assert roles == ["Owner", "Maintainer", ""]  # vinta is no member
    assert {m["username"]: m["access_level"] for m in members}["olivia_w"] == 40
    anonymous = httpx.get(base + "/api/v4/projects/byteblaze%2Fdotfiles", headers={INSTANCE_HEADER: "gl-e2e-helper"})
    assert anonymous.status_code == 404 and anonymous.json()["message"] == "404 Project Not Found"
    public = httpx.get(base + "/api/v4/projects/a11yproject%2Fa11yproject.com").json()
    assert public["path_with_namespace"] == "a11yproject/a11yproject.com" and public["visibility"] == "public"


def _replay(env_server, tasks: list[dict], indices: list[int], wrong: bool) -> list:
    base, site_urls = env_server
    with WebarenaEnvClient(base, data_len=len(tasks), timeout=120) as client:
        return [play_task(client, i, tasks[i], site_urls, wrong=wrong) for i in indices]


def _first_of(tasks: list[dict], template_ids: list[int]) -> list[int]:
    firsts: dict[int, int] = {}
    for i, t in enumerate(tasks):
        firsts.setdefault(t["intent_template_id"], i)
    return [firsts[t] for t in template_ids]


def test_replay_a_sample_of_templates(gitlab_tasks, env_server):
    tasks = gitlab_tasks[0]
    # a string answer, a URL, a func: member-role check and a gitlab + reddit post
    indices = _first_of(tasks, [5001, 5033, 5052, 5100])
    results = _replay(env_server, tasks, indices, wrong=False)
    assert [(r.error, is_success(r.reward)) for r in results] == [("", True)] * len(indices)


@pytest.mark.slow
def test_replay_one_task_per_template_right_and_wrong(gitlab_tasks, env_server):
    tasks = gitlab_tasks[0]
    indices = _first_of(tasks, sorted({t["intent_template_id"] for t in tasks}))
    right = _replay(env_server, tasks, indices, wrong=False)
    assert [i for i, r in zip(indices, right, strict=True) if r.error or not is_success(r.reward)] == []
    wrong = _replay(env_server, tasks, indices, wrong=True)
    assert [i for i, r in zip(indices, wrong, strict=True) if r.reward != 0.0] == []
