"""DAPO's dynamic sampling (`algorithm.filter_groups`): keep only the groups that carry a GRPO signal.

A group is the `rollout.n` samples of one prompt (one `uid`). When all of them score the same, every
advantage of the group is zero: with no KL or entropy term it adds nothing to the policy gradient but
still costs a forward and backward pass. `informative_rows` marks the rows of groups with more than one
distinct value; the trainer drops the rest and, up to `max_num_gen_batches` rollouts per step, refills
the batch with fresh prompts (`GroupFilter`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from verl.protocol import DataProto

__all__ = ["row_values", "informative_rows", "GroupFilter"]


def row_values(batch: DataProto, metric: str) -> np.ndarray:
    """Per-row value the filter compares within a group: `score` (the row's total `token_level_scores`)
    or `success` (the `success` flag the trainer's scorer wrote)."""
    if metric == "score":
        return batch.batch["token_level_scores"].sum(-1).float().cpu().numpy()
    if metric == "success":
        return np.asarray([bool(s) for s in batch.non_tensor_batch["success"]], dtype=np.float64)
    raise ValueError(f"algorithm.filter_groups.metric={metric!r}: expected 'score' or 'success'")


def informative_rows(values: np.ndarray, uid: np.ndarray, atol: float = 1e-6) -> np.ndarray:
    """Boolean mask of the rows whose group (same `uid`) has values that differ by more than `atol`.

    Groups of one row never differ, so they are dropped too (GRPO gives them no advantage either).
    """
    values = np.asarray(values, dtype=np.float64)
    keep = np.zeros(len(values), dtype=bool)
    groups: dict[object, list[int]] = {}
    for i, u in enumerate(uid):
        groups.setdefault(u, []).append(i)
    for rows in groups.values():
        group = values[rows]
        if group.max() - group.min() > atol:
            keep[rows] = True
    return keep


@dataclass
class GroupFilter:
    """Accumulates one step's informative groups over one or more rollouts.

    Args:
        metric: `score` or `success` (see `row_values`).
        want_groups: groups the step trains on (`data.train_batch_size`).
        max_gen_batches: rollouts allowed this step (0: no limit).
    """

    metric: str
    want_groups: int
    max_gen_batches: int
    kept: list[DataProto] = field(default_factory=list)
    generated: list[DataProto] = field(default_factory=list)
    kept_groups: int = 0
    seen_groups: int = 0

    def add(self, batch: DataProto) -> None:
        """Take one scored rollout: remember all of it (metrics) and keep its informative groups."""
        self.generated.append(batch)
        uid = batch.non_tensor_batch["uid"]
        mask = informative_rows(row_values(batch, self.metric), uid)
        self.seen_groups += len(set(uid))
        self.kept_groups += len(set(uid[mask]))
        if mask.any():
            self.kept.append(batch.select_idxs(mask))

    def needs_more(self) -> bool:
        """Whether another rollout should run: too few groups kept and the rollout budget not spent."""
        budget_left = self.max_gen_batches <= 0 or len(self.generated) < self.max_gen_batches
        return self.kept_groups < self.want_groups and budget_left

    def result(self) -> DataProto | None:
        """The kept rows, at most `want_groups` groups (the first ones); None when no group was kept."""
        if not self.kept:
            return None
        batch = DataProto.concat(self.kept)
        uid = batch.non_tensor_batch["uid"]
        first = list(dict.fromkeys(uid))[: self.want_groups]
        return batch.select_idxs(np.isin(uid, first))

    def all_generated(self) -> DataProto:
        """Every row rolled out this step (kept or not): what the policy did, for the step's env metrics."""
        return DataProto.concat(self.generated)

    def metrics(self) -> dict[str, float]:
        """`filter_groups/*`: rollouts this step, groups seen and kept, and the fraction dropped."""
        return {"filter_groups/gen_batches": float(len(self.generated)),
                "filter_groups/seen_groups": float(self.seen_groups),
                "filter_groups/kept_groups": float(min(self.kept_groups, self.want_groups)),
                "filter_groups/dropped_frac": 1.0 - self.kept_groups / max(self.seen_groups, 1)}
