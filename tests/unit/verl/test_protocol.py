"""DataProto round trips and loud failures."""
import numpy as np
import pytest
import torch

from verl.protocol import DataProto, pad_dataproto_to_divisor, to_object_array, unpad_dataproto


def _make(n=4):
    return DataProto.from_dict(
        tensors={"input_ids": torch.arange(n * 3).view(n, 3), "response_mask": torch.ones(n, 2)},
        non_tensors={"uid": [f"u{i}" for i in range(n)], "turn_rewards": [[0.0, float(i)] for i in range(n)]},
        meta_info={"global_step": 7},
    )


def test_from_dict_keeps_lists_as_one_object_per_sample():
    d = _make()
    assert len(d) == 4
    assert d.non_tensor_batch["turn_rewards"].shape == (4,)
    assert d.non_tensor_batch["turn_rewards"][3] == [0.0, 3.0]


def test_from_single_dict_routes_tensors_and_arrays():
    d = DataProto.from_single_dict({"a": torch.zeros(2, 5), "uid": np.array(["x", "y"], dtype=object)},
                                   meta_info={"k": 1})
    assert list(d.batch.keys()) == ["a"] and list(d.non_tensor_batch) == ["uid"] and d.meta_info == {"k": 1}


def test_length_mismatch_names_key_and_sizes():
    with pytest.raises(ValueError, match=r"'uid'.*3.*4|'uid'.*has 3"):
        DataProto.from_dict(tensors={"a": torch.zeros(4, 2)}, non_tensors={"uid": ["a", "b", "c"]})
    with pytest.raises(ValueError, match="'b'"):
        DataProto.from_dict(tensors={"a": torch.zeros(4, 2), "b": torch.zeros(3, 2)})


def test_select_pop_and_missing_key():
    d = _make()
    s = d.select(batch_keys=["input_ids"], non_tensor_batch_keys=["uid"], meta_info_keys=[])
    assert list(s.batch.keys()) == ["input_ids"] and list(s.non_tensor_batch) == ["uid"] and s.meta_info == {}
    with pytest.raises(KeyError, match="nope"):
        d.select(batch_keys=["nope"])
    popped = d.pop(batch_keys=["response_mask"], non_tensor_batch_keys=["turn_rewards"])
    assert list(popped.batch.keys()) == ["response_mask"] and "turn_rewards" in popped.non_tensor_batch
    assert list(d.batch.keys()) == ["input_ids"] and "turn_rewards" not in d.non_tensor_batch


def test_slice_index_and_select_idxs():
    d = _make()
    assert torch.equal(d[1:3].batch["input_ids"], d.batch["input_ids"][1:3])
    assert list(d[1:3].non_tensor_batch["uid"]) == ["u1", "u2"]
    item = d[2]
    assert item.non_tensor_batch["uid"] == "u2" and torch.equal(item.batch["input_ids"], torch.tensor([6, 7, 8]))
    sel = d.select_idxs(torch.tensor([True, False, False, True]))
    assert list(sel.non_tensor_batch["uid"]) == ["u0", "u3"]
    assert list(d[[3, 0]].non_tensor_batch["uid"]) == ["u3", "u0"]


def test_chunk_split_concat_round_trip():
    d = _make(6)
    parts = d.chunk(3)
    assert [len(p) for p in parts] == [2, 2, 2]
    back = DataProto.concat(parts)
    assert torch.equal(back.batch["input_ids"], d.batch["input_ids"])
    assert list(back.non_tensor_batch["uid"]) == list(d.non_tensor_batch["uid"])
    assert back.meta_info == {"global_step": 7}
    assert [len(p) for p in d.split(4)] == [4, 2]
    with pytest.raises(ValueError, match="not divisible"):
        d.chunk(4)


def test_repeat_interleave_and_tile():
    d = _make(2)
    r = d.repeat(3, interleave=True)
    assert list(r.non_tensor_batch["uid"]) == ["u0"] * 3 + ["u1"] * 3
    assert r.batch["input_ids"][:, 0].tolist() == [0, 0, 0, 3, 3, 3]
    t = d.repeat(2, interleave=False)
    assert list(t.non_tensor_batch["uid"]) == ["u0", "u1", "u0", "u1"]


def test_union_adds_keys_and_refuses_conflicts():
    d = _make()
    extra = DataProto.from_dict(tensors={"values": torch.ones(4, 2), "input_ids": d.batch["input_ids"].clone()},
                                non_tensors={"uid": list(d.non_tensor_batch["uid"])}, meta_info={"global_step": 7})
    d.union(extra)
    assert "values" in d.batch.keys()
    with pytest.raises(ValueError, match="values"):
        d.union(DataProto.from_dict(tensors={"values": torch.zeros(4, 2)}))
    with pytest.raises(ValueError, match="uid"):
        d.union(DataProto.from_dict(non_tensors={"uid": ["z"] * 4}))
    with pytest.raises(ValueError, match="global_step"):
        d.union(DataProto(meta_info={"global_step": 8}))
    with pytest.raises(ValueError, match="length|batch size"):
        d.union(DataProto.from_dict(tensors={"other": torch.zeros(3)}))


def test_save_load_round_trip(tmp_path):
    d = _make()
    path = tmp_path / "sub" / "batch.pt"
    d.save_to_disk(str(path))
    back = DataProto.load_from_disk(str(path))
    assert torch.equal(back.batch["input_ids"], d.batch["input_ids"])
    assert back.non_tensor_batch["turn_rewards"][2] == [0.0, 2.0]
    assert back.meta_info == d.meta_info


def test_padding_to_divisor_round_trip():
    d = _make(5)
    padded, pad = pad_dataproto_to_divisor(d, 4)
    assert (len(padded), pad) == (8, 3)
    assert len(padded.chunk(4)) == 4
    back = unpad_dataproto(padded, pad)
    assert torch.equal(back.batch["input_ids"], d.batch["input_ids"])


def test_to_device_and_make_iterator():
    d = _make(4).to("cpu")
    batches = list(d.make_iterator(mini_batch_size=2, epochs=2, seed=0))
    assert len(batches) == 4
    seen = sorted(u for b in batches[:2] for u in b.non_tensor_batch["uid"])
    assert seen == ["u0", "u1", "u2", "u3"]


def test_to_object_array_keeps_equal_length_lists():
    arr = to_object_array([[1, 2], [3, 4]])
    assert arr.shape == (2,) and arr[1] == [3, 4]


def test_pickle_round_trip_for_ray():
    import pickle

    d = _make()
    back = pickle.loads(pickle.dumps(d))
    assert torch.equal(back.batch["input_ids"], d.batch["input_ids"]) and back.meta_info == d.meta_info
    assert list(back.non_tensor_batch["uid"]) == list(d.non_tensor_batch["uid"])
