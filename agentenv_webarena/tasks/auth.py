"""Site logins: how a browser context becomes logged in to each WebArena site.

Owns the accounts (WebArena's `env_config.ACCOUNTS`), each site's login recipe, and the
`.auth/<site[.site2]>_state.json` storage-state files WebArena's `auto_login.py` writes.

Two kinds of site:

- **Embedded** (our `agentenv_webarena.sites`): one form POST through `context.request`, whose
  cookie jar is the context's, so the session cookie lands in the context (and the context's
  extra headers, e.g. `X-Webarena-Instance`, go with it). The sites builder matches these
  recipes; the forms take no CSRF token:

  | site | POST to (a path under the site's base URL) | form fields |
  |---|---|---|
  | shopping | `/customer/account/loginPost/` | `login[username]`=emma.lopez@gmail.com, `login[password]`=Password.123 |
  | shopping_admin | `/login` | `login[username]`=admin, `login[password]`=admin1234 |
  | reddit | `/login_check` | `_username`=MarvelsGrantMan136, `_password`=test1234 |
  | gitlab | `/users/sign_in` | `user[login]`=byteblaze, `user[password]`=hello1234 |

  The base URLs are `{SHOPPING}`, `{SHOPPING_ADMIN}` (which already ends in `/admin`) and `{REDDIT}`.

  Success is any 2xx/3xx answer that does not redirect back to a login page.

- **Real WebArena** (Magento, Postmill, GitLab in docker): the UI is filled in a page of the
  context, as WebArena's `auto_login.py` does (Magento storefront and admin, Postmill, GitLab
  sign-in as byteblaze). Success is a page with no visible password field afterwards.

It does not decide which sites a task needs (the task config's `sites`) or when to log in (the
env, at reset).
"""
from __future__ import annotations

import json
import logging
import os
from typing import Any, Iterable, Mapping
from urllib.parse import urljoin, urlparse

__all__ = [
    "ACCOUNTS",
    "ADMIN_LOGIN_FIELDS",
    "ADMIN_LOGIN_PATH",
    "EMBEDDED_LOGINS",
    "FORUM_LOGIN_FIELDS",
    "FORUM_LOGIN_PATH",
    "LOGIN_SITES",
    "PROFILE_PATHS",
    "is_logged_in",
    "storage_state_fresh",
    "write_storage_state",
    "LoginError",
    "SHOP_LOGIN_FIELDS",
    "SHOP_LOGIN_PATH",
    "load_storage_state",
    "login",
    "login_sites",
    "save_storage_state",
    "storage_state_path",
]

logger = logging.getLogger(__name__)

# WebArena's env_config.ACCOUNTS.
ACCOUNTS: dict[str, dict[str, str]] = {
    "reddit": {"username": "MarvelsGrantMan136", "password": "test1234"},
    "gitlab": {"username": "byteblaze", "password": "hello1234"},
    "shopping": {"username": "emma.lopez@gmail.com", "password": "Password.123"},
    "shopping_admin": {"username": "admin", "password": "admin1234"},
    "shopping_site_admin": {"username": "admin", "password": "admin1234"},
}

# Sites that have a login, in WebArena's auto_login order, which fixes the storage-state file
# names ("gitlab.reddit_state.json", never "reddit.gitlab_state.json").
LOGIN_SITES: tuple[str, ...] = ("gitlab", "shopping", "shopping_admin", "reddit")
_NO_LOGIN_SITES = frozenset({"map", "wikipedia", "homepage"})

# Embedded sites: paths relative to the site's base URL, and (username field, password field).
SHOP_LOGIN_PATH = "/customer/account/loginPost/"
SHOP_LOGIN_FIELDS = ("login[username]", "login[password]")
ADMIN_LOGIN_PATH = "/login"
ADMIN_LOGIN_FIELDS = ("login[username]", "login[password]")
FORUM_LOGIN_PATH = "/login_check"
FORUM_LOGIN_FIELDS = ("_username", "_password")
EMBEDDED_LOGINS: dict[str, tuple[str, tuple[str, str]]] = {
    "shopping": (SHOP_LOGIN_PATH, SHOP_LOGIN_FIELDS),
    "shopping_admin": (ADMIN_LOGIN_PATH, ADMIN_LOGIN_FIELDS),
    "reddit": (FORUM_LOGIN_PATH, FORUM_LOGIN_FIELDS),
    "gitlab": ("/users/sign_in", ("user[login]", "user[password]")),
}
# A redirect whose path ends like this means the credentials were refused.
_LOGIN_PAGE_SUFFIXES = ("/login", "/customer/account/login", "/users/sign_in")

DEFAULT_LOGIN_TIMEOUT_MS = 30_000

# A page of each site only a signed-in user sees (relative to the site's base URL); signed out, the
# site answers it with a login form. The same paths on the embedded sites and on WebArena's images.
PROFILE_PATHS: dict[str, str] = {
    "shopping": "/customer/account/",
    "shopping_admin": "",  # the admin base: the dashboard when signed in, the sign-in form when not
    "reddit": "/submit",
    "gitlab": "/-/profile",
}


class LoginError(RuntimeError):
    """A site refused the login or could not be reached."""


async def login(
    context: Any,
    site: str,
    base_url: str,
    *,
    embedded: bool,
    timeout_ms: int = DEFAULT_LOGIN_TIMEOUT_MS,
) -> None:
    """Log `context` in to `site` as WebArena's account for it.

    Sites without accounts (map, wikipedia, homepage) need no login and return at once.

    Args:
        context: a `playwright.async_api.BrowserContext`.
        site: site key ("shopping", "shopping_admin", "reddit", "gitlab", ...).
        base_url: the site's base URL (the admin's ends in "/admin").
        embedded: True for our embedded sites (form POST), False for real WebArena (UI login).
        timeout_ms: cap on each request or UI step.

    Raises:
        ValueError: an unknown site, or a site the embedded set does not have.
        LoginError: the site refused the credentials or did not answer.
    """
    if site in _NO_LOGIN_SITES:
        logger.debug("site %s needs no login", site)
        return
    if site not in LOGIN_SITES:
        raise ValueError(f"unknown site {site!r}; choose from {sorted(LOGIN_SITES + tuple(_NO_LOGIN_SITES))}")
    base = base_url.rstrip("/")
    if embedded:
        if site not in EMBEDDED_LOGINS:
            raise ValueError(
                f"the embedded sites have no {site!r}; embedded logins exist for {sorted(EMBEDDED_LOGINS)} "
                f"(use embedded=False with a real WebArena deployment)"
            )
        await _embedded_login(context, site, base, timeout_ms)
    else:
        await _ui_login(context, site, base, timeout_ms)
    logger.info("logged in to %s at %s as %s", site, base, ACCOUNTS[site]["username"])


async def login_sites(
    context: Any,
    sites: Iterable[str],
    site_urls: Mapping[str, str],
    *,
    embedded: bool,
    timeout_ms: int = DEFAULT_LOGIN_TIMEOUT_MS,
) -> None:
    """Log `context` in to every site of a task that has a login.

    Raises:
        ValueError: a site needing a login has no URL in `site_urls`.
        LoginError: see `login`.
    """
    for site in sites:
        if site in _NO_LOGIN_SITES:
            continue
        if site not in site_urls:
            raise ValueError(f"cannot log in to {site!r}: no URL for it in site_urls {sorted(site_urls)}")
        await login(context, site, site_urls[site], embedded=embedded, timeout_ms=timeout_ms)


async def _embedded_login(context: Any, site: str, base: str, timeout_ms: int) -> None:
    path, (user_field, password_field) = EMBEDDED_LOGINS[site]
    url = base + path
    account = ACCOUNTS[site]
    try:
        response = await context.request.post(
            url,
            form={user_field: account["username"], password_field: account["password"]},
            max_redirects=0,
            timeout=timeout_ms,
        )
    except Exception as e:
        raise LoginError(f"{site} login POST {url} failed: {e}; is the embedded site running?") from e
    status = response.status
    if status >= 400:
        raise LoginError(f"{site} login POST {url} answered HTTP {status}; check the login recipe in tasks/auth.py")
    if 300 <= status < 400:
        location = response.headers.get("location", "")
        target = urlparse(urljoin(url, location)).path.rstrip("/")
        if target.endswith(_LOGIN_PAGE_SUFFIXES):
            raise LoginError(
                f"{site} refused {account['username']!r}: POST {url} redirected back to the login page {location!r}"
            )


async def _fill_and_submit(page: Any, site: str, base: str, timeout_ms: int) -> None:
    account = ACCOUNTS[site]
    if site == "shopping":
        await page.goto(f"{base}/customer/account/login/", timeout=timeout_ms)
        await page.get_by_label("Email", exact=True).fill(account["username"], timeout=timeout_ms)
        await page.get_by_label("Password", exact=True).fill(account["password"], timeout=timeout_ms)
        await page.get_by_role("button", name="Sign In").click(timeout=timeout_ms)
    elif site == "shopping_admin":
        await page.goto(base, timeout=timeout_ms)
        await page.get_by_placeholder("user name").fill(account["username"], timeout=timeout_ms)
        await page.get_by_placeholder("password").fill(account["password"], timeout=timeout_ms)
        await page.get_by_role("button", name="Sign in").click(timeout=timeout_ms)
    elif site == "reddit":
        await page.goto(f"{base}/login", timeout=timeout_ms)
        await page.get_by_label("Username").fill(account["username"], timeout=timeout_ms)
        await page.get_by_label("Password").fill(account["password"], timeout=timeout_ms)
        await page.get_by_role("button", name="Log in").click(timeout=timeout_ms)
    elif site == "gitlab":
        await page.goto(f"{base}/users/sign_in", timeout=timeout_ms)
        await page.get_by_test_id("username-field").fill(account["username"], timeout=timeout_ms)
        await page.get_by_test_id("password-field").fill(account["password"], timeout=timeout_ms)
        await page.get_by_test_id("sign-in-button").click(timeout=timeout_ms)


async def _ui_login(context: Any, site: str, base: str, timeout_ms: int) -> None:
    page = await context.new_page()
    try:
        try:
            await _fill_and_submit(page, site, base, timeout_ms)
            # The password field goes away with the login page; a refused login renders it again.
            await page.locator("input[type='password']").first.wait_for(state="hidden", timeout=timeout_ms)
            await page.wait_for_load_state("load", timeout=timeout_ms)
        except Exception as e:
            raise LoginError(f"{site} UI login at {base} failed on {page.url}: {e}") from e
        if await page.locator("input[type='password']:visible").count():
            raise LoginError(f"{site} refused {ACCOUNTS[site]['username']!r}: still on a login form at {page.url}")
    finally:
        await page.close()


def storage_state_path(sites: Iterable[str], auth_dir: str | os.PathLike = ".auth") -> str | None:
    """WebArena's storage-state file for a set of sites, e.g. `.auth/gitlab.reddit_state.json`.

    Sites without a login are left out; the rest are named in `LOGIN_SITES` order. Returns None
    when none of the sites has a login (WebArena's `storage_state: null`).
    """
    wanted = set(sites)
    named = [site for site in LOGIN_SITES if site in wanted]
    if not named:
        return None
    return os.path.join(os.fspath(auth_dir), f"{'.'.join(named)}_state.json")


async def save_storage_state(context: Any, sites: Iterable[str], auth_dir: str | os.PathLike = ".auth") -> str:
    """Write the context's cookies and local storage to WebArena's file for `sites`.

    Returns:
        The path written.

    Raises:
        ValueError: none of `sites` has a login.
    """
    sites = list(sites)
    path = storage_state_path(sites, auth_dir)
    if path is None:
        raise ValueError(f"sites {sites} have no login, so there is no storage state to save")
    await write_storage_state(context, path)
    logger.info("saved storage state for %s to %s", sites, path)
    return path


def load_storage_state(
    sites_or_path: Iterable[str] | str | os.PathLike,
    auth_dir: str | os.PathLike = ".auth",
) -> dict | None:
    """Read a storage state (for `BrowserSession.open(storage_state=...)`).

    Args:
        sites_or_path: a task's `sites` list, or a path such as a config's `storage_state`.
        auth_dir: where the files live when `sites_or_path` is a list of sites.

    Returns:
        The storage-state dict, or None when the sites need no login.

    Raises:
        FileNotFoundError: the file is missing; log in and `save_storage_state` first.
    """
    if isinstance(sites_or_path, (str, os.PathLike)):
        path = os.fspath(sites_or_path)
    else:
        path = storage_state_path(sites_or_path, auth_dir)
        if path is None:
            return None
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"storage state {path} does not exist; log in with tasks.auth.login and save it with "
            f"save_storage_state (or run the auto-login script) first"
        )
    with open(path, encoding="utf-8") as f:
        return json.load(f)


async def is_logged_in(context: Any, site: str, base_url: str, timeout_ms: int = DEFAULT_LOGIN_TIMEOUT_MS) -> bool:
    """Whether `context` is signed in to `site`: its profile page (`PROFILE_PATHS`) shows no password field.

    Raises:
        ValueError: a site without a login.
    """
    if site not in PROFILE_PATHS:
        raise ValueError(f"{site!r} has no login to check; sites with one: {sorted(PROFILE_PATHS)}")
    page = await context.new_page()
    try:
        await page.goto(base_url.rstrip("/") + PROFILE_PATHS[site], timeout=timeout_ms)
        await page.wait_for_load_state("load", timeout=timeout_ms)
        return await page.locator("input[type='password']:visible").count() == 0
    finally:
        await page.close()


def storage_state_fresh(path: str | os.PathLike, min_ttl_s: float, now: float | None = None) -> bool:
    """Whether the storage state at `path` exists and none of its cookies expires within `min_ttl_s`.

    Session cookies (no expiry) never expire here; a file without cookies is not fresh (it logs nobody in).
    """
    import time

    path = os.fspath(path)
    if not os.path.isfile(path):
        return False
    try:
        with open(path, encoding="utf-8") as f:
            cookies = json.load(f).get("cookies") or []
    except (OSError, ValueError, AttributeError):
        return False
    if not cookies:
        return False
    expiries = [float(c["expires"]) for c in cookies if float(c.get("expires", -1)) > 0]
    deadline = (time.time() if now is None else now) + min_ttl_s
    return all(e > deadline for e in expiries)


async def write_storage_state(context: Any, path: str | os.PathLike) -> str:
    """Write the context's storage state to `path` atomically (readers never see half a file)."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    state = await context.storage_state()
    tmp = f"{path}.{os.getpid()}.{id(state)}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f)
    os.replace(tmp, path)
    return path
