"""The learning report: did training help? Greedy success and mean reward before the first training step
and after the last, with 95% confidence intervals, on the held-out goals and (optionally) on the goals
training visits, with the paired change of each.

The numbers are the trainer's own greedy validation (`RayPPOTrainer._validate`, mode `greedy`,
computed by `metric_utils.compute_outcome_metrics` and `compute_outcome_change`, the functions
`main_generation` reports with too), so there is one owner of the result. `trainer.learning_report=True`
makes `fit()` validate before training and after the last step and write
`<trainer.default_local_dir>/learning_report.json`:

    {"n_goals": 200,                                   # held-out goals: data.val_file, data.val_max_items
     "before": {"success_rate", "success_ci95": [lo, hi], "mean_reward", "mean_reward_ci95": [lo, hi], "step"},
     "after":  {...},
     "change_ci95": [lo, hi], "mean_reward_change_ci95": [lo, hi],   # paired: bootstrap over goals
     "gained": n, "lost": n, "mcnemar_p": p,            # goals solved after but not before, and the reverse;
                                                       # the exact McNemar test of the success change
     "per_goal": {"ids", "success_before", "success_after", "reward_before", "reward_after"},
     "trained": {"n_goals", "before", "after", "change_ci95", "mean_reward_change_ci95", "gained", "lost",
                 "mcnemar_p", "per_goal"},
     "seconds": wall time of fit(), "seed": the bootstrap seed (actor_rollout_ref.rollout.seed),
     "train_steps", "data_seed", "val_files", "trained_val_file", "model_path"}

`"trained"` is there when `data.trained_val_file` names the training goals to evaluate as well (the CPU
main job: the 32 goals it trains on). A change CI is the percentile bootstrap (10,000 resamples of the goals,
seeded) of the mean per-goal difference after - before: paired, so it is narrower than the two
intervals side by side suggest.

`python -m verl.agent_trainer.learning_report <dir or learning_report.json>` prints the table again.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Sequence

from verl.agent_trainer.ppo.metric_utils import compute_outcome_change
from verl.utils.stats import mcnemar_exact_p

__all__ = ["REPORT_FILE", "OUTCOME_KEYS", "build_report", "build_section", "write_report", "load_report",
           "report_sections", "format_table"]

REPORT_FILE = "learning_report.json"
OUTCOME_KEYS = ("success_rate", "success_ci95", "mean_reward", "mean_reward_ci95")


def _half(outcome: dict, step: int) -> dict:
    missing = [k for k in OUTCOME_KEYS if k not in outcome]
    if missing:
        raise ValueError(f"learning report: the validation outcome lacks {missing} (has {sorted(outcome)})")
    return {**{k: outcome[k] for k in OUTCOME_KEYS}, "step": int(step)}


def build_section(before: dict, after: dict, *, before_step: int, after_step: int, seed: int) -> dict:
    """One goal set's section from two greedy outcomes (`compute_outcome_metrics(..., per_item=True)`).

    Returns:
        ``{"n_goals", "before", "after", "change_ci95", "mean_reward_change_ci95", "gained", "lost",
        "mcnemar_p", "per_goal"}``; the CIs of the change are paired over goals
        (`metric_utils.compute_outcome_change`, bootstrap seeded with `seed`); `mcnemar_p` is the exact
        McNemar test of the success change (`stats.mcnemar_exact_p` of the gained and lost goals).

    Raises:
        ValueError: the outcomes cover different goals, lack a key of `OUTCOME_KEYS` or their per-goal results.
    """
    if before["num_items"] != after["num_items"]:
        raise ValueError(f"learning report: before ({before['num_items']} goals) and after "
                         f"({after['num_items']} goals) must evaluate the same goals")
    halves = {"before": _half(before, before_step), "after": _half(after, after_step)}
    change = compute_outcome_change(before, after, seed=seed)
    at = {str(item): i for i, item in enumerate(after["per_item"]["ids"])}
    paired = [(i, at[str(item)]) for i, item in enumerate(before["per_item"]["ids"]) if str(item) in at]
    per_goal = {"ids": [str(before["per_item"]["ids"][i]) for i, _ in paired]}  # the goals the change pairs
    for key in ("success", "reward"):
        per_goal[f"{key}_before"] = [before["per_item"][key][i] for i, _ in paired]
        per_goal[f"{key}_after"] = [after["per_item"][key][j] for _, j in paired]
    pairs = list(zip(per_goal["success_before"], per_goal["success_after"], strict=True))
    gained = sum(1 for b, a in pairs if a and not b)
    lost = sum(1 for b, a in pairs if b and not a)
    return {"n_goals": int(before["num_items"]), **halves, "change_ci95": change["success_change_ci95"],
            "mean_reward_change_ci95": change["mean_reward_change_ci95"], "gained": gained, "lost": lost,
            "mcnemar_p": mcnemar_exact_p(gained, lost), "per_goal": per_goal}


def build_report(before: dict, after: dict, *, before_step: int, after_step: int, seconds: float, seed: int,
                 trained: tuple[dict, dict] | None = None, **extra) -> dict:
    """The report dict from the greedy validation outcomes on the held-out goals (`before`, `after`) and,
    when given, on the trained goals (`trained` = (before, after)); see the module docstring.

    Raises:
        ValueError: as `build_section`.
    """
    steps = dict(before_step=before_step, after_step=after_step, seed=seed)
    report = build_section(before, after, **steps)
    if trained is not None:
        report["trained"] = build_section(*trained, **steps)
    return {**report, "seconds": float(seconds), "seed": int(seed), **extra}


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


def report_sections(report: dict) -> list[tuple[str, dict]]:
    """[(label, section)] of a report: the held-out goals, then the trained goals when evaluated."""
    sections = [("held-out", report)]
    if "trained" in report:
        sections.append(("trained", report["trained"]))
    return sections


def _ci(pair: Sequence[float] | None) -> str:
    return "" if pair is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def format_table(report: dict) -> str:
    """The before/after table of each goal set (success and mean reward with their 95% CIs) and the change
    with its paired 95% CI."""
    head = f"{'':<16}{'step':>6}  {'success':>8}  {'95% CI':>18}  {'mean reward':>11}  {'95% CI':>18}"
    lines = [head]
    for label, sec in report_sections(report):
        lines.append(f"{label} goals ({sec['n_goals']})")
        for name in ("before", "after"):
            h = sec[name]
            lines.append(f"  {name:<14}{h['step']:>6}  {h['success_rate']:>8.3f}  {_ci(h['success_ci95']):>18}  "
                         f"{h['mean_reward']:>11.3f}  {_ci(h['mean_reward_ci95']):>18}")
        b, a = sec["before"], sec["after"]
        lines.append(f"  {'change':<14}{'':>6}  {a['success_rate'] - b['success_rate']:>+8.3f}  "
                     f"{_ci(sec.get('change_ci95')):>18}  {a['mean_reward'] - b['mean_reward']:>+11.3f}  "
                     f"{_ci(sec.get('mean_reward_change_ci95')):>18}"
                     + (f"  {sec['gained']} gained / {sec['lost']} lost, exact McNemar p {sec['mcnemar_p']:.3g}"
                        if "mcnemar_p" in sec else ""))
    title = (f"learning report: greedy, {report.get('train_steps', '?')} training steps, {report['seconds']:.0f} s "
             f"(95% CIs: Wilson for success; bootstrap over goals, seed {report['seed']}, for mean reward and "
             f"for the paired change)")
    return "\n".join([title, *lines])


def main(argv: Sequence[str] | None = None) -> None:
    """CLI: print the table of a written report."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        sys.exit("usage: python -m verl.agent_trainer.learning_report <run dir | learning_report.json>")
    print(format_table(load_report(args[0])))


if __name__ == "__main__":
    main()
