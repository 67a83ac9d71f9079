"""ScalingInter-RL rounds schedule: boundaries, resume, config errors."""
from types import SimpleNamespace

import pytest

from verl.agent_trainer.ppo.rounds import RoundsScheduler


def test_fixed_schedule_is_constant():
    s = RoundsScheduler("fixed", 15)
    assert [s.max_rounds(step) for step in (0, 1, 100, 10_000)] == [15, 15, 15, 15]
    assert RoundsScheduler("fixed", [7]).max_rounds(3) == 7


def test_scaling_inter_boundaries():
    s = RoundsScheduler("scaling_inter_stepwise", [8, 12, 15], steps_scaling_inter=80)
    expected = {0: 8, 1: 8, 79: 8, 80: 8, 81: 12, 160: 12, 161: 15, 240: 15, 241: 15, 10_000: 15}
    assert {step: s.max_rounds(step) for step in expected} == expected
    assert s.stage(80) == 0 and s.stage(81) == 1 and s.stage(5000) == 2


def test_resume_gives_the_uninterrupted_schedule():
    cfg = SimpleNamespace(type="scaling_inter_stepwise", rounds=[2, 4, 6], steps_scaling_inter=3)
    uninterrupted = [RoundsScheduler.from_config(cfg).max_rounds(step) for step in range(1, 12)]
    assert uninterrupted == [2, 2, 2, 4, 4, 4, 6, 6, 6, 6, 6]
    # A run checkpointed after step 3 resumes at step 4 with a freshly built scheduler.
    resumed = RoundsScheduler.from_config(cfg)
    assert [resumed.max_rounds(step) for step in range(4, 12)] == uninterrupted[3:]


@pytest.mark.parametrize("kwargs,match", [
    (dict(type="linear", rounds=5), "rounds_ctrl.type"),
    (dict(type="fixed", rounds=[5, 6]), "rounds_ctrl.rounds"),
    (dict(type="fixed", rounds=0), "rounds_ctrl.rounds"),
    (dict(type="scaling_inter_stepwise", rounds=5, steps_scaling_inter=10), "must be a list"),
    (dict(type="scaling_inter_stepwise", rounds=[], steps_scaling_inter=10), "empty"),
    (dict(type="scaling_inter_stepwise", rounds=[3, 4], steps_scaling_inter=0), "steps_scaling_inter"),
    (dict(type="scaling_inter_stepwise", rounds=[3, 4]), "steps_scaling_inter"),
])
def test_bad_config_names_the_key(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RoundsScheduler(**kwargs)


def test_negative_step_rejected():
    with pytest.raises(ValueError, match="global_step"):
        RoundsScheduler("fixed", 3).max_rounds(-1)
