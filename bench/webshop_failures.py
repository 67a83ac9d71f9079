"""Why does a WebShop policy fail? Classify the episodes of evaluation runs and print a table.

    python bench/webshop_failures.py RUN_DIR [RUN_DIR ...] [--train-ids AgentItemId/webshop_train.json]

RUN_DIR is a `main_generation` output (`trajectories.jsonl`; `scripts/webshop_eval.sh data.output_path=...`).
Each episode gets one outcome:

* `success`           bought the goal's product with every attribute and option (reward 1);
* `bought_partial`    bought something (0 < reward < 1, or 0 for a wrong product);
* `off_page_id_loop`  ran out of turns and clicked at least one product id that the page it was on did not
                      show (the environment ignores such a click: the policy loops on the same page);
* `out_of_turns`      ran out of turns otherwise (paging, repeated option clicks, ...).

Also per run: clicks on product ids by where the id was (the goal's product / another product on the page /
not on the page), and success split by whether the goal's product is the target of some training goal
(`--train-ids`): a small policy that memorises product ids succeeds only on products it has seen.
A second table splits the partial buys by the product bought (the goal's, so an option was wrong, or another
one) and gives success by the number of options the goal names: a goal with k options needs k + 3 actions
(search, open, k options, buy), so at 5 turns a goal with 3 options cannot succeed.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_CLICK_ID = re.compile(r"click\[\s*(b0[0-9a-z]{8})\s*\]", re.IGNORECASE)
OUTCOMES = ("success", "bought_partial", "off_page_id_loop", "out_of_turns")


def world_goals() -> list[dict]:
    """Every goal of the embedded WebShop world, by goal index."""
    from agentenv_webshop.engine.catalog import load_catalog
    from agentenv_webshop.engine.goal import build_goals

    return build_goals(load_catalog().products)


def id_clicks(messages: list[dict]) -> list[tuple[str, str]]:
    """(clicked id, the observation it was clicked on) for every product-id click of an episode."""
    out = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant" or i == 0 or messages[i - 1]["role"] != "user":
            continue
        action = m["content"].rsplit("Action:", 1)[-1]
        hit = _CLICK_ID.search(action)
        if hit:
            out.append((hit.group(1).upper(), messages[i - 1]["content"].upper()))
    return out


def classify(row: dict) -> str:
    """One of OUTCOMES for a trajectory row (`success`, `terminated`, `messages`)."""
    if row["success"]:
        return "success"
    if row["terminated"]:
        return "bought_partial"
    if any(clicked not in page for clicked, page in id_clicks(row["messages"])):
        return "off_page_id_loop"
    return "out_of_turns"


def analyse(run_dir: str, goals: list[dict], seen: set[str]) -> dict:
    """Outcome counts, id-click counts, partial buys by product, and success by seen / unseen target product
    and by the goal's number of options, for one run."""
    rows = [json.loads(line) for line in open(os.path.join(run_dir, "trajectories.jsonl"), encoding="utf-8")]
    outcomes, clicks, partial_buys = collections.Counter(), collections.Counter(), collections.Counter()
    by_seen = collections.defaultdict(lambda: [0, 0])
    by_options = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        outcome = classify(r)
        outcomes[outcome] += 1
        goal = goals[int(r["item_id"].rsplit("_", 1)[1])]
        target = goal["asin"].upper()
        episode_clicks = id_clicks(r["messages"])
        for clicked, page in episode_clicks:
            clicks["target" if clicked == target else "other on page" if clicked in page else "not on page"] += 1
        if outcome == "bought_partial":
            bought = episode_clicks[-1][0] if episode_clicks else None
            partial_buys["goal's product" if bought == target else "other product"] += 1
        for split, key in ((by_seen, "seen" if target in seen else "unseen"), (by_options, len(goal["goal_options"]))):
            split[key][0] += bool(r["success"])
            split[key][1] += 1
    return {"n": len(rows), "outcomes": outcomes, "clicks": clicks, "by_seen": dict(by_seen),
            "partial_buys": partial_buys, "by_options": dict(by_options)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="main_generation output directories (trajectories.jsonl)")
    ap.add_argument("--train-ids", default="AgentItemId/webshop_train.json",
                    help="training item ids: their goals' products count as seen")
    args = ap.parse_args(argv)
    goals = world_goals()
    with open(args.train_ids, encoding="utf-8") as fh:
        seen = {goals[int(x["item_id"].rsplit("_", 1)[1])]["asin"].upper() for x in json.load(fh)}
    analyses = {run: analyse(run, goals, seen) for run in args.runs}
    print("| run | n | " + " | ".join(OUTCOMES) + " | id clicks: target / other on page / not on page "
          "| success, seen product | success, unseen product |")
    print("|---|---:|" + "---:|" * len(OUTCOMES) + "---|---:|---:|")
    for run, a in analyses.items():
        pct = [f"{a['outcomes'][o]} ({100 * a['outcomes'][o] / a['n']:.1f}%)" for o in OUTCOMES]
        c = a["clicks"]
        split = [f"{s}/{n}" for s, n in (a["by_seen"].get(k, [0, 0]) for k in ("seen", "unseen"))]
        print(f"| {run} | {a['n']} | " + " | ".join(pct)
              + f" | {c['target']} / {c['other on page']} / {c['not on page']} | " + " | ".join(split) + " |")

    n_options = sorted({k for a in analyses.values() for k in a["by_options"]})
    print("\n| run | partial buys: goal's product (an option wrong) / other product | "
          + " | ".join(f"success, {k} options" for k in n_options) + " |")
    print("|---|---|" + "---:|" * len(n_options))
    for run, a in analyses.items():
        own, other = a["partial_buys"]["goal's product"], a["partial_buys"]["other product"]
        split = [f"{s}/{n}" for s, n in (a["by_options"].get(k, [0, 0]) for k in n_options)]
        print(f"| {run} | {own} / {other} | " + " | ".join(split) + " |")


if __name__ == "__main__":
    main()
