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


def goal_asins() -> list[str]:
    """Target product of every goal index of the embedded WebShop world (upper-case ASINs)."""
    from agentenv_webshop.engine.catalog import load_catalog
    from agentenv_webshop.engine.goal import build_goals

    return [g["asin"].upper() for g in build_goals(load_catalog().products)]


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


def analyse(run_dir: str, asins: list[str], seen: set[str]) -> dict:
    """Outcome counts, id-click counts and success by seen / unseen target product for one run."""
    rows = [json.loads(line) for line in open(os.path.join(run_dir, "trajectories.jsonl"), encoding="utf-8")]
    outcomes = collections.Counter(classify(r) for r in rows)
    clicks = collections.Counter()
    by_seen = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        target = asins[int(r["item_id"].rsplit("_", 1)[1])]
        for clicked, page in id_clicks(r["messages"]):
            clicks["target" if clicked == target else "other on page" if clicked in page else "not on page"] += 1
        key = "seen" if target in seen else "unseen"
        by_seen[key][0] += bool(r["success"])
        by_seen[key][1] += 1
    return {"n": len(rows), "outcomes": outcomes, "clicks": clicks, "by_seen": dict(by_seen)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="main_generation output directories (trajectories.jsonl)")
    ap.add_argument("--train-ids", default="AgentItemId/webshop_train.json",
                    help="training item ids: their goals' products count as seen")
    args = ap.parse_args(argv)
    asins = goal_asins()
    with open(args.train_ids, encoding="utf-8") as fh:
        seen = {asins[int(x["item_id"].rsplit("_", 1)[1])] for x in json.load(fh)}
    print("| run | n | " + " | ".join(OUTCOMES) + " | id clicks: target / other on page / not on page "
          "| success, seen product | success, unseen product |")
    print("|---|---:|" + "---:|" * len(OUTCOMES) + "---|---:|---:|")
    for run in args.runs:
        a = analyse(run, asins, seen)
        pct = [f"{a['outcomes'][o]} ({100 * a['outcomes'][o] / a['n']:.1f}%)" for o in OUTCOMES]
        c = a["clicks"]
        split = [f"{s}/{n}" for s, n in (a["by_seen"].get(k, [0, 0]) for k in ("seen", "unseen"))]
        print(f"| {run} | {a['n']} | " + " | ".join(pct)
              + f" | {c['target']} / {c['other on page']} / {c['not on page']} | " + " | ".join(split) + " |")


if __name__ == "__main__":
    main()
