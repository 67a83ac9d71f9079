"""learning_report: the report dict from two validation outcomes, its file and its table."""
from __future__ import annotations

import json

import pytest

from verl.agent_trainer.learning_report import build_report, format_table, load_report, main, write_report
from verl.agent_trainer.ppo.metric_utils import compute_outcome_metrics


def _outcome(successes: int, n: int = 10):
    rewards = [1.0] * successes + [0.25] * (n - successes)
    return compute_outcome_metrics([f"webshop_{i}" for i in range(n)], rewards, [r == 1.0 for r in rewards], seed=0)


def test_report_schema_file_and_table(tmp_path, capsys):
    report = build_report(_outcome(0), _outcome(3), before_step=0, after_step=4, seconds=12.5, seed=0, train_steps=4)
    assert set(report) == {"n_goals", "before", "after", "seconds", "seed", "train_steps"}
    assert report["n_goals"] == 10 and report["before"]["step"] == 0 and report["after"]["step"] == 4
    after = report["after"]
    assert after["success_rate"] == pytest.approx(0.3)
    assert after["success_ci95"] == [pytest.approx(0.1077913, abs=1e-6), pytest.approx(0.6032219, abs=1e-6)]
    assert after["mean_reward"] == pytest.approx((3 * 1.0 + 7 * 0.25) / 10)
    lo, hi = after["mean_reward_ci95"]
    assert 0.25 <= lo < after["mean_reward"] < hi <= 1.0
    assert report["before"]["mean_reward_ci95"] == [0.25, 0.25]   # all ten rewards 0.25

    path = write_report(report, str(tmp_path / "run"))
    assert json.loads(open(path).read()) == report == load_report(str(tmp_path / "run"))
    table = format_table(report)
    lines = table.splitlines()
    assert "10 held-out goals" in lines[0] and "4 training steps" in lines[0]
    assert lines[2].split()[:3] == ["before", "0", "0.000"] and lines[3].split()[:3] == ["after", "4", "0.300"]
    assert "[0.108, 0.603]" in lines[3] and lines[4].split()[:3] == ["change", "+0.300", "+0.225"]
    main([str(tmp_path / "run")])
    assert capsys.readouterr().out.strip() == table


def test_report_refuses_different_goal_sets():
    with pytest.raises(ValueError, match="same goals"):
        build_report(_outcome(1, n=10), _outcome(1, n=8), before_step=0, after_step=1, seconds=1.0, seed=0)
    with pytest.raises(ValueError, match="success_ci95"):
        build_report({"num_items": 2, "success_rate": 0.5}, {"num_items": 2, "success_rate": 0.5},
                     before_step=0, after_step=1, seconds=1.0, seed=0)


def test_learning_report_needs_validation_items():
    from omegaconf import OmegaConf

    from verl.agent_trainer.config.schema import default_config_path, load_config

    base = OmegaConf.load(default_config_path())
    assert load_config(base, resolve_auto=False).trainer.learning_report is False
    with pytest.raises(ValueError, match=r"trainer\.learning_report=True.*data\.val_file"):
        load_config(
            OmegaConf.merge(base, OmegaConf.from_dotlist(["trainer.learning_report=True", "data.val_file=null"])),
            resolve_auto=False,
        )
