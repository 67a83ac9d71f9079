"""The `func:` helpers that WebArena's `program_html` targets call, behind a whitelist.

Owns the helper registry and the parsing of a `func:` expression. WebArena `eval()`s these
strings; we never do. `call_helper` parses the expression with `ast` and accepts only a call
of a registered helper whose arguments are literals (strings, numbers) or the `__page__`
placeholder; `__last_url__` inside a string argument becomes the agent's current URL.

Built-in helpers (WebArena's names, including its `memeber` spelling):

| helper | what it returns |
|---|---|
| `shopping_get_latest_order_url()` | `{SHOPPING}/sales/order/view/order_id/<id>/` of the newest order ("" if none) |
| `shopping_get_sku_latest_review_author(sku)` | nickname of the product's last review ("" if none) |
| `shopping_get_sku_latest_review_rating(sku)` | rating percent of the last review, as a string ("" if none) |
| `reddit_get_post_url(url)` | `scheme://host/f/<forum>/<id>/` for a post or comment URL, else `url` |
| `gitlab_get_project_memeber_role(__page__, user)` | the max-role cell of `@user` on a members page ("" if absent) |

In the order URL, `<id>` is the order's `int(increment_id)`, as WebArena builds it.
The shopping helpers talk to Magento's REST API (admin token from
`POST {SHOPPING}/rest/default/V1/integration/admin/token`, then `GET {SHOPPING}/rest/V1/orders`
and `GET {SHOPPING}/rest/V1/products/<sku>/reviews`) through `page.context.request`, so the
context's extra headers (the embedded sites' `X-Webarena-Instance`) travel with every call.
Sites add helpers with `@register_helper("name")`; every helper is `async def f(ctx, *args)`.

It does not decide how a helper's value is scored (`evaluators.HTMLContentEvaluator`).
"""
from __future__ import annotations

import ast
import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping
from urllib.parse import quote, urlencode, urlparse

__all__ = [
    "HELPERS",
    "HelperContext",
    "HelperError",
    "MAGENTO_ADMIN_ACCOUNT",
    "PAGE_ARG",
    "PAGE_PLACEHOLDER",
    "LAST_URL_PLACEHOLDER",
    "call_helper",
    "gitlab_get_project_memeber_role",
    "parse_helper_call",
    "reddit_get_post_url",
    "register_helper",
    "shopping_get_latest_order_url",
    "shopping_get_sku_latest_review_author",
    "shopping_get_sku_latest_review_rating",
]

logger = logging.getLogger(__name__)

PAGE_PLACEHOLDER = "__page__"
LAST_URL_PLACEHOLDER = "__last_url__"
# WebArena's env_config ACCOUNTS["shopping_site_admin"]; the REST token is issued to it.
MAGENTO_ADMIN_ACCOUNT = {"username": "admin", "password": "admin1234"}
_MAGENTO_TOKEN_PATH = "/rest/default/V1/integration/admin/token"
_MAGENTO_ORDERS_PATH = "/rest/V1/orders"
_MAGENTO_REVIEWS_PATH = "/rest/V1/products/{sku}/reviews"
# GitLab's members table is rendered by Vue after "load"; wait this long for its rows.
_GITLAB_MEMBERS_WAIT_MS = 5000



class _PageArg:
    """Marks where `__page__` stood in a parsed call (a string "__page__" stays a string)."""

    def __repr__(self) -> str:
        return PAGE_PLACEHOLDER


PAGE_ARG = _PageArg()

HelperFn = Callable[..., Awaitable[str]]
HELPERS: dict[str, HelperFn] = {}


class HelperError(RuntimeError):
    """A helper could not do its job: site unreachable, REST error, bad reply."""


@dataclass
class HelperContext:
    """What a helper may use: the page of the target being evaluated and the site base URLs.

    Attributes:
        page: a `playwright.async_api.Page`; REST calls go through `page.context.request`.
        site_urls: site key -> base URL; when None, read from the environment
            (`tasks.config.site_urls_from_env`) on first use.
    """

    page: Any
    site_urls: Mapping[str, str] | None = None
    _resolved: dict[str, str] | None = field(default=None, init=False, repr=False)

    def site_url(self, site: str) -> str:
        """The base URL (no trailing "/") of `site`.

        Raises:
            ValueError: the site is not configured; names the env var to set.
        """
        from agentenv_webarena.tasks.config import SITE_ENV_VARS, site_urls_from_env

        if self._resolved is None:
            source = site_urls_from_env() if self.site_urls is None else self.site_urls
            self._resolved = {k: v.rstrip("/") for k, v in source.items() if v}
        if site not in self._resolved:
            var = SITE_ENV_VARS.get(site, site.upper())
            raise ValueError(
                f"helper needs the {site!r} site URL, which is not configured; set the {var} "
                f"environment variable or pass site_urls={{{site!r}: ...}} to evaluator_router"
            )
        return self._resolved[site]


def register_helper(name: str) -> Callable[[HelperFn], HelperFn]:
    """Register `async def fn(ctx: HelperContext, *args) -> str` as the `func:` helper `name`.

    Raises:
        ValueError: `name` is already registered to a different function.
    """

    def deco(fn: HelperFn) -> HelperFn:
        existing = HELPERS.get(name)
        if existing is not None and existing is not fn:
            raise ValueError(f"func: helper {name!r} is already registered to {existing.__qualname__}")
        HELPERS[name] = fn
        return fn

    return deco


def parse_helper_call(expression: str) -> tuple[str, list[Any]]:
    """Parse `name(arg, ...)` into the helper name and its arguments, without evaluating code.

    Arguments must be literals (str, int, float, bool, None) or the bare name `__page__`, which
    is returned as `PAGE_ARG` for `call_helper` to bind.

    Raises:
        ValueError: not a single call, keyword or computed arguments, or an unknown helper; the
            message lists the allowed helpers.
    """
    text = expression.strip()
    if text.startswith("func:"):
        text = text[len("func:"):].strip()
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"func: expression {expression!r} is not a valid call: {e.msg}") from e
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise ValueError(f"func: expression {expression!r} must be one call like name('arg'); "
                         f"allowed: {sorted(HELPERS)}")
    name = call.func.id
    if name not in HELPERS:
        raise ValueError(f"func: helper {name!r} is not allowed; allowed helpers are {sorted(HELPERS)}")
    if call.keywords:
        raise ValueError(f"func: expression {expression!r} uses keyword arguments; pass them positionally")
    args: list[Any] = []
    for node in call.args:
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            args.append(node.value)
        elif isinstance(node, ast.Name) and node.id == PAGE_PLACEHOLDER:
            args.append(PAGE_ARG)
        else:
            raise ValueError(
                f"func: expression {expression!r} has argument {ast.unparse(node)!r}; only literals "
                f"and {PAGE_PLACEHOLDER} are allowed"
            )
    return name, args


async def call_helper(expression: str, ctx: HelperContext, *, last_url: str | None = None) -> str:
    """Run a whitelisted `func:` expression and return its value as a string.

    Args:
        expression: e.g. `"reddit_get_post_url('__last_url__')"` (a leading "func:" is allowed).
        ctx: the page and site URLs; `__page__` binds to `ctx.page`.
        last_url: replaces `__last_url__` inside string arguments (the agent's current URL).

    Raises:
        ValueError: see `parse_helper_call`; `__last_url__` used without a `last_url`.
        HelperError: the helper failed.
    """
    name, raw_args = parse_helper_call(expression)
    args: list[Any] = []
    for arg in raw_args:
        if arg is PAGE_ARG:
            args.append(ctx.page)
        elif isinstance(arg, str) and LAST_URL_PLACEHOLDER in arg:
            if last_url is None:
                raise ValueError(f"func: expression {expression!r} uses {LAST_URL_PLACEHOLDER} "
                                 "but no last URL was given")
            args.append(arg.replace(LAST_URL_PLACEHOLDER, last_url))
        else:
            args.append(arg)
    try:
        value = await HELPERS[name](ctx, *args)
    except TypeError as e:
        raise ValueError(f"func: helper {name} cannot take the arguments of {expression!r}: {e}") from e
    logger.debug("func: %s -> %r", expression, value)
    return "" if value is None else str(value)


# --- Magento REST --------------------------------------------------------------------------------


async def _magento_admin_token(ctx: HelperContext) -> str:
    url = ctx.site_url("shopping") + _MAGENTO_TOKEN_PATH
    response = await ctx.page.context.request.post(url, data=MAGENTO_ADMIN_ACCOUNT)
    if not response.ok:
        raise HelperError(
            f"Magento admin token request POST {url} failed with HTTP {response.status}: "
            f"{(await response.text())[:200]!r}; check the admin account and the SHOPPING URL"
        )
    token = await _json(response, url)
    if not isinstance(token, str) or not token:
        raise HelperError(f"POST {url} returned {token!r}, not a token string")
    return token


async def _magento_get(ctx: HelperContext, path_and_query: str) -> Any:
    token = await _magento_admin_token(ctx)
    url = ctx.site_url("shopping") + path_and_query
    response = await ctx.page.context.request.get(url, headers={"Authorization": f"Bearer {token}"})
    if not response.ok:
        raise HelperError(f"Magento REST GET {url} failed with HTTP {response.status}: "
                          f"{(await response.text())[:200]!r}")
    return await _json(response, url)


async def _json(response: Any, url: str) -> Any:
    try:
        return await response.json()
    except Exception as e:  # Playwright raises its own Error for a non-JSON body
        raise HelperError(f"{url} did not return JSON: {(await response.text())[:200]!r}") from e


@register_helper("shopping_get_latest_order_url")
async def shopping_get_latest_order_url(ctx: HelperContext) -> str:
    """The storefront URL of the most recently created order, or "" if there are none.

    Raises:
        HelperError: the REST calls failed or the reply has no `items`.
    """
    query = urlencode(
        {
            "searchCriteria[sortOrders][0][field]": "created_at",
            "searchCriteria[sortOrders][0][direction]": "DESC",
            "searchCriteria[pageSize]": "1",
        }
    )
    reply = await _magento_get(ctx, f"{_MAGENTO_ORDERS_PATH}?{query}")
    if not isinstance(reply, dict) or not isinstance(reply.get("items"), list):
        raise HelperError(f"Magento orders reply has no 'items' list: {str(reply)[:200]!r}")
    if not reply["items"]:
        logger.info("shopping_get_latest_order_url: the shop has no orders")
        return ""
    order = reply["items"][0]
    # WebArena builds the URL from int(increment_id) ("000000189" -> 189); in its Magento data
    # that equals entity_id. Fall back to entity_id for replies without an increment_id.
    raw_id = order.get("increment_id", order.get("entity_id"))
    try:
        order_id = int(raw_id)
    except (TypeError, ValueError) as e:
        raise HelperError(f"Magento order {str(order)[:200]!r} has no numeric increment_id or entity_id") from e
    return f"{ctx.site_url('shopping')}/sales/order/view/order_id/{order_id}/"


async def _latest_review(ctx: HelperContext, sku: str) -> dict | None:
    reply = await _magento_get(ctx, _MAGENTO_REVIEWS_PATH.format(sku=quote(str(sku), safe="")))
    if not isinstance(reply, list):
        raise HelperError(f"Magento reviews reply for sku {sku!r} is not a list: {str(reply)[:200]!r}")
    return reply[-1] if reply else None


@register_helper("shopping_get_sku_latest_review_author")
async def shopping_get_sku_latest_review_author(ctx: HelperContext, sku: str) -> str:
    """The nickname on the product's last review (Magento lists oldest first), or ""."""
    review = await _latest_review(ctx, sku)
    return "" if review is None else str(review.get("nickname", ""))


@register_helper("shopping_get_sku_latest_review_rating")
async def shopping_get_sku_latest_review_rating(ctx: HelperContext, sku: str) -> str:
    """The first rating's percent on the product's last review, as a string, or ""."""
    review = await _latest_review(ctx, sku)
    if review is None or not review.get("ratings"):
        return ""
    return str(review["ratings"][0]["percent"])


# --- Postmill, GitLab ----------------------------------------------------------------------------


@register_helper("reddit_get_post_url")
async def reddit_get_post_url(ctx: HelperContext, url: str) -> str:
    """Canonical post URL `scheme://host/f/<forum>/<id>/` for any URL under a post; else `url`.

    A comment URL such as `/f/books/42/some-title/-/comment/7` maps to `/f/books/42/`, so
    a check of "the post the agent ended on" works from the post or any of its comments.
    """
    parsed = urlparse(url)
    parts = parsed.path.split("/")  # ["", "f", forum, id, ...]
    if len(parts) < 4 or parts[1] != "f" or not parts[2] or not parts[3]:
        return url
    return f"{parsed.scheme}://{parsed.netloc}/f/{parts[2]}/{parts[3]}/"


_GITLAB_ROLE_JS = """([user]) => {
  const names = [...document.querySelectorAll("td[data-label='Account'] span.gl-avatar-labeled-sublabel")];
  const index = names.findIndex((el) => el.innerText.trim() === '@' + user);
  if (index < 0) return '';
  const roles = document.querySelectorAll('td.col-max-role span');
  return roles[index] ? roles[index].innerText : '';
}"""


@register_helper("gitlab_get_project_memeber_role")
async def gitlab_get_project_memeber_role(ctx: HelperContext, page: Any, account_name: str) -> str:
    """The "Max role" cell of `@account_name` on a GitLab project members page, or "" on any error."""
    try:
        await page.wait_for_selector("td[data-label='Account']", timeout=_GITLAB_MEMBERS_WAIT_MS)
    except Exception:
        logger.info("gitlab_get_project_memeber_role: no members table on %s", page.url)
        return ""
    try:
        return str(await page.evaluate(_GITLAB_ROLE_JS, [account_name]))
    except Exception as e:  # WebArena scores a page it cannot read as ""
        logger.info("gitlab_get_project_memeber_role failed on %s: %r", page.url, e)
        return ""
