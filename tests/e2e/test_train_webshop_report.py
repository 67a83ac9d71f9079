"""End to end: `bash scripts/webshop_train.sh` (CPU profile) writes the learning report. With no shipped
policy (POLICY_DIR points nowhere) it says so and falls back to the tiny model, validates greedily on
the held-out goals, on training goals of the profile's fixed set (AgentItemId/webshop_train_learnable32_max50.json;
two of them here, to bound the time) and on its control goals (AgentItemId/webshop_control25_max50.json; two),
trains one GRPO step on that set, validates all three again, prints the before/after table of each goal set and
trained minus control, and writes learning_report.json and the plots of the run."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(300)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOALS = 3
TRAINED = 2
CONTROL = 2
PROBE = 5  # expert demonstrations of held-out goals (the script's default: 100)


def test_webshop_train_script_writes_learning_report(webshop_url, tmp_path):
    from verl.utils.tiny_model import build_tiny_model

    tiny = build_tiny_model(str(tmp_path / "tiny"))
    run = tmp_path / "run"
    env = {**os.environ, "PYTHON": sys.executable, "PROFILE": "cpu", "ENV_ADDR": webshop_url,
           "TINY_MODEL_DIR": tiny, "POLICY_DIR": str(tmp_path / "no_policy"), "RAY_USAGE_STATS_ENABLED": "0",
           "EXPERT_PROBE_GOALS": str(PROBE)}
    env.pop("MODEL_PATH", None)
    goals_file = os.path.join(ROOT, "AgentItemId", "webshop_train_learnable32_max50.json")
    trained_ids = json.loads(open(goals_file).read())[:TRAINED]
    trained_file = tmp_path / "trained.json"
    trained_file.write_text(json.dumps(trained_ids))
    control_ids = json.loads(open(os.path.join(ROOT, "AgentItemId", "webshop_control25_max50.json")).read())[:CONTROL]
    control_file = tmp_path / "control.json"
    control_file.write_text(json.dumps(control_ids))
    proc = subprocess.run(
        ["bash", "scripts/webshop_train.sh", "trainer.total_training_steps=1", f"data.val_max_items={GOALS}",
         "data.train_batch_size=2", f"trainer.default_local_dir={run}", f"data.trained_val_file={trained_file}",
         f"data.control_val_file={control_file}",
         f"actor_rollout_ref.rollout.rollout_log_dir={run / 'rollouts'}", "ray_init.object_store_memory=200000000"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    assert f"no policy at {tmp_path / 'no_policy'}" in proc.stdout and "tiny random model" in proc.stdout

    report = json.loads((run / "learning_report.json").read_text())
    assert {"n_goals", "before", "after", "change_ci95", "per_goal", "trained", "seconds", "seed"} <= set(report)
    assert report["n_goals"] == GOALS and report["seed"] == 0 and report["train_steps"] == 1
    assert report["trained"]["n_goals"] == TRAINED and report["trained"]["file"] == str(trained_file)
    assert report["trained"]["per_goal"]["ids"] == [r["item_id"] for r in trained_ids]
    assert report["control"]["n_goals"] == CONTROL and report["control"]["file"] == str(control_file)
    assert report["control"]["per_goal"]["ids"] == [r["item_id"] for r in control_ids]
    changes = [sec["after"]["success_rate"] - sec["before"]["success_rate"] for sec in (report["trained"],
                                                                                        report["control"])]
    assert report["trained_minus_control"]["success_change"] == pytest.approx(changes[0] - changes[1])
    probe = report["expert_probe"]  # the expert's actions on held-out goals: a log-likelihood per token < 0
    test_ids = [r["item_id"] for r in json.loads(open(os.path.join(ROOT, "AgentItemId", "webshop_test.json")).read())]
    assert probe["n_goals"] == PROBE and probe["per_goal"]["ids"] == test_ids[:PROBE]
    assert probe["before"] < 0 and probe["after"] < 0 and probe["change_ci95"][0] <= probe["change"]
    assert report["before"]["step"] == 0 and report["after"]["step"] == 1
    assert 0 < report["seconds"] < 240
    for sec in (report, report["trained"], report["control"]):
        lo, hi = sec["change_ci95"]
        assert -1.0 <= lo <= sec["after"]["success_rate"] - sec["before"]["success_rate"] + 1e-9 and hi >= lo
        pairs = list(zip(sec["per_goal"]["success_before"], sec["per_goal"]["success_after"], strict=True))
        assert sec["gained"] == sum(bool(a and not b) for b, a in pairs)
        assert sec["lost"] == sum(bool(b and not a) for b, a in pairs) and 0.0 < sec["mcnemar_p"] <= 1.0
    for half in (*(report[w] for w in ("before", "after")), *(report[s][w] for s in ("trained", "control")
                                                               for w in ("before", "after"))):
        assert set(half) == {"success_rate", "success_ci95", "mean_reward", "mean_reward_ci95", "step"}
        lo, hi = half["success_ci95"]
        assert 0.0 <= lo <= half["success_rate"] <= hi <= 1.0 and hi > lo  # Wilson is never empty on 3 goals
        lo, hi = half["mean_reward_ci95"]
        assert 0.0 <= lo <= half["mean_reward"] <= hi <= 1.0

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
