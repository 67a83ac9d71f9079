"""Rule-based reward scores for non-environment datasets, dispatched on `data_source`.

`default_compute_score(data_source, solution_str, ground_truth)` is what the naive reward manager
calls for rows that carry `reward_model.ground_truth`. Scorers are registered per data source with
`register_score`; unknown sources raise a ValueError listing the known ones.
"""
from __future__ import annotations

from typing import Callable

from verl.utils.reward_score import gsm8k, math

__all__ = ["default_compute_score", "register_score", "get_score_fn", "SCORERS"]

ScoreFn = Callable[[str, str], float]
SCORERS: dict[str, ScoreFn] = {}


def register_score(*data_sources: str):
    """Decorator registering a `(solution_str, ground_truth) -> float` scorer for data sources."""

    def deco(fn: ScoreFn) -> ScoreFn:
        for name in data_sources:
            if name in SCORERS and SCORERS[name] is not fn:
                raise ValueError(f"reward score for data_source={name!r} is already registered to {SCORERS[name]!r}")
            SCORERS[name] = fn
        return fn

    return deco


register_score("openai/gsm8k", "gsm8k")(gsm8k.compute_score)
register_score(
    "lighteval/MATH", "DigitalLearningGmbH/MATH-lighteval", "HuggingFaceH4/MATH-500", "math"
)(math.compute_score)


def get_score_fn(data_source: str) -> ScoreFn:
    """Return the scorer registered for `data_source`."""
    if data_source not in SCORERS:
        raise ValueError(
            f"no reward score is registered for data_source={data_source!r}; choose one of {sorted(SCORERS)} "
            "or set reward_model.custom_reward_function"
        )
    return SCORERS[data_source]


def default_compute_score(data_source: str, solution_str: str, ground_truth, extra_info=None) -> float:
    """Score `solution_str` against `ground_truth` with the rule for `data_source`.

    Args:
        data_source: dataset name from the row (e.g. "openai/gsm8k", "lighteval/MATH").
        solution_str: the decoded model response.
        ground_truth: the reference answer.
        extra_info: unused; accepted for verl's signature.

    Returns:
        The score as a float.
    """
    return float(get_score_fn(str(data_source))(solution_str, str(ground_truth)))
