"""`model_utils.save_hf_dir`: the one atomic HF-directory writer (tiny model, SFT output, HF export)."""
from __future__ import annotations

import json
import os

import pytest

from verl.utils import model_utils


class _Model:
    def __init__(self, fail=False):
        self.fail = fail

    def save_pretrained(self, path, state_dict=None):
        with open(os.path.join(path, "model.safetensors"), "w") as fh:
            fh.write("weights" if state_dict is None else json.dumps(sorted(state_dict)))
        if self.fail:
            raise OSError("disk full")


class _Tok:
    def save_pretrained(self, path):
        with open(os.path.join(path, "tokenizer.json"), "w") as fh:
            fh.write("{}")


def test_writes_everything_then_swaps_it_in(tmp_path):
    out = tmp_path / "model"
    out.mkdir()
    (out / "stale.bin").write_text("old")
    path = model_utils.save_hf_dir(str(out), _Model(), _Tok(), state_dict={"w": 1}, json_files={"m.json": {"a": 1}})
    assert path == str(out) and sorted(os.listdir(out)) == ["m.json", "model.safetensors", "tokenizer.json"]
    assert json.loads((out / "m.json").read_text()) == {"a": 1} and (out / "model.safetensors").read_text() == '["w"]'
    assert [p for p in os.listdir(tmp_path) if p.startswith(".")] == []  # no temp dir left behind


def test_a_failed_write_leaves_the_old_directory_and_no_partial_one(tmp_path):
    out = tmp_path / "model"
    out.mkdir()
    (out / "model.safetensors").write_text("good")
    with pytest.raises(OSError, match="disk full"):
        model_utils.save_hf_dir(str(out), _Model(fail=True), _Tok())
    assert (out / "model.safetensors").read_text() == "good"
    assert sorted(os.listdir(tmp_path)) == ["model"]
