"""scripts/data_preprocess/*_multiturn_w_interaction.py: AgentGym item ids -> verl interaction parquet."""
from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

from verl.utils.dataset import load_rows
from verl.workers.rollout.tokenizer import DEFAULT_SYSTEM_PROMPT

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.mark.parametrize("task", ["webshop", "webarena"])
def test_parquet_round_trip(task, tmp_path):
    script = os.path.join(ROOT, "scripts", "data_preprocess", f"{task}_multiturn_w_interaction.py")
    res = subprocess.run([sys.executable, script, "--local_save_dir", str(tmp_path), "--num_samples", "7"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    train = pd.read_parquet(tmp_path / "train.parquet")
    assert len(train) == 7 and set(train.columns) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    row = train.iloc[3]
    assert row.data_source == task and row.reward_model["style"] == "interaction"
    index = int(row.extra_info["index"])
    assert row.extra_info["item_id"] == f"{task}_{index}" and row.extra_info["split"] == "train"
    assert dict(row.extra_info["interaction_kwargs"]) == {"name": task, "session_id": index}
    roles = [m["role"] for m in row.prompt]
    assert roles == ["system", "user", "assistant"] and row.prompt[0]["content"] == DEFAULT_SYSTEM_PROMPT
    # the trainer's loader reads it back (chat prompts + the row's extra fields)
    rows = load_rows([str(tmp_path / "test.parquet")], "prompt")
    assert len(rows) == 7 and rows[0]["extra_info"]["split"] == "test"


def test_a_file_without_the_task_fails_clearly(tmp_path):
    ids = tmp_path / "ids.json"
    ids.write_text('[{"item_id": "webarena_3"}]')
    script = os.path.join(ROOT, "scripts", "data_preprocess", "webshop_multiturn_w_interaction.py")
    res = subprocess.run([sys.executable, script, "--input_file", str(ids), "--local_save_dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode != 0 and "holds no webshop item ids" in res.stderr
