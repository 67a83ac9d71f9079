import json

import pandas as pd
import pytest

from verl.utils.dataset import AgentDataset, StatefulDataLoader, parse_item_id, rows_to_dataproto


def _ids(tmp_path, n=10):
    path = tmp_path / "webshop_train.json"
    path.write_text(json.dumps([{"item_id": f"webshop_{i}"} for i in range(n)]))
    return str(path)


def test_item_id_json_rows(tmp_path):
    ds = AgentDataset(_ids(tmp_path, 3))
    assert ds[2] == {"item_id": "webshop_2", "task_name": "webshop", "index": 2}
    assert parse_item_id("webarena_lite_17") == ("webarena", 17)
    with pytest.raises(ValueError, match="webshop"):
        parse_item_id("webshop")


def test_parquet_rows(tmp_path):
    path = tmp_path / "gsm8k.parquet"
    pd.DataFrame({"data_source": ["openai/gsm8k"] * 2,
                  "prompt": [[{"role": "user", "content": "1+1?"}], [{"role": "user", "content": "2+2?"}]],
                  "reward_model": [{"ground_truth": "2", "style": "rule"}, {"ground_truth": "4", "style": "rule"}]}
                 ).to_parquet(path)
    ds = AgentDataset(str(path), prompt_key="prompt")
    assert ds[1]["prompt"] == [{"role": "user", "content": "2+2?"}]
    assert ds[1]["reward_model"]["ground_truth"] == "4" and ds[1]["item_id"] == "openai/gsm8k_1"
    proto = rows_to_dataproto([ds[0], ds[1]])
    assert len(proto) == 2 and proto.non_tensor_batch["prompt"][0][0]["content"] == "1+1?"


def test_loader_resume_gives_same_order(tmp_path):
    ds = AgentDataset(_ids(tmp_path, 10))
    full = StatefulDataLoader(ds, batch_size=3, shuffle=True, seed=7)
    order = []
    for _epoch in range(2):
        order += [[r["item_id"] for r in b] for b in full]
    assert len(order) == 6 and order[:3] != order[3:]  # 3 batches/epoch (drop_last), reshuffled per epoch

    first = StatefulDataLoader(ds, batch_size=3, shuffle=True, seed=7)
    it = iter(first)
    seen = [[r["item_id"] for r in next(it)] for _ in range(2)]
    state = first.state_dict()
    resumed = StatefulDataLoader(ds, batch_size=3, shuffle=True, seed=7)
    resumed.load_state_dict(state)
    for _epoch in range(2):
        seen += [[r["item_id"] for r in b] for b in resumed]
    assert seen == order
    with pytest.raises(ValueError, match="seed"):
        StatefulDataLoader(ds, batch_size=3, seed=8).load_state_dict(state)
