"""PNG plots of a training run from the `file` logger's JSON lines (`<log_dir>/metrics.jsonl`).

    python -m verl.utils.plots <metrics.jsonl> <out_dir>

Writes one figure per topic whose metrics the run logged (a topic with none is skipped):

* `reward_success.png`  env/reward/mean (band: min..max) and env/success_rate per training step;
* `validation.png`      val/<mode>/success_rate and val/<mode>/mean_reward (error bars: their 95% CIs);
* `length_turns.png`    response_length/mean and env/num_turns/mean per step;
* `env_errors.png`      env/error_rate and env/needs_judge_rate per step.

The trainer calls `plot_metrics` at the end of `fit()` when `trainer.plots` is on and the `file`
logger writes metrics.jsonl. Rendering uses matplotlib's Agg canvas (no display, no pyplot state).
"""
from __future__ import annotations

import json
import math
import os
import sys
from typing import Sequence

__all__ = ["read_metrics", "plot_metrics", "FIGURES"]

# figure file -> panels; a panel is (title, lines) and a line is (metric, label, band): band names the
# (low, high) series drawn around the line (a shaded band from 30 points on, error bars below), or is None
FIGURES: dict[str, list[tuple[str, list[tuple[str, str, tuple[str, str] | None]]]]] = {
    "reward_success.png": [
        ("training reward (band: min..max)", [("env/reward/mean", "env/reward/mean",
                                               ("env/reward/min", "env/reward/max"))]),
        ("training success rate", [("env/success_rate", "env/success_rate", None)]),
    ],
    "validation.png": [
        ("validation success rate (95% CI)", [
            (f"val/{mode}/success_rate", mode, (f"val/{mode}/success_ci95_lo", f"val/{mode}/success_ci95_hi"))
            for mode in ("greedy", "sampled")]),
        ("validation mean reward (95% CI)", [
            (f"val/{mode}/mean_reward", mode, (f"val/{mode}/mean_reward_ci95_lo", f"val/{mode}/mean_reward_ci95_hi"))
            for mode in ("greedy", "sampled")]),
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


def _draw(path: str, panels, series: dict[str, dict[int, float]]) -> bool:
    from matplotlib.figure import Figure

    present = [(title, [line for line in lines if series.get(line[0])]) for title, lines in panels]
    present = [p for p in present if p[1]]
    if not present:
        return False
    fig = Figure(figsize=(6.4, 3.2 * len(present)), layout="constrained")
    axes = fig.subplots(len(present), 1, squeeze=False)[:, 0]
    for ax, (title, lines) in zip(axes, present, strict=True):
        for metric, label, band in lines:
            steps = sorted(series[metric])
            drawn, = ax.plot(steps, [series[metric][s] for s in steps], marker="o" if len(steps) < 30 else None,
                             label=label)
            if band is not None:
                lo, hi = series.get(band[0], {}), series.get(band[1], {})
                both = [s for s in steps if s in lo and s in hi]
                if len(both) >= 30:
                    ax.fill_between(both, [lo[s] for s in both], [hi[s] for s in both], alpha=0.2,
                                    color=drawn.get_color())
                elif both:  # sparse points (validation): error bars
                    ys = [series[metric][s] for s in both]
                    ax.errorbar(both, ys, yerr=[[y - lo[s] for y, s in zip(ys, both, strict=True)],
                                                [hi[s] - y for y, s in zip(ys, both, strict=True)]],
                                fmt="none", capsize=4, color=drawn.get_color(), alpha=0.7)
        ax.set_title(title)
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3)
        if len(lines) > 1:
            ax.legend()
    fig.savefig(path, dpi=100)
    return True


def plot_metrics(metrics_path: str, out_dir: str) -> list[str]:
    """Write the PNGs of `FIGURES` for the metrics in `metrics_path` into `out_dir`; returns their paths."""
    series = read_metrics(metrics_path)
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, panels in FIGURES.items():
        path = os.path.join(out_dir, name)
        if _draw(path, panels, series):
            written.append(path)
    return written


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
