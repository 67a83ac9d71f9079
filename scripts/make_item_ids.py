"""Write AgentGym-RL item-id files for WebShop: AgentItemId/webshop_{train,test}.json.

Each file is ``[{"item_id": "webshop_<goal index>"}, ...]`` over the goals of the embedded catalog
(or of ``--data-dir``). The split is a seeded shuffle of all goal indices: the first ``--num-test``
go to test, the rest to train; both lists are written in ascending index order. Deterministic:
rerun it whenever the catalog or goal construction changes.

``--subset N`` instead writes ``webshop_train_cpu<N>.json``: N training goals drawn from
``webshop_train.json`` with ``random.Random(--subset-seed).sample`` (ascending order), the fixed goal set the
CPU main job trained on before it learned to pick its goals (``AgentItemId/webshop_train_cpu32.json`` is
``--subset 32 --subset-seed 0``).

``--subset N --learnable-from T.jsonl [T.jsonl ...]`` writes ``webshop_train_learnable<N>.json``: N goals drawn
the same way from the training goals that a policy solved sometimes but not always in the sampled trajectories
of ``main_generation`` (its ``trajectories.jsonl``: several samples per goal). Those are the goals GRPO can learn
from: a goal every sample solves, or none does, gives a group of equal rewards and so no gradient.
``--max-success-rate R`` keeps only the learnable goals solved in at most a fraction R of their samples (the goals
with room to improve; the file is then ``webshop_train_learnable<N>_max<100 R>.json``). The CPU main job trains on
``webshop_train_learnable32_max50.json`` (the commands that made it: ``docs/training.md``).

``--learnable-counts C.json`` does the same from successes counted before (``{"successes_of_<n>": {item id:
successes}}``, e.g. ``bench/webshop_learnable_pool.json``) instead of trajectory files.

``--exclude F [F ...]`` leaves the ids of these item-id files out of the candidates (a second candidate pool
disjoint from a first), and ``--name`` names the written file. The learning report's control goals are drawn so:
the same rule as the trained goals, excluding them (``webshop_control25_max50.json``: the other 25 goals of the
rule that chose ``webshop_train_learnable32_max50.json``).

Every ``--subset`` file gets an entry in ``selection.json`` beside it: ``{file name: {"rule": how its goals were
chosen, "command": the command that wrote it}}``; the learning report quotes the rule.

Usage: python scripts/make_item_ids.py [--out AgentItemId] [--num-test 200] [--seed 0] [--data-dir D]
       python scripts/make_item_ids.py --subset 32 [--subset-seed 0] [--out AgentItemId]
       python scripts/make_item_ids.py --subset 32 --learnable-from saves/eval/pool*/trajectories.jsonl
              [--max-success-rate 0.5]
       python scripts/make_item_ids.py --subset 25 --learnable-counts bench/webshop_learnable_pool.json
              --max-success-rate 0.5 --exclude AgentItemId/webshop_train_learnable32_max50.json
              --name webshop_control25_max50.json
       python scripts/make_item_ids.py --subset 192 --subset-seed 2 --exclude AgentItemId/webshop_train_cpu192.json
              --name webshop_train_cpu192b.json
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import sys

SELECTION_FILE = "selection.json"  # read by verl.agent_trainer.learning_report.goal_set_selection


def split_goal_indices(num_goals: int, num_test: int, seed: int) -> tuple[list[int], list[int]]:
    """Seeded disjoint split of ``range(num_goals)`` into (train, test), each sorted."""
    if not 0 < num_test < num_goals:
        raise ValueError(f"--num-test must be in 1..{num_goals - 1} for {num_goals} goals, got {num_test}")
    order = list(range(num_goals))
    random.Random(seed).shuffle(order)
    return sorted(order[num_test:]), sorted(order[:num_test])


def sample_subset(ids: list[str], k: int, seed: int) -> list[str]:
    """``k`` of ``ids`` drawn with ``random.Random(seed).sample``, in the order they have in ``ids``."""
    if not 0 < k <= len(ids):
        raise ValueError(f"--subset must be in 1..{len(ids)}, got {k}")
    chosen = set(random.Random(seed).sample(range(len(ids)), k))
    return [item for i, item in enumerate(ids) if i in chosen]


def learnable_ids(trajectory_files: list[str]) -> dict[str, tuple[int, int]]:
    """``{item id: (successes, samples)}`` of the items some but not all of whose trajectories succeeded
    (so never an item with one sample).

    ``trajectory_files`` are ``main_generation`` outputs (``trajectories.jsonl``: one JSON object per trajectory
    with ``item_id`` and ``reward``; success is ``reward >= 1``, ``agentenv.controller.types.is_success``)."""
    from agentenv.controller.types import is_success

    counts: dict[str, list[int]] = {}
    for path in trajectory_files:
        with open(path, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    item, reward = row["item_id"], row["reward"]
                except (json.JSONDecodeError, KeyError) as exc:
                    raise ValueError(f"{path}:{line_no}: not a trajectory record with item_id and reward "
                                     f"({exc})") from exc
                wins_and_samples = counts.setdefault(item, [0, 0])
                wins_and_samples[0] += int(is_success(reward))
                wins_and_samples[1] += 1
    return {item: (wins, n) for item, (wins, n) in counts.items() if 0 < wins < n}


def learnable_counts(path: str) -> dict[str, tuple[int, int]]:
    """``learnable_ids`` from counted successes: a JSON file with ``{"successes_of_<n>": {item id: successes}}``
    (``bench/webshop_learnable_pool.json``)."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    keys = [k for k in data if re.fullmatch(r"successes_of_\d+", k)]
    if len(keys) != 1:
        raise ValueError(f"{path}: expected one 'successes_of_<n>' key, found {keys or sorted(data)}")
    n = int(keys[0].rsplit("_", 1)[1])
    return {item: (int(wins), n) for item, wins in data[keys[0]].items() if 0 < int(wins) < n}


def record_selection(out_dir: str, name: str, rule: str, command: str) -> None:
    """Set ``name``'s entry (its rule and the command that wrote it) in ``<out_dir>/selection.json``."""
    path = os.path.join(out_dir, SELECTION_FILE)
    entries = {}
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            entries = json.load(fh)
    entries[name] = {"rule": rule, "command": command}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(dict(sorted(entries.items())), fh, indent=1)
        fh.write("\n")


def _read_ids(path: str) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return [row["item_id"] for row in json.load(fh)]


def _write_ids(path: str, ids: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        # One object per line: small diffs when the catalog changes.
        fh.write("[\n" + ",\n".join(json.dumps({"item_id": i}) for i in ids) + "\n]\n")
    print(f"wrote {path}: {len(ids)} ids")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "AgentItemId"))
    parser.add_argument("--num-test", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=None, help="WebShop data folder (default: embedded catalog)")
    parser.add_argument("--num-products", type=int, default=None)
    parser.add_argument("--subset", type=int, default=None,
                        help="write webshop_train_cpu<N>.json: N goals sampled from webshop_train.json")
    parser.add_argument("--subset-seed", type=int, default=0)
    parser.add_argument("--learnable-from", nargs="+", default=None, metavar="TRAJECTORIES_JSONL",
                        help="with --subset: sample only goals these main_generation trajectories solved sometimes "
                             "but not always; writes webshop_train_learnable<N>.json")
    parser.add_argument("--learnable-counts", default=None, metavar="COUNTS_JSON",
                        help="with --subset: as --learnable-from, from counted successes "
                             "({\"successes_of_<n>\": {item id: successes}})")
    parser.add_argument("--max-success-rate", type=float, default=None, metavar="R",
                        help="with --learnable-from: only goals solved in at most this fraction of their samples")
    parser.add_argument("--exclude", nargs="+", default=[], metavar="ITEM_ID_JSON",
                        help="with --subset: leave the ids of these item-id files out of the candidates")
    parser.add_argument("--name", default=None, help="with --subset: the written file's name")
    args = parser.parse_args(argv)
    if args.learnable_from is not None and args.learnable_counts is not None:
        parser.error("give --learnable-from or --learnable-counts, not both")
    learnable_source = args.learnable_from or args.learnable_counts
    if learnable_source is None and args.max_success_rate is not None:
        parser.error("--max-success-rate needs --learnable-from or --learnable-counts")
    if args.subset is None and (learnable_source is not None or args.exclude or args.name):
        parser.error("--learnable-from, --learnable-counts, --exclude and --name need --subset N")
    if args.max_success_rate is not None and not 0 < args.max_success_rate < 1:
        parser.error(f"--max-success-rate must be in (0, 1), got {args.max_success_rate}")
    if args.subset is not None:
        excluded = {i for path in args.exclude for i in _read_ids(path)}
        train_ids = [i for i in _read_ids(os.path.join(args.out, "webshop_train.json")) if i not in excluded]
        name = f"webshop_train_cpu{args.subset}.json"
        rule = "training goals (webshop_train.json)"
        if learnable_source is not None:
            if args.learnable_from is not None:
                learnable = learnable_ids(args.learnable_from)
                print(f"{len(learnable)} learnable training goals in {len(args.learnable_from)} trajectory file(s)")
            else:
                learnable = learnable_counts(args.learnable_counts)
                print(f"{len(learnable)} learnable training goals in {args.learnable_counts}")
            name = f"webshop_train_learnable{args.subset}.json"
            rule = "training goals solved in some but not all of their sampled trajectories"
            if args.max_success_rate is not None:
                learnable = {i: (wins, n) for i, (wins, n) in learnable.items()
                             if wins <= args.max_success_rate * n}
                print(f"{len(learnable)} of them solved in at most {args.max_success_rate:g} of their samples")
                name = f"webshop_train_learnable{args.subset}_max{round(100 * args.max_success_rate)}.json"
                rule = rule.replace("not all", f"at most {100 * args.max_success_rate:g}%")
            train_ids = [i for i in train_ids if i in learnable]
            rule += f" ({' '.join(args.learnable_from or [args.learnable_counts])})"
        if excluded:
            rule += f", other than those of {' '.join(os.path.basename(p) for p in args.exclude)}"
        subset = sample_subset(train_ids, args.subset, args.subset_seed)
        name = args.name or name
        _write_ids(os.path.normpath(os.path.join(args.out, name)), subset)
        rule = f"{args.subset} of the {len(train_ids)} {rule}, drawn with random.Random({args.subset_seed}).sample"
        command = shlex.join(["python", "scripts/make_item_ids.py",
                              *(sys.argv[1:] if argv is None else argv)])
        record_selection(os.path.normpath(args.out), name, rule, command)
        return

    from agentenv_webshop.engine.catalog import load_catalog
    from agentenv_webshop.engine.goal import build_goals

    goals = build_goals(load_catalog(args.data_dir, args.num_products).products)
    train, test = split_goal_indices(len(goals), args.num_test, args.seed)
    os.makedirs(args.out, exist_ok=True)
    for name, ids in (("train", train), ("test", test)):
        _write_ids(os.path.normpath(os.path.join(args.out, f"webshop_{name}.json")), [f"webshop_{i}" for i in ids])
    print(f"{len(goals)} goals in total")


if __name__ == "__main__":
    main()
