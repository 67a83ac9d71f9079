"""Item ids (`agentenv.item_ids`): `<task>_<index>` parsing and AgentGym-RL item-id files."""
from __future__ import annotations

import json

import pytest

from agentenv.item_ids import item_indices, load_item_id_file, parse_item_id


def test_parse_item_id_splits_task_and_index():
    assert parse_item_id("webarena_12") == ("webarena", 12)
    assert parse_item_id("webarena_lite_17") == ("webarena", 17)
    with pytest.raises(ValueError, match="has no '_'"):
        parse_item_id("webarena")
    with pytest.raises(ValueError, match="integer index"):
        parse_item_id("webarena_x")


def test_item_id_files_give_rows_and_task_indices(tmp_path):
    path = tmp_path / "webarena_test.json"
    path.write_text(json.dumps([{"item_id": "webarena_3"}, "webarena_0", {"item_id": "webarena_12"}]))
    assert load_item_id_file(str(path))[0] == {"item_id": "webarena_3", "task_name": "webarena", "index": 3}
    assert item_indices(str(path)) == [3, 0, 12]


def test_a_malformed_item_id_file_names_the_problem(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"item_id": "webarena_3"}))
    with pytest.raises(ValueError, match="expected a JSON list"):
        load_item_id_file(str(path))
    path.write_text(json.dumps([{"id": "webarena_3"}]))
    with pytest.raises(ValueError, match="'item_id'"):
        load_item_id_file(str(path))
