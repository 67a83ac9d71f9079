"""verl.utils.plots on a real metrics file (tests/data/metrics_webshop_grpo_cpu.jsonl: the file logger's
output of `bash scripts/webshop_train.sh` with the tiny model: a step-0 validation line, 4 GRPO steps,
the learning report's final validation)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from verl.utils.plots import FIGURES, plot_metrics, read_metrics

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
