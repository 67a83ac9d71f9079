"""DAPO's dynamic sampling (algorithm.filter_groups): which rows are kept, and how a step accumulates them."""
import numpy as np
import pytest
import torch

from verl.agent_trainer.ppo.dynamic_sampling import GroupFilter, informative_rows, row_values
from verl.protocol import DataProto


def _scored(scores, uids, successes=None) -> DataProto:
    """Rows whose token_level_scores sum to `scores` (the score sits on the last response token)."""
    t = torch.zeros(len(scores), 3)
    t[:, -1] = torch.tensor(scores, dtype=torch.float32)
    nt = {"uid": np.array(uids, dtype=object)}
    if successes is not None:
        nt["success"] = np.array(successes, dtype=object)
    return DataProto.from_dict(tensors={"token_level_scores": t}, non_tensors=nt)


def test_informative_rows_keeps_whole_groups_whose_values_differ():
    values = np.array([1.0, 1.0, 0.0, 0.5, 0.2, 0.2, 0.7])
    uid = np.array(["a", "a", "b", "b", "c", "c", "d"], dtype=object)
    # a: equal (dropped); b: differ (kept); c: equal (dropped); d: a single row never differs
    assert informative_rows(values, uid).tolist() == [False, False, True, True, False, False, False]


def test_informative_rows_ignores_float_noise():
    assert not informative_rows(np.array([0.3, 0.3 + 1e-9]), np.array(["x", "x"], dtype=object)).any()


def test_row_values_reads_score_or_success():
    batch = _scored([0.5, 1.0], ["a", "a"], successes=[False, True])
    assert row_values(batch, "score").tolist() == [0.5, 1.0]
    assert row_values(batch, "success").tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="filter_groups.metric"):
        row_values(batch, "reward")


def test_group_filter_refills_until_enough_groups_then_truncates():
    f = GroupFilter(metric="score", want_groups=2, max_gen_batches=0)
    f.add(_scored([0, 0, 1, 0], ["a", "a", "b", "b"]))  # b informative
    assert f.kept_groups == 1 and f.needs_more()
    f.add(_scored([1, 0, 0.2, 0.9], ["c", "c", "d", "d"]))  # c and d informative
    assert not f.needs_more()
    out = f.result()
    assert list(out.non_tensor_batch["uid"]) == ["b", "b", "c", "c"]  # the first two kept groups, whole
    assert out.batch["token_level_scores"].sum(-1).tolist() == [1.0, 0.0, 1.0, 0.0]
    assert len(f.all_generated()) == 8
    assert f.metrics() == {"filter_groups/gen_batches": 2.0, "filter_groups/seen_groups": 4.0,
                           "filter_groups/kept_groups": 2.0, "filter_groups/dropped_frac": 0.25}


def test_group_filter_stops_at_the_rollout_budget_and_may_keep_nothing():
    f = GroupFilter(metric="success", want_groups=2, max_gen_batches=2)
    for uids in (["a", "a"], ["b", "b"]):
        assert f.needs_more()
        f.add(_scored([0.3, 0.6], uids, successes=[False, False]))  # scores differ, successes do not
    assert not f.needs_more() and f.result() is None
    assert f.metrics()["filter_groups/dropped_frac"] == 1.0
