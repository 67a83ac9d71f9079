"""Observation fidelity: our accessibility-tree text against WebArena's own processor, same pages and states.

    python bench/webarena_fidelity.py --webarena-src /tmp/webarena-src [--webarena-python /tmp/wa-venv/bin/python]
        [--whole-page] [--show 4] [--out bench/webarena_fidelity.json] [--dump DIR]

`--webarena-src` is a checkout of web-arena-x/webarena (e.g. `git --git-dir=<mirror> archive HEAD | tar -x -C DIR`).
Its `browser_env/processors.py` `TextObervationProcessor` runs in a worker process under `--webarena-python`
(it imports numpy, gymnasium, Pillow and sync Playwright; a throwaway venv will do:
`python -m venv /tmp/wa-venv && /tmp/wa-venv/bin/pip install playwright numpy gymnasium pillow`), over a sync
Playwright page with a CDP session and `Accessibility.enable`, as WebArena's `ScriptBrowserEnv.setup` makes them,
in a Chromium launched from the same binary we use (`executable_path`).

Our side is the env server's code in process (`WebarenaWorld` + `WebarenaSession`, the server's default browser
settings; `--whole-page` turns viewport-only off on our side,
`--webarena-whole-page` on WebArena's). For each page: reset our env to a task (site state restored,
logged in, start tabs), optionally change the state once on our side (add to cart) and navigate, then open the
same tabs in the worker with our context's cookies and instance header; in-page steps that change no site state
(typing into a field) run on both sides. Each side observes at load and after `scroll [down]`.

Properties our settings hide beyond WebArena's list (by default `url:`, which today's Chromium adds to links and
WebArena's 2023 Chromium did not report) are added to WebArena's ignore list in the worker, so its clean-up sees
the same lines. Lines are compared after normalising element ids (`[123]` -> `[ID]`). Identical lines per state =
lines in the longest common subsequence (difflib) / the longer side's line count. Prints a table (page, state,
lines ours, lines WebArena's, identical %, first differing lines: `-` ours only, `+` WebArena only) and writes
the rows, with machine, commit and date, to `--out`.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A step is ("goto", site, path) | ("click", css) | ("type", css, text) (click, then keyboard.type, no Enter).
Step = tuple


@dataclass
class PageSpec:
    """One page to compare: reset to `task`, run `setup` on our side only, then `prep` on both sides."""

    name: str
    task: int
    setup: list[Step] = field(default_factory=list)
    prep: list[Step] = field(default_factory=list)


_SHOP, _ADMIN, _FORUM = 0, 252, 490  # tasks whose reset logs in to the shop / the admin / the forum
PAGES = [
    PageSpec("shop home", _SHOP),
    PageSpec("shop search (query in box)", _SHOP, [("goto", "shopping", "/catalogsearch/result/?q=coffee")]),
    PageSpec("shop listing", _SHOP, [("goto", "shopping", "/sports-outdoors.html")]),
    PageSpec("shop product", _SHOP, [("goto", "shopping", "/homestead-eco-trash-bags.html")]),
    PageSpec("shop cart (1 item)", _SHOP, [("goto", "shopping", "/homestead-eco-trash-bags.html"),
                                           ("click", "main button[type=submit]:has-text('Add to Cart')"),
                                           ("goto", "shopping", "/checkout/cart/")]),
    PageSpec("shop checkout", _SHOP, [("goto", "shopping", "/homestead-eco-trash-bags.html"),
                                      ("click", "main button[type=submit]:has-text('Add to Cart')"),
                                      ("goto", "shopping", "/checkout/")]),
    PageSpec("shop account", _SHOP, [("goto", "shopping", "/customer/account/")]),
    PageSpec("shop account edit (prefilled)", _SHOP, [("goto", "shopping", "/customer/account/edit/")]),
    PageSpec("shop search typed", _SHOP, prep=[("type", "#search", "wireless headphones")]),
    PageSpec("admin dashboard", _ADMIN),
    PageSpec("admin product edit (prefilled)", _ADMIN, [("goto", "shopping_admin", "/catalog/product/edit/id/1/")]),
    PageSpec("admin product edit typed", _ADMIN, [("goto", "shopping_admin", "/catalog/product/edit/id/2/")],
             prep=[("type", "#product-price", "9")]),
    PageSpec("admin order grid", _ADMIN, [("goto", "shopping_admin", "/sales/order/")]),
    PageSpec("admin product grid search", _ADMIN, [("goto", "shopping_admin", "/catalog/product/?q=yoga")]),
    PageSpec("admin review edit", _ADMIN, [("goto", "shopping_admin", "/review/product/edit/id/1/")]),
    PageSpec("forum front", _FORUM),
    PageSpec("forum forums list", 480),
    PageSpec("forum gaming", _FORUM, [("goto", "reddit", "/f/gaming")]),
    PageSpec("forum thread", 810),
    PageSpec("forum submit typed", _FORUM, [("goto", "reddit", "/submit")],
             prep=[("type", "#submission_title", "A typed title"),
                   ("type", "#submission_body", "Some typed body text.")]),
    PageSpec("forum user submissions", 620),
    PageSpec("task 444 (2 tabs)", 444),
    PageSpec("task 800 (2 tabs)", 800),
    PageSpec("task 771 (2 tabs)", 771),
    PageSpec("task 156 (2 tabs)", 156),
    PageSpec("task 551 forum", 551),
    PageSpec("task 790 orders", 790),
]

_ID = re.compile(r"^(\t*)\[-?\d+\] ")


def normalise(text: str) -> list[str]:
    """Observation text -> comparable lines (element ids replaced by ``[ID]``)."""
    return [_ID.sub(r"\1[ID] ", line) for line in text.split("\n")]


def compare(ours: list[str], theirs: list[str]) -> tuple[int, list[str]]:
    """(lines in the longest matching subsequence, differing lines as ``-ours`` / ``+webarena``)."""
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
    same = sum(block.size for block in matcher.get_matching_blocks())
    diffs = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        diffs += ["-" + line for line in ours[i1:i2]] + ["+" + line for line in theirs[j1:j2]]
    return same, diffs


_STATIC_TEXT = re.compile(r"^\t*\[ID\] StaticText '(\d+)'$")


def id_coincidences(diffs: list[str], ours_raw: str, theirs_raw: str) -> int:
    """Differing lines explained by element ids alone: a number-only StaticText that one side's
    clean-up dropped because a nearby line carries that number as its element id (``[365] ...``;
    the same rule with other ids on the other side). Both sides apply WebArena's rule; ids differ."""
    count = 0
    for line in diffs:
        match = _STATIC_TEXT.match(line[1:])
        if match is None:
            continue
        other = ours_raw if line[0] == "+" else theirs_raw
        count += f"[{match.group(1)}]" in other
    return count


# -- the WebArena worker (runs under --webarena-python; imports nothing of ours) ---------------------------------

def _worker(src: str, chromium: str, viewport_only: bool, width: int, height: int, extra_ignored: list[str]) -> None:
    """Serve JSON-line commands on stdin with WebArena's processor: open, prep, scroll, observe, close."""
    import types

    from playwright.sync_api import sync_playwright

    # Load browser_env.processors without running the package __init__ (it imports the whole env).
    pkg = types.ModuleType("browser_env")
    pkg.__path__ = [os.path.join(src, "browser_env")]
    sys.modules["browser_env"] = pkg
    sys.path.insert(0, src)
    import browser_env.processors as processors  # type: ignore

    # Properties its 2023 Chromium did not report (today's adds `url:` to links) are hidden on both sides.
    processors.IGNORED_ACTREE_PROPERTIES = tuple(processors.IGNORED_ACTREE_PROPERTIES) + tuple(extra_ignored)
    TextObervationProcessor = processors.TextObervationProcessor

    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=chromium, headless=True, args=[
        "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
    context = page = None
    viewport = {"width": width, "height": height}
    out = sys.stdout
    for raw in sys.stdin:
        cmd = json.loads(raw)
        try:
            result: dict = {"ok": True}
            if cmd["cmd"] == "open":
                if context is not None:
                    context.close()
                context = browser.new_context(viewport=viewport, storage_state=cmd.get("storage_state"),
                                              extra_http_headers=cmd.get("headers") or None, device_scale_factor=1)
                for url in cmd["urls"]:
                    tab = context.new_page()
                    client = tab.context.new_cdp_session(tab)
                    client.send("Accessibility.enable")
                    tab.client = client
                    tab.goto(url)
                page = context.pages[cmd.get("current", 0)]
                page.bring_to_front()
            elif cmd["cmd"] == "prep":
                _run_steps_sync(page, cmd["steps"])
            elif cmd["cmd"] == "scroll":  # WebArena's execute_scroll("down")
                page.evaluate("(document.scrollingElement || document.body).scrollTop = "
                              "(document.scrollingElement || document.body).scrollTop + window.innerHeight;")
            elif cmd["cmd"] == "observe":
                processor = TextObervationProcessor("accessibility_tree", viewport_only, viewport)
                result["text"] = processor.process(page, page.client)
            elif cmd["cmd"] == "close":
                break
        except Exception as exc:  # report, keep serving
            result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(result) + "\n")
        out.flush()
    browser.close()
    pw.stop()


def _run_steps_sync(page, steps: list) -> None:
    for step in steps:
        if step[0] == "click":
            page.click(step[1])
            page.wait_for_load_state("load")
        elif step[0] == "type":
            page.click(step[1])
            page.keyboard.type(step[2])


async def _run_steps_async(page, steps: list, site_urls: dict[str, str]) -> None:
    for step in steps:
        if step[0] == "goto":
            await page.goto(site_urls[step[1]] + step[2], wait_until="load")
        elif step[0] == "click":
            await page.click(step[1])
            await page.wait_for_load_state("load")
        elif step[0] == "type":
            await page.click(step[1])
            await page.keyboard.type(step[2])


class _Worker:
    def __init__(self, python: str, src: str, chromium: str, viewport_only: bool, width: int, height: int,
                 extra_ignored: tuple[str, ...]):
        args = [python, os.path.abspath(__file__), "--worker", "--webarena-src", src, "--chromium", chromium,
                "--viewport", f"{width}x{height}", "--ignored", ",".join(extra_ignored)]
        args += [] if viewport_only else ["--webarena-whole-page"]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, **cmd) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the WebArena worker exited (code {self.proc.poll()}); see its stderr above")
        reply = json.loads(line)
        if not reply["ok"]:
            raise RuntimeError(f"WebArena worker: {cmd['cmd']}: {reply['error']}")
        return reply

    def close(self) -> None:
        try:
            self.send(cmd="close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# -- the comparison -------------------------------------------------------------------------------------------

def _git_commit() -> str:
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except Exception:
        return "unknown"


def run(args: argparse.Namespace) -> dict:
    """Compare every page of `PAGES` at load and after scrolling; returns the rows and totals."""
    sys.path.insert(0, ROOT)
    import dataclasses

    from agentenv_webarena.environment import EnvConfig, WebarenaSession, WebarenaWorld
    from agentenv_webarena.sites.store import INSTANCE_HEADER
    from agentenv_webarena.webarena.browser_env import create_id_based_action

    base = EnvConfig()
    browser = base.browser
    if args.whole_page or args.viewport_only:
        browser = dataclasses.replace(browser, current_viewport_only=args.viewport_only)
    if args.chromium:
        browser = dataclasses.replace(browser, executable_path=args.chromium)
    world = WebarenaWorld.load(dataclasses.replace(base, browser=browser))
    chromium = world.config.browser.executable_path
    extra_ignored = tuple(world.config.browser.extra_ignored_properties)
    viewport_only = world.config.browser.current_viewport_only
    width, height = world.config.browser.viewport_width, world.config.browser.viewport_height
    worker = _Worker(args.webarena_python, args.webarena_src, chromium, not args.webarena_whole_page, width, height,
                     extra_ignored)
    session = WebarenaSession(world)
    host = world.host
    rows = []
    pages = [p for p in PAGES if not args.only or any(s in p.name for s in args.only)]
    try:
        for spec in pages:
            session.reset(spec.task)
            browser_session = session.browser
            if spec.setup:
                host.run(_run_steps_async(browser_session.page, spec.setup, world.config.site_urls), timeout_s=60)
            state = host.run(browser_session.context.storage_state(), timeout_s=30)
            tabs = browser_session.pages
            worker.send(cmd="open", urls=[t.url for t in tabs], current=tabs.index(browser_session.page),
                        storage_state=state, headers={INSTANCE_HEADER: session.instance})
            if spec.prep:
                host.run(_run_steps_async(browser_session.page, spec.prep, world.config.site_urls), timeout_s=60)
                worker.send(cmd="prep", steps=spec.prep)
            for label in ("load", "scrolled"):
                if label == "scrolled":
                    host.run(browser_session.execute(create_id_based_action("scroll [down]")), timeout_s=30)
                    worker.send(cmd="scroll")
                ours = host.run(browser_session.observe(), timeout_s=30).text
                theirs = worker.send(cmd="observe")["text"]
                if args.dump:
                    stem = os.path.join(args.dump, re.sub(r"\W+", "_", spec.name).strip("_") + "." + label)
                    for suffix, text in ((".ours.txt", ours), (".webarena.txt", theirs)):
                        with open(stem + suffix, "w") as f:
                            f.write(text)
                a, b = normalise(ours), normalise(theirs)
                same, diffs = compare(a, b)
                rows.append({"page": spec.name, "task": spec.task, "state": label, "ours": len(a), "webarena": len(b),
                             "same": same, "denominator": max(len(a), len(b)), "diffs": diffs,
                             "id_coincidences": id_coincidences(diffs, ours, theirs)})
    finally:
        worker.close()
        session.close()
        world.close()
    same = sum(r["same"] for r in rows)
    total = sum(r["denominator"] for r in rows)
    return {
        "mode": f"ours {'viewport-only' if viewport_only else 'whole page'}, WebArena "
                f"{'whole page' if args.webarena_whole_page else 'viewport-only'}",
        "identical_pct": round(100.0 * same / max(1, total), 2),
        "identical_lines": same, "lines": total,
        "id_coincidence_lines": sum(r["id_coincidences"] for r in rows),
        "states": len(rows), "states_identical": sum(r["same"] == r["denominator"] and r["ours"] == r["webarena"]
                                                     for r in rows),
        "rows": rows,
        "machine": f"{platform.node()} ({os.cpu_count()} cores, {platform.machine()})",
        "chromium": chromium, "commit": _git_commit(),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _print(result: dict, show: int) -> None:
    print(f"mode: {result['mode']}; chromium {result['chromium']}; commit {result['commit']}; {result['date']}")
    print("| page | state | lines ours | lines WebArena | identical % | first differing lines |")
    print("|---|---|---:|---:|---:|---|")
    for r in result["rows"]:
        pct = 100.0 * r["same"] / max(1, r["denominator"])
        diffs = "<br>".join("`" + d.replace("\t", " ").replace("|", "\\|")[:90] + "`" for d in r["diffs"][:show])
        print(f"| {r['page']} | {r['state']} | {r['ours']} | {r['webarena']} | {pct:.1f} | {diffs} |")
    print(f"\nall states: {result['identical_lines']}/{result['lines']} lines identical = "
          f"{result['identical_pct']}%; {result['states_identical']}/{result['states']} states identical; "
          f"{result['id_coincidence_lines']} differing lines are element-id coincidences of the StaticText clean-up")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--webarena-src", required=True, help="a checkout of web-arena-x/webarena")
    parser.add_argument("--webarena-python", default=None,
                        help="python with numpy, gymnasium, Pillow and playwright for WebArena's processor "
                             "(default: /tmp/wa-venv/bin/python if it exists, else this python)")
    parser.add_argument("--chromium", default=None, help="Chromium binary for both sides (default: ours)")
    parser.add_argument("--whole-page", action="store_true",
                        help="our side with viewport-only off (the old default) instead of the server's default")
    parser.add_argument("--viewport-only", action="store_true",
                        help="our side with viewport-only on whatever the server's default (for older code)")
    parser.add_argument("--webarena-whole-page", action="store_true",
                        help="WebArena's processor with current_viewport_only off (its run.py forces it on)")
    parser.add_argument("--only", nargs="*", default=None, help="pages whose name contains one of these")
    parser.add_argument("--show", type=int, default=4, help="differing lines shown per state")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "webarena_fidelity.json"),
                        help="write the result JSON here (default: %(default)s)")
    parser.add_argument("--dump", default=None, help="write both sides' observation texts into this directory")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--viewport", default="1280x720", help=argparse.SUPPRESS)
    parser.add_argument("--ignored", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        width, height = (int(v) for v in args.viewport.split("x"))
        _worker(args.webarena_src, args.chromium, not args.webarena_whole_page, width, height,
                [p for p in args.ignored.split(",") if p])
        return
    if not os.path.exists(os.path.join(args.webarena_src, "browser_env", "processors.py")):
        parser.error(f"--webarena-src {args.webarena_src!r} has no browser_env/processors.py")
    if args.webarena_python is None:
        venv_python = "/tmp/wa-venv/bin/python"
        args.webarena_python = venv_python if os.path.exists(venv_python) else sys.executable
    if args.whole_page and args.viewport_only:
        parser.error("--whole-page and --viewport-only exclude each other")
    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
    start = time.perf_counter()
    result = run(args)
    result["command"] = "python bench/webarena_fidelity.py " + " ".join(sys.argv[1:])
    result["wall_s"] = round(time.perf_counter() - start, 1)
    _print(result, args.show)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
