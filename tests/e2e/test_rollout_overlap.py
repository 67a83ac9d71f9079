"""End to end: `trainer.rollout_overlap=true` (one-step off-policy) on a real WebShop server with the tiny
model, through the real Hydra entry point.

Run 1 trains 3 steps with overlap: step 1's batch comes from the initial weights (staleness 0), steps 2
and 3 from the weights before the previous update (staleness 1), started while that update ran. Run 2
resumes from step 2's checkpoint: the pipeline is re-primed (step 3 generated with the restored weights,
staleness 0) on the same third batch of the seeded data order.
"""
from __future__ import annotations

import math

import pytest
from e2e.test_train_webshop import _rollout_item_ids, grpo_args, read_metrics, run_main_ppo

pytestmark = pytest.mark.timeout(600)


def test_overlap_trains_one_step_off_policy_and_resumes(webshop_url, tiny_model, tmp_path):
    args = grpo_args(tmp_path, tiny_model, webshop_url) + ["trainer.rollout_overlap=true"]
    run_main_ppo(args + ["trainer.total_training_steps=3"], cwd=str(tmp_path))

    rows = read_metrics(str(tmp_path / "logs" / "metrics.jsonl"))
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert [r["training/weight_staleness"] for r in rows] == [0, 1, 1]
    for row in rows:
        for key in ("actor/pg_loss", "actor/kl_loss"):
            assert isinstance(row[key], float) and math.isfinite(row[key]), (key, row.get(key))
        assert row["timing_s/sync_weights"] > 0 and row["timing_s/update_actor"] > 0
    # steps 1 and 2 started the next step's rollout beside their update; the last step had none to start
    for row in rows[:2]:
        assert row["timing_s/overlap"] > 0 and row["timing_s/rollout_wait"] >= 0
    assert "timing_s/overlap" not in rows[2]
    # validation at step 2 ran after the join, on the updated weights
    assert 0.0 <= rows[1]["val/greedy/success_rate"] <= 1.0 and rows[1]["val/greedy/num_turns"] >= 1

    import torch

    # step 2's checkpoint holds the loader as before step 3's rows were drawn for the overlapped rollout
    ckpt = tmp_path / "ckpt"
    state = torch.load(ckpt / "global_step_2" / "trainer_state.pt", weights_only=False)
    assert state["global_step"] == 2 and state["dataloader"]["sampler"]["position"] == 4

    from verl.utils.dataset import AgentDataset, StatefulDataLoader

    order = [[r["item_id"] for r in b] for b in StatefulDataLoader(AgentDataset(str(tmp_path / "webshop_train.json")),
                                                                   2, seed=3)]
    for step in (1, 2, 3):  # the overlapped rollouts were dumped under the step that trained on them
        assert _rollout_item_ids(tmp_path / "rollouts", step=step) == sorted(order[step - 1] * 2)

    resumed = [a for a in args if not a.startswith(("trainer.log_dir=", "actor_rollout_ref.rollout.rollout_log_dir="))]
    run_main_ppo(resumed + ["trainer.total_training_steps=3", "trainer.resume_mode=resume_path",
                            f"trainer.resume_from_path={ckpt / 'global_step_2'}",
                            f"trainer.log_dir={tmp_path / 'logs2'}",
                            f"actor_rollout_ref.rollout.rollout_log_dir={tmp_path / 'rollouts2'}"], cwd=str(tmp_path))
    rows2 = read_metrics(str(tmp_path / "logs2" / "metrics.jsonl"))
    assert [r["step"] for r in rows2] == [3]
    assert rows2[0]["training/weight_staleness"] == 0  # re-primed: generated with the restored weights
    assert math.isfinite(rows2[0]["actor/pg_loss"])
    assert _rollout_item_ids(tmp_path / "rollouts2", step=3) == sorted(order[2] * 2)
