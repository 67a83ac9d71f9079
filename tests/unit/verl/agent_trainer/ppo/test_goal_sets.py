"""The learning report's control goals must be goals training never visits: a control file that shares goals with
the training data or with the trained goals is no control, and the trainer leaves it out with a warning naming
them."""
from __future__ import annotations

import json

import pytest
from omegaconf import OmegaConf

from verl.agent_trainer.ppo.ray_trainer import _goal_sets
from verl.config.schema import default_config_path, load_config
from verl.utils.dataset import AgentDataset


def _file(tmp_path, name: str, goals: list[int]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps([{"item_id": f"webshop_{g}"} for g in goals]))
    return str(path)


def _sets(tmp_path, train: list[int], trained: list[int], control: list[int]) -> dict:
    files = {"train": _file(tmp_path, "train.json", train), "trained": _file(tmp_path, "trained.json", trained),
             "control": _file(tmp_path, "control.json", control)}
    cfg = load_config(OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist([
        "trainer.learning_report=True", f"data.train_file={files['train']}",
        f"data.trained_val_file={files['trained']}", f"data.control_val_file={files['control']}"])), resolve_auto=False)
    return _goal_sets(cfg, AgentDataset(cfg.data.train_paths))


def test_disjoint_control_goals_are_kept(tmp_path):
    sets = _sets(tmp_path, train=[1, 2, 3], trained=[1, 2, 3], control=[7, 8])
    assert sorted(sets) == ["control", "trained"] and len(sets["control"]) == 2


@pytest.mark.parametrize("train, trained, what", [([1, 2, 8], [1, 2], "training data"),
                                                  ([1, 2], [1, 2, 7], "trained goals")])
def test_control_goals_that_training_visits_are_left_out(tmp_path, caplog, train, trained, what):
    with caplog.at_level("WARNING", logger="verl.agent_trainer.ppo.ray_trainer"):
        sets = _sets(tmp_path, train=train, trained=trained, control=[7, 8])
    assert sorted(sets) == ["trained"]
    assert f"shares 1 goals with the {what}" in caplog.text and "no control" in caplog.text
