"""Smoke run of the whole recipe through the real scripts: `bash scripts/webshop_sft.sh` (4 expert demos, fitted
tokenizer with product ids as single tokens, two 1-step SFT stages, the model card) and then
`bash scripts/webshop_train.sh` starting from that policy (POLICY_DIR: the shipped-policy path of the CPU profile),
1 GRPO step with the learning report."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(420)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_one_sft_step_then_one_grpo_step_from_that_policy(webshop_url, tmp_path):
    from verl.utils.model_card import read_model_card

    sft_dir = tmp_path / "policy"
    env = {**os.environ, "PYTHON": sys.executable, "PROFILE": "cpu", "ENV_ADDR": webshop_url,
           "RAY_USAGE_STATS_ENABLED": "0", "DEMOS": str(tmp_path / "demos.json"), "NUM_DEMOS": "4",
           "SFT_DIR": str(sft_dir), "SFT_STEPS": "1", "SFT_STAGE2_STEPS": "1", "EVAL": "0",
           "POLICY_DIR": str(tmp_path / "init"), "POLICY_VOCAB": "600",
           "POLICY_SIZES": "--hidden-size 64 --num-layers 2 --num-heads 2 --num-kv-heads 1 --intermediate-size 128"}
    env.pop("MODEL_PATH", None)
    sft = subprocess.run(["bash", "scripts/webshop_sft.sh", "data.micro_batch_size=2", "data.train_batch_size=4"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert sft.returncode == 0, f"{sft.stdout[-4000:]}\n{sft.stderr[-6000:]}"
    assert "4/4 successful expert episodes" in sft.stdout
    metrics = json.loads((sft_dir / "sft_metrics.json").read_text())
    assert metrics["steps"] == 1 and metrics["examples"] == 4
    assert metrics["model_path"] == f"{sft_dir}.stage1"  # the second stage starts from the first
    card = read_model_card(str(sft_dir))
    config = json.loads((sft_dir / "config.json").read_text())
    assert card["model"]["hidden_size"] == config["hidden_size"] == 64
    assert card["training"]["command"] == "bash scripts/webshop_sft.sh" and card["training"]["steps"] == 2
    assert [stage["steps"] for stage in card["training"]["stages"]] == [1, 1]
    # product ids are single tokens of the fitted tokenizer
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(sft_dir))
    demo_id = json.loads((tmp_path / "demos.json").read_text())[0]["conversations"]
    asin = next(t["value"].split("click[")[1].split("]")[0] for t in demo_id
                if t["from"] == "gpt" and "click[b0" in t["value"].lower())
    assert len(tok.encode(asin, add_special_tokens=False)) == 1, asin

    run = tmp_path / "run"
    train = subprocess.run(
        ["bash", "scripts/webshop_train.sh", "trainer.total_training_steps=1", "data.val_max_items=2",
         "data.train_batch_size=2", "actor_rollout_ref.rollout.n=2", "actor_rollout_ref.actor.ppo_mini_batch_size=2",
         "actor_rollout_ref.rollout.max_tokens=32", f"trainer.default_local_dir={run}",
         f"actor_rollout_ref.rollout.rollout_log_dir={run / 'rollouts'}", "ray_init.object_store_memory=200000000",
         "data.trained_val_file=null"],  # the trained-goal report has its own e2e test; keep this one short
        cwd=ROOT, env={**env, "POLICY_DIR": str(sft_dir)}, capture_output=True, text=True, timeout=300)
    assert train.returncode == 0, f"{train.stdout[-4000:]}\n{train.stderr[-8000:]}"
    assert "tiny random model" not in train.stdout
    report = json.loads((run / "learning_report.json").read_text())
    assert report["n_goals"] == 2 and report["train_steps"] == 1
    assert report["before"]["step"] == 0 and report["after"]["step"] == 1
    rows = [json.loads(line) for line in open(run / "logs" / "metrics.jsonl")]
    assert any("actor/pg_loss" in r for r in rows)


# each case is a whole SFT run (15-45 s on 2 cores); only (True, True) runs by default: it writes the permuted copies,
# keeps only them and cuts their rows (tests/unit/agentenv_webshop/test_demo_augment.py covers the rows and the
# copies); the copies added to the demos and PERMUTED_ONLY=1 alone are slow-only
@pytest.mark.parametrize("permuted_only,choice_rows",
                         [pytest.param(False, False, marks=pytest.mark.slow),
                          pytest.param(True, False, marks=pytest.mark.slow), (True, True)])
def test_sft_on_demos_with_permuted_product_id_copies(tmp_path, permuted_only, choice_rows):
    """PERMUTED_COPIES=1: the script writes the demos plus one id-permuted copy of each next to DEMOS and
    trains on that file (twice the conversations); with PERMUTED_ONLY=1 on the permuted copies alone, and with
    CHOICE_ROWS=1 on those copies cut after their first product click."""
    sft_dir = tmp_path / "policy"
    env = {**os.environ, "PYTHON": sys.executable, "DEMOS": str(tmp_path / "demos.json"), "NUM_DEMOS": "3",
           "SFT_DIR": str(sft_dir), "SFT_STEPS": "1", "SFT_STAGE2_STEPS": "0", "EVAL": "0", "PERMUTED_COPIES": "1",
           "PERMUTED_ONLY": "1" if permuted_only else "0", "CHOICE_ROWS": "1" if choice_rows else "0",
           "POLICY_DIR": str(tmp_path / "init"), "POLICY_VOCAB": "600",
           "POLICY_SIZES": "--hidden-size 64 --num-layers 2 --num-heads 2 --num-kv-heads 1 --intermediate-size 128"}
    env.pop("MODEL_PATH", None)
    sft = subprocess.run(["bash", "scripts/webshop_sft.sh", "data.micro_batch_size=2", "data.train_batch_size=2"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert sft.returncode == 0, f"{sft.stdout[-4000:]}\n{sft.stderr[-6000:]}"
    demos = json.loads((tmp_path / "demos.json").read_text())
    assert len(demos) == 3
    metrics = json.loads((sft_dir / "sft_metrics.json").read_text())
    assert metrics["steps"] == 1
    if choice_rows:
        augmented = json.loads((tmp_path / "demos.permonly1.choices.json").read_text())
        assert len(augmented) == 3 and all(d["ids_permuted"] for d in augmented)
        for row, demo in zip(augmented, demos, strict=True):
            last = row["conversations"][-1]
            assert last["from"] == "gpt" and re.search(r"click\[B0[0-9A-Z]{8}\]", last["value"])
            assert len(row["conversations"]) < len(demo["conversations"])
        assert metrics["examples"] == 3
    elif permuted_only:
        augmented = json.loads((tmp_path / "demos.permonly1.json").read_text())
        assert len(augmented) == 3 and all(d["ids_permuted"] for d in augmented)
        assert [len(d["conversations"]) for d in augmented] == [len(d["conversations"]) for d in demos]
        assert augmented != demos and metrics["examples"] == 3
    else:
        augmented = json.loads((tmp_path / "demos.perm1.json").read_text())
        assert augmented[:3] == demos and all(d["ids_permuted"] for d in augmented[3:])
        assert metrics["examples"] == 6


@pytest.mark.parametrize("flag", ["PERMUTED_ONLY", "CHOICE_ROWS"])
def test_permuted_only_flags_without_copies_exit_2_before_any_work(tmp_path, flag):
    """PERMUTED_ONLY=1 / CHOICE_ROWS=1 without PERMUTED_COPIES is refused at once (exit 2, a message, no files)."""
    env = {**os.environ, "PYTHON": sys.executable, flag: "1", "PERMUTED_COPIES": "0",
           "DEMOS": str(tmp_path / "demos.json"), "SFT_DIR": str(tmp_path / "policy"),
           "POLICY_DIR": str(tmp_path / "init")}
    run = subprocess.run(["bash", "scripts/webshop_sft.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2 and "need PERMUTED_COPIES >= 1" in run.stderr
    assert list(tmp_path.iterdir()) == []
