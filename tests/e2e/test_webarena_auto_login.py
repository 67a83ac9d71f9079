"""`python -m agentenv_webarena.webarena.auto_login` against the embedded sites with real Chromium: it writes
WebArena's `.auth/*_state.json` files, and a fresh context loaded from one is signed in."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from helpers import embedded_sites_env, require_chromium

require_chromium()
from agentenv_webarena.sites import EmbeddedSites  # noqa: E402
from agentenv_webarena.tasks.auth import is_logged_in  # noqa: E402
from agentenv_webarena.webarena.browser_env import CHROMIUM_ARGS, default_chromium  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def sites():
    embedded = EmbeddedSites()
    try:
        yield embedded.start()
    finally:
        embedded.close()


async def _signed_in(urls, site, storage_state):
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=default_chromium(), args=list(CHROMIUM_ARGS))
        try:
            context = await browser.new_context(storage_state=storage_state)
            return await is_logged_in(context, site, urls[site])
        finally:
            await browser.close()


def test_auto_login_writes_states_that_log_the_next_context_in(sites, tmp_path):
    env = embedded_sites_env()
    env.update(SHOPPING=sites["shopping"], REDDIT=sites["reddit"])
    auth = tmp_path / ".auth"
    proc = subprocess.run([sys.executable, "-m", "agentenv_webarena.webarena.auto_login",
                           "--site_list", "shopping", "reddit", "--auth_folder", str(auth)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # per site and per pair, named as WebArena names them; the embedded sites keep the reddit+shopping pair
    assert sorted(os.listdir(auth)) == ["reddit_state.json", "shopping.reddit_state.json", "shopping_state.json"]
    assert proc.stdout.count(": ok") == 3
    pair = json.loads((auth / "shopping.reddit_state.json").read_text())
    assert {"shop_session", "forum_session"} <= {c["name"] for c in pair["cookies"]}

    assert asyncio.run(_signed_in(sites, "shopping", str(auth / "shopping_state.json")))
    assert asyncio.run(_signed_in(sites, "reddit", str(auth / "shopping.reddit_state.json")))
    assert not asyncio.run(_signed_in(sites, "shopping", None))  # the check can fail: no state, signed out
    assert not asyncio.run(_signed_in(sites, "shopping", str(auth / "reddit_state.json")))


def test_auto_login_names_the_missing_variable(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("SHOPPING", "GITLAB")}
    proc = subprocess.run([sys.executable, "-m", "agentenv_webarena.webarena.auto_login", "--site_list", "gitlab",
                           "--auth_folder", str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "GITLAB" in proc.stderr
