"""The rule that joins a learned reward model's scores with the env / rule scores
(`reward_model.combine`, `reward_model.rm_coef`).

Both inputs are (bs, response_length) tensors holding each row's score on its last model token:
  sum:      task + rm_coef * rm
  rm_only:  rm_coef * rm
  env_only: task (the rm score is reported in metrics only)
The reward managers call `combine_rm_scores`; nothing else mixes the two.
"""
from __future__ import annotations

import torch

from verl.config.schema import REWARD_COMBINE_MODES

__all__ = ["combine_rm_scores", "rm_score_metrics"]


def combine_rm_scores(task_scores: torch.Tensor, rm_scores: torch.Tensor, combine: str, rm_coef: float) -> torch.Tensor:
    """`token_level_scores` from the env/rule scores and the reward model's, (bs, R) each.

    Raises:
        ValueError: an unknown `combine` mode (naming the choices).
    """
    if combine == "sum":
        return task_scores + rm_coef * rm_scores
    if combine == "rm_only":
        return rm_coef * rm_scores
    if combine == "env_only":
        return task_scores.clone()
    raise ValueError(f"reward_model.combine={combine!r} is not valid; choose one of {list(REWARD_COMBINE_MODES)}")


def rm_score_metrics(rm_scores: torch.Tensor) -> dict[str, float]:
    """`reward/rm_score/{mean,max,min}` over the rows' reward-model scores (bs, R)."""
    per_row = rm_scores.float().sum(-1)
    return {"reward/rm_score/mean": float(per_row.mean()), "reward/rm_score/max": float(per_row.max()),
            "reward/rm_score/min": float(per_row.min())}
