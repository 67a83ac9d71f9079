"""What the first viewport holds: per embedded site kind, on start pages and typical pages.

    python bench/webarena_viewport.py [--before bench/webarena_viewport.before.json] [--shots /tmp/css_shots/after]
        [--out bench/webarena_viewport.json]

In process (embedded sites + one Chromium, the server's default browser settings: 1280x720, viewport-only
observation): for each page of `PAGES`, reset the env to a task of that site (logged in as the task is), go to
the page and count, in the accessibility tree the agent sees at load, the tree lines and the interactive elements
(links, buttons, fields, ...), and measure the page height in CSS pixels (`scrollHeight`). `--shots DIR` saves
a PNG of each page's first viewport. `--before FILE` (an earlier `--out`) adds its numbers beside these, so a
layout change reads as before -> after. Prints a table and, last, one JSON line of per-kind means.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# The roles an agent can act on (click, type, select) as Chromium names them in the tree.
INTERACTIVE = {"link", "button", "textbox", "searchbox", "combobox", "checkbox", "radio", "menuitem", "tab",
               "spinbutton", "slider", "switch", "listbox", "option", "menuitemcheckbox", "menuitemradio"}
_LINE = re.compile(r"^\t*\[-?\d+\] (\w+)")

# (site kind, page name, task index whose reset opens and logs in to that site, path under its URL; "" = start page)
PAGES = [
    ("shopping", "home", 0, ""),
    ("shopping", "search coffee", 0, "/catalogsearch/result/?q=coffee"),
    ("shopping", "category", 0, "/sports-outdoors.html"),
    ("shopping", "product", 0, "/homestead-eco-trash-bags.html"),
    ("shopping", "my orders", 0, "/sales/order/history/"),
    ("shopping_admin", "dashboard", 252, ""),
    ("shopping_admin", "order grid", 252, "/sales/order/"),
    ("shopping_admin", "product grid", 252, "/catalog/product/"),
    ("shopping_admin", "product edit", 252, "/catalog/product/edit/id/1/"),
    ("reddit", "forums list", 480, ""),
    ("reddit", "front page", 480, "/"),
    ("reddit", "forum", 480, "/f/gaming"),
    ("reddit", "thread", 480, "/f/books/242/is-circe-worth-reading-in-2023"),
    ("reddit", "user submissions", 480, "/user/MarvelsGrantMan136/submissions"),
    ("gitlab", "dashboard", 830, ""),
    ("gitlab", "project", 830, "/byteblaze/empathy-prompts"),
    ("gitlab", "issues", 830, "/byteblaze/empathy-prompts/-/issues"),
    ("gitlab", "explore", 830, "/explore"),
    ("map", "home", 1208, ""),
    ("map", "search", 1208, "/search?query=Carnegie+Mellon+University"),
    ("map", "directions", 1208, "/directions?route_from=Carnegie+Mellon+University&route_to=PNC+Park"),
    ("wikipedia", "landing", 1538, ""),
    ("wikipedia", "article", 1538, "/wikipedia_en_all_maxi_2022-05/A/Carnegie_Mellon_University"),
    ("wikipedia", "search", 1538, "/search?content=wikipedia_en_all_maxi_2022-05&pattern=pittsburgh"),
    ("homepage", "home", 1728, ""),
]


def count(tree: str) -> tuple[int, int]:
    """(tree lines, interactive elements) of an accessibility-tree text."""
    lines = [line for line in tree.split("\n") if line.strip()]
    roles = [m.group(1) for m in map(_LINE.match, lines) if m]
    return len(lines), sum(role in INTERACTIVE for role in roles)


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except Exception:
        return "unknown"


def measure(shots: str | None) -> list[dict]:
    """One row per page of `PAGES`: tree lines, interactive elements, page height, the first viewport's tree."""
    from agentenv_webarena.environment import EnvConfig, WebarenaSession, WebarenaWorld

    world = WebarenaWorld.load(EnvConfig())
    session = WebarenaSession(world)
    rows = []
    try:
        for kind, name, task, path in PAGES:
            session.reset(task)
            page = session.browser.page
            if path:
                base = world.config.site_urls[kind]
                world.host.run(page.goto(base + path, wait_until="load"), timeout_s=60)
            tree = world.host.run(session.browser.observe(), timeout_s=30).text
            height = world.host.run(page.evaluate("document.scrollingElement.scrollHeight"), timeout_s=30)
            lines, interactive = count(tree)
            rows.append({"kind": kind, "page": name, "path": path or "(start page)", "lines": lines,
                         "interactive": interactive, "height_px": height, "tree": tree})
            if shots:
                stem = re.sub(r"\W+", "_", f"{kind}_{name}").strip("_")
                with open(os.path.join(shots, stem + ".png"), "wb") as f:
                    f.write(session.screenshot())
    finally:
        session.close()
        world.close()
    return rows


def summary(rows: list[dict]) -> dict:
    """Per site kind: mean tree lines, interactive elements and page height over its pages."""
    out = {}
    for kind in dict.fromkeys(r["kind"] for r in rows):
        mine = [r for r in rows if r["kind"] == kind]
        out[kind] = {key: round(statistics.mean(r[key] for r in mine), 1) for key in ("lines", "interactive",
                                                                                     "height_px")}
    return out


def _print(rows: list[dict], before: dict[tuple[str, str], dict]) -> None:
    def cell(row: dict, key: str) -> str:
        old = before.get((row["kind"], row["page"]))
        return f"{old[key]} -> {row[key]}" if old else str(row[key])

    print("| site kind | page | tree lines | interactive | page height px |")
    print("|---|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['kind']} | {r['page']} | {cell(r, 'lines')} | {cell(r, 'interactive')} | {cell(r, 'height_px')} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--before", default=None, help="an earlier --out, shown beside these numbers")
    parser.add_argument("--shots", default=None, help="save a PNG of each page's first viewport in this directory")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "webarena_viewport.json"),
                        help="write the rows (with their trees) here (default: %(default)s)")
    args = parser.parse_args()
    if args.shots:
        os.makedirs(args.shots, exist_ok=True)
    before = {}
    if args.before:
        with open(args.before) as f:
            before = {(r["kind"], r["page"]): r for r in json.load(f)["rows"]}
    start = time.perf_counter()
    rows = measure(args.shots)
    result = {"rows": rows, "per_kind": summary(rows),
              "command": "python bench/webarena_viewport.py " + " ".join(sys.argv[1:]),
              "wall_s": round(time.perf_counter() - start, 1),
              "machine": f"{platform.node()} ({os.cpu_count()} cores, {platform.machine()})",
              "commit": _git_commit(), "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    if before:
        result["per_kind_before"] = summary(list(before.values()))
    _print(rows, before)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    print(json.dumps({"per_kind": result["per_kind"], **({"per_kind_before": result["per_kind_before"]}
                                                         if before else {}), "commit": result["commit"]}))


if __name__ == "__main__":
    main()
