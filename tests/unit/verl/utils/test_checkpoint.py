import random

import numpy as np
import pytest
import torch

from verl.utils.checkpoint import LATEST_FILE, CheckpointManager, save_atomic


def test_latest_and_resume_logic(tmp_path):
    mgr = CheckpointManager(str(tmp_path / "ckpt"), max_to_keep=2)
    assert mgr.latest_step() is None and mgr.resolve_resume("auto") is None
    for step in (1, 2, 3):
        mgr.save_trainer_state(step, {"sampler": {"position": step}})
    assert mgr.saved_steps() == [2, 3]  # rotated
    assert (tmp_path / "ckpt" / LATEST_FILE).read_text() == "3"
    assert mgr.resolve_resume("auto") == mgr.step_dir(3)
    assert mgr.resolve_resume("disable") is None
    assert mgr.resolve_resume("resume_path", mgr.step_dir(2)) == mgr.step_dir(2)
    with pytest.raises(FileNotFoundError):
        mgr.resolve_resume("resume_path", str(tmp_path / "ckpt" / "global_step_9"))
    # a step dir without trainer state (crash mid-save) is not "latest"
    (tmp_path / "ckpt" / "global_step_4" / "actor").mkdir(parents=True)
    (tmp_path / "ckpt" / LATEST_FILE).write_text("4")
    assert mgr.latest_step() == 3


def test_trainer_state_restores_rng(tmp_path):
    mgr = CheckpointManager(str(tmp_path))
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    mgr.save_trainer_state(5, {"pos": 1}, extra={"note": "x"})
    expected = (random.random(), np.random.rand(), torch.rand(1).item())
    state = mgr.load_trainer_state(mgr.step_dir(5))
    assert state["global_step"] == 5 and state["dataloader"] == {"pos": 1} and state["note"] == "x"
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == expected
    assert CheckpointManager.step_of(mgr.step_dir(5)) == 5


def test_to_cpu_moves_nested_tensors_and_keeps_the_rest():
    from verl.utils.checkpoint import to_cpu

    t = torch.ones(2, requires_grad=True)
    out = to_cpu({"a": [t, (t, 3)], "b": "x", "c": None})
    assert out["b"] == "x" and out["c"] is None and out["a"][1][1] == 3
    assert isinstance(out["a"], list) and isinstance(out["a"][1], tuple)
    assert all(x.device.type == "cpu" and not x.requires_grad for x in (out["a"][0], out["a"][1][0]))


class _FailsToPickle:
    def __reduce__(self):
        raise RuntimeError("disk full, say")


def test_save_atomic_replaces_whole_and_keeps_the_old_file_on_failure(tmp_path):
    path = str(tmp_path / "model.pt")
    save_atomic({"w": torch.ones(3)}, path)
    save_atomic({"w": torch.zeros(3)}, path)
    assert torch.equal(torch.load(path)["w"], torch.zeros(3))
    with pytest.raises(RuntimeError, match="disk full"):  # the write fails half-way
        save_atomic({"w": torch.ones(3), "bad": _FailsToPickle()}, path)
    assert torch.equal(torch.load(path)["w"], torch.zeros(3))  # the previous checkpoint is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pt"]  # and no temporary file is left
