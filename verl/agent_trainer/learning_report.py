"""The learning report: did training help? Greedy success and mean reward before the first training step
and after the last, with 95% confidence intervals, on the held-out goals and (optionally) on two more goal sets
of the training pool: the goals training visits ("trained") and goals drawn by the same rule that it never
visits ("control"), with the paired change of each and the trained-minus-control difference.

The numbers are the trainer's own greedy validation (`RayPPOTrainer._validate_sets`, mode `greedy`,
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
                 "mcnemar_p", "per_goal", "file", "selection"},
     "control": {... as "trained"},
     "trained_minus_control": {"success_change", "success_change_ci95", "mean_reward_change",
                               "mean_reward_change_ci95"},
     "expert_probe": {"n_goals", "file", "before", "after", "change", "change_ci95", "per_goal"},
     "seconds": wall time of fit(), "seed": the bootstrap seed (actor_rollout_ref.rollout.seed),
     "train_steps", "data_seed", "val_files", "model_path"}

`"trained"` is there when `data.trained_val_file` names the training goals to evaluate as well (the CPU
main job: the 32 goals it trains on), `"control"` when `data.control_val_file` names untrained goals of the same
pool chosen by the same rule (the CPU main job: the other 25 goals of its rule). Their `"selection"` says how the
file was chosen: its entry in `selection.json` beside it (`scripts/make_item_ids.py` writes the entry with the
files it writes), or null. A goal set's change CI is the percentile bootstrap (10,000 resamples of the goals,
seeded) of the mean per-goal difference after - before: paired, so it is narrower than the two intervals side
by side suggest. `"trained_minus_control"` is the trained change minus the control change, its CI the bootstrap
of that difference with both goal sets resampled independently (`stats.bootstrap_mean_diff_ci`): the gain that
practising a goal adds over the drift that any such goal shows. `"expert_probe"` (with `data.expert_probe_file`)
is the mean log-probability per token the policy gives an expert's actions on held-out goals, before and after,
with the paired change (`verl.agent_trainer.expert_probe`).

The report's files are owned here: `write_training_report` (the trainer's report at the end of training, logged
line by line), and the validation before training kept beside the checkpoints (`keep_before`, `load_kept_before`,
`learning_report_before.json`) so that a run resumed in a later session reports against it.

`python -m verl.agent_trainer.learning_report <dir or learning_report.json> [--plot OUT.png]` prints the table again
(and draws the figure: `plot_report`, `learning_report.png` at the end of training).
"""
from __future__ import annotations

import json
import logging
import os
import sys
from typing import Sequence

from verl.agent_trainer.expert_probe import build_probe_section
from verl.agent_trainer.ppo.metric_utils import compute_outcome_change
from verl.utils.stats import bootstrap_mean_diff_ci, mcnemar_exact_p

__all__ = ["REPORT_FILE", "BEFORE_FILE", "SELECTION_FILE", "GOAL_SETS", "OUTCOME_KEYS", "build_report",
           "build_section", "compare_sections", "goal_set_selection", "write_report", "write_training_report",
           "keep_before", "load_kept_before", "load_report", "report_sections", "format_table", "REPORT_FIGURE",
           "plot_report", "draw_report_figure"]

logger = logging.getLogger(__name__)

REPORT_FILE = "learning_report.json"
REPORT_FIGURE = "learning_report.png"
BEFORE_FILE = "learning_report_before.json"  # the validation before training, kept for a resumed run
SELECTION_FILE = "selection.json"  # {item-id file name: how its goals were chosen}, beside the item-id files
GOAL_SETS = ("trained", "control")  # the goal sets of the training pool a report may hold, in table order
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


def compare_sections(trained: dict, control: dict, *, seed: int) -> dict:
    """The trained goals' change minus the control goals' change (success share and mean reward), with the
    percentile bootstrap CI of that difference, each goal set resampled on its own (`bootstrap_mean_diff_ci`).

    Returns:
        ``{"success_change", "success_change_ci95": [lo, hi], "mean_reward_change",
        "mean_reward_change_ci95": [lo, hi]}``.
    """
    out: dict = {}
    for key, name in (("success", "success_change"), ("reward", "mean_reward_change")):
        diffs = [[a - b for b, a in zip(sec["per_goal"][f"{key}_before"], sec["per_goal"][f"{key}_after"],
                                        strict=True)] for sec in (trained, control)]
        out[name] = float(sum(diffs[0]) / len(diffs[0]) - sum(diffs[1]) / len(diffs[1]))
        out[f"{name}_ci95"] = list(bootstrap_mean_diff_ci(*diffs, seed=seed))
    return out


def goal_set_selection(item_file: str) -> str | None:
    """How the goals of `item_file` were chosen: its entry in `selection.json` beside it, or None."""
    path = os.path.join(os.path.dirname(os.path.abspath(item_file)), SELECTION_FILE)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as fh:
        entry = json.load(fh).get(os.path.basename(item_file))
    return None if entry is None else str(entry["rule"] if isinstance(entry, dict) else entry)


def build_report(before: dict, after: dict, *, before_step: int, after_step: int, seconds: float, seed: int,
                 goal_sets: dict[str, tuple[dict, dict]] | None = None, goal_set_files: dict[str, str] | None = None,
                 **extra) -> dict:
    """The report dict from the greedy validation outcomes on the held-out goals (`before`, `after`) and on
    the goal sets of the training pool (`goal_sets`: {"trained" | "control": (before, after)}, read from
    `goal_set_files`: {name: item-id file}); see the module docstring.

    Raises:
        ValueError: as `build_section`, or a goal set not named in `GOAL_SETS`.
    """
    steps = dict(before_step=before_step, after_step=after_step, seed=seed)
    report = build_section(before, after, **steps)
    files = goal_set_files or {}
    for name, pair in (goal_sets or {}).items():
        if name not in GOAL_SETS:
            raise ValueError(f"learning report: unknown goal set {name!r}; one of {GOAL_SETS}")
        report[name] = build_section(*pair, **steps)
        if name in files:
            report[name].update(file=files[name], selection=goal_set_selection(files[name]))
    if all(name in report for name in GOAL_SETS):
        report["trained_minus_control"] = compare_sections(report["trained"], report["control"], seed=seed)
    return {**report, "seconds": float(seconds), "seed": int(seed), **extra}


def write_report(report: dict, directory: str) -> str:
    """Write `report` to `<directory>/learning_report.json`; returns the path."""
    path = os.path.join(directory, REPORT_FILE)
    _write_json(report, path)
    return path


def _write_json(obj: dict, path: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=1, default=float)
    os.replace(path + ".tmp", path)


def keep_before(directory: str, step: int, seconds: float, held_out: dict, goal_sets: dict[str, dict],
                probe: dict[str, list[float]]) -> str:
    """Keep the validation before training (held-out outcomes by mode, {goal set: {"before": outcome}}, the expert
    probe's {"before": per-goal values}; `seconds` it took) in `<directory>/learning_report_before.json`."""
    kept = {"step": int(step), "seconds": float(seconds), "held_out": held_out,
            "goal_sets": {name: {"before": runs["before"]} for name, runs in goal_sets.items()},
            "probe": {"before": probe["before"]} if "before" in probe else {}}
    path = os.path.join(directory, BEFORE_FILE)
    _write_json(kept, path)
    return path


def load_kept_before(directory: str, resumed_step: int) -> dict | None:
    """The validation `keep_before` kept in `directory`, or None (logged) when there is none."""
    path = os.path.join(directory, BEFORE_FILE)
    if not os.path.isfile(path):
        logger.warning("learning report: resumed at step %d but %s is missing; the report's 'before' is a "
                       "validation at the resumed step", resumed_step, path)
        return None
    with open(path, encoding="utf-8") as fh:
        kept = json.load(fh)
    logger.info("learning report: resumed at step %d; 'before' is the validation at step %d (%s)", resumed_step,
                kept["step"], path)
    return kept


def write_training_report(directory: str, before: dict, after: dict, goal_sets: dict[str, dict],
                          probe: dict[str, list[float]], *, probe_ids: Sequence[str], first_step: int, last_step: int,
                          seconds: float, seed: int, goal_set_files: dict[str, str], probe_file: str | None,
                          **extra) -> str:
    """Build the report of a training run (held-out greedy outcomes `before`/`after`, `goal_sets` = {name:
    {"before", "after"}}, the expert probe's {"before", "after"} per-goal values over `probe_ids`), write it to
    `<directory>/learning_report.json` and log its lines; returns the path. A goal set or probe without "after"
    (no step ran since) compares "before" with itself."""
    pairs = {name: (runs["before"], runs.get("after", runs["before"])) for name, runs in goal_sets.items()}
    if "before" in probe:
        extra["expert_probe"] = build_probe_section(probe_ids, probe["before"], probe.get("after", probe["before"]),
                                                    seed=seed, file=probe_file)
    report = build_report(before, after, before_step=first_step, after_step=last_step, seconds=seconds, seed=seed,
                          goal_sets=pairs, goal_set_files=goal_set_files, train_steps=last_step - first_step, **extra)
    path = write_report(report, directory)
    if "expert_probe" in report:
        p = report["expert_probe"]
        logger.info("learning report, expert probe: log-likelihood per expert token %.3f -> %.3f (paired change "
                    "95%% CI [%.3f, %.3f]) on %d held-out demos", p["before"], p["after"], *p["change_ci95"],
                    p["n_goals"])
    if "trained_minus_control" in report:
        d = report["trained_minus_control"]
        logger.info("learning report, trained minus control: greedy success change %+.3f (95%% CI [%.3f, %.3f])",
                    d["success_change"], *d["success_change_ci95"])
    for label, sec in report_sections(report):
        logger.info("learning report, %s goals: greedy success %.3f -> %.3f (paired change 95%% CI [%.3f, %.3f]; "
                    "%d gained / %d lost, exact McNemar p %.3g), mean reward %.3f -> %.3f on %d goals (%s)", label,
                    sec["before"]["success_rate"], sec["after"]["success_rate"], *sec["change_ci95"], sec["gained"],
                    sec["lost"], sec["mcnemar_p"], sec["before"]["mean_reward"], sec["after"]["mean_reward"],
                    sec["n_goals"], path)
    return path


def load_report(path: str) -> dict:
    """Read a report from its file or from the directory holding `learning_report.json`."""
    if os.path.isdir(path):
        path = os.path.join(path, REPORT_FILE)
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def report_sections(report: dict) -> list[tuple[str, dict]]:
    """[(label, section)] of a report: the held-out goals, then the trained and control goals when evaluated."""
    return [("held-out", report), *((name, report[name]) for name in GOAL_SETS if name in report)]


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
    if "trained_minus_control" in report:
        d = report["trained_minus_control"]
        lines.append(f"{'trained - control':<24}{d['success_change']:>+8.3f}  {_ci(d['success_change_ci95']):>18}  "
                     f"{d['mean_reward_change']:>+11.3f}  {_ci(d['mean_reward_change_ci95']):>18}  "
                     "(change minus change; goal sets resampled independently)")
    if "expert_probe" in report:
        p = report["expert_probe"]
        lines.append(f"expert probe ({p['n_goals']} held-out demos): log-likelihood per expert token "
                     f"{p['before']:.3f} -> {p['after']:.3f}, change {p['change']:+.3f} {_ci(p['change_ci95'])}")
    for name in GOAL_SETS:
        if report.get(name, {}).get("selection"):
            lines.append(f"{name} goals ({report[name]['file']}): {report[name]['selection']}")
    title = (f"learning report: greedy, {report.get('train_steps', '?')} training steps, {report['seconds']:.0f} s "
             f"(95% CIs: Wilson for success; bootstrap over goals, seed {report['seed']}, for mean reward and "
             f"for the paired change)")
    return "\n".join([title, *lines])


def plot_report(report: dict, path: str) -> str:
    """Bars of greedy success and mean reward before and after training for each goal set of a learning
    report (`verl.agent_trainer.learning_report`), with their 95% CIs as error bars and the change with its
    paired 95% CI written above each pair, and trained minus control (with its CI) in the title when the report
    has both. Returns `path`."""
    from matplotlib.figure import Figure

    sections = report_sections(report)
    fig = Figure(figsize=(3.2 + 2.2 * len(sections), 7.0), layout="constrained")
    axes = fig.subplots(2, 1)[:]
    for ax, (key, title, change_key) in zip(axes, (("success", "greedy success rate", "change_ci95"),
                                                  ("mean_reward", "greedy mean reward", "mean_reward_change_ci95")),
                                            strict=True):
        value = "success_rate" if key == "success" else key
        for offset, when, color in ((-0.2, "before", "tab:gray"), (0.2, "after", "tab:blue")):
            xs = [i + offset for i in range(len(sections))]
            ys = [sec[when][value] for _, sec in sections]
            cis = [sec[when][f"{key}_ci95"] for _, sec in sections]
            ax.bar(xs, ys, width=0.38, color=color, label=f"{when} (step {sections[0][1][when]['step']})",
                   yerr=[[y - lo for y, (lo, _) in zip(ys, cis, strict=True)],
                         [hi - y for y, (_, hi) in zip(ys, cis, strict=True)]], capsize=5)
        for i, (_, sec) in enumerate(sections):
            change = sec["after"][value] - sec["before"][value]
            ci = sec.get(change_key)
            text = f"{change:+.3f}" + (f"\n[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")
            top = max(sec[w][f"{key}_ci95"][1] for w in ("before", "after"))
            ax.annotate(text, (i, top), xytext=(0, 4), textcoords="offset points", ha="center", fontsize="small")
        ax.set_xticks(range(len(sections)), [f"{label} goals ({sec['n_goals']})" for label, sec in sections])
        ax.set_ylim(0.0, 1.25)
        ax.set_title(f"{title} (95% CI; above: change, paired 95% CI)", fontsize="medium")
        ax.legend(loc="upper left", fontsize="small")
        ax.grid(axis="y", alpha=0.3)
    if "trained_minus_control" in report:
        d = report["trained_minus_control"]
        fig.suptitle(f"trained minus control: success {d['success_change']:+.3f} "
                     f"[{d['success_change_ci95'][0]:+.3f}, {d['success_change_ci95'][1]:+.3f}], mean reward "
                     f"{d['mean_reward_change']:+.3f} [{d['mean_reward_change_ci95'][0]:+.3f}, "
                     f"{d['mean_reward_change_ci95'][1]:+.3f}]", fontsize="medium")
    fig.savefig(path, dpi=100)
    return path


def draw_report_figure(directory: str, out_dir: str) -> str | None:
    """`plot_report` of the report in `directory` as `<out_dir>/learning_report.png` (the trainer's, at the end of
    `fit()`); a failure only warns, with the command that redraws it. Returns the path, or None."""
    path = os.path.join(out_dir, REPORT_FIGURE)
    try:
        os.makedirs(out_dir, exist_ok=True)
        return plot_report(load_report(directory), path)
    except Exception as exc:  # noqa: BLE001 - training is done; the figure can be redrawn from the file
        logger.warning("learning report: drawing %s failed (%s: %s); retry with "
                       "`python -m verl.agent_trainer.learning_report %s --plot %s`", path, type(exc).__name__, exc,
                       directory, path)
        return None


def main(argv: Sequence[str] | None = None) -> None:
    """CLI: print the table of a written report (`--plot OUT.png`: and draw its figure there)."""
    args = list(sys.argv[1:] if argv is None else argv)
    plot = None
    if "--plot" in args:
        at = args.index("--plot")
        plot = args[at + 1] if at + 1 < len(args) else None
        del args[at:at + 2]
        if plot is None:
            sys.exit("--plot needs the PNG path to write")
    if len(args) != 1:
        sys.exit("usage: python -m verl.agent_trainer.learning_report <run dir | learning_report.json> "
                 "[--plot OUT.png]")
    report = load_report(args[0])
    print(format_table(report))
    if plot:
        print(plot_report(report, plot))


if __name__ == "__main__":
    main()
