import json
import os

import pytest

from verl.utils.tracking import Tracking


def test_file_and_tensorboard_backends_write(tmp_path):
    tr = Tracking("proj", "exp", default_backend=["console", "file", "tensorboard"], config={"a": 1},
                  log_dir=str(tmp_path))
    tr.log({"actor/pg_loss": 0.5, "timing_s/step": 1.25}, step=1)
    tr.log({"actor/pg_loss": float("nan")}, step=2)
    tr.finish()
    lines = [json.loads(line) for line in open(tmp_path / "metrics.jsonl")]
    assert [line["step"] for line in lines] == [1, 2]
    assert lines[0]["actor/pg_loss"] == 0.5 and lines[0]["timing_s/step"] == 1.25
    assert lines[1]["actor/pg_loss"] == "nan"
    events = [f for f in os.listdir(tmp_path / "tensorboard") if f.startswith("events.out")]
    assert events
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(tmp_path / "tensorboard"))
    acc.Reload()
    assert [e.value for e in acc.Scalars("timing_s/step")] == [1.25]
    assert json.load(open(tmp_path / "config.json")) == {"a": 1}


def test_unknown_backend_lists_choices(tmp_path):
    with pytest.raises(ValueError, match="mlflow.*console"):
        Tracking("p", "e", default_backend=["mlflow"], log_dir=str(tmp_path))


def test_wandb_offline_writes_a_run(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    tr = Tracking("proj", "exp", default_backend=["wandb"], config={"lr": 1e-6}, log_dir=str(tmp_path))
    for step in range(3):
        tr.log({"actor/pg_loss": 0.1 * step}, step=step)
    tr.finish()
    runs = list((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))
    assert runs and runs[0].stat().st_size > 0
