"""Write AgentGym-RL item-id files for WebShop: AgentItemId/webshop_{train,test}.json.

Each file is ``[{"item_id": "webshop_<goal index>"}, ...]`` over the goals of the embedded catalog
(or of ``--data-dir``). The split is a seeded shuffle of all goal indices: the first ``--num-test``
go to test, the rest to train; both lists are written in ascending index order. Deterministic:
rerun it whenever the catalog or goal construction changes.

Usage: python scripts/make_item_ids.py [--out AgentItemId] [--num-test 200] [--seed 0] [--data-dir D]
"""
from __future__ import annotations

import argparse
import json
import os
import random


def split_goal_indices(num_goals: int, num_test: int, seed: int) -> tuple[list[int], list[int]]:
    """Seeded disjoint split of ``range(num_goals)`` into (train, test), each sorted."""
    if not 0 < num_test < num_goals:
        raise ValueError(f"--num-test must be in 1..{num_goals - 1} for {num_goals} goals, got {num_test}")
    order = list(range(num_goals))
    random.Random(seed).shuffle(order)
    return sorted(order[num_test:]), sorted(order[:num_test])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "AgentItemId"))
    parser.add_argument("--num-test", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=None, help="WebShop data folder (default: embedded catalog)")
    parser.add_argument("--num-products", type=int, default=None)
    args = parser.parse_args(argv)

    from agentenv_webshop.engine.catalog import load_catalog
    from agentenv_webshop.engine.goal import build_goals

    goals = build_goals(load_catalog(args.data_dir, args.num_products).products)
    train, test = split_goal_indices(len(goals), args.num_test, args.seed)
    os.makedirs(args.out, exist_ok=True)
    for name, ids in (("train", train), ("test", test)):
        path = os.path.normpath(os.path.join(args.out, f"webshop_{name}.json"))
        with open(path, "w", encoding="utf-8") as fh:
            # One object per line: small diffs when the catalog changes.
            fh.write("[\n" + ",\n".join(json.dumps({"item_id": f"webshop_{i}"}) for i in ids) + "\n]\n")
        print(f"wrote {path}: {len(ids)} ids")
    print(f"{len(goals)} goals in total")


if __name__ == "__main__":
    main()
