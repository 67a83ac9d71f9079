"""Evaluation entry point (Hydra), in the shape of AgentGym-RL's main_generation.

    python -m verl.agent_trainer.main_generation model.path=<hf dir> data.path=AgentItemId/webshop_test.json \
        data.n_samples=4 agentgym.max_rounds=10 rollout.temperature=1.0 data.output_path=eval_results/run1

Config: `verl/agent_trainer/config/generation.yaml` (schema: `config/generation_schema.py`). Loads the
model (an HF dir, e.g. the trainer's export `global_step_N/actor/huggingface`), reads the item ids
(`data.path`: one item-id JSON file, or a directory of `<task>_*.json` files, one category each),
rolls out `data.n_samples` trajectories per item with the trainer's agent loop and engine (single
process, no Ray), then prints and writes per category and overall:

* `mean_reward`     Avg@k: mean final reward over all k samples of all items, with `mean_reward_ci95`
                    (seeded bootstrap over items, seed `rollout.seed`);
* `success_rate`    share of trajectories that succeeded (`agentenv.controller.is_success`), with
                    `success_ci95` (Wilson score interval over items);
* `pass_at_k`       share of items whose best of k rewards is > 0 (AgentGym-RL's Pass@k: partial credit counts);
* `pass_at_k_success` share of items with at least one successful sample;
* `success_pass_at` unbiased pass@j on success (Codex estimator) for j = 1, 2, 4, ... up to the fewest
                    samples any item has;
* `mean_turns`, `env_errors` (trajectories ended by a failed env call; they score 0), counts;
* `needs_judge`     trajectories the env could not score without an LLM judge (WebArena's fuzzy_match and
                    N/A reasons with no judge configured, or a judge that failed). They are no failures:
                    every rate, CI and Pass@k above leaves them out (an item all of whose samples need a
                    judge drops out of them); the table's `judge?` column and its footnote say how many.
The CIs and both rates come from `metric_utils.compute_outcome_metrics`, the function the trainer's
validation uses, so a greedy run here and `val/greedy/*` of the trainer report the same quantities.

Outputs in `data.output_path` (default `saves/eval/<model dir>`): `metrics.json` and
`trajectories.jsonl` (one line per trajectory: item id, sample index, categories, reward, turns,
env error, chat messages). An item listed in several category files is rolled out once and counted
in each category.
"""
from __future__ import annotations

import dataclasses
import glob
import json
import logging
import os
import sys
import time
from typing import Any, Sequence

import hydra
import numpy as np

from agentenv.controller.types import is_success
from verl.config.generation_schema import GenerationConfig, load_generation_config
from verl.config.schema import console_entry
from verl.utils.stats import pass_at_k

__all__ = ["main", "run_generation", "load_categories", "compute_metrics", "summarize"]

logger = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------- data
def load_categories(path: str, task_name: str, prompt_key: str = "item_id",
                    max_items: int | None = None) -> dict[str, list[str]]:
    """Item ids per category: `{file stem: [item ids]}` for one JSON file or a directory of them.

    A directory contributes its `<task_name>_*.json` files (sorted). Each file is one category named by
    its stem (`webshop_test`). `max_items` keeps the first N ids of each file.

    Raises:
        FileNotFoundError: `path` does not exist, or the directory holds no `<task_name>_*.json` file.
        ValueError: an item id belongs to another task than `task_name`.
    """
    from agentenv.item_ids import resolve_data_path
    from verl.utils.dataset import load_item_id_file

    path = resolve_data_path(path)
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, f"{task_name}_*.json")))
        if not files:
            raise FileNotFoundError(f"data.path={path!r} holds no {task_name}_*.json item-id file "
                                    f"(agentgym.task_name={task_name!r})")
    elif os.path.exists(path):
        files = [path]
    else:
        raise FileNotFoundError(f"data.path={path!r} does not exist; point it at an item-id JSON file "
                                f"(AgentItemId/{task_name}_test.json) or a directory of {task_name}_*.json files")
    categories: dict[str, list[str]] = {}
    for file in files:
        rows = load_item_id_file(file, prompt_key)[:max_items]
        wrong = [r["item_id"] for r in rows if r["task_name"] != task_name]
        if wrong:
            raise ValueError(f"{file}: item id {wrong[0]!r} is not a {task_name!r} item; set agentgym.task_name "
                             f"to its task or use a {task_name}_*.json file")
        categories[os.path.splitext(os.path.basename(file))[0]] = [r["item_id"] for r in rows]
    return categories


# ---------------------------------------------------------------------------------------- metrics
def compute_metrics(records: Sequence[dict], seed: int = 0) -> dict:
    """Avg@k / success / Pass@k over trajectory records (`item_id`, `reward`, `num_turns`, `env_error`,
    `needs_judge`).

    Items may have different sample counts; per-item means are averaged so every item weighs the same.
    `seed` seeds the bootstrap CI of the mean reward. Records with `needs_judge` are counted and left
    out of every rate (they have no outcome); a record without the key has one. `needs_judge` and
    `scored_items` are reported when some record needs a judge.
    """
    from verl.agent_trainer.ppo.metric_utils import compute_outcome_metrics

    by_item: dict[str, list[dict]] = {}
    for rec in records:
        if not rec.get("needs_judge", False):
            by_item.setdefault(rec["item_id"], []).append(rec)
    judged = int(sum(bool(rec.get("needs_judge", False)) for rec in records))
    if not records:
        return {"num_items": 0, "num_trajectories": 0}
    flags = [bool(rec.get("needs_judge", False)) for rec in records] if judged else None
    outcome = compute_outcome_metrics([rec["item_id"] for rec in records], [rec["reward"] for rec in records],
                                      [is_success(float(rec["reward"])) for rec in records], seed=seed,
                                      needs_judge=flags)
    if not by_item:  # every trajectory awaits a judge: no rate to give
        return {**outcome, "mean_turns": float(np.mean([float(rec["num_turns"]) for rec in records])),
                "env_errors": int(sum(bool(rec["env_error"]) for rec in records))}
    rewards = [np.array([float(r["reward"]) for r in recs]) for recs in by_item.values()]
    successes = [int(sum(is_success(x) for x in r)) for r in rewards]
    fewest = min(len(r) for r in rewards)
    return {
        **outcome,
        "k": max(len(r) for r in rewards),
        "pass_at_k": float(np.mean([r.max() > 0 for r in rewards])),
        "pass_at_k_success": float(np.mean([c > 0 for c in successes])),
        "success_pass_at": {
            str(j): float(np.mean([pass_at_k(len(r), c, j) for r, c in zip(rewards, successes, strict=True)]))
            for j in _powers_of_two(fewest)
        },
        "mean_turns": float(np.mean([float(rec["num_turns"]) for rec in records])),
        "env_errors": int(sum(bool(rec["env_error"]) for rec in records)),
    }


def _powers_of_two(limit: int) -> list[int]:
    return [2 ** i for i in range(limit.bit_length()) if 2 ** i <= limit]


def summarize(records: Sequence[dict], categories: dict[str, list[str]], seed: int = 0) -> dict:
    """`{"overall": metrics over all distinct items, "categories": {name: metrics}}` (`seed`: bootstrap)."""
    by_item: dict[str, list[dict]] = {}
    for rec in records:
        by_item.setdefault(rec["item_id"], []).append(rec)
    per_cat = {name: compute_metrics([rec for item in ids for rec in by_item.get(item, [])], seed=seed)
               for name, ids in categories.items()}
    return {"overall": compute_metrics(records, seed=seed), "categories": per_cat}


def _format_table(summary: dict) -> str:
    cols = ("num_items", "num_trajectories", "mean_reward", "mean_reward_ci95", "success_rate", "success_ci95",
            "pass_at_k", "pass_at_k_success", "mean_turns", "env_errors", "needs_judge")
    heads = ("items", "trajs", "Avg@k", "Avg@k 95% CI", "success", "success 95% CI", "Pass@k", "Pass@k(succ)",
             "turns", "env_err", "judge?")
    rows = [(name, m) for name, m in summary["categories"].items()]
    if len(rows) != 1:
        rows.append(("overall", summary["overall"]))
    width = max(len(name) for name, _ in rows + [("category", None)])
    lines = [f"{'category':<{width}}  " + "  ".join(f"{h:>15}" for h in heads)]
    for name, m in rows:
        cells = []
        for col in cols:
            value = m.get(col, 0)
            if isinstance(value, list):
                value = f"[{value[0]:.3f}, {value[1]:.3f}]"
            cells.append(f"{value:>15.4f}" if isinstance(value, float) else f"{value:>15}")
        lines.append(f"{name:<{width}}  " + "  ".join(cells))
    k = summary["overall"].get("k", 0)
    lines.append(f"(k = {k} samples per item; Pass@k = best reward > 0, Pass@k(succ) = some sample with reward 1; "
                 f"95% CIs over items: Wilson for success, bootstrap for Avg@k)")
    judged = summary["overall"].get("needs_judge", 0)
    if judged:
        lines.append(f"({judged} trajectories (judge?) need an LLM judge the env server lacks or that failed: they "
                     f"are not failures and are left out of every rate and CI; start the server with "
                     f"--judge-base-url to score them)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- rollout
def _default_output_path(model_path: str) -> str:
    parts = [p for p in os.path.normpath(os.path.expanduser(model_path)).split(os.sep) if p]
    while parts and parts[-1] in ("huggingface", "actor"):
        parts.pop()
    return os.path.join("saves", "eval", "_".join(parts[-2:]) or "model")


def _rollout_rows(loop, config: GenerationConfig, item_ids: list[str]) -> tuple[list[dict], dict]:
    """Roll out `n_samples` trajectories for each item id, `data.batch_size` items per call."""
    from verl.utils.dataset import rows_to_dataproto

    n, bs = config.data.n_samples, config.data.batch_size
    records: list[dict] = []
    timing = {"gen_s": 0.0, "env_s": 0.0, "generated_tokens": 0}
    for b, start in enumerate(range(0, len(item_ids), bs)):
        chunk = item_ids[start:start + bs]
        rows = [{"item_id": item, "uid": item, "sample": s} for item in chunk for s in range(n)]
        batch = rows_to_dataproto(rows, meta_info={"max_rounds": config.agentgym.max_rounds, "global_step": b,
                                                    "validate": False})
        out = loop.run(batch)
        nt = out.non_tensor_batch
        for i, row in enumerate(rows):
            records.append({
                "item_id": row["item_id"], "sample": row["sample"], "reward": float(nt["reward"][i]),
                "success": bool(nt["success"][i]), "num_turns": int(nt["num_turns"][i]),
                "terminated": bool(nt["terminated"][i]), "truncated": bool(nt["truncated"][i]),
                "env_error": str(nt["env_error"][i]), "needs_judge": bool(nt["needs_judge"][i]),
                "turn_rewards": [float(x) for x in nt["turn_rewards"][i]],
                "messages": list(nt["messages"][i]),
            })
        timing["gen_s"] += float(out.meta_info.get("timing_s/gen", 0.0))
        timing["env_s"] += float(out.meta_info.get("timing_s/env", 0.0))
        timing["generated_tokens"] += int(out.meta_info.get("rollout/generated_tokens", 0))
        logger.info("evaluated %d/%d items", min(start + bs, len(item_ids)), len(item_ids))
    return records, timing


def run_generation(cfg: Any = None, engine=None, env_client_factory=None) -> dict:
    """Evaluate the model of `cfg` (DictConfig, dict, GenerationConfig or None for defaults).

    Args:
        cfg: the configuration (see `generation.yaml`).
        engine: optional ready `RolloutEngine` to use instead of building one from `model.path` and
            `rollout.name` (the tokenizer is still loaded from the model path); the caller owns it.
        env_client_factory: optional zero-argument callable building an env client for the agent loop
            (default: the agentgym client of `agentgym.task_name`); benchmarks wrap the real client.

    Returns:
        `{"overall": {...}, "categories": {...}, "output_path": str, "timing_s": {...}, "config": {...}}`;
        the same dict is written to `<output_path>/metrics.json`.
    """
    import torch

    from verl.utils import model_utils
    from verl.utils.agentgym.client import wait_for_env_server
    from verl.utils.agentgym.servers import EnvServerSet
    from verl.workers.rollout.agent_loop import AgentLoop
    from verl.workers.rollout.base import build_rollout_engine

    config = cfg if isinstance(cfg, GenerationConfig) else load_generation_config(cfg)
    data, agentgym = config.data, config.agentgym
    categories = load_categories(data.path, agentgym.task_name, data.prompt_key, data.max_items)
    item_ids = list(dict.fromkeys(item for ids in categories.values() for item in ids))
    if not item_ids:
        raise ValueError(f"data.path={data.path!r} lists no item ids")
    output_path = data.output_path or _default_output_path(config.model.path)
    os.makedirs(output_path, exist_ok=True)
    # Fail before spending time on the model when no env server answers.
    EnvServerSet(agentgym.env_addrs).wait_all(
        lambda addr: wait_for_env_server(addr, agentgym.max_retries, agentgym.timeout, task_name=agentgym.task_name))

    model_path = os.path.expanduser(config.model.path)
    tokenizer = model_utils.load_tokenizer(os.path.expanduser(config.model.tokenizer_path or model_path),
                                           trust_remote_code=config.model.trust_remote_code)
    own_engine = engine is None
    if own_engine:
        engine = build_rollout_engine(model_path, config.rollout, torch.device(config.trainer.device), config.model)
    loop = AgentLoop(engine, tokenizer, config.rollout, agentgym, data, env_client_factory=env_client_factory)
    logger.info("evaluating %s on %d items x %d samples (%s, temperature %s, max_rounds %d)", model_path,
                len(item_ids), data.n_samples, config.rollout.name, config.rollout.temperature, agentgym.max_rounds)
    t0 = time.perf_counter()
    try:
        records, timing = _rollout_rows(loop, config, item_ids)
    finally:
        loop.close()
        if own_engine:
            engine.shutdown()
    timing["wall_s"] = time.perf_counter() - t0

    cats_of: dict[str, list[str]] = {}
    for name, ids in categories.items():
        for item in ids:
            cats_of.setdefault(item, []).append(name)
    with open(os.path.join(output_path, "trajectories.jsonl"), "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps({**rec, "categories": cats_of[rec["item_id"]]}, ensure_ascii=False) + "\n")
    result = summarize(records, categories, seed=config.rollout.seed)
    result.update(output_path=output_path, timing_s=timing, model_path=model_path, data_path=data.path,
                  config=dataclasses.asdict(config))
    with open(os.path.join(output_path, "metrics.json"), "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    return result


@hydra.main(config_path="config", config_name="generation", version_base=None)
def _hydra_main(cfg) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = load_generation_config(cfg)
    result = run_generation(config)
    print(_format_table(result))
    print(f"metrics: {os.path.join(result['output_path'], 'metrics.json')}  "
          f"trajectories: {os.path.join(result['output_path'], 'trajectories.jsonl')}")
    overall = result["overall"]
    if overall["env_errors"] == overall["num_trajectories"]:
        sys.exit(f"error: every trajectory failed with an env error (server {config.agentgym.env_addr}); "
                 f"see env_error in trajectories.jsonl")


main = console_entry(GenerationConfig, _hydra_main)


if __name__ == "__main__":
    main()
