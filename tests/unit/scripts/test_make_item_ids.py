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
