"""trainer.time_budget_s: the estimate of whether one more step fits (the longest step so far, its checkpoint and,
before the last step, the final validation)."""
from __future__ import annotations

import time

import pytest

from verl.agent_trainer.ppo.ray_trainer import _TimeBudget


def test_no_budget_always_fits():
    budget = _TimeBudget(None, time.perf_counter() - 1e6)
    budget.add_step({"step": 1e5})
    assert budget.fits_next(with_validation=True)


def test_the_longest_step_its_checkpoint_and_the_final_validation_count():
    budget = _TimeBudget(100.0, time.perf_counter() - 40.0)  # 40 s used
    budget.validation_s = 20.0
    budget.add_step({"step": 30.0, "testing": 12.0, "save_checkpoint": 3.0})   # a 15 s step + its test and save
    budget.add_step({"step": 10.0})
    assert budget.step_s == 15.0 and budget.save_s == 3.0
    assert budget.fits_next(with_validation=True)           # 40 + 15 + 3 + 20 <= 100
    budget.validation_s = 50.0
    assert budget.fits_next(with_validation=False) and not budget.fits_next(with_validation=True)  # 58 / 108
    budget.add_step({"step": 60.0})
    assert not budget.fits_next(with_validation=False)      # 40 + 60 + 3 > 100


def test_the_budget_must_be_positive():
    from verl.config.trainer import TrainerConfig

    with pytest.raises(ValueError, match=r"trainer\.time_budget_s must be > 0"):
        TrainerConfig(time_budget_s=0)
