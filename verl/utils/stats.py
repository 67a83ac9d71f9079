"""Confidence intervals and pass@k for evaluation results: pure numpy/stdlib, no scipy.

* `wilson_interval`   Wilson score interval of a binomial proportion (success rate);
* `bootstrap_mean_ci` seeded percentile bootstrap interval of a mean (mean reward);
* `bootstrap_mean_diff_ci` the same for mean(a) - mean(b) of two independent samples (trained minus control);
* `pass_at_k`         the unbiased pass@k estimator of Chen et al. 2021 (Codex, arXiv:2107.03374);
* `mcnemar_exact_p`   the exact (binomial) McNemar test of a paired success change (goals gained vs lost).

Owns the formulas only; what is counted (items, trajectories) is the caller's choice
(`agent_trainer/ppo/metric_utils.compute_outcome_metrics`).
"""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import Sequence

import numpy as np

__all__ = ["wilson_interval", "bootstrap_mean_ci", "bootstrap_mean_diff_ci", "pass_at_k", "normal_quantile",
           "mcnemar_exact_p"]

_BOOTSTRAP_CHUNK = 1000  # resamples drawn at once: bounds memory at ~8 * 1000 * n bytes


def normal_quantile(confidence: float) -> float:
    """z such that P(-z < Z < z) = confidence for a standard normal Z (1.959964 for 0.95)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of the proportion successes / n.

    centre = (p + z^2 / 2n) / (1 + z^2 / n),  half = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / 4n^2)

    `successes` may be fractional (a sum of per-item success shares); the interval stays inside [0, 1].

    Raises:
        ValueError: n < 1 or successes outside [0, n].
    """
    if n < 1:
        raise ValueError(f"wilson_interval needs n >= 1 observations, got n={n}")
    if not 0.0 <= successes <= n:
        raise ValueError(f"successes={successes} is outside [0, n={n}]")
    z = normal_quantile(confidence)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_mean_ci(values: Sequence[float], confidence: float = 0.95, n_resamples: int = 10_000,
                      seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values` (same seed, same interval).

    Draws `n_resamples` resamples of len(values) with replacement and returns the (1 - c)/2 and
    (1 + c)/2 quantiles of their means. One value (or all equal) gives a zero-width interval.

    Raises:
        ValueError: no values, or n_resamples < 1.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        raise ValueError("bootstrap_mean_ci needs at least one value")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    normal_quantile(confidence)  # validates confidence
    rng = np.random.default_rng(seed)
    return _percentiles(_resampled_means(x, n_resamples, rng), confidence)


def bootstrap_mean_diff_ci(a: Sequence[float], b: Sequence[float], confidence: float = 0.95,
                           n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(a) - mean(b) for two independent samples: each resample draws
    len(a) values of `a` and, independently, len(b) values of `b`, with replacement (same seed, same interval).

    Raises:
        ValueError: either sample is empty, or n_resamples < 1.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.size == 0 or y.size == 0:
        raise ValueError(f"bootstrap_mean_diff_ci needs values in both samples, got {x.size} and {y.size}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    normal_quantile(confidence)
    rng = np.random.default_rng(seed)
    diffs = _resampled_means(x, n_resamples, rng) - _resampled_means(y, n_resamples, rng)
    return _percentiles(diffs, confidence)


def _resampled_means(x: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, _BOOTSTRAP_CHUNK):
        stop = min(start + _BOOTSTRAP_CHUNK, n_resamples)
        means[start:stop] = x[rng.integers(0, x.size, size=(stop - start, x.size))].mean(axis=1)
    return means


def _percentiles(stats: np.ndarray, confidence: float) -> tuple[float, float]:
    lo, hi = np.quantile(stats, [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0])
    return float(lo), float(hi)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples of which c passed: 1 - C(n - c, k) / C(n, k).

    Computed as 1 - prod_{i = n - c + 1}^{n} (1 - k / i) (numerically stable, as in the Codex paper).

    Raises:
        ValueError: not 0 <= c <= n, or not 1 <= k <= n.
    """
    if not 0 <= c <= n:
        raise ValueError(f"pass_at_k needs 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"pass_at_k needs 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def mcnemar_exact_p(gained: int, lost: int) -> float:
    """Two-sided exact McNemar p-value of a paired before/after success change.

    Only the discordant goals count: under "no change" each of the n = gained + lost is a gain with
    probability 1/2, so p = min(1, 2 * P(Binomial(n, 1/2) <= min(gained, lost))). No discordant goal: 1.

    Raises:
        ValueError: a negative count.
    """
    if gained < 0 or lost < 0:
        raise ValueError(f"mcnemar_exact_p needs counts >= 0, got gained={gained}, lost={lost}")
    n = gained + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(gained, lost) + 1)) / 2.0 ** n
    return float(min(1.0, 2.0 * tail))
