"""learning_report: the report dict from the validation outcomes (held-out, trained and control goals), its file,
its table and its figure."""
from __future__ import annotations

import json

import pytest

from verl.agent_trainer.learning_report import (
    SELECTION_FILE,
    build_report,
    format_table,
    goal_set_selection,
    load_report,
    main,
    write_report,
)
from verl.agent_trainer.ppo.metric_utils import compute_outcome_metrics
from verl.utils.stats import bootstrap_mean_ci, bootstrap_mean_diff_ci


def _outcome(successes: int, n: int = 10):
    rewards = [1.0] * successes + [0.25] * (n - successes)
    return compute_outcome_metrics([f"webshop_{i}" for i in range(n)], rewards, [r == 1.0 for r in rewards], seed=0,
                                   per_item=True)


def _scripted(policy, goals: list[int]) -> dict:
    """The greedy outcome of a scripted policy: goal g succeeds (reward 1) when policy(g), else reward 0.2."""
    wins = [policy(g) for g in goals]
    return compute_outcome_metrics([f"webshop_{g}" for g in goals], [1.0 if w else 0.2 for w in wins], wins, seed=0,
                                   per_item=True)


def test_report_schema_file_and_table(tmp_path, capsys):
    report = build_report(_outcome(0), _outcome(3), before_step=0, after_step=4, seconds=12.5, seed=0, train_steps=4)
    assert set(report) == {"n_goals", "before", "after", "change_ci95", "mean_reward_change_ci95", "gained", "lost",
                           "mcnemar_p", "per_goal", "seconds", "seed", "train_steps"}
    assert (report["gained"], report["lost"], report["mcnemar_p"]) == (3, 0, 0.25)  # 2 * (1/2)**3
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
    assert "4 training steps" in lines[0] and lines[2] == "held-out goals (10)"
    assert lines[3].split()[:3] == ["before", "0", "0.000"] and lines[4].split()[:3] == ["after", "4", "0.300"]
    assert "[0.108, 0.603]" in lines[4] and lines[5].split()[:2] == ["change", "+0.300"]
    assert lines[5].split()[4] == "+0.225" and lines[5].endswith("3 gained / 0 lost, exact McNemar p 0.25")
    assert len(lines) == 6  # no trained goals evaluated: no trained section
    main([str(tmp_path / "run")])
    assert capsys.readouterr().out.strip() == table


def test_trained_section_on_a_scripted_policy_hand_values(tmp_path):
    """32 trained goals (the CPU main job's set size): before, the policy solves goals 0-15; after, it solves
    goals 0-13 and 16-27 (gains 12 goals, loses 2). Held-out: 20 goals, 10 solved before and after, but not the
    same ones (5 gained, 5 lost)."""
    trained_goals, held_out = list(range(100, 132)), list(range(500, 520))
    before = _scripted(lambda g: g - 100 < 16, trained_goals)
    after = _scripted(lambda g: g - 100 < 14 or 16 <= g - 100 < 28, trained_goals[::-1])  # other order: paired by id
    report = build_report(_scripted(lambda g: g < 510, held_out), _scripted(lambda g: g >= 505 and g < 515, held_out),
                          before_step=0, after_step=20, seconds=1000.0, seed=7,
                          goal_sets={"trained": (before, after)})
    sec = report["trained"]
    assert set(sec) == {"n_goals", "before", "after", "change_ci95", "mean_reward_change_ci95", "gained", "lost",
                        "mcnemar_p", "per_goal"}
    assert (sec["gained"], sec["lost"]) == (12, 2) and sec["mcnemar_p"] == pytest.approx(0.012939, abs=1e-6)
    assert (report["gained"], report["lost"], report["mcnemar_p"]) == (5, 5, 1.0)
    assert sec["n_goals"] == 32 and sec["before"]["step"] == 0 and sec["after"]["step"] == 20
    assert sec["before"]["success_rate"] == 16 / 32 and sec["after"]["success_rate"] == 26 / 32
    assert sec["before"]["mean_reward"] == pytest.approx((16 + 16 * 0.2) / 32)
    # per goal d = +1 on 12 goals, -1 on 2, 0 on 18; the change CI is the bootstrap of mean(d), seed 7
    diffs = [0] * 14 + [-1] * 2 + [1] * 12 + [0] * 4
    assert sec["per_goal"]["ids"] == [f"webshop_{g}" for g in trained_goals]
    assert [a - b for a, b in zip(sec["per_goal"]["success_after"], sec["per_goal"]["success_before"],
                                  strict=True)] == diffs
    assert sec["change_ci95"] == list(bootstrap_mean_ci(diffs, seed=7))
    assert sec["mean_reward_change_ci95"] == pytest.approx(list(bootstrap_mean_ci([0.8 * d for d in diffs], seed=7)))
    lo, hi = sec["change_ci95"]
    assert 0.1 < lo < 10 / 32 < hi < 0.55  # a clear gain: the paired interval is well above 0
    # held-out: no change on average, the paired CI straddles 0
    assert report["after"]["success_rate"] == report["before"]["success_rate"] == 0.5
    assert report["change_ci95"][0] < 0.0 < report["change_ci95"][1]

    table = format_table(report).splitlines()
    assert table[2] == "held-out goals (20)" and table[6] == "trained goals (32)"
    assert table[7].split()[:3] == ["before", "0", "0.500"] and table[8].split()[:3] == ["after", "20", "0.812"]
    assert table[9].split()[:2] == ["change", "+0.312"] and f"[{lo:.3f}, {hi:.3f}]" in table[9]
    assert table[9].endswith("12 gained / 2 lost, exact McNemar p 0.0129")
    assert f"[{report['change_ci95'][0]:.3f}, {report['change_ci95'][1]:.3f}]" in table[5]

    from verl.agent_trainer.learning_report import REPORT_FIGURE, plot_report

    path = plot_report(report, str(tmp_path / REPORT_FIGURE))
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_report_refuses_different_goal_sets():
    with pytest.raises(ValueError, match="same goals"):
        build_report(_outcome(1, n=10), _outcome(1, n=8), before_step=0, after_step=1, seconds=1.0, seed=0)
    with pytest.raises(ValueError, match="share no scored item"):
        build_report(_outcome(1), _outcome(1), before_step=0, after_step=1, seconds=1.0, seed=0,
                     goal_sets={"trained": (_scripted(bool, [1, 2]), _scripted(bool, [3, 4]))})
    with pytest.raises(ValueError, match="unknown goal set 'held_out'"):
        build_report(_outcome(1), _outcome(1), before_step=0, after_step=1, seconds=1.0, seed=0,
                     goal_sets={"held_out": (_outcome(1), _outcome(1))})
    with pytest.raises(ValueError, match="success_ci95"):
        build_report({"num_items": 2, "success_rate": 0.5}, {"num_items": 2, "success_rate": 0.5},
                     before_step=0, after_step=1, seconds=1.0, seed=0)


def test_learning_report_needs_validation_items():
    from omegaconf import OmegaConf

    from verl.config.schema import default_config_path, load_config

    base = OmegaConf.load(default_config_path())
    assert load_config(base, resolve_auto=False).trainer.learning_report is False
    with pytest.raises(ValueError, match=r"trainer\.learning_report=True.*data\.val_file"):
        load_config(
            OmegaConf.merge(base, OmegaConf.from_dotlist(["trainer.learning_report=True", "data.val_file=null"])),
            resolve_auto=False,
        )
    goals = "AgentItemId/webshop_train_cpu32.json"
    for report in ("True", "False"):  # without the report the file is not read (the trainer says so), not an error
        cfg = load_config(OmegaConf.merge(base, OmegaConf.from_dotlist(
            [f"trainer.learning_report={report}", f"data.trained_val_file={goals}"])), resolve_auto=False)
        assert cfg.data.trained_val_file == goals
    cfg = load_config(OmegaConf.merge(base, OmegaConf.from_dotlist(
        ["trainer.learning_report=True", f"data.trained_val_file={goals}"])), resolve_auto=False)
    assert cfg.data.trained_val_file == goals and cfg.data.goal_set_files == {"trained": goals}
    control = "AgentItemId/webshop_control25_max50.json"
    cfg = load_config(OmegaConf.merge(base, OmegaConf.from_dotlist(  # a control alone: reported, no difference
        ["trainer.learning_report=True", f"data.control_val_file={control}"])), resolve_auto=False)
    assert cfg.data.goal_set_files == {"control": control}
    cfg = load_config(OmegaConf.merge(base, OmegaConf.from_dotlist(
        ["trainer.learning_report=True", f"data.trained_val_file={goals}", f"data.control_val_file={control}"])),
        resolve_auto=False)
    assert cfg.data.goal_set_files == {"trained": goals, "control": control}


def test_control_section_and_trained_minus_control_hand_values(tmp_path):
    """8 trained goals: 2 solved before, 6 after (+4 gained). 4 control goals: 1 solved before, 2 after (+1).
    Trained minus control = 4/8 - 1/4 = +0.25; its CI is the bootstrap of the difference of the two goal sets'
    mean per-goal changes, each set resampled on its own. The selection of each file is quoted from
    selection.json beside it."""
    trained_goals, control_goals = list(range(10, 18)), list(range(40, 44))
    trained = (_scripted(lambda g: g < 12, trained_goals), _scripted(lambda g: g < 16, trained_goals))
    control = (_scripted(lambda g: g == 40, control_goals), _scripted(lambda g: g in (40, 43), control_goals))
    files = {"trained": str(tmp_path / "trained.json"), "control": str(tmp_path / "control.json")}
    (tmp_path / SELECTION_FILE).write_text(json.dumps({"trained.json": {"rule": "8 goals of rule R", "command": "c"},
                                                       "control.json": {"rule": "the other 4 of rule R"}}))
    report = build_report(_outcome(5), _outcome(5), before_step=0, after_step=12, seconds=60.0, seed=3,
                          goal_sets={"trained": trained, "control": control}, goal_set_files=files)
    assert (report["trained"]["gained"], report["trained"]["lost"]) == (4, 0)
    assert (report["control"]["gained"], report["control"]["lost"], report["control"]["mcnemar_p"]) == (1, 0, 1.0)
    assert report["trained"]["selection"] == "8 goals of rule R" and report["control"]["file"] == files["control"]
    d = report["trained_minus_control"]
    assert d["success_change"] == pytest.approx(0.25)
    assert d["mean_reward_change"] == pytest.approx(0.8 * 0.25)  # rewards 1 vs 0.2
    trained_d, control_d = [0, 0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 1]
    assert d["success_change_ci95"] == list(bootstrap_mean_diff_ci(trained_d, control_d, seed=3))
    lo, hi = d["success_change_ci95"]
    assert lo < 0.25 < hi and lo < 0.0  # 12 goals: a wide interval, which the report must show as it is

    table = format_table(report).splitlines()
    assert [line for line in table if line.endswith("goals (8)") or line.endswith("goals (4)")] == [
        "trained goals (8)", "control goals (4)"]
    row = next(line for line in table if line.startswith("trained - control"))
    assert row.split()[3] == "+0.250" and f"[{lo:.3f}, {hi:.3f}]" in row
    assert f"trained goals ({files['trained']}): 8 goals of rule R" in table
    assert f"control goals ({files['control']}): the other 4 of rule R" in table

    from verl.agent_trainer.learning_report import REPORT_FIGURE, plot_report

    assert open(plot_report(report, str(tmp_path / REPORT_FIGURE)), "rb").read(4) == b"\x89PNG"


def test_goal_set_selection_reads_the_entry_beside_the_file(tmp_path):
    assert goal_set_selection(str(tmp_path / "a.json")) is None  # no selection.json
    (tmp_path / SELECTION_FILE).write_text(json.dumps({"a.json": {"rule": "rule A", "command": "x"}}))
    assert goal_set_selection(str(tmp_path / "a.json")) == "rule A"
    assert goal_set_selection(str(tmp_path / "b.json")) is None


def test_shipped_goal_sets_have_their_selection():
    import os

    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
    for name, count in (("webshop_train_learnable32_max50.json", "32 of the 57"),
                        ("webshop_control25_max50.json", "25 of the 25")):
        rule = goal_set_selection(os.path.join(root, "AgentItemId", name))
        assert rule is not None and rule.startswith(count) and "at most 50%" in rule, rule


def test_goal_sets_are_read_only_for_the_report_and_capped_like_the_held_out_goals(caplog):
    from omegaconf import OmegaConf

    from verl.agent_trainer.ppo.ray_trainer import _goal_sets
    from verl.config.schema import default_config_path, load_config
    from verl.utils.dataset import AgentDataset

    base = OmegaConf.load(default_config_path())

    def trained(*overrides):
        cfg = load_config(OmegaConf.merge(base, OmegaConf.from_dotlist(list(overrides))), resolve_auto=False)
        return _goal_sets(cfg, AgentDataset(cfg.data.train_paths)).get("trained")

    goals = "AgentItemId/webshop_train_learnable32_max50.json"
    assert trained() is None and len(trained("trainer.learning_report=True", f"data.trained_val_file={goals}")) == 32
    assert len(trained("trainer.learning_report=True", f"data.trained_val_file={goals}", "data.val_max_items=5")) == 5
    with caplog.at_level("INFO", logger="verl.agent_trainer.ppo.ray_trainer"):
        assert trained(f"data.trained_val_file={goals}", "data.trained_val_file=/nonexistent.json") is None
    assert "data.trained_val_file=/nonexistent.json not evaluated" in caplog.text


def test_a_report_written_before_the_mcnemar_keys_still_prints():
    """Reports on disk from before the gained/lost keys load and print without them."""
    report = build_report(_outcome(0), _outcome(3), before_step=0, after_step=4, seconds=1.0, seed=0)
    for key in ("gained", "lost", "mcnemar_p"):
        del report[key]
    assert format_table(report).splitlines()[5].split()[:2] == ["change", "+0.300"]
