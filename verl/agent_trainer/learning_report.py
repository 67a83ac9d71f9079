"""The learning report: did training help? Greedy success and mean reward on held-out goals before the
first training step and after the last, with 95% confidence intervals.

The numbers are the trainer's own greedy validation (`RayPPOTrainer._validate`, mode `greedy`,
computed by `metric_utils.compute_outcome_metrics`, the same function `main_generation` reports
with), so there is one owner of the result. `trainer.learning_report=True` makes `fit()` validate
before training and after the last step and write `<trainer.default_local_dir>/learning_report.json`:

    {"n_goals": 200,
     "before": {"success_rate", "success_ci95": [lo, hi], "mean_reward", "mean_reward_ci95": [lo, hi], "step"},
     "after":  {...},
     "seconds": wall time of fit(), "seed": the bootstrap seed (actor_rollout_ref.rollout.seed),
     "train_steps", "data_seed", "val_files", "model_path"}

`python -m verl.agent_trainer.learning_report <dir or learning_report.json>` prints the table again.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Sequence

__all__ = ["REPORT_FILE", "OUTCOME_KEYS", "build_report", "write_report", "load_report", "format_table"]

REPORT_FILE = "learning_report.json"
OUTCOME_KEYS = ("success_rate", "success_ci95", "mean_reward", "mean_reward_ci95")


def _half(outcome: dict, step: int) -> dict:
    missing = [k for k in OUTCOME_KEYS if k not in outcome]
    if missing:
        raise ValueError(f"learning report: the validation outcome lacks {missing} (has {sorted(outcome)})")
    return {**{k: outcome[k] for k in OUTCOME_KEYS}, "step": int(step)}


def build_report(before: dict, after: dict, *, before_step: int, after_step: int, seconds: float, seed: int,
                 **extra) -> dict:
    """The report dict from two greedy validation outcomes (`compute_outcome_metrics` results).

    Raises:
        ValueError: the outcomes cover different numbers of goals, or lack a key of `OUTCOME_KEYS`.
    """
    if before["num_items"] != after["num_items"]:
        raise ValueError(f"learning report: before ({before['num_items']} goals) and after "
                         f"({after['num_items']} goals) must evaluate the same goals")
    return {"n_goals": int(before["num_items"]), "before": _half(before, before_step),
            "after": _half(after, after_step), "seconds": float(seconds), "seed": int(seed), **extra}


def write_report(report: dict, directory: str) -> str:
    """Write `report` to `<directory>/learning_report.json`; returns the path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, REPORT_FILE)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1)
    os.replace(tmp, path)
    return path


def load_report(path: str) -> dict:
    """Read a report from its file or from the directory holding `learning_report.json`."""
    if os.path.isdir(path):
        path = os.path.join(path, REPORT_FILE)
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def format_table(report: dict) -> str:
    """The before/after table (success and mean reward with their 95% CIs, and the change)."""
    def ci(pair: Sequence[float]) -> str:
        return f"[{pair[0]:.3f}, {pair[1]:.3f}]"

    b, a = report["before"], report["after"]
    head = f"{'':<8}{'step':>6}  {'success':>8}  {'95% CI':>16}  {'mean reward':>11}  {'95% CI':>16}"
    rows = [f"{name:<8}{h['step']:>6}  {h['success_rate']:>8.3f}  {ci(h['success_ci95']):>16}  "
            f"{h['mean_reward']:>11.3f}  {ci(h['mean_reward_ci95']):>16}" for name, h in (("before", b), ("after", a))]
    change = (f"{'change':<8}{'':>6}  {a['success_rate'] - b['success_rate']:>+8.3f}  {'':>16}  "
              f"{a['mean_reward'] - b['mean_reward']:>+11.3f}")
    title = (f"learning report: greedy on {report['n_goals']} held-out goals, {report.get('train_steps', '?')} "
             f"training steps, {report['seconds']:.0f} s (95% CIs: Wilson for success, bootstrap seed "
             f"{report['seed']} for mean reward)")
    return "\n".join([title, head, *rows, change])


def main(argv: Sequence[str] | None = None) -> None:
    """CLI: print the table of a written report."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        sys.exit("usage: python -m verl.agent_trainer.learning_report <run dir | learning_report.json>")
    print(format_table(load_report(args[0])))


if __name__ == "__main__":
    main()
