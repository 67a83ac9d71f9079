"""PNG plots of a training run from the `file` logger's JSON lines (`<log_dir>/metrics.jsonl`) and its
learning report (`learning_report.json`).

    python -m verl.utils.plots <metrics.jsonl> <out_dir>

Writes one figure per topic whose metrics the run logged (a topic with none is skipped):

* `reward_success.png`  env/reward/mean and env/success_rate per training step, each with the 95% CI of the
                        step's mean over its goals (`*_ci95_lo`, `*_ci95_hi`; the band);
* `validation.png`      greedy success and mean reward of each goal set the run validated: held-out (val/*),
                        trained (val_trained/*), control (val_control/*), as points with their 95% CIs (each
                        validation is a measurement, not a curve: nothing joins them);
* `grpo_health.png`     the update's health per step: policy entropy (actor/entropy), KL to the reference
                        (actor/kl_loss, rollout/ref_kl), the share of groups whose samples all scored alike (no
                        gradient: critic/score/zero_variance_group_frac) and of invalid actions
                        (rollout/invalid_action_rate);
* `length_turns.png`    response_length/mean and env/num_turns/mean per step;
* `env_errors.png`      env/error_rate and env/needs_judge_rate per step.

The learning report draws its own figure (`learning_report.png`: `verl.agent_trainer.learning_report`, which owns
the report's files); this module knows nothing of it.

Per-step training curves are drawn faintly, with their trailing moving average over `MA_WINDOW` steps
(fewer at the start) on top: a step's value swings with the goals it drew, the average shows the trend.
The trainer calls `plot_metrics` at the end of `fit()` when `trainer.plots` is on and the `file`
logger writes metrics.jsonl. Rendering uses matplotlib's Agg canvas (no display, no pyplot state).
"""
from __future__ import annotations

import json
import logging
import math
import os
import sys
from typing import Sequence

logger = logging.getLogger(__name__)

__all__ = ["read_metrics", "plot_metrics", "plot_run", "moving_average", "FIGURES", "MA_WINDOW"]

MA_WINDOW = 5  # steps in the trailing moving average of per-step curves

# validation metric prefixes (the trainer's `val*/<mode>/...`) and the goal set each measures
VAL_SETS = (("val", "held-out goals"), ("val_trained", "trained goals"), ("val_control", "control goals"))


def _val_lines(value: str) -> list[tuple[str, str, tuple[str, str]]]:
    """The validation lines of one value (success_rate, mean_reward) for every goal set and mode, with their CIs."""
    ci = value.removesuffix("_rate")  # success_rate's CI is success_ci95_*
    return [(f"{prefix}/{mode}/{value}", f"{label}, {mode}",
             (f"{prefix}/{mode}/{ci}_ci95_lo", f"{prefix}/{mode}/{ci}_ci95_hi"))
            for prefix, label in VAL_SETS for mode in ("greedy", "sampled")]


# figure file -> panels; a panel is (title, lines) and a line is (metric, label, band): band names the
# (low, high) series drawn around the line (a shaded band from 30 points on, error bars below), or is None
FIGURES: dict[str, list[tuple[str, list[tuple[str, str, tuple[str, str] | None]]]]] = {
    "reward_success.png": [
        ("training reward (band: 95% CI of the mean over the step's goals)", [
            ("env/reward/mean", "env/reward/mean", ("env/reward/mean_ci95_lo", "env/reward/mean_ci95_hi"))]),
        ("training success rate (band: 95% CI over the step's goals)", [
            ("env/success_rate", "env/success_rate", ("env/success_rate_ci95_lo", "env/success_rate_ci95_hi"))]),
    ],
    "validation.png": [
        ("success rate per goal set (95% CI)", _val_lines("success_rate")),
        ("mean reward per goal set (95% CI)", _val_lines("mean_reward")),
    ],
    "grpo_health.png": [
        ("policy entropy (per token)", [("actor/entropy", "actor/entropy", None)]),
        ("KL to the reference policy", [("actor/kl_loss", "actor/kl_loss (the loss's estimator)", None),
                                        ("rollout/ref_kl", "rollout/ref_kl (mean log-ratio)", None)]),
        ("groups with no gradient (all samples scored alike)", [
            ("critic/score/zero_variance_group_frac", "zero-variance group share", None)]),
        ("invalid actions (share of actions)", [("rollout/invalid_action_rate", "rollout/invalid_action_rate", None)]),
    ],
    "length_turns.png": [
        ("response length (tokens)", [("response_length/mean", "response_length/mean", None)]),
        ("turns per trajectory", [("env/num_turns/mean", "env/num_turns/mean", None)]),
    ],
    "env_errors.png": [
        ("env error rate", [("env/error_rate", "env/error_rate", None)]),
        ("needs an LLM judge (share, left out of the update)", [
            ("env/needs_judge_rate", "env/needs_judge_rate", None)]),
    ],
}


def read_metrics(path: str) -> dict[str, dict[int, float]]:
    """`{metric: {step: value}}` from a metrics.jsonl (finite numbers only; a later line for the same
    step wins, as after a resume).

    Raises:
        FileNotFoundError: no file at `path`.
        ValueError: a line is not a JSON object with a `step`.
    """
    series: dict[str, dict[int, float]] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                step = int(row["step"])
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{lineno}: not a metrics line with a 'step' ({exc})") from exc
            for key, value in row.items():
                if key in ("step", "time") or isinstance(value, bool) or not isinstance(value, (int, float)):
                    continue
                if math.isfinite(value):
                    series.setdefault(key, {})[step] = float(value)
    return series


def moving_average(values: Sequence[float], window: int = MA_WINDOW) -> list[float]:
    """Trailing moving average: entry i is the mean of values[max(0, i - window + 1) : i + 1]."""
    if window < 1:
        raise ValueError(f"moving_average: window must be >= 1, got {window}")
    out, total = [], 0.0
    for i, value in enumerate(values):
        total += value
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def _is_per_step(metric: str) -> bool:
    """Training metrics (one value a step) get a moving average; validation points do not."""
    return not metric.startswith(tuple(f"{prefix}/" for prefix, _ in VAL_SETS))


def _draw(path: str, panels, series: dict[str, dict[int, float]]):
    """Draw `panels` of `series` into `path`; returns the figure (its axes hold what was drawn), or None when
    the run logged none of the panels' metrics."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    present = [(title, [line for line in lines if series.get(line[0])]) for title, lines in panels]
    present = [p for p in present if p[1]]
    if not present:
        return None
    fig = Figure(figsize=(6.4, 3.2 * len(present)), layout="constrained")
    axes = fig.subplots(len(present), 1, squeeze=False)[:, 0]
    for ax, (title, lines) in zip(axes, present, strict=True):
        points = [line[0] for line in lines if not _is_per_step(line[0])]
        for metric, label, band in lines:
            steps = sorted(series[metric])
            values = [series[metric][s] for s in steps]
            per_step = _is_per_step(metric)
            # measurements (validation) side by side: a small x offset per goal set, markers only
            shift = 0.0 if per_step else 0.08 * (points.index(metric) - (len(points) - 1) / 2)
            xs = [s + shift for s in steps]
            smooth = per_step and len(steps) > 2
            drawn, = ax.plot(xs, values, marker="o" if len(steps) < 30 or not per_step else None,
                             markersize=3 if smooth else 6, alpha=0.35 if smooth else 1.0,
                             linestyle="-" if per_step else "none", label=f"{label} (per step)" if smooth else label)
            if smooth:
                ax.plot(xs, moving_average(values), color=drawn.get_color(), linewidth=2.2,
                        label=f"{label} (mean of last {MA_WINDOW} steps)")
            if band is not None:
                lo, hi = series.get(band[0], {}), series.get(band[1], {})
                both = [s for s in steps if s in lo and s in hi]
                if len(both) >= 30:
                    ax.fill_between(both, [lo[s] for s in both], [hi[s] for s in both], alpha=0.2,
                                    color=drawn.get_color())
                elif both:  # fewer points: error bars
                    ys = [series[metric][s] for s in both]
                    ax.errorbar([s + shift for s in both], ys,
                                yerr=[[y - lo[s] for y, s in zip(ys, both, strict=True)],
                                      [hi[s] - y for y, s in zip(ys, both, strict=True)]],
                                fmt="none", capsize=4, color=drawn.get_color(), alpha=0.3 if smooth else 0.7)
        ax.set_title(title)
        ax.set_xlabel("training step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        if len(ax.get_legend_handles_labels()[0]) > 1:
            ax.legend(fontsize="small")
    fig.savefig(path, dpi=100)
    return fig


def plot_metrics(metrics_path: str, out_dir: str) -> list[str]:
    """Write the PNGs of `FIGURES` for the metrics in `metrics_path` into `out_dir`; returns their paths.

    Raises:
        FileNotFoundError: `metrics_path` names no file.
    """
    series = read_metrics(metrics_path)
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, panels in FIGURES.items():
        path = os.path.join(out_dir, name)
        if _draw(path, panels, series) is not None:
            written.append(path)
    return written


def plot_run(log_dir: str) -> list[str]:
    """The trainer's plots at the end of `fit()`: `plot_metrics` of `<log_dir>/metrics.jsonl` into
    `<log_dir>/plots`. Training is done by then: a failure only warns, with the command that redraws them."""
    metrics_path, out_dir = os.path.join(log_dir, "metrics.jsonl"), os.path.join(log_dir, "plots")
    try:
        paths = plot_metrics(metrics_path, out_dir)
    except Exception as exc:  # noqa: BLE001 - training is done; plots can be redrawn from the files
        logger.warning("trainer.plots: plotting %s failed (%s: %s); retry with `python -m verl.utils.plots %s %s`",
                       metrics_path, type(exc).__name__, exc, metrics_path, out_dir)
        return []
    logger.info("plots: %s", ", ".join(paths))
    return paths


def main(argv: Sequence[str] | None = None) -> None:
    """CLI: `python -m verl.utils.plots <metrics.jsonl> <out_dir>`; prints the files written."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        sys.exit("usage: python -m verl.utils.plots <metrics.jsonl> <out_dir>")
    paths = plot_metrics(*args)
    if not paths:
        sys.exit(f"{args[0]} holds none of the plotted metrics ({', '.join(FIGURES)})")
    print("\n".join(paths))


if __name__ == "__main__":
    main()
