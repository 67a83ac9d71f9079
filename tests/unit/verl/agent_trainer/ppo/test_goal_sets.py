"""The learning report's control goals must be goals training never visits: the trainer refuses a control file that
shares goals with the training data or with the trained goals, naming them."""
from __future__ import annotations

import json

import pytest
from omegaconf import OmegaConf

from verl.agent_trainer.config.schema import default_config_path, load_config
from verl.agent_trainer.ppo.ray_trainer import _check_control_untrained
from verl.utils.dataset import AgentDataset


def _file(tmp_path, name: str, goals: list[int]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps([{"item_id": f"webshop_{g}"} for g in goals]))
    return str(path)


def _check(tmp_path, train: list[int], trained: list[int], control: list[int]) -> None:
    files = {"train": _file(tmp_path, "train.json", train), "trained": _file(tmp_path, "trained.json", trained),
             "control": _file(tmp_path, "control.json", control)}
    cfg = load_config(OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist([
        "trainer.learning_report=True", f"data.train_file={files['train']}",
        f"data.trained_val_file={files['trained']}", f"data.control_val_file={files['control']}"])), resolve_auto=False)
    goal_sets = {name: AgentDataset(path) for name, path in cfg.data.goal_set_files.items()}
    _check_control_untrained(goal_sets, AgentDataset(cfg.data.train_paths), cfg.data)


def test_disjoint_control_goals_pass(tmp_path):
    _check(tmp_path, train=[1, 2, 3], trained=[1, 2, 3], control=[7, 8])


@pytest.mark.parametrize("train, trained, what", [([1, 2, 8], [1, 2], "training data"),
                                                  ([1, 2], [1, 2, 7], "trained goals")])
def test_control_goals_that_training_visits_are_refused(tmp_path, train, trained, what):
    with pytest.raises(ValueError, match=rf"shares 1 goals with the {what}.*webshop_[78]"):
        _check(tmp_path, train=train, trained=trained, control=[7, 8])
