"""scripts/make_item_ids.py --subset: the CPU main job's fixed training goals are a reproducible, seeded sample of
the train split (AgentItemId/webshop_train_cpu32.json is `--subset 32 --subset-seed 0`)."""
from __future__ import annotations

import importlib.util
import json
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _module():
    spec = importlib.util.spec_from_file_location("make_item_ids", os.path.join(ROOT, "scripts", "make_item_ids.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ids(name: str) -> list[str]:
    with open(os.path.join(ROOT, "AgentItemId", name), encoding="utf-8") as fh:
        return [row["item_id"] for row in json.load(fh)]


def test_shipped_subset_is_the_seeded_sample_of_the_train_split(tmp_path):
    make_item_ids = _module()
    train, shipped = _ids("webshop_train.json"), _ids("webshop_train_cpu32.json")
    assert shipped == make_item_ids.sample_subset(train, 32, 0)
    assert len(set(shipped)) == 32 and set(shipped) <= set(train) and not set(shipped) & set(_ids("webshop_test.json"))
    assert shipped == [i for i in train if i in set(shipped)]  # in the split's order
    assert make_item_ids.sample_subset(train, 32, 1) != shipped

    out = tmp_path / "ids"
    out.mkdir()
    (out / "webshop_train.json").write_text(json.dumps([{"item_id": i} for i in train]))
    make_item_ids.main(["--subset", "32", "--out", str(out)])
    assert (out / "webshop_train_cpu32.json").read_text() == open(
        os.path.join(ROOT, "AgentItemId", "webshop_train_cpu32.json"), encoding="utf-8").read()
    with pytest.raises(ValueError, match="--subset"):
        make_item_ids.sample_subset(train[:3], 4, 0)


def _trajectories(path, outcomes: dict[str, list[float]]) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        for item, rewards in outcomes.items():
            for k, reward in enumerate(rewards):
                fh.write(json.dumps({"item_id": item, "sample": k, "reward": reward, "turns": 3}) + "\n")
    return str(path)


def test_learnable_goals_are_those_solved_sometimes_but_not_always(tmp_path):
    make_item_ids = _module()
    first = _trajectories(tmp_path / "a.jsonl", {
        "webshop_1": [1.0, 0.0, 1.0],      # mixed -> learnable
        "webshop_2": [1.0, 1.0, 1.0],      # always solved -> no gradient
        "webshop_3": [0.5, 0.75, 0.0],     # partial credit is no success -> never solved
        "webshop_4": [1.0],                # one sample (with the second file: 1 of 2)
    })
    second = _trajectories(tmp_path / "b.jsonl", {"webshop_4": [0.9], "webshop_5": [1.0]})
    assert make_item_ids.learnable_ids([first, second]) == {"webshop_1": (2, 3), "webshop_4": (1, 2)}
    assert make_item_ids.learnable_ids([first]) == {"webshop_1": (2, 3)}  # webshop_4: one sample only

    (tmp_path / "bad.jsonl").write_text('{"item_id": "webshop_1"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: .*reward"):
        make_item_ids.learnable_ids([str(tmp_path / "bad.jsonl")])


def test_learnable_subset_draws_only_learnable_training_goals(tmp_path):
    make_item_ids = _module()
    train = [f"webshop_{i}" for i in range(10)]
    (tmp_path / "webshop_train.json").write_text(json.dumps([{"item_id": i} for i in train]))
    outcomes = {f"webshop_{i}": [1.0, 0.0] if i % 2 else [1.0, 1.0] for i in range(10)}
    outcomes["webshop_77"] = [1.0, 0.0]  # learnable, but not a training goal
    traj = _trajectories(tmp_path / "t.jsonl", outcomes)
    make_item_ids.main(["--subset", "3", "--subset-seed", "4", "--out", str(tmp_path), "--learnable-from", traj])
    written = [row["item_id"] for row in json.loads((tmp_path / "webshop_train_learnable3.json").read_text())]
    odd = [f"webshop_{i}" for i in range(1, 10, 2)]
    assert written == make_item_ids.sample_subset(odd, 3, 4)
    assert len(written) == 3 and set(written) <= set(odd)
    with pytest.raises(ValueError, match="--subset"):  # fewer learnable goals than asked for
        make_item_ids.main(["--subset", "6", "--out", str(tmp_path), "--learnable-from", traj])
    with pytest.raises(SystemExit):
        make_item_ids.main(["--out", str(tmp_path), "--learnable-from", traj])


@pytest.mark.parametrize("name, max_successes, pools", [
    ("webshop_train_learnable32.json", 7, 1), ("webshop_train_learnable64.json", 7, 1),
    ("webshop_train_learnable32_max50.json", 4, 2)])
def test_shipped_learnable_sets_are_seeded_samples_of_the_recorded_pool(name, max_successes, pools):
    """The shipped goal sets against the per-goal successes they were drawn from (bench/webshop_learnable_pool.json:
    8 samples of the shipped policy on the 192 goals of webshop_train_cpu192.json and the 192 of
    webshop_train_cpu192b.json, a second pool disjoint from the first). learnable32 and learnable64 are drawn from
    the first pool's goals solved in 1-7 of 8; learnable32_max50 from both pools' goals solved in 1-4 of 8."""
    make_item_ids = _module()
    with open(os.path.join(ROOT, "bench", "webshop_learnable_pool.json"), encoding="utf-8") as fh:
        successes = json.load(fh)["successes_of_8"]
    train, first = _ids("webshop_train.json"), _ids("webshop_train_cpu192.json")
    second = _ids("webshop_train_cpu192b.json")
    assert first == make_item_ids.sample_subset(train, 192, 1)
    assert second == make_item_ids.sample_subset([i for i in train if i not in set(first)], 192, 2)
    assert set(successes) == set(first) | set(second) and len(successes) == 384
    candidates = set(first) | (set(second) if pools == 2 else set())
    learnable = [i for i in train if i in candidates and 0 < successes[i] <= max_successes]
    shipped = _ids(name)
    assert shipped == make_item_ids.sample_subset(learnable, len(shipped), 0)
    assert not set(shipped) & set(_ids("webshop_test.json"))


def test_max_success_rate_keeps_the_goals_with_room_to_improve(tmp_path):
    make_item_ids = _module()
    train = [f"webshop_{i}" for i in range(6)]
    (tmp_path / "webshop_train.json").write_text(json.dumps([{"item_id": i} for i in train]))
    traj = _trajectories(tmp_path / "t.jsonl", {
        "webshop_0": [1.0, 0.0, 0.0, 0.0],  # 1 of 4: kept
        "webshop_1": [1.0, 1.0, 0.0, 0.0],  # 2 of 4 = the rate: kept
        "webshop_2": [1.0, 1.0, 1.0, 0.0],  # 3 of 4: above it
        "webshop_3": [0.0, 0.0, 0.0, 0.0],  # never solved: no gradient
        "webshop_4": [1.0, 0.0, 0.0, 0.0],
        "webshop_5": [1.0, 1.0, 1.0, 1.0],
    })
    make_item_ids.main(["--subset", "3", "--out", str(tmp_path), "--learnable-from", traj, "--max-success-rate", "0.5"])
    written = [row["item_id"] for row in json.loads((tmp_path / "webshop_train_learnable3_max50.json").read_text())]
    assert written == ["webshop_0", "webshop_1", "webshop_4"]
    for bad in (["--max-success-rate", "0.5"],  # without --learnable-from
                ["--subset", "1", "--learnable-from", traj, "--max-success-rate", "1.0"]):
        with pytest.raises(SystemExit):
            make_item_ids.main(["--out", str(tmp_path), *bad])


def test_exclude_draws_a_second_pool_disjoint_from_the_first(tmp_path):
    make_item_ids = _module()
    train = [f"webshop_{i}" for i in range(20)]
    (tmp_path / "webshop_train.json").write_text(json.dumps([{"item_id": i} for i in train]))
    make_item_ids.main(["--subset", "8", "--subset-seed", "1", "--out", str(tmp_path)])
    first = [row["item_id"] for row in json.loads((tmp_path / "webshop_train_cpu8.json").read_text())]
    make_item_ids.main(["--subset", "8", "--subset-seed", "2", "--out", str(tmp_path), "--name", "second.json",
                        "--exclude", str(tmp_path / "webshop_train_cpu8.json")])
    second = [row["item_id"] for row in json.loads((tmp_path / "second.json").read_text())]
    assert second == make_item_ids.sample_subset([i for i in train if i not in first], 8, 2)
    assert not set(first) & set(second) and len(second) == 8
    assert [row["item_id"] for row in json.loads((tmp_path / "webshop_train_cpu8.json").read_text())] == first
    with pytest.raises(SystemExit):  # --name needs --subset
        make_item_ids.main(["--out", str(tmp_path), "--name", "x.json"])


def test_learnable_counts_read_the_recorded_pool(tmp_path):
    make_item_ids = _module()
    counts = tmp_path / "pool.json"
    counts.write_text(json.dumps({"what": "x", "successes_of_4": {"webshop_1": 0, "webshop_2": 1, "webshop_3": 4,
                                                                   "webshop_4": 3}}))
    assert make_item_ids.learnable_counts(str(counts)) == {"webshop_2": (1, 4), "webshop_4": (3, 4)}
    counts.write_text(json.dumps({"successes": {}}))
    with pytest.raises(ValueError, match="successes_of_<n>"):
        make_item_ids.learnable_counts(str(counts))


@pytest.mark.parametrize("name", ["webshop_train_learnable32_max50.json", "webshop_control25_max50.json"])
def test_shipped_goal_sets_are_what_their_recorded_command_writes(name, tmp_path, monkeypatch):
    """AgentItemId/selection.json records the command that wrote each goal set; rerun, it writes the same ids (the
    control set: the other goals of the trained set's rule, none of them trained)."""
    import shlex

    make_item_ids = _module()
    with open(os.path.join(ROOT, "AgentItemId", "selection.json"), encoding="utf-8") as fh:
        entry = json.load(fh)[name]
    argv = shlex.split(entry["command"])[2:]  # after "python scripts/make_item_ids.py"
    monkeypatch.chdir(ROOT)  # the recorded paths are relative to the repository
    (tmp_path / "webshop_train.json").write_text(open(os.path.join(ROOT, "AgentItemId", "webshop_train.json")).read())
    make_item_ids.main([*argv, "--out", str(tmp_path)])
    written = [row["item_id"] for row in json.loads((tmp_path / name).read_text())]
    assert written == _ids(name)
    assert json.loads((tmp_path / "selection.json").read_text())[name]["rule"] == entry["rule"]
    if name.startswith("webshop_control"):
        assert not set(written) & set(_ids("webshop_train_learnable32_max50.json"))
