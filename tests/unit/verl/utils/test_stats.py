"""verl.utils.stats against values computed by hand (formulas written out in the comments)."""
from __future__ import annotations

import pytest

from verl.utils.stats import bootstrap_mean_ci, normal_quantile, pass_at_k, wilson_interval


def test_normal_quantile_95():
    assert normal_quantile(0.95) == pytest.approx(1.959964, abs=1e-6)
    with pytest.raises(ValueError, match="confidence"):
        normal_quantile(1.0)


def test_wilson_3_of_10_by_hand():
    # z = 1.959964, z^2 = 3.841459, n = 10, p = 0.3
    # denom  = 1 + z^2/n               = 1.3841459
    # centre = (0.3 + z^2/20) / denom  = 0.4920729 / 1.3841459 = 0.3555066
    # half   = z/denom * sqrt(0.3*0.7/10 + z^2/400) = 1.4160085 * sqrt(0.0306036) = 1.4160085 * 0.1749390 = 0.2477152
    # -> [0.1077913, 0.6032219]  (the textbook Wilson interval for 3/10: 0.108 .. 0.603)
    lo, hi = wilson_interval(3, 10)
    assert lo == pytest.approx(0.1077913, abs=1e-6) and hi == pytest.approx(0.6032219, abs=1e-6)


def test_wilson_edges_by_hand():
    # 0/10: centre = half = (z^2/20)/denom = 0.1920729/1.3841459 = 0.1387664 -> [0, 0.2775328]
    lo, hi = wilson_interval(0, 10)
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.2775328, abs=1e-6)
    lo, hi = wilson_interval(10, 10)  # mirror image of 0/10
    assert lo == pytest.approx(1 - 0.2775328, abs=1e-6) and hi == pytest.approx(1.0, abs=1e-12)
    # 1/2 at 95%: p = 0.5, denom = 1 + 3.841459/2 = 2.9207295, centre = 0.5,
    # half = z/denom * sqrt(0.25/2 + 3.841459/16) = 0.6710529 * 0.6042278 = 0.4054688 -> [0.0945312, 0.9054688]
    lo, hi = wilson_interval(1, 2)
    assert (lo, hi) == (pytest.approx(0.0945312, abs=1e-6), pytest.approx(0.9054688, abs=1e-6))
    lo, hi = wilson_interval(1.5, 3)  # fractional successes (per-item shares) are accepted
    assert lo < 0.5 < hi and lo + hi == pytest.approx(1.0)
    with pytest.raises(ValueError, match="n >= 1"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match="outside"):
        wilson_interval(4, 3)


def test_bootstrap_two_values_by_hand():
    # resamples of [0, 1] have mean 0, 0.5, 1 with probability 1/4, 1/2, 1/4: the 2.5% and 97.5%
    # quantiles of 10,000 resample means are 0 and 1.
    assert bootstrap_mean_ci([0.0, 1.0], seed=3) == (0.0, 1.0)
    assert bootstrap_mean_ci([0.4] * 7) == pytest.approx((0.4, 0.4))
    assert bootstrap_mean_ci([0.25]) == (0.25, 0.25)


def test_bootstrap_matches_normal_approximation_and_is_seeded():
    # 30 ones and 70 zeros: mean 0.3, se = sqrt(0.3*0.7/100) = 0.04583 -> 0.3 +- 1.96 se = [0.2102, 0.3898]
    values = [1.0] * 30 + [0.0] * 70
    lo, hi = bootstrap_mean_ci(values, seed=0)
    assert lo == pytest.approx(0.2102, abs=0.012) and hi == pytest.approx(0.3898, abs=0.012)
    spread = [0.1 * (i % 7) + 0.013 * i for i in range(50)]  # continuous, so quantiles depend on the draw
    assert bootstrap_mean_ci(spread, seed=0) == bootstrap_mean_ci(spread, seed=0)
    assert bootstrap_mean_ci(spread, seed=1) != bootstrap_mean_ci(spread, seed=0)
    lo90, hi90 = bootstrap_mean_ci(values, confidence=0.90, seed=0)
    assert lo < lo90 < 0.3 < hi90 < hi
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_mean_ci([])


def test_pass_at_k_by_hand():
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)   # 1 - C(3,2)/C(5,2)
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)         # pass@1 = c/n
    assert pass_at_k(10, 3, 4) == pytest.approx(1 - 35 / 210)  # 1 - C(7,4)/C(10,4)
    assert pass_at_k(3, 0, 2) == 0.0
    assert pass_at_k(3, 2, 2) == 1.0                          # n - c = 1 < k: every 2-subset holds a pass
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="c <= n"):
        pass_at_k(3, 4, 1)


def test_mcnemar_exact_p_hand_values():
    """Two-sided exact binomial test on the discordant goals: the values a review of the P13 runs quoted
    (5 gained / 2 lost: p 0.45; 1 / 11: p 0.006) and hand sums."""
    from verl.utils.stats import mcnemar_exact_p

    assert mcnemar_exact_p(5, 2) == pytest.approx(2 * (1 + 7 + 21) / 2**7)  # 0.453
    assert mcnemar_exact_p(1, 11) == pytest.approx(2 * (1 + 12) / 2**12)   # 0.0063
    assert mcnemar_exact_p(2, 5) == mcnemar_exact_p(5, 2)
    assert mcnemar_exact_p(0, 0) == 1.0 and mcnemar_exact_p(3, 3) == 1.0
    assert mcnemar_exact_p(0, 6) == pytest.approx(2 / 64)
    with pytest.raises(ValueError, match=">= 0"):
        mcnemar_exact_p(-1, 2)


def test_bootstrap_mean_diff_ci_resamples_each_sample_on_its_own():
    """Constant samples: the difference is exact; a spread sample widens the interval around the true difference;
    the same seed gives the same interval; an empty sample is refused."""
    from verl.utils.stats import bootstrap_mean_diff_ci

    assert bootstrap_mean_diff_ci([1.0] * 5, [0.25] * 3) == (0.75, 0.75)
    a, b = [0, 1] * 16, [0, 0, 0, 1] * 6   # means 0.5 and 0.25
    lo, hi = bootstrap_mean_diff_ci(a, b, seed=4)
    assert lo < 0.25 < hi and 0.3 < hi - lo < 0.7  # sd of the difference ~ sqrt(.25/32 + .1875/24) = 0.125
    assert (lo, hi) == bootstrap_mean_diff_ci(a, b, seed=4) != bootstrap_mean_diff_ci(a, b, seed=5)
    with pytest.raises(ValueError, match="both samples"):
        bootstrap_mean_diff_ci([], [1.0])
