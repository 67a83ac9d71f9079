"""WebArena's own evaluator locators and URLs, run on the embedded sites.

    python bench/webarena_markup.py --webarena-src DIR [--out bench/webarena_markup.json] [--show 30]

`--webarena-src` is a checkout of web-arena-x/webarena (only `config_files/test.raw.json` is read;
`git --git-dir=<mirror> show HEAD:config_files/test.raw.json > DIR/config_files/test.raw.json` will do).

Two measurements, both on our sites served by `python -m agentenv_webarena.sites`, in Debian's Chromium
with a context logged in to every site as WebArena's accounts:

1. **Locators.** Every `program_html` check of WebArena's 812 tasks whose locator is a DOM expression
   (`document.querySelector(...)...`; `func:` helpers and empty locators are left out). Each check is run
   on our page of the same kind: WebArena's URL itself when our site answers it (same entities), else our
   representative page of that kind (`PAGE_KINDS`), chosen by the URL's shape, or for `last` / `func:` URLs
   by what the task ends on. WebArena's locator expression is evaluated as its evaluator does
   (`page.evaluate(f"() => {locator}")`); a use *matches* when it evaluates without an error to something
   other than null/undefined (an empty field's "" matches: the element is there). Distinct selectors are
   the strings inside `querySelector(...)` / `querySelectorAll(...)`; a selector matches when every use
   containing it does.
2. **URL shapes.** Every URL WebArena's evaluators name (`url_match` reference URLs and `program_html`
   URLs), normalised to a shape (digits -> N). A URL *answers* when our site returns a 2xx page that is not
   a login page (a) literally, with WebArena's entities, or (b) as its shape, with our representative
   entity; a shape answers when (a) or (b) holds for one of its URLs. A map search URL answers even when
   it finds nothing (as OSM's does), so for those the table also counts the ones that list results.

Prints a table per site kind (uses, matching; distinct selectors, matching; URL shapes, answering) and the
failing selectors and URLs, then as its LAST line one JSON object with the totals. Writes the rows to
`--out`. It changes no site state (only GETs and in-page reads); it is not a test.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SITE_OF_PLACEHOLDER = {"__SHOPPING_ADMIN__": "shopping_admin", "__SHOPPING__": "shopping", "__REDDIT__": "reddit",
                       "__GITLAB__": "gitlab", "__MAP__": "map", "__WIKIPEDIA__": "wikipedia"}

# Our representative page of each kind WebArena's evaluators read: (site, path on our site).
PAGE_KINDS: dict[str, tuple[str, str]] = {
    # code host
    "gitlab project": ("gitlab", "/byteblaze/timeit"),
    "gitlab user profile": ("gitlab", "/byteblaze"),
    "gitlab user following": ("gitlab", "/users/byteblaze/following"),
    "gitlab user starred": ("gitlab", "/users/byteblaze/starred"),
    "gitlab issue": ("gitlab", "/a11yproject/checklist/-/issues/7"),
    "gitlab issue list": ("gitlab", "/a11yproject/a11yproject.com/-/issues"),
    "gitlab merge request": ("gitlab", "/a11yproject/a11yproject.com/-/merge_requests/1"),
    "gitlab merge request list": ("gitlab", "/a11yproject/a11yproject.com/-/merge_requests"),
    "gitlab milestone": ("gitlab", "/a11yproject/a11yproject.com/-/milestones/1"),
    "gitlab milestone list": ("gitlab", "/a11yproject/a11yproject.com/-/milestones"),
    "gitlab project members": ("gitlab", "/byteblaze/timeit/-/project_members"),
    "gitlab commits": ("gitlab", "/byteblaze/timeit/-/commits"),
    "gitlab tree": ("gitlab", "/byteblaze/timeit/-/tree/main"),
    "gitlab blob": ("gitlab", "/byteblaze/timeit/-/blob/main/README.md"),
    "gitlab raw": ("gitlab", "/byteblaze/timeit/-/raw/main/README.md"),
    "gitlab dashboard projects": ("gitlab", "/dashboard/projects"),
    "gitlab dashboard issues": ("gitlab", "/dashboard/issues?scope=all&state=opened&assignee_username=byteblaze"),
    "gitlab dashboard merge requests": ("gitlab", "/dashboard/merge_requests?assignee_username=byteblaze"),
    "gitlab dashboard todos": ("gitlab", "/dashboard/todos"),
    "gitlab explore": ("gitlab", "/explore"),
    "gitlab group members": ("gitlab", "/groups/a11yproject/-/group_members"),
    # forum
    "forum front": ("reddit", "/"),
    "forum forum": ("reddit", "/f/books"),
    "forum forum edit": ("reddit", "/f/books/edit"),
    "forum post": ("reddit", "/f/books/1"),
    "forum comment": ("reddit", "/f/books/1/-/comment/1"),
    "forum user": ("reddit", "/user/MarvelsGrantMan136"),
    # storefront
    "shop product": ("shopping", "/homestead-eco-trash-bags.html"),
    "shop category": ("shopping", "/electronics.html"),
    "shop subcategory": ("shopping", "/electronics/headphones.html"),
    "shop search": ("shopping", "/catalogsearch/result/?q=coffee"),
    "shop cart": ("shopping", "/checkout/cart"),
    "shop contact": ("shopping", "/contact"),
    "shop address book": ("shopping", "/customer/address"),
    "shop newsletter": ("shopping", "/newsletter/manage/"),
    "shop order view": ("shopping", "/sales/order/view/order_id/1/"),
    "shop wishlist": ("shopping", "/wishlist/"),
    # admin
    "admin product grid": ("shopping_admin", "/catalog/product"),
    "admin product edit": ("shopping_admin", "/catalog/product/edit/id/1/"),
    "admin product new": ("shopping_admin", "/catalog/product/new/set/4/type/simple/"),
    "admin cms page edit": ("shopping_admin", "/cms/page/edit/page_id/1/"),
    "admin customer grid": ("shopping_admin", "/customer/index/"),
    "admin report": ("shopping_admin", "/reports/report_sales/sales/"),
    "admin review edit": ("shopping_admin", "/review/product/edit/id/1"),
    "admin order grid": ("shopping_admin", "/sales/order/?status=processing"),
    "admin order view": ("shopping_admin", "/sales/order/view/order_id/115/"),
    "admin order shipments": ("shopping_admin",
                              "/sales/order/commentsHistory/order_id/1/active_tab/order_shipments/"),
    "admin cart price rules": ("shopping_admin", "/sales_rule/promo_quote"),
    "admin cart price rule new": ("shopping_admin", "/sales_rule/promo_quote/new/"),
    "admin theme edit": ("shopping_admin", "/admin/system_design_theme/edit/id/1"),
    # map
    "map search": ("map", "/search?query=hotels%20near%20Carnegie%20Mellon%20University"),
    "map directions": ("map", "/directions?engine=fossgis_osrm_foot&route=40.4443%2C-79.9436%3B40.4406%2C-79.9959"),
    "map place": ("map", "/way/42007919"),  # Carnegie Mellon University
}

# WebArena URL shapes -> page kind: (site, regex over the path and query).
_SHAPES: list[tuple[str, str, str]] = [
    ("gitlab", r"^/dashboard/projects", "gitlab dashboard projects"),
    ("gitlab", r"^/dashboard/issues", "gitlab dashboard issues"),
    ("gitlab", r"^/dashboard/merge_requests", "gitlab dashboard merge requests"),
    ("gitlab", r"^/dashboard/todos", "gitlab dashboard todos"),
    ("gitlab", r"^/explore", "gitlab explore"),
    ("gitlab", r"^/users/[^/]+/following", "gitlab user following"),
    ("gitlab", r"^/users/[^/]+/starred", "gitlab user starred"),
    ("gitlab", r"^/groups/[^/]+/-/group_members", "gitlab group members"),
    ("gitlab", r"^/[^/]+/[^/]+/-/issues/\d+", "gitlab issue"),
    ("gitlab", r"^/[^/]+/[^/]+/-/issues", "gitlab issue list"),
    ("gitlab", r"^/[^/]+/[^/]+/-/merge_requests/\d+", "gitlab merge request"),
    ("gitlab", r"^/[^/]+/[^/]+/-/merge_requests", "gitlab merge request list"),
    ("gitlab", r"^/[^/]+/[^/]+/-/project_members", "gitlab project members"),
    ("gitlab", r"^/[^/]+/[^/]+/-/milestones/\d+", "gitlab milestone"),
    ("gitlab", r"^/[^/]+/[^/]+/-/milestones", "gitlab milestone list"),
    ("gitlab", r"^/[^/]+/[^/]+/-/commits", "gitlab commits"),
    ("gitlab", r"^/[^/]+/[^/]+/-/tree/", "gitlab tree"),
    ("gitlab", r"^/[^/]+/[^/]+/-/blob/", "gitlab blob"),
    ("gitlab", r"^/[^/]+/[^/]+/-/raw/", "gitlab raw"),
    ("gitlab", r"^/[^/]+/[^/]+/?$", "gitlab project"),
    ("gitlab", r"^/[^/]+/?$", "gitlab user profile"),
    ("reddit", r"^/?$", "forum front"),
    ("reddit", r"^/f/[^/]+/edit", "forum forum edit"),
    ("reddit", r"^/f/[^/]+/\d+/-/comment/\d+", "forum comment"),
    ("reddit", r"^/f/[^/]+/\d+", "forum post"),
    ("reddit", r"^/f/[^/]+/?$", "forum forum"),
    ("reddit", r"^/user/[^/]+", "forum user"),
    ("shopping", r"^/catalogsearch/result", "shop search"),
    ("shopping", r"^/checkout/cart", "shop cart"),
    ("shopping", r"^/contact", "shop contact"),
    ("shopping", r"^/customer/address", "shop address book"),
    ("shopping", r"^/newsletter/manage", "shop newsletter"),
    ("shopping", r"^/sales/order/view/order_id/\d+", "shop order view"),
    ("shopping", r"^/wishlist", "shop wishlist"),
    ("shopping", r"^/[^/]+/[^/]+(/[^/]+)?\.html", "shop subcategory"),
    ("shopping", r"^/[a-z]+(-[a-z]+)?\.html", "shop category"),
    ("shopping", r"^/[^/]+\.html", "shop product"),
    ("shopping_admin", r"^/\.\./[^/]+\.html", "shop product"),
    ("shopping_admin", r"^/catalog/product/edit/id/\d+", "admin product edit"),
    ("shopping_admin", r"^/catalog/product/?$", "admin product grid"),
    ("shopping_admin", r"^/cms/page/edit", "admin cms page edit"),
    ("shopping_admin", r"^/customer/index", "admin customer grid"),
    ("shopping_admin", r"^/reports/", "admin report"),
    ("shopping_admin", r"^/review/product/edit/id/\d+", "admin review edit"),
    ("shopping_admin", r"^/sales/order/view/order_id/\d+", "admin order view"),
    ("shopping_admin", r"^/sales/order/commentsHistory", "admin order shipments"),
    ("shopping_admin", r"^/sales/order/?$", "admin order grid"),
    ("shopping_admin", r"^/sales_rule/promo_quote", "admin cart price rules"),
    ("shopping_admin", r"^/admin/system_design_theme/edit", "admin theme edit"),
    ("map", r"^/search\?query=", "map search"),
]

# Where a task whose check reads the `last` page (or a `func:` URL) ends: (site, selector substring, kind).
_LAST_PAGES: list[tuple[str, str, str]] = [
    ("gitlab", "start_date", "gitlab milestone"), ("gitlab", "due_date'", "gitlab milestone"),
    ("gitlab", "#content-body", "gitlab milestone"), ("gitlab", "reviewer", "gitlab merge request"),
    ("gitlab", "gl-font-monospace", "gitlab merge request"), ("gitlab", "", "gitlab issue"),
    ("reddit", "", "forum post"), ("shopping", "What’s on your mind?", "shop contact"),
    ("shopping", "", "shop order view"),
    ("shopping_admin", "admin__data-grid-filters-current", "admin order grid"),
    ("shopping_admin", "sales_report_", "admin report"),
    ("shopping_admin", "product", "admin product new"), ("shopping_admin", "selected-option", "admin product new"),
    ("shopping_admin", "category_ids", "admin product new"), ("shopping_admin", "", "admin cart price rule new"),
    ("map", "sidebar_content", "map place"), ("map", "", "map directions"),
]

# Kinds whose representative page is the first link of a list page (entities that depend on the account):
# kind -> (site, list page, link selector).
_FIRST_LINK = {"shop order view": ("shopping", "/sales/order/history/", "a[href*='/sales/order/view/order_id/']")}

_SELECTOR = re.compile(r"""querySelector(?:All)?\(\s*(?:'([^']*)'|"([^"]*)")\s*\)""")


@dataclass
class LocatorUse:
    """One `program_html` check: the task, WebArena's URL for it, its locator, and our page's kind."""

    task_id: int
    site: str
    url: str
    locator: str
    kind: str

    @property
    def selectors(self) -> list[str]:
        return [a or b for a, b in _SELECTOR.findall(self.locator)]


def split_url(url: str) -> Optional[tuple[str, str]]:
    """`__GITLAB__/a/b` -> ("gitlab", "/a/b"); None for `last`, `func:` and non-URLs."""
    for placeholder, site in SITE_OF_PLACEHOLDER.items():
        if url.startswith(placeholder):
            return site, url[len(placeholder):] or "/"
    return None


def shape_kind(site: str, path: str) -> Optional[str]:
    """The page kind of a WebArena path on `site` (None: a shape this bench does not know)."""
    if site == "wikipedia":
        return None
    for shape_site, pattern, kind in _SHAPES:
        if shape_site == site and re.search(pattern, path):
            return kind
    return None


def task_site(task: dict) -> str:
    """The site a task's `last` page is on: map for map+wiki tasks, else its first site."""
    sites = task["sites"]
    return "map" if "map" in sites else sites[0]


def last_kind(task: dict, url: str, locator: str) -> str:
    """The page kind a task ends on when its check reads `last` or a `func:` URL."""
    if "reddit_get_post_url" in url:
        return "forum post"
    if "shopping_get_latest_order_url" in url:
        return "shop order view"
    site = task_site(task)
    for last_site, needle, kind in _LAST_PAGES:
        if last_site == site and needle in locator:
            return kind
    raise ValueError(f"task {task['task_id']}: no page kind for a `last` check on {site}: {locator[:80]}")


def locator_uses(tasks: list[dict]) -> list[LocatorUse]:
    """Every DOM-locator `program_html` check of WebArena's tasks, with its page kind."""
    uses = []
    for task in tasks:
        for check in task["eval"].get("program_html") or []:
            locator = check.get("locator", "")
            if not locator or locator.startswith("func:"):
                continue
            split = split_url(check["url"])
            if split is not None:
                site, kind = split[0], shape_kind(*split)
            else:
                kind = last_kind(task, check["url"], locator)
                site = PAGE_KINDS[kind][0]
            uses.append(LocatorUse(task["task_id"], site if site != "wikipedia" else "map", check["url"], locator,
                                   kind or "unknown"))
    return uses


def evaluator_urls(tasks: list[dict]) -> list[tuple[str, str]]:
    """(site, path) of every URL WebArena's evaluators name (`url_match` references, `program_html` URLs)."""
    urls = []
    for task in tasks:
        ev = task["eval"]
        names = [u.strip() for u in (ev.get("reference_url") or "").split(" |OR| ") if u.strip()]
        names += [c["url"] for c in ev.get("program_html") or []]
        for name in names:
            split = split_url(name)
            if split is not None:
                urls.append(split)
    return urls


def url_shape(site: str, path: str) -> str:
    """A URL's shape: its page kind and the names of its query parameters (`shop subcategory?price`)."""
    kind = shape_kind(site, path)
    base, _, query = path.partition("?")
    keys = sorted({part.split("=")[0] for part in query.split("&") if part})
    return (kind or re.sub(r"\d+", "N", base)) + ("?" + "&".join(keys) if keys else "")


def _with_query(page: tuple[str, str], webarena_path: str) -> tuple[str, str]:
    """Our representative page with WebArena's query string (filters, sorting) in place of its own."""
    site, path = page
    query = webarena_path.partition("?")[2]
    return (site, path.partition("?")[0] + "?" + query) if query else page


def _start_sites(urls_file: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "agentenv_webarena.sites", "--urls-file", urls_file,
                             "--log-level", "warning"], cwd=ROOT, stdout=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not os.path.exists(urls_file) or not os.path.getsize(urls_file):
        if proc.poll() is not None or time.time() > deadline:
            raise SystemExit("the embedded sites did not start (python -m agentenv_webarena.sites)")
        time.sleep(0.2)
    time.sleep(0.3)
    return proc


def _is_login_page(url: str) -> bool:
    return (any(part in url for part in ("/users/sign_in", "/customer/account/login", "/login"))
            or url.rstrip("/").endswith("/admin/admin"))


class Probe:
    """One logged-in Chromium context over the embedded sites: URL answers and locator evaluations."""

    def __init__(self, context, site_urls: dict[str, str]):
        self.context = context
        self.site_urls = site_urls
        self.page = None
        self._answers: dict[str, bool] = {}

    def full_url(self, site: str, path: str) -> str:
        base = self.site_urls[site].rstrip("/")
        if site == "shopping_admin" and path.startswith("/.."):
            base, path = self.site_urls["shopping"].rstrip("/"), path[3:]
        return base + path

    async def answers(self, site: str, path: str) -> bool:
        """True when our site serves `path` as a 2xx page that is not a login page."""
        url = self.full_url(site, path)
        if url not in self._answers:
            try:
                response = await self.page.goto(url, wait_until="load", timeout=20_000)
                ok = response is not None and response.ok and not _is_login_page(self.page.url)
            except Exception:  # noqa: BLE001 - a page that fails to load does not answer
                ok = False
            self._answers[url] = ok
        return self._answers[url]

    async def lists_results(self, site: str, path: str) -> bool:
        """True when `path` (a map search) answers with at least one result (not "No results found")."""
        if not await self.answers(site, path):
            return False
        await self.page.goto(self.full_url(site, path), wait_until="load", timeout=20_000)
        return await self.page.locator("li.search_results_entry").count() > 0

    async def evaluate(self, site: str, path: str, locator: str) -> tuple[bool, str]:
        """Load the page and evaluate WebArena's locator there: (matched, value or error)."""
        if not await self.answers(site, path):
            return False, "page does not answer"
        await self.page.goto(self.full_url(site, path), wait_until="load", timeout=20_000)
        try:
            value = await self.page.evaluate(f"() => {locator}")
        except Exception as exc:  # noqa: BLE001 - WebArena's evaluator would fail the same way
            return False, str(exc).splitlines()[0][:120]
        if value is None:
            return False, "null"
        return True, str(value)[:80]


async def _measure(tasks: list[dict], site_urls: dict[str, str]) -> dict:
    from playwright.async_api import async_playwright

    from agentenv_webarena.tasks.auth import LOGIN_SITES, login
    from agentenv_webarena.webarena.browser_env import CHROMIUM_ARGS, default_chromium

    uses = locator_uses(tasks)
    urls = evaluator_urls(tasks)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=default_chromium(), args=list(CHROMIUM_ARGS))
        context = await browser.new_context(viewport={"width": 1280, "height": 720})
        for site in LOGIN_SITES:
            await login(context, site, site_urls[site], embedded=True)
        probe = Probe(context, site_urls)
        probe.page = await context.new_page()
        for kind, (site, list_path, link) in _FIRST_LINK.items():
            if await probe.answers(site, list_path) and await probe.page.locator(link).count():
                href = await probe.page.locator(link).first.get_attribute("href")
                PAGE_KINDS[kind] = (site, href.replace(site_urls[site].rstrip("/"), ""))
        use_rows = []
        for use in uses:
            split = split_url(use.url)
            site, path = split if split is not None else PAGE_KINDS[use.kind]
            literal = split is not None and await probe.answers(site, path)
            if not literal:
                site, path = PAGE_KINDS.get(use.kind, (site, path))
            matched, detail = await probe.evaluate(site, path, use.locator)
            use_rows.append({"task_id": use.task_id, "site": use.site, "kind": use.kind, "url": use.url,
                             "page": f"{site}{path}", "literal": literal, "selectors": use.selectors,
                             "locator": use.locator, "matched": matched, "detail": detail})
        url_rows = []
        for site, path in sorted(set(urls)):
            kind = shape_kind(site, path)
            literal = await probe.answers(site, path) if site != "wikipedia" else False
            by_shape = kind is not None and await probe.answers(*_with_query(PAGE_KINDS[kind], path))
            found = await probe.lists_results(site, path) if site == "map" and path.startswith("/search") else None
            url_rows.append({"site": site, "path": path, "shape": url_shape(site, path), "kind": kind,
                             "literal": literal, "answers": literal or by_shape, "lists_results": found})
        await browser.close()
    return {"uses": use_rows, "urls": url_rows}


def summarise(rows: dict) -> dict:
    """Per-site and total counts of matching uses, selectors and answering URL shapes."""
    per_site: dict[str, dict] = defaultdict(lambda: {"uses": 0, "uses_matched": 0, "selectors": {}, "shapes": {},
                                                     "urls": 0, "urls_literal": 0})
    selectors: dict[str, bool] = {}
    for row in rows["uses"]:
        site = per_site[row["site"]]
        site["uses"] += 1
        site["uses_matched"] += row["matched"]
        for sel in row["selectors"]:
            site["selectors"][sel] = site["selectors"].get(sel, True) and row["matched"]
            selectors[sel] = selectors.get(sel, True) and row["matched"]
    shapes: dict[tuple[str, str], bool] = {}
    for row in rows["urls"]:
        site = per_site[row["site"]]
        key = (row["site"], row["shape"])
        site["shapes"][row["shape"]] = site["shapes"].get(row["shape"], False) or row["answers"]
        shapes[key] = shapes.get(key, False) or row["answers"]
        site["urls"] += 1
        site["urls_literal"] += row["literal"]
    table = {}
    for name, site in sorted(per_site.items()):
        table[name] = {"uses": site["uses"], "uses_matched": site["uses_matched"],
                       "selectors": len(site["selectors"]), "selectors_matched": sum(site["selectors"].values()),
                       "url_shapes": len(site["shapes"]), "url_shapes_answering": sum(site["shapes"].values()),
                       "urls": site["urls"], "urls_literal": site["urls_literal"]}
    total_uses = sum(s["uses"] for s in table.values())
    searches = [row["lists_results"] for row in rows["urls"] if row.get("lists_results") is not None]
    return {"sites": table, "map_searches": len(searches), "map_searches_listing_results": sum(searches),
            "uses": total_uses, "uses_matched": sum(s["uses_matched"] for s in table.values()),
            "selectors": len(selectors), "selectors_matched": sum(selectors.values()),
            "url_shapes": len(shapes), "url_shapes_answering": sum(shapes.values()),
            "urls": sum(s["urls"] for s in table.values()),
            "urls_literal": sum(s["urls_literal"] for s in table.values())}


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "-"


def _print(rows: dict, summary: dict, show: int) -> None:
    print(f"{'site':<16} {'locator uses':>16} {'selectors':>14} {'URL shapes':>14} {'URLs literally':>16}")
    for name, s in summary["sites"].items():
        print(f"{name:<16} {_pct(s['uses_matched'], s['uses']):>16} {_pct(s['selectors_matched'], s['selectors']):>14}"
              f" {_pct(s['url_shapes_answering'], s['url_shapes']):>14} {_pct(s['urls_literal'], s['urls']):>16}")
    print(f"{'all':<16} {_pct(summary['uses_matched'], summary['uses']):>16} "
          f"{_pct(summary['selectors_matched'], summary['selectors']):>14} "
          f"{_pct(summary['url_shapes_answering'], summary['url_shapes']):>14} "
          f"{_pct(summary['urls_literal'], summary['urls']):>16}")
    print(f"map search URLs listing results (WebArena's places found): "
          f"{summary['map_searches_listing_results']}/{summary['map_searches']}")
    failing: dict[tuple, int] = defaultdict(int)
    for row in rows["uses"]:
        if not row["matched"]:
            failing[(row["site"], row["kind"], row["page"], row["locator"][:90], row["detail"][:60])] += 1
    if failing:
        print("\nfailing locators (uses, site, page kind, our page, locator, why):")
        for (site, kind, page, loc, why), n in sorted(failing.items(), key=lambda kv: -kv[1])[:show]:
            print(f"  {n:>3} {site:<14} {kind:<26} {page:<50} {loc}  <- {why}")
    missing = sorted({(r["site"], r["shape"], r["kind"] or "?") for r in rows["urls"] if not r["answers"]})
    if missing:
        print("\nURL shapes that do not answer (site, shape, page kind):")
        for site, shape, kind in missing[:show]:
            print(f"  {site:<14} {shape[:90]:<90} {kind}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--webarena-src", required=True, help="a checkout of web-arena-x/webarena")
    parser.add_argument("--out", default=None, help="write the rows and the summary as JSON here")
    parser.add_argument("--show", type=int, default=40, help="failing locators / URL shapes to list")
    args = parser.parse_args()
    with open(os.path.join(args.webarena_src, "config_files", "test.raw.json")) as fh:
        tasks = json.load(fh)
    with tempfile.TemporaryDirectory() as tmp:
        urls_file = os.path.join(tmp, "urls.json")
        proc = _start_sites(urls_file)
        try:
            with open(urls_file) as fh:
                site_urls = json.load(fh)
            rows = asyncio.run(_measure(tasks, site_urls))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    summary = summarise(rows)
    _print(rows, summary, args.show)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"summary": summary, **rows}, fh, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "sites"}))


if __name__ == "__main__":
    main()
