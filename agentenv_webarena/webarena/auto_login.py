"""Log in to the sites once and save the cookies (WebArena's `auto_login.py`).

    python -m agentenv_webarena.webarena.auto_login --site_list shopping reddit

Writes WebArena's Playwright storage-state files under `--auth_folder` (default `.auth`): one per
site (`.auth/shopping_state.json`) and one per pair of the listed sites
(`.auth/shopping.reddit_state.json`), the files task configs name in `storage_state`. Each file is
then checked: a fresh context loaded from it must reach every site's profile page signed in; the
exit status is 1 when one does not.

Site URLs come from WebArena's variables (`SHOPPING`, `SHOPPING_ADMIN`, `REDDIT`, `GITLAB`, ...).
Our embedded sites are detected and logged in with their form POST; real WebArena sites through
their login pages. On a real deployment, pairs of reddit with shopping or shopping_admin are
skipped, as WebArena does: Postmill and Magento both use the PHPSESSID cookie, so one host's
sessions overwrite each other (our embedded sites use distinct cookie names and keep those pairs).

The env server renews expiring cookies itself, per browser context at reset
(`--auth-renew-before-s`), so this script is only needed once before a run.
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import sys
from typing import Optional, Sequence

from agentenv_webarena.tasks.auth import (
    DEFAULT_LOGIN_TIMEOUT_MS,
    LOGIN_SITES,
    is_logged_in,
    login_sites,
    save_storage_state,
    storage_state_path,
)

__all__ = ["site_combinations", "write_states", "check_states", "main"]

logger = logging.getLogger(__name__)

_PHPSESSID_CLASH = ({"reddit", "shopping"}, {"reddit", "shopping_admin"})


def site_combinations(sites: Sequence[str], embedded: bool) -> list[tuple[str, ...]]:
    """Each listed site with a login, and each pair of them (in `LOGIN_SITES` order).

    Raises:
        ValueError: a site that has no login.
    """
    unknown = [s for s in sites if s not in LOGIN_SITES]
    if unknown:
        raise ValueError(f"--site_list has {unknown}; sites with a login are {list(LOGIN_SITES)}")
    ordered = [s for s in LOGIN_SITES if s in set(sites)]
    combos: list[tuple[str, ...]] = [(s,) for s in ordered]
    for pair in itertools.combinations(ordered, 2):
        if not embedded and set(pair) in _PHPSESSID_CLASH:
            logger.warning("skipping %s: on one host Postmill and Magento share the PHPSESSID cookie", ".".join(pair))
            continue
        combos.append(pair)
    return combos


async def write_states(browser, combos, site_urls, auth_folder: str, embedded: bool,
                       timeout_ms: int = DEFAULT_LOGIN_TIMEOUT_MS) -> list[str]:
    """Log a fresh context in to each combination and save its storage state; returns the paths."""
    paths = []
    for combo in combos:
        context = await browser.new_context()
        try:
            await login_sites(context, combo, site_urls, embedded=embedded, timeout_ms=timeout_ms)
            paths.append(await save_storage_state(context, combo, auth_folder))
        finally:
            await context.close()
    return paths


async def check_states(browser, combos, site_urls, auth_folder: str,
                       timeout_ms: int = DEFAULT_LOGIN_TIMEOUT_MS) -> dict[str, list[str]]:
    """For each saved file, the sites a context loaded from it is NOT signed in to (empty = good)."""
    failed = {}
    for combo in combos:
        path = storage_state_path(combo, auth_folder)
        context = await browser.new_context(storage_state=path)
        try:
            failed[path] = [site for site in combo
                            if not await is_logged_in(context, site, site_urls[site], timeout_ms=timeout_ms)]
        finally:
            await context.close()
    return failed


async def _main_async(args: argparse.Namespace, site_urls: dict[str, str], embedded: bool) -> int:
    from playwright.async_api import async_playwright

    from agentenv_webarena.webarena.browser_env import CHROMIUM_ARGS, default_chromium

    combos = site_combinations(args.site_list, embedded)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=args.chromium or default_chromium(),
                                           args=list(CHROMIUM_ARGS))
        try:
            paths = await write_states(browser, combos, site_urls, args.auth_folder, embedded, args.timeout_ms)
            failed = await check_states(browser, combos, site_urls, args.auth_folder, args.timeout_ms)
        finally:
            await browser.close()
    for path in paths:
        bad = failed.get(path)
        print(f"{path}: {'signed out of ' + ', '.join(bad) if bad else 'ok'}", flush=True)
    return 1 if any(failed.values()) else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Write and check the storage-state files; exit 1 when a file does not log a context in."""
    parser = argparse.ArgumentParser(description="Log in to WebArena's sites and save Playwright storage states")
    parser.add_argument("--site_list", nargs="+", default=list(LOGIN_SITES),
                        help=f"sites to log in to (default: all of {list(LOGIN_SITES)})")
    parser.add_argument("--auth_folder", default=".auth", help="where the *_state.json files go (default: %(default)s)")
    parser.add_argument("--chromium", default=None,
                        help="Chromium executable (default: $WEBARENA_CHROMIUM, else Debian's)")
    parser.add_argument("--timeout_ms", type=int, default=DEFAULT_LOGIN_TIMEOUT_MS, help="per page or request")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    from agentenv_webarena.sites import is_embedded_site
    from agentenv_webarena.tasks.config import SITE_ENV_VARS, site_urls_from_env

    site_urls = site_urls_from_env()
    missing = [s for s in args.site_list if s in SITE_ENV_VARS and s not in site_urls]
    if missing:
        parser.error(f"no URL for {missing}: set {', '.join(SITE_ENV_VARS[s] for s in missing)} "
                     "(e.g. SHOPPING=http://<host>:7770), or start the embedded sites with "
                     "`python -m agentenv_webarena.sites` and export the URLs it prints")
    try:
        site_combinations(args.site_list, embedded=True)
    except ValueError as exc:
        parser.error(str(exc))
    embedded = is_embedded_site(site_urls[args.site_list[0]])
    return asyncio.run(_main_async(args, site_urls, embedded))


if __name__ == "__main__":
    sys.exit(main())
