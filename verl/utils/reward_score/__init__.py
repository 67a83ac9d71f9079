"""Rule-based reward scores for non-environment datasets, dispatched on `data_source`.

`default_compute_score(data_source, solution_str, ground_truth)` is what the naive reward manager
calls for rows that carry `reward_model.ground_truth`. Scorers are registered per data source with
`register_score`; unknown sources raise a ValueError listing the known ones. `load_custom_score_fn`
loads verl's `custom_reward_function.{path,name}` scorer from a Python file instead.
"""
from __future__ import annotations

import importlib.util
import os
from typing import Callable

from verl.utils.registry import Registry
from verl.utils.reward_score import gsm8k, math

__all__ = ["default_compute_score", "register_score", "get_score_fn", "load_custom_score_fn", "SCORERS"]

ScoreFn = Callable[[str, str], float]
SCORERS = Registry("reward score", "data_source", hint="or set custom_reward_function.path=<file.py>")


def register_score(*data_sources: str):
    """Decorator registering a `(solution_str, ground_truth) -> float` scorer for data sources."""
    return SCORERS.register(*data_sources)


register_score("openai/gsm8k", "gsm8k")(gsm8k.compute_score)
register_score(
    "lighteval/MATH", "DigitalLearningGmbH/MATH-lighteval", "HuggingFaceH4/MATH-500", "math"
)(math.compute_score)


def get_score_fn(data_source: str) -> ScoreFn:
    """Return the scorer registered for `data_source`."""
    return SCORERS.get(data_source)


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


def load_custom_score_fn(path: str, name: str = "compute_score") -> Callable:
    """Load verl's `custom_reward_function`: function `name` from the Python file `path`.

    The function is called as `fn(data_source, solution_str, ground_truth, extra_info)` and returns
    a float (or a dict with a "score" key), like `default_compute_score`.

    Raises:
        FileNotFoundError: `path` does not exist.
        ValueError: the file has no callable `name`.
    """
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"custom_reward_function.path={path!r} does not exist")
    spec = importlib.util.spec_from_file_location(f"custom_reward_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if not callable(fn):
        found = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_"))
        raise ValueError(f"custom_reward_function.name={name!r} is not a function in {path}; callables there: {found}")
    return fn
