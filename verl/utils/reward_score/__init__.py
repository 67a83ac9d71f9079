"""Rule-based reward scores for non-environment datasets, dispatched on `data_source`.

`default_compute_score(data_source, solution_str, ground_truth, extra_info=None)` is what the reward
managers call for rows that carry `reward_model.ground_truth`. Routing follows verl's:

  openai/gsm8k, gsm8k                                  -> gsm8k (the number after "####")
  lighteval/MATH, DigitalLearningGmbH/MATH-lighteval,
  HuggingFaceH4/MATH-500, math                         -> math (normalised \\boxed{} string)
  numina_aops_forum, numina_synthetic_math, numina_amc_aime,
  numina_synthetic_amc, numina_cn_k12, numina_olympiads -> prime_math (boxed answer, symbolic equality)
  codecontests, apps, codeforces, taco                 -> prime_code (the fenced program run on the
                                                          test cases in a sandbox)

Scorers are registered per data source with `register_score`; unknown sources raise a ValueError
listing the known ones. `load_custom_score_fn` loads verl's `custom_reward_function.{path,name}`
scorer from a Python file instead.
"""
from __future__ import annotations

import importlib.util
import os
from typing import Callable

from verl.config.schema import CodeSandboxConfig
from verl.utils.registry import Registry
from verl.utils.reward_score import gsm8k, math, prime_code, prime_math

__all__ = ["default_compute_score", "register_score", "get_score_fn", "load_custom_score_fn", "FileScoreFn",
           "SCORERS"]

ScoreFn = Callable[[str, str], float]
SCORERS = Registry("reward score", "data_source", hint="or set custom_reward_function.path=<file.py>")


def register_score(*data_sources: str):
    """Decorator registering a `(solution_str, ground_truth) -> float` scorer for data sources."""
    return SCORERS.register(*data_sources)


register_score("openai/gsm8k", "gsm8k")(gsm8k.compute_score)
register_score(
    "lighteval/MATH", "DigitalLearningGmbH/MATH-lighteval", "HuggingFaceH4/MATH-500", "math"
)(math.compute_score)
register_score(*prime_math.DATA_SOURCES)(prime_math.compute_score)
register_score(*prime_code.DATA_SOURCES)(prime_code.compute_score)


def get_score_fn(data_source: str) -> ScoreFn:
    """Return the scorer registered for `data_source`."""
    return SCORERS.get(data_source)


def default_compute_score(data_source: str, solution_str: str, ground_truth, extra_info=None,
                          sandbox: CodeSandboxConfig | None = None) -> float:
    """Score `solution_str` against `ground_truth` with the rule for `data_source`.

    Args:
        data_source: dataset name from the row (e.g. "openai/gsm8k", "numina_olympiads", "apps").
        solution_str: the decoded model response.
        ground_truth: the reference answer (code sources: the test cases, JSON text or a dict).
        extra_info: unused; accepted for verl's signature.
        sandbox: limits of the code sandbox (`reward_model.code_sandbox`) for code sources.

    Returns:
        The score as a float.
    """
    fn = get_score_fn(str(data_source))
    if fn is prime_code.compute_score:  # the only scorer with settings of its own
        return float(fn(solution_str, ground_truth, sandbox=sandbox))
    return float(fn(solution_str, str(ground_truth)))


def load_custom_score_fn(path: str, name: str = "compute_score") -> Callable:
    """Load verl's `custom_reward_function`: function `name` from the Python file `path`.

    The function is called as `fn(data_source, solution_str, ground_truth, extra_info)` and returns
    a float (or a dict with a "score" key), like `default_compute_score`.

    Raises:
        FileNotFoundError: `path` does not exist.
        ValueError: the file has no callable `name`.
    """
    return FileScoreFn(path, name)


class FileScoreFn:
    """Function `name` of the Python file `path`, callable like it and picklable: a copy sent to another
    process (the prime manager's scorer workers) loads the file again there.

    Raises:
        FileNotFoundError / ValueError: as `load_custom_score_fn`.
    """

    def __init__(self, path: str, name: str = "compute_score"):
        self.path, self.name = os.path.abspath(os.path.expanduser(path)), name
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"custom_reward_function.path={self.path!r} does not exist")
        spec = importlib.util.spec_from_file_location(f"custom_reward_{abs(hash(self.path))}", self.path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self._fn = getattr(module, name, None)
        if not callable(self._fn):
            found = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_"))
            raise ValueError(f"custom_reward_function.name={name!r} is not a function in {self.path}; "
                             f"callables there: {found}")

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __reduce__(self):
        return type(self), (self.path, self.name)
