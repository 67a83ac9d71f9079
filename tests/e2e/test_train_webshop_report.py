"""End to end: `bash scripts/webshop_train.sh` (CPU profile, the shipped SFT policy) writes the learning report, and
at a learning rate of 0 it is the report's null control.

The job validates greedily on held-out goals, on training goals of the profile's fixed set
(AgentItemId/webshop_train_learnable32_max50.json; three here, to bound the time) and on its control goals
(AgentItemId/webshop_control25_max50.json; three), trains one GRPO step on that set, validates all three again,
prints the before/after table of each goal set and trained minus control, and writes learning_report.json and the
plots of the run. The step changes no weight, so every section of the report (held-out, trained, control, the
expert probe) must show exactly no change: the same reward on every goal, nothing gained or lost, zero-width change
intervals, trained minus control 0. A report that moved here would be measuring something other than learning
(sampling noise in the greedy validation, state kept between validations, a weight sync that changes weights).
The fallback to the tiny model without a policy: tests/unit/scripts/test_webshop_train.py (its command line) and
tests/e2e/test_train_webarena.py (the same job code, end to end)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(600)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOALS = 4
TRAINED = 3
CONTROL = 3
PROBE = 10  # expert demonstrations of held-out goals (the script's default: 100)


def _first(name: str, n: int, path) -> list[dict]:
    rows = json.loads(open(os.path.join(ROOT, "AgentItemId", name)).read())[:n]
    path.write_text(json.dumps(rows))
    return rows


def test_a_step_at_lr_0_writes_a_learning_report_of_exactly_no_change(webshop_url, tmp_path):
    policy = os.path.join(ROOT, "agentenv_webshop", "sft_policy")
    run = tmp_path / "run"
    env = {**os.environ, "PYTHON": sys.executable, "PROFILE": "cpu", "ENV_ADDR": webshop_url, "POLICY_DIR": policy,
           "RAY_USAGE_STATS_ENABLED": "0", "EXPERT_PROBE_GOALS": str(PROBE)}
    env.pop("MODEL_PATH", None)
    trained_file, control_file = tmp_path / "trained.json", tmp_path / "control.json"
    trained_ids = _first("webshop_train_learnable32_max50.json", TRAINED, trained_file)
    control_ids = _first("webshop_control25_max50.json", CONTROL, control_file)
    proc = subprocess.run(
        ["bash", "scripts/webshop_train.sh", "trainer.total_training_steps=1", f"data.val_max_items={GOALS}",
         "data.train_batch_size=2", "actor_rollout_ref.rollout.n=2", "actor_rollout_ref.actor.ppo_mini_batch_size=2",
         "actor_rollout_ref.actor.optim.lr=0", f"data.train_file={trained_file}",
         f"data.trained_val_file={trained_file}", f"data.control_val_file={control_file}",
         f"trainer.default_local_dir={run}", "trainer.save_freq=-1",
         f"actor_rollout_ref.rollout.rollout_log_dir={run / 'rollouts'}", "ray_init.object_store_memory=200000000"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, f"{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    assert f"policy: {policy}" in proc.stdout

    report = json.loads((run / "learning_report.json").read_text())
    assert {"n_goals", "before", "after", "change_ci95", "per_goal", "trained", "seconds", "seed"} <= set(report)
    assert report["n_goals"] == GOALS and report["seed"] == 0 and report["train_steps"] == 1
    assert report["model_path"] == policy and 0 < report["seconds"] < 540
    assert report["before"]["step"] == 0 and report["after"]["step"] == 1
    for name, ids, file in (("trained", trained_ids, trained_file), ("control", control_ids, control_file)):
        assert report[name]["n_goals"] == len(ids) and report[name]["file"] == str(file)
        assert report[name]["per_goal"]["ids"] == [r["item_id"] for r in ids]

    # lr 0: no section moved, and the intervals around no change are empty
    sections = {"held-out": report, "trained": report["trained"], "control": report["control"]}
    rewards = []
    for name, sec in sections.items():
        per_goal = sec["per_goal"]
        assert per_goal["reward_after"] == per_goal["reward_before"], name
        assert per_goal["success_after"] == per_goal["success_before"], name
        assert (sec["gained"], sec["lost"], sec["mcnemar_p"]) == (0, 0, 1.0), name
        assert sec["change_ci95"] == [0.0, 0.0] and sec["mean_reward_change_ci95"] == [0.0, 0.0], name
        assert sec["after"]["success_rate"] == sec["before"]["success_rate"], name
        rewards += per_goal["reward_before"]
    assert report["trained_minus_control"] == {"success_change": 0.0, "success_change_ci95": [0.0, 0.0],
                                               "mean_reward_change": 0.0, "mean_reward_change_ci95": [0.0, 0.0]}
    # not vacuous: the policy earns reward, so an unchanged report is a measurement, not all zeros
    assert sum(rewards) > 1.0 and max(rewards) == 1.0
    for half in (*(report[w] for w in ("before", "after")), *(report[s][w] for s in ("trained", "control")
                                                               for w in ("before", "after"))):
        assert set(half) == {"success_rate", "success_ci95", "mean_reward", "mean_reward_ci95", "step"}
        lo, hi = half["success_ci95"]
        assert 0.0 <= lo <= half["success_rate"] <= hi <= 1.0 and hi > lo  # Wilson is never empty on 3 goals
        lo, hi = half["mean_reward_ci95"]
        assert 0.0 <= lo <= half["mean_reward"] <= hi <= 1.0

    probe = report["expert_probe"]  # the expert's actions on held-out goals, exactly as likely as before
    test_ids = [r["item_id"] for r in json.loads(open(os.path.join(ROOT, "AgentItemId", "webshop_test.json")).read())]
    assert probe["n_goals"] == PROBE and probe["per_goal"]["ids"] == test_ids[:PROBE]
    assert probe["per_goal"]["after"] == probe["per_goal"]["before"] and probe["before"] < 0
    assert probe["change"] == 0.0 and probe["change_ci95"] == [0.0, 0.0]

    # the table printed at the end is the one of the file
    from verl.agent_trainer.learning_report import format_table

    assert format_table(report) in proc.stdout
    assert f"held-out goals ({GOALS})" in proc.stdout and f"trained goals ({TRAINED})" in proc.stdout
    assert f"control goals ({CONTROL})" in proc.stdout and "trained - control" in proc.stdout

    # the report's numbers are the trainer's own greedy validation at steps 0 and 1 (one owner)
    rows = [json.loads(line) for line in open(run / "logs" / "metrics.jsonl")]
    val = {r["step"]: r for r in rows if "val/greedy/success_rate" in r}
    assert sorted(val) == [0, 1]
    for step, half in ((0, report["before"]), (1, report["after"])):
        assert val[step]["val/greedy/num_items"] == GOALS
        assert val[step]["val/greedy/success_rate"] == half["success_rate"]
        ci95 = [val[step]["val/greedy/success_ci95_lo"], val[step]["val/greedy/success_ci95_hi"]]
        assert ci95 == half["success_ci95"]
        assert val[step]["val/greedy/mean_reward"] == half["mean_reward"]
    assert val[0]["val_expert/log_likelihood"] == pytest.approx(probe["before"])
    assert val[1]["val_expert/log_likelihood"] == pytest.approx(probe["after"])
    for name, n in (("trained", TRAINED), ("control", CONTROL)):
        for step, half in ((0, report[name]["before"]), (1, report[name]["after"])):
            assert val[step][f"val_{name}/greedy/num_items"] == n
            assert val[step][f"val_{name}/greedy/success_rate"] == half["success_rate"]
    plots = sorted(p.name for p in (run / "logs" / "plots").iterdir())
    assert plots == ["env_errors.png", "grpo_health.png", "learning_report.png", "length_turns.png",
                     "reward_success.png", "validation.png"]
    assert all((run / "logs" / "plots" / p).stat().st_size > 0 for p in plots)
