"""Numbers of the embedded task suite: `python -m agentenv_webarena.tasks.stats [--pages] [--json]`.

Owns how the suite's shape is measured, so the numbers a README or an issue quotes can be
recomputed: templates and tasks per site kind, multi-site tasks per site combination, evaluator kinds
a site's tasks never use, the splits (held-out templates, shared templates,
judge-scored tasks in train), one-action tasks, whole-page checks, templates that are N/A in every
instance, and with `--pages` the share of task start pages taller than WebArena's 1280x720
viewport (the embedded sites and Chromium are started for that). It reads the task file and the
`AgentItemId` lists; it does not generate them (`tasks.generate`).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter, defaultdict
from typing import Mapping, Optional, Sequence

from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks, start_urls

__all__ = ["SITE_KINDS", "site_kind", "is_state_changing", "needs_judge", "is_one_action", "has_whole_page_check",
           "suite_stats", "split_stats", "page_heights", "main"]

SITE_KINDS = ("shopping", "shopping_admin", "reddit", "gitlab", "map", "wikipedia", "cross-site")
VIEWPORT = (1280, 720)  # WebArena's viewport (browser_env config)
SPLIT_FILES = ("train", "test", "test_iid", "judge")


def site_kind(task: dict) -> str:
    """"cross-site" when the task needs several sites, else its one site key."""
    sites = task["sites"]
    return sites[0] if len(sites) == 1 else "cross-site"


def is_state_changing(task: dict) -> bool:
    """Scored on the sites' state (a `program_html` check), as WebArena's page-state tasks are."""
    return "program_html" in task["eval"]["eval_types"]


def needs_judge(task: dict) -> bool:
    """Scored by a `fuzzy_match` against reference answers: WebArena asks an LLM judge for those."""
    answers = task["eval"].get("reference_answers") or {}
    return isinstance(answers.get("fuzzy_match"), list)


def is_na(task: dict) -> bool:
    """An infeasible task (its answer is "N/A")."""
    return (task["eval"].get("reference_answers") or {}).get("fuzzy_match") == "N/A"


def is_one_action(task: dict) -> bool:
    """The reference needs one action before its stop."""
    return len(task["reference_action_sequence"]) <= 2


def has_whole_page_check(task: dict) -> bool:
    """A `program_html` target reads the page as a whole (`locator: ""`, WebArena's page.content())."""
    return any(t["locator"] == "" for t in task["eval"].get("program_html") or [])


def _share(part: int, whole: int) -> str:
    return f"{part} / {whole} ({100.0 * part / max(1, whole):.1f}%)"


def suite_stats(tasks: Sequence[dict]) -> dict:
    """Template, site, check and length numbers of a task list."""
    templates: dict[int, list[dict]] = defaultdict(list)
    for t in tasks:
        templates[t["intent_template_id"]].append(t)
    state = [t for t in tasks if is_state_changing(t)]
    return {
        "tasks": len(tasks),
        "templates": len(templates),
        "tasks_per_site": dict(Counter(site_kind(t) for t in tasks)),
        "templates_per_site": dict(Counter(site_kind(ts[0]) for ts in templates.values())),
        "state_changing": len(state),
        "whole_page_checks": sum(has_whole_page_check(t) for t in state),
        "one_action": sum(is_one_action(t) for t in tasks),
        "mean_reference_steps": round(sum(len(t["reference_action_sequence"]) for t in tasks) / max(1, len(tasks)), 2),
        "needs_judge": sum(needs_judge(t) for t in tasks),
        "na_tasks": sum(is_na(t) for t in tasks),
        "all_na_templates": sorted(tid for tid, ts in templates.items() if all(is_na(t) for t in ts)),
        "site_pairs": dict(Counter("+".join(sorted(t["sites"])) for t in tasks if len(t["sites"]) > 1)),
        "eval_kinds_missing": _eval_kinds_missing(tasks),
    }


def _eval_kinds_missing(tasks: Sequence[dict]) -> dict[str, list[str]]:
    """Site key -> the evaluator kinds (string_match, url_match, program_html) no task touching that site uses.
    The homepage is WebArena's start page (a list of the sites, a calculator, a scratchpad), not a site kind
    with tasks of its own, so it is left out."""
    used: dict[str, set[str]] = defaultdict(set)
    for t in tasks:
        for site in (s for s in t["sites"] if s != "homepage"):
            used[site].update(t["eval"]["eval_types"])
    kinds = ("string_match", "url_match", "program_html")
    return {site: [k for k in kinds if k not in have] for site, have in sorted(used.items())
            if any(k not in have for k in kinds)}


def _read_ids(path: str) -> list[int]:
    with open(path, encoding="utf-8") as f:
        return [int(row["item_id"].rsplit("_", 1)[1]) for row in json.load(f)]


def split_stats(tasks: Sequence[dict], ids_dir: str) -> dict:
    """What each `AgentItemId/webarena_<split>.json` list holds, and how the train and test lists relate."""
    splits = {name: _read_ids(path) for name in SPLIT_FILES
              if os.path.exists(path := os.path.join(ids_dir, f"webarena_{name}.json"))}
    all_templates = {t["intent_template_id"] for t in tasks}
    out: dict = {"splits": {}}
    tids = {}
    for name, ids in splits.items():
        chosen = [tasks[i] for i in ids]
        tids[name] = {t["intent_template_id"] for t in chosen}
        out["splits"][name] = {"tasks": len(ids), "templates": len(tids[name]),
                               "tasks_per_site": dict(Counter(site_kind(t) for t in chosen)),
                               "needs_judge": sum(needs_judge(t) for t in chosen)}
    if "train" in tids and "test" in tids:
        test = [tasks[i] for i in splits["test"]]
        held_out = tids["test"] - tids["train"]
        out["held_out_templates"] = len(held_out)
        out["held_out_share"] = round(len(held_out) / max(1, len(all_templates)), 4)
        out["shared_templates"] = len(tids["test"] & tids["train"])
        out["test_tasks_sharing_a_train_template"] = sum(t["intent_template_id"] in tids["train"] for t in test)
        out["held_out_sites"] = sorted({site_kind(t) for t in test if t["intent_template_id"] in held_out})
    return out


async def _measure(urls_by_sites: Mapping[tuple[str, ...], set[str]], site_urls: Mapping[str, str]) -> dict[str, int]:
    from playwright.async_api import async_playwright

    from agentenv_webarena.tasks.auth import login_sites
    from agentenv_webarena.tasks.config import substitute_urls
    from agentenv_webarena.webarena.browser_env import default_chromium

    heights: dict[str, int] = {}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=default_chromium())
        try:
            context = await browser.new_context(viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]})
            await login_sites(context, ["shopping", "shopping_admin", "reddit"], site_urls, embedded=True)
            page = await context.new_page()
            for urls in urls_by_sites.values():
                for url in sorted(urls):
                    if url in heights:
                        continue
                    await page.goto(substitute_urls({"u": url}, site_urls)["u"])
                    heights[url] = int(await page.evaluate(
                        "() => (document.scrollingElement || document.body).scrollHeight"))
        finally:
            await browser.close()
    return heights


def page_heights(tasks: Sequence[dict]) -> dict[str, int]:
    """Height in CSS pixels of every distinct start page (each tab) at WebArena's viewport width, measured in
    Chromium on freshly started embedded sites, logged in as WebArena's accounts."""
    from agentenv_webarena.sites.process import EmbeddedSites

    by_sites: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for t in tasks:
        by_sites[tuple(t["sites"])].update(start_urls(t))
    with EmbeddedSites() as sites:
        return asyncio.run(_measure(by_sites, sites.urls))


def page_stats(tasks: Sequence[dict], heights: Mapping[str, int]) -> dict:
    """Tall start pages (taller than the viewport, so scrolling shows more): per task and per distinct page."""
    tall = {url for url, h in heights.items() if h > VIEWPORT[1]}
    first_tall = sum(start_urls(t)[0] in tall for t in tasks)
    return {"start_pages": len(heights), "tall_start_pages": len(tall), "tasks": len(tasks),
            "tasks_with_tall_start_page": first_tall}


def _table(stats: dict, splits: dict, pages: Optional[dict]) -> str:
    lines = [f"{'tasks':<44} {stats['tasks']}", f"{'templates':<44} {stats['templates']}"]
    for kind in SITE_KINDS:
        lines.append(f"{'  ' + kind + ' (templates / tasks)':<44} {stats['templates_per_site'].get(kind, 0)} / "
                     f"{stats['tasks_per_site'].get(kind, 0)}")
    lines.append(f"{'one action + stop':<44} {_share(stats['one_action'], stats['tasks'])}")
    lines.append(f"{'mean reference steps (incl. stop)':<44} {stats['mean_reference_steps']}")
    lines.append(f"{'state-changing (program_html)':<44} {_share(stats['state_changing'], stats['tasks'])}")
    label = '  with a whole-page check (locator "")'
    lines.append(f"{label:<44} {_share(stats['whole_page_checks'], stats['state_changing'])}")
    lines.append(f"{'fuzzy_match against a reference (judge)':<44} {stats['needs_judge']}")
    lines.append(f"{'N/A tasks':<44} {stats['na_tasks']}")
    lines.append(f"{'templates N/A in every instance':<44} {stats['all_na_templates'] or 'none'}")
    pairs = ", ".join(f"{pair} {n}" for pair, n in sorted(stats["site_pairs"].items(), key=lambda kv: -kv[1]))
    lines.append(f"{'multi-site tasks by sites':<44} {pairs or 'none'}")
    missing = "; ".join(f"{site}: {', '.join(kinds)}" for site, kinds in stats["eval_kinds_missing"].items())
    lines.append(f"{'evaluator kinds a site never uses':<44} {missing or 'none'}")
    for name, s in splits.get("splits", {}).items():
        per_site = ", ".join(f"{k} {s['tasks_per_site'].get(k, 0)}" for k in SITE_KINDS)
        lines.append(f"{'split ' + name + ' (tasks / templates)':<44} {s['tasks']} / {s['templates']}  [{per_site}]"
                     f"  judge-scored: {_share(s['needs_judge'], s['tasks'])}")
    if "held_out_templates" in splits:
        lines.append(f"{'held-out templates (test only)':<44} "
                     f"{_share(splits['held_out_templates'], stats['templates'])}  sites: "
                     f"{', '.join(splits['held_out_sites'])}")
        lines.append(f"{'templates in both train and test':<44} {splits['shared_templates']}")
        lines.append(f"{'test tasks sharing a train template':<44} {splits['test_tasks_sharing_a_train_template']}")
    if pages:
        lines.append(f"{'start pages taller than 1280x720 (tasks)':<44} "
                     f"{_share(pages['tasks_with_tall_start_page'], pages['tasks'])}")
        lines.append(f"{'  distinct start pages':<44} {_share(pages['tall_start_pages'], pages['start_pages'])}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Print the suite's numbers as a table (or one JSON object with --json)."""
    parser = argparse.ArgumentParser(description="Numbers of the embedded WebArena task suite")
    parser.add_argument("--task-file", default=EMBEDDED_TASK_FILE, help="task JSON (default: the embedded suite)")
    parser.add_argument("--ids-dir", default="AgentItemId", help="where the webarena_<split>.json lists are")
    parser.add_argument("--pages", action="store_true",
                        help="also measure start-page heights (starts the embedded sites and Chromium)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args(argv)
    tasks = load_tasks(args.task_file)
    stats = suite_stats(tasks)
    splits = split_stats(tasks, args.ids_dir) if os.path.isdir(args.ids_dir) else {}
    pages = page_stats(tasks, page_heights(tasks)) if args.pages else None
    if args.json:
        print(json.dumps({**stats, **splits, **({"pages": pages} if pages else {})}))
    else:
        print(_table(stats, splits, pages))


if __name__ == "__main__":
    main(sys.argv[1:])
