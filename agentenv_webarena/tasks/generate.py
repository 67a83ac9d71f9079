"""Generate the embedded task suite: `python -m agentenv_webarena.tasks.generate [--out F] [--ids-dir D]`.

Owns turning the template modules (`tasks.templates`) and the pristine seed data
(`sites.apps.pristine_database`) into `tasks/embedded.raw.json` (WebArena's `test.raw.json` format
plus `reference_action_sequence`, task_id == index) and the AgentGym item-id splits
`<ids-dir>/webarena_<split>.json` (`[{"item_id": "webarena_<index>"}]`):

| split      | holds                                                        | measures                            |
|------------|--------------------------------------------------------------|-------------------------------------|
| `train`    | the training templates' instances less `test_iid`, `judge`   | (what the policy learns from)       |
| `test`     | every instance of the held-out templates                     | generalisation to unseen task kinds |
|            | (`TEST_ONLY_TEMPLATES`, none of them in `train`)             |                                     |
| `test_iid` | every `TEST_EVERY`-th instance (0, 5, ...) of a training     | new instances of seen task kinds    |
|            | template                                                     |                                     |
| `judge`    | training templates' tasks scored by `fuzzy_match` against a  | kept out of `train`: without an LLM |
|            | reference answer                                             | judge they cannot be scored         |

The four lists are disjoint and cover every task; no template is in both `train` and `test`.
Determinism: each template gets its own `random.Random(SEED * 100_000 + template_id)`, so adding
or changing one template never changes another's instances, and the splits follow from the task
order and the fixed held-out sets.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sqlite3
from typing import Optional, Sequence
from urllib.parse import parse_qs, urlparse

from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, start_urls, validate_task
from agentenv_webarena.tasks.templates import load_templates, test_only_templates

__all__ = ["SEED", "SPLITS", "TEST_EVERY", "generate_tasks", "judge_scored", "split_ids", "write_ids", "main"]

logger = logging.getLogger(__name__)

SEED = 8  # fixed RNG seed of the suite: the same templates always give the same tasks
TEST_EVERY = 5
SPLITS = ("train", "test", "test_iid", "judge")
_KEY_ORDER = (
    "sites",
    "task_id",
    "require_login",
    "storage_state",
    "start_url",
    "geolocation",
    "intent_template",
    "instantiation_dict",
    "intent",
    "require_reset",
    "eval",
    "intent_template_id",
    "reference_action_sequence",
)
_DEFAULTS = {"require_login": True, "storage_state": None, "geolocation": None, "require_reset": False}


def _url_matches(pred: str, reference: str) -> bool:
    """WebArena's "GOLD in PRED" rule on placeholder URLs (to reject tasks solved at the start)."""
    def base(u: str) -> str:
        parsed = urlparse(u.rstrip("/"))
        return parsed.netloc + parsed.path

    refs = [r.strip().rstrip("/") for r in reference.split(" |OR| ")]
    pred = pred.rstrip("/")
    if not any(base(r) in base(pred) for r in refs):
        return False
    pred_query = parse_qs(urlparse(pred).query)
    for ref in refs:
        for key, values in parse_qs(urlparse(ref).query).items():
            if not any(v in pred_query.get(key, []) for v in values):
                return False
    return True


def _check(task: dict, where: str) -> None:
    validate_task(task, where=where)
    sequence = task.get("reference_action_sequence") or []
    if not sequence or sequence[-1].get("action") != "stop":
        raise ValueError(f"{where}reference_action_sequence must end with a stop step")
    if len(sequence) > 29:
        raise ValueError(f"{where}reference_action_sequence has {len(sequence)} steps; WebArena stops at 30")
    ev = task["eval"]
    if "url_match" in ev["eval_types"] and _url_matches(start_urls(task)[0], ev["reference_url"]):
        raise ValueError(f"{where}the start URL already satisfies reference_url {ev['reference_url']!r}")


def generate_tasks(db: Optional[sqlite3.Connection] = None, only: Optional[Sequence[str]] = None) -> list[dict]:
    """Run every template (of the modules `only`, when given) on the pristine data and number the tasks
    (task_id == index).

    Raises:
        ValueError: a template returned an invalid task; the message names the template.
    """
    if db is None:
        from agentenv_webarena.sites.apps import pristine_database

        db = pristine_database()
    tasks: list[dict] = []
    for template_id, fn in load_templates(only):
        instances = fn(db, random.Random(SEED * 100_000 + template_id))
        if not instances:
            raise ValueError(f"template {template_id} ({fn.__qualname__}) produced no tasks")
        for raw in instances:
            task = {**_DEFAULTS, **raw, "task_id": len(tasks), "intent_template_id": template_id}
            ordered = {key: task[key] for key in _KEY_ORDER if key in task}
            ordered.update({k: v for k, v in task.items() if k not in ordered})
            _check(ordered, f"template {template_id} ({fn.__qualname__}): ")
            tasks.append(ordered)
        logger.info("template %d (%s): %d tasks", template_id, fn.__qualname__, len(instances))
    return tasks


def judge_scored(task: dict) -> bool:
    """Scored by `fuzzy_match` against reference answers, which WebArena hands to an LLM judge ("N/A" is
    not: an infeasible task answered "N/A" scores without one)."""
    answers = task["eval"].get("reference_answers") or {}
    return isinstance(answers.get("fuzzy_match"), list)


def split_ids(tasks: list[dict], test_only: Optional[set[int]] = None) -> dict[str, list[int]]:
    """Task indices per split (`SPLITS`): disjoint and covering every task (see the module docstring).

    Args:
        tasks: the suite, task_id == index.
        test_only: held-out template ids (default: every module's `TEST_ONLY_TEMPLATES`).
    """
    test_only = test_only_templates() if test_only is None else test_only
    seen: dict[int, int] = {}
    splits: dict[str, list[int]] = {name: [] for name in SPLITS}
    for task in tasks:
        tid = task["intent_template_id"]
        if tid in test_only:
            splits["test"].append(task["task_id"])
        elif judge_scored(task):
            splits["judge"].append(task["task_id"])
        else:
            k = seen.get(tid, 0)
            seen[tid] = k + 1
            splits["test_iid" if k % TEST_EVERY == 0 else "train"].append(task["task_id"])
    return splits


def write_ids(path: str, indices: Sequence[int]) -> None:
    """Write an AgentGym item-id file, one `{"item_id": "webarena_<i>"}` per line."""
    lines = ",\n".join(json.dumps({"item_id": f"webarena_{i}"}) for i in indices)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"[\n{lines}\n]\n")


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Write the task file and the item-id file of every split."""
    parser = argparse.ArgumentParser(description="Generate the embedded WebArena task suite and its splits")
    parser.add_argument("--out", default=EMBEDDED_TASK_FILE, help="task JSON to write (default: the packaged file)")
    parser.add_argument("--ids-dir", default="AgentItemId",
                        help="where webarena_{train,test,test_iid,judge}.json go")
    parser.add_argument("--only", default="",
                        help="comma-separated template modules to run (default: all; a partial suite for checking "
                             "new templates: write it with --out elsewhere, never over the packaged file)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    only = [m.strip() for m in args.only.split(",") if m.strip()] or None
    if only and os.path.abspath(args.out) == os.path.abspath(EMBEDDED_TASK_FILE):
        parser.error("--only writes a partial suite: give --out a path other than the packaged task file")
    tasks = generate_tasks(only=only)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(tasks, f, indent=2, ensure_ascii=False)
        f.write("\n")
    splits = split_ids(tasks)
    os.makedirs(args.ids_dir, exist_ok=True)
    for name, indices in splits.items():
        write_ids(os.path.join(args.ids_dir, f"webarena_{name}.json"), indices)
    templates = sorted({t["intent_template_id"] for t in tasks})
    print(json.dumps({"tasks": len(tasks), "templates": len(templates),
                      **{name: len(indices) for name, indices in splits.items()}, "out": args.out}))


if __name__ == "__main__":
    main()
