"""metric_utils: per-item outcomes and the paired change between two evaluations of the same items, checked
against hand-computed changes and against the exact bootstrap distribution (an independent computation)."""
from __future__ import annotations

import math

import pytest

from verl.agent_trainer.ppo.metric_utils import compute_outcome_change, compute_outcome_metrics


def _outcome(successes: dict[str, bool], seed: int = 0) -> dict:
    ids = list(successes)
    return compute_outcome_metrics(ids, [1.0 if successes[i] else 0.5 for i in ids], [successes[i] for i in ids],
                                   seed=seed, per_item=True)


def exact_bootstrap_quantiles(diffs: list[int], confidence: float = 0.95) -> tuple[float, float]:
    """Quantiles of the mean of n draws with replacement from `diffs` (values in {-1, 0, 1}), from the exact
    multinomial distribution of (#draws of +1, #draws of -1): P(k+, k-) = n! / (k+! k-! k0!) p+^k+ p-^k- p0^k0."""
    n = len(diffs)
    p_up, p_down = diffs.count(1) / n, diffs.count(-1) / n
    p_zero = 1.0 - p_up - p_down
    pmf: dict[float, float] = {}
    for up in range(n + 1):
        for down in range(n + 1 - up):
            prob = math.comb(n, up) * math.comb(n - up, down) * p_up ** up * p_down ** down * p_zero ** (n - up - down)
            pmf[(up - down) / n] = pmf.get((up - down) / n, 0.0) + prob
    cdf, lo, hi = 0.0, None, None
    for value in sorted(pmf):
        cdf += pmf[value]
        if lo is None and cdf >= (1 - confidence) / 2:
            lo = value
        if hi is None and cdf >= (1 + confidence) / 2:
            hi = value
    return lo, hi


def test_per_item_results_in_first_appearance_order():
    out = compute_outcome_metrics(["b", "a", "b", "c"], [1.0, 0.0, 0.5, 0.25], [True, False, False, False],
                                  needs_judge=[0, 0, 0, 1], per_item=True)
    assert out["per_item"] == {"ids": ["b", "a"], "success": [0.5, 0.0], "reward": [0.75, 0.0]}  # c needs a judge
    assert "per_item" not in compute_outcome_metrics(["a"], [1.0], [True])


def test_change_pairs_items_by_id_hand_values():
    # scripted: before, goals 0-1 succeed; after, goal 1 fails and goals 2-5 succeed: d = [0, -1, 1, 1, 1, 1, 0 x 4]
    before = _outcome({f"g{i}": i < 2 for i in range(10)})
    after_ok = {f"g{i}": i in (0, 2, 3, 4, 5) for i in range(10)}
    after = _outcome({k: after_ok[k] for k in sorted(after_ok, reverse=True)})  # other order: paired by id
    change = compute_outcome_change(before, after, seed=3)
    assert change["num_items"] == 10
    assert change["success_change"] == pytest.approx(0.5 - 0.2)
    assert change["mean_reward_change"] == pytest.approx((0.5 - 0.2) * 0.5)  # reward 1.0 vs 0.5 per success
    lo, hi = change["success_change_ci95"]
    exact_lo, exact_hi = exact_bootstrap_quantiles([0, -1, 1, 1, 1, 1, 0, 0, 0, 0])
    assert abs(lo - exact_lo) <= 0.1 + 1e-9 and abs(hi - exact_hi) <= 0.1 + 1e-9  # within one step of 1/n
    assert lo < 0.3 < hi
    assert compute_outcome_change(before, after, seed=3) == change  # seeded


def test_change_ci_matches_exact_bootstrap_on_more_goals():
    # 40 goals: 14 improve, 3 get worse, 23 stay: the change is +11/40 and its CI sits above 0
    ups, downs = set(range(14)), set(range(14, 17))
    before = _outcome({f"g{i}": i in downs or i >= 30 for i in range(40)})
    after = _outcome({f"g{i}": i in ups or i >= 30 for i in range(40)})
    change = compute_outcome_change(before, after, seed=0)
    assert change["success_change"] == pytest.approx(11 / 40)
    exact_lo, exact_hi = exact_bootstrap_quantiles([1] * 14 + [-1] * 3 + [0] * 23)
    lo, hi = change["success_change_ci95"]
    assert abs(lo - exact_lo) <= 1 / 40 + 1e-9 and abs(hi - exact_hi) <= 1 / 40 + 1e-9
    assert 0.0 < lo and hi < 0.5


def test_all_goals_improve_gives_a_point_interval():
    change = compute_outcome_change(_outcome({f"g{i}": False for i in range(8)}),
                                    _outcome({f"g{i}": True for i in range(8)}))
    assert change["success_change"] == 1.0 and change["success_change_ci95"] == [1.0, 1.0]


def test_change_refuses_unpaired_outcomes():
    with pytest.raises(ValueError, match="per_item=True"):
        compute_outcome_change(compute_outcome_metrics(["a"], [1.0], [True]), _outcome({"a": True}))
    with pytest.raises(ValueError, match="share no scored item"):
        compute_outcome_change(_outcome({"a": True, "b": False}), _outcome({"c": True, "d": False}))


def test_items_scored_only_once_are_left_out_of_the_pairing():
    # "c" needed an LLM judge after training: only "a" and "b" pair (d = 0 and +1)
    before = _outcome({"a": True, "b": False, "c": True})
    after = compute_outcome_metrics(["a", "b", "c"], [1.0, 1.0, 0.0], [True, True, False], needs_judge=[0, 0, 1],
                                    per_item=True)
    change = compute_outcome_change(before, after)
    assert change["num_items"] == 2 and change["success_change"] == 0.5
