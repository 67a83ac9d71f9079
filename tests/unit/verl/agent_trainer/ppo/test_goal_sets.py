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


def test_goal_sets_validated_in_one_rollout_get_their_own_goals_back(tmp_path):
    """`_validate_sets` rolls several goal sets out together, in batches of data.val_batch_size rows that cross the
    sets' boundaries, and gives each set the outcome of exactly its goals (a stub engine: goal g succeeds when g is
    even, with reward g / 100)."""

    import numpy as np

    from verl.agent_trainer.ppo.ray_trainer import RayPPOTrainer
    from verl.protocol import DataProto

    datasets = [AgentDataset([_file(tmp_path, f"set{k}.json", goals)])
                for k, goals in enumerate(([1, 2, 3, 4, 5], [10, 11, 12], [20, 22, 23, 25]))]
    cfg = load_config(OmegaConf.merge(OmegaConf.load(default_config_path()),
                                      OmegaConf.from_dotlist(["data.val_batch_size=4"])), resolve_auto=False)
    trainer = RayPPOTrainer.__new__(RayPPOTrainer)
    trainer.config, trainer.global_steps = cfg, 0
    batches = []

    def generate(batch, first_row=0):
        batches.append(len(batch))
        goals = [int(str(item).split("_")[1]) for item in batch.non_tensor_batch["item_id"]]
        return DataProto.from_dict(non_tensors={
            "rollout_row": np.arange(first_row, first_row + len(batch)),
            "reward": np.array([g / 100 for g in goals], dtype=object),
            "success": np.array([g % 2 == 0 for g in goals], dtype=object),
            "num_turns": np.array([2] * len(goals), dtype=object)})

    trainer._generate = generate
    trainer._score = lambda out, metrics: out
    outcomes = RayPPOTrainer._validate_sets(trainer, datasets)
    assert batches == [4, 4, 4]  # 12 goals in batches of 4: two of them hold goals of two sets
    for dataset, outcome in zip(datasets, outcomes, strict=True):
        greedy = outcome["greedy"]
        ids = [dataset[i]["item_id"] for i in range(len(dataset))]
        goals = [int(i.split("_")[1]) for i in ids]
        assert greedy["per_item"]["ids"] == ids
        assert greedy["success_rate"] == pytest.approx(sum(g % 2 == 0 for g in goals) / len(goals))
        assert greedy["mean_reward"] == pytest.approx(sum(goals) / 100 / len(goals))
