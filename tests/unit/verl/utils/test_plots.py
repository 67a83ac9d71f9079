"""verl.utils.plots on a real metrics file (tests/data/metrics_webshop_grpo_cpu.jsonl: the file logger's
output of `bash scripts/webshop_train.sh` with the tiny model: a step-0 validation line, 4 GRPO steps,
the learning report's final validation), and what the figures show on a run with distinct values: each figure is
read back as matplotlib drew it, just before it is saved (titles, labels, each line's points, error bars)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from verl.agent_trainer.learning_report import plot_report
from verl.utils.plots import FIGURES, MA_WINDOW, moving_average, plot_metrics, read_metrics

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "data", "metrics_webshop_grpo_cpu.jsonl")
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_read_metrics_keeps_numbers_by_step():
    series = read_metrics(DATA)
    assert sorted(series["env/reward/mean"]) == [1, 2, 3, 4]
    assert sorted(series["val/greedy/success_rate"]) == [0, 4]          # before training and after the last step
    assert series["val/greedy/success_ci95_hi"][0] == pytest.approx(0.0188453, abs=1e-6)  # Wilson 0/200
    assert "time" not in series and "step" not in series


def test_plot_metrics_writes_every_figure(tmp_path):
    paths = plot_metrics(DATA, str(tmp_path / "plots"))
    assert sorted(os.path.basename(p) for p in paths) == sorted(FIGURES)
    for path in paths:
        with open(path, "rb") as fh:
            head = fh.read(8)
        assert head == PNG_MAGIC and os.path.getsize(path) > 5000, path


def test_figures_without_data_are_skipped_and_bad_lines_are_named(tmp_path):
    only_errors = tmp_path / "m.jsonl"
    only_errors.write_text("\n".join(json.dumps({"step": s, "time": 0.0, "env/error_rate": e, "note": "x"})
                                     for s, e in ((1, 0.0), (2, 0.5), (2, 0.25))) + "\n")
    assert read_metrics(str(only_errors))["env/error_rate"] == {1: 0.0, 2: 0.25}  # a later line for a step wins
    paths = plot_metrics(str(only_errors), str(tmp_path / "out"))
    assert [os.path.basename(p) for p in paths] == ["env_errors.png"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"step": 1, "x": 1}\n{"x": 2}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2"):
        read_metrics(str(bad))


def test_cli(tmp_path):
    env = {**os.environ, "PYTHONPATH": ROOT}
    proc = subprocess.run([sys.executable, "-m", "verl.utils.plots", DATA, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.path.basename(line) for line in proc.stdout.split()) == sorted(FIGURES)
    usage = subprocess.run([sys.executable, "-m", "verl.utils.plots", DATA], capture_output=True, text=True,
                           timeout=60, env=env)
    assert usage.returncode != 0 and "usage" in usage.stderr


def test_validation_points_are_points_per_goal_set_with_their_cis(tmp_path):
    """Greedy validation of held-out, trained and control goals at steps 0 and 4: one marker series per goal set,
    named by it, with no line joining a set's two measurements, side by side around each step, each with error
    bars (its 95% CI)."""
    from verl.utils.plots import _draw

    rows = []
    for step, (held, trained, control) in ((0, (0.5, 0.25, 0.3)), (4, (0.52, 0.75, 0.4))):
        row = {"step": step}
        for prefix, value in (("val", held), ("val_trained", trained), ("val_control", control)):
            row.update({f"{prefix}/greedy/success_rate": value, f"{prefix}/greedy/success_ci95_lo": value - 0.1,
                        f"{prefix}/greedy/success_ci95_hi": value + 0.1})
        rows.append(row)
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    fig = _draw(str(tmp_path / "validation.png"), FIGURES["validation.png"], read_metrics(str(path)))
    ax = fig.axes[0]  # the mean-reward panel has no data and is left out
    assert len(fig.axes) == 1 and ax.get_title() == "success rate per goal set (95% CI)"
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert sorted(lines) == ["control goals, greedy", "held-out goals, greedy", "trained goals, greedy"]
    assert all(line.get_linestyle() == "None" and line.get_marker() == "o" for line in lines.values())
    assert list(lines["trained goals, greedy"].get_ydata()) == [0.25, 0.75]
    xs = {label: list(line.get_xdata()) for label, line in lines.items()}
    assert xs["held-out goals, greedy"][0] < xs["trained goals, greedy"][0] < xs["control goals, greedy"][0]
    assert all(abs(x[0]) < 0.2 and abs(x[1] - 4) < 0.2 for x in xs.values())
    assert len(ax.collections) == 3  # one set of error bars per goal set


def test_grpo_health_plots_entropy_kl_zero_variance_and_invalid_actions(tmp_path):
    from verl.utils.plots import _draw

    fig = _draw(str(tmp_path / "h.png"), FIGURES["grpo_health.png"], read_metrics(DATA))
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[:3] == ["policy entropy (per token)", "KL to the reference policy",
                          "groups with no gradient (all samples scored alike)"]
    kl = {line.get_label() for line in fig.axes[1].get_lines()}
    assert {"actor/kl_loss (the loss's estimator) (per step)", "rollout/ref_kl (mean log-ratio) (per step)"} <= kl
    entropy = [line for line in fig.axes[0].get_lines() if line.get_label().endswith("(per step)")][0]
    assert list(entropy.get_ydata()) == [read_metrics(DATA)["actor/entropy"][s] for s in (1, 2, 3, 4)]


@pytest.fixture
def drawn(monkeypatch) -> dict:
    """{file name: the matplotlib Figure} of every figure saved while the test runs (read before it is saved)."""
    from matplotlib.figure import Figure

    figures, save = {}, Figure.savefig

    def recording_savefig(fig, path, *args, **kwargs):
        figures[os.path.basename(str(path))] = fig
        return save(fig, path, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", recording_savefig)
    return figures


def _axes(fig) -> dict:
    return {ax.get_title(): ax for ax in fig.axes if ax.get_title()}


def _lines(ax) -> dict:
    """{label: (xs, ys)} of an axes' labelled lines."""
    return {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.get_lines()
            if not line.get_label().startswith("_")}


REWARD = [0.1, 0.4, 0.2, 0.5, 0.3, 0.7]


def _run_metrics(path) -> None:
    rows = [{"step": 0, "val/greedy/success_rate": 0.25, "val/greedy/success_ci95_lo": 0.1,
             "val/greedy/success_ci95_hi": 0.45, "val_trained/greedy/success_rate": 0.5}]
    for step, reward in enumerate(REWARD, start=1):
        rows.append({"step": step, "env/reward/mean": reward, "env/reward/mean_ci95_lo": reward - 0.1,
                     "env/reward/mean_ci95_hi": reward + 0.2, "env/success_rate": reward / 2})
    rows.append({"step": 6, "val/greedy/success_rate": 0.5, "val/greedy/success_ci95_lo": 0.3,
                 "val/greedy/success_ci95_hi": 0.7, "val_trained/greedy/success_rate": 0.75})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_figures_show_the_run_curves_their_moving_average_and_validation_points(tmp_path, drawn):
    metrics = tmp_path / "metrics.jsonl"
    _run_metrics(metrics)
    plot_metrics(str(metrics), str(tmp_path / "plots"))
    steps = list(range(1, len(REWARD) + 1))

    training = _axes(drawn["reward_success.png"])
    reward = training["training reward (band: 95% CI of the mean over the step's goals)"]
    lines = _lines(reward)
    assert lines["env/reward/mean (per step)"] == (steps, REWARD)
    assert lines[f"env/reward/mean (mean of last {MA_WINDOW} steps)"] == (steps, moving_average(REWARD))
    assert reward.get_xlabel() == "training step"
    assert [t.get_text() for t in reward.get_legend().get_texts()] == list(lines)
    # the CI band of 6 points: error bars from its low to its high end at every step
    (bars,) = [c for c in reward.collections if len(c.get_segments()) == len(steps)]
    assert [y for seg in bars.get_segments() for y in (seg[0][1], seg[1][1])] == pytest.approx(
        [y for r in REWARD for y in (r - 0.1, r + 0.2)])
    success = _lines(training["training success rate (band: 95% CI over the step's goals)"])
    assert success["env/success_rate (per step)"][1] == pytest.approx([r / 2 for r in REWARD])

    validation = _lines(_axes(drawn["validation.png"])["success rate per goal set (95% CI)"])
    # before and after, no moving average; the two goal sets side by side around each step
    assert validation["held-out goals, greedy"] == (pytest.approx([-0.04, 5.96]), [0.25, 0.5])
    assert validation["trained goals, greedy"] == (pytest.approx([0.04, 6.04]), [0.5, 0.75])
    assert "held-out goals, sampled" not in validation  # not logged, not drawn
    assert "length_turns.png" not in drawn and "env_errors.png" not in drawn  # topics the run did not log


def test_learning_report_figure_shows_before_and_after_per_goal_set(tmp_path, drawn):
    half = {"success_ci95": [0.1, 0.5], "mean_reward_ci95": [0.2, 0.6], "step": 0}
    before, after = {**half, "success_rate": 0.25, "mean_reward": 0.4}, {**half, "success_rate": 0.5,
                                                                        "mean_reward": 0.55, "step": 12}
    section = {"n_goals": 8, "before": before, "after": after, "change_ci95": [0.0, 0.5]}
    report = {**section, "trained": {**section, "n_goals": 32, "before": {**before, "success_rate": 0.125}}}
    plot_report(report, str(tmp_path / "report.png"))
    axes = _axes(drawn["report.png"])
    success = next(ax for title, ax in axes.items() if title.startswith("greedy success rate"))
    assert [t.get_text() for t in success.get_xticklabels()] == ["held-out goals (8)", "trained goals (32)"]
    heights = sorted((round(p.get_x() + p.get_width() / 2, 2), p.get_height()) for p in success.patches)
    assert heights == [(-0.2, 0.25), (0.2, 0.5), (0.8, 0.125), (1.2, 0.5)]  # before, after of each goal set
    assert [t.get_text() for t in success.get_legend().get_texts()] == ["before (step 0)", "after (step 12)"]
