"""`RolloutOverlap`: step k+1's rows are drawn and rolled out during step k, the step after takes that batch,
the weights are synced only after the join, and a checkpoint sees the loader from before the early draw."""
from __future__ import annotations

from verl.agent_trainer.ppo.rollout_overlap import RolloutOverlap
from verl.protocol import DataProto


class _Call:
    def __init__(self, out: DataProto, log: list):
        self.out, self.log = out, log

    def result(self) -> DataProto:
        self.log.append("wait")
        return self.out


class _Loader:
    """Rows 0, 1, 2 ...; its state is how many were drawn."""

    def __init__(self, n: int):
        self.position, self.n = 0, n

    def __iter__(self):
        while self.position < self.n:
            self.position += 1
            yield [{"item_id": f"row_{self.position - 1}"}]

    def state_dict(self) -> dict:
        return {"position": self.position}


def _overlap(loader: _Loader, log: list) -> RolloutOverlap:
    def submit(rows):
        log.append(("submit", rows[0]["item_id"]))
        batch = DataProto(meta_info={"rows": rows})
        return batch, _Call(DataProto(meta_info={"timing_s/rollout": 5.0, "item_id": rows[0]["item_id"]}), log)

    return RolloutOverlap(submit, lambda: log.append("sync"), loader.state_dict)


def test_each_step_takes_the_batch_the_previous_step_started():
    loader, log = _Loader(3), []
    overlap = _overlap(loader, log)
    seen = []
    for step, rows in enumerate(overlap.steps(iter(loader)), start=1):
        taken = overlap.take()
        assert (taken is None) == (step == 1)  # the first step generates its own batch
        if taken is not None:
            batch, out = taken
            assert batch.meta_info["rows"] == rows and out.meta_info["item_id"] == rows[0]["item_id"]
        assert overlap.loader_state is None  # nothing drawn early yet this step
        overlap.launch_next()
        assert overlap.loader_state == {"position": step}  # the loader before the next step's rows
        metrics, timing = {}, {}
        overlap.join(metrics, timing)
        seen.append(rows[0]["item_id"])
        if step < 3:
            assert 0.0 <= timing["rollout_wait"] and metrics["timing_s/overlap"] <= 5.0
            assert metrics["timing_s/overlap"] > 4.0
        else:  # the last step had no next rollout to start
            assert "timing_s/overlap" not in metrics and "rollout_wait" not in timing
        assert "sync_weights" in timing
    assert seen == ["row_0", "row_1", "row_2"]
    # each rollout is started, then joined, and only then do the engines get the updated weights
    assert log == [("submit", "row_1"), "wait", "sync", ("submit", "row_2"), "wait", "sync", "sync"]
    assert overlap.take() is None


def test_a_taken_batch_is_handed_back_once():
    loader, log = _Loader(2), []
    overlap = _overlap(loader, log)
    steps = overlap.steps(iter(loader))
    next(steps)
    overlap.launch_next()
    overlap.join({}, {})
    assert overlap.take() is not None and overlap.take() is None


def test_rows_are_drawn_at_the_step_boundary_when_none_were_drawn_early():
    loader, log = _Loader(2), []
    overlap = _overlap(loader, log)
    assert [rows[0]["item_id"] for rows in overlap.steps(iter(loader))] == ["row_0", "row_1"]
    assert log == []
