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


class _File:
    """Saves one file, as a tokenizer or an HF config does."""

    def __init__(self, name: str = "tokenizer.json", text: str = "{}"):
        self.name, self.text = name, text

    def save_pretrained(self, path):
        with open(os.path.join(path, self.name), "w") as fh:
            fh.write(self.text)


def test_writes_everything_then_swaps_it_in(tmp_path):
    out = tmp_path / "model"
    out.mkdir()
    (out / "stale.bin").write_text("old")
    path = model_utils.save_hf_dir(str(out), _Model(), _File(), state_dict={"w": 1}, json_files={"m.json": {"a": 1}})
    assert path == str(out) and sorted(os.listdir(out)) == ["m.json", "model.safetensors", "tokenizer.json"]
    assert json.loads((out / "m.json").read_text()) == {"a": 1} and (out / "model.safetensors").read_text() == '["w"]'
    assert [p for p in os.listdir(tmp_path) if p.startswith(".")] == []  # no temp dir left behind


def test_a_failed_write_leaves_the_old_directory_and_no_partial_one(tmp_path):
    out = tmp_path / "model"
    out.mkdir()
    (out / "model.safetensors").write_text("good")
    with pytest.raises(OSError, match="disk full"):
        model_utils.save_hf_dir(str(out), _Model(fail=True), _File())
    assert (out / "model.safetensors").read_text() == "good"
    assert sorted(os.listdir(tmp_path)) == ["model"]


def test_config_and_tokenizer_only(tmp_path):
    out = tmp_path / "huggingface"
    model_utils.save_hf_dir(str(out), None, _File(), config=_File("config.json"))
    assert sorted(os.listdir(out)) == ["config.json", "tokenizer.json"]


def test_a_failed_swap_puts_the_old_directory_back(tmp_path, monkeypatch):
    out = tmp_path / "model"
    out.mkdir()
    (out / "model.safetensors").write_text("good")
    real_replace = os.replace

    def replace(src, dst):
        if os.path.basename(src).startswith(".model-") and not src.endswith("-old"):
            raise OSError("cross-device link")  # the new directory cannot be moved in
        real_replace(src, dst)

    monkeypatch.setattr(model_utils.os, "replace", replace)
    with pytest.raises(OSError, match="cross-device link"):
        model_utils.save_hf_dir(str(out), _Model(), _File())
    assert (out / "model.safetensors").read_text() == "good"
    assert sorted(os.listdir(tmp_path)) == ["model"]
