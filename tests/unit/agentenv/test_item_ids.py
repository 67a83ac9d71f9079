"""Item ids (`agentenv.item_ids`): `<task>_<index>` parsing, AgentGym-RL item-id files and where a relative data
path is found."""
from __future__ import annotations

import json
import os

import pytest

from agentenv.item_ids import PACKAGES_ROOT, item_indices, load_item_id_file, parse_item_id, resolve_data_path


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


def test_relative_data_paths_fall_back_to_the_shipped_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shipped = os.path.join(PACKAGES_ROOT, "AgentItemId", "webshop_test.json")
    assert os.path.isfile(shipped)  # the checkout (or an install) keeps AgentItemId beside the packages
    assert resolve_data_path("AgentItemId/webshop_test.json") == shipped
    assert load_item_id_file("AgentItemId/webshop_test.json")[0]["task_name"] == "webshop"
    # a file under the working directory wins; a missing path comes back as given, for the caller to report
    (tmp_path / "AgentItemId").mkdir()
    (tmp_path / "AgentItemId" / "webshop_test.json").write_text('["webshop_3"]')
    assert resolve_data_path("AgentItemId/webshop_test.json") == "AgentItemId/webshop_test.json"
    assert item_indices("AgentItemId/webshop_test.json") == [3]
    assert resolve_data_path("AgentItemId/missing.json") == "AgentItemId/missing.json"
    assert resolve_data_path(str(tmp_path / "missing.json")) == str(tmp_path / "missing.json")
