"""End to end: `trainer.rollout_overlap=true` (one-step off-policy) on a real WebShop server with the tiny
model, through the real Hydra entry point.

Run 1 trains 3 steps with overlap: step 1's batch comes from the initial weights (staleness 0), steps 2
and 3 from the weights before the previous update (staleness 1), started while that update ran. Run 2
resumes from step 2's checkpoint: the pipeline is re-primed (step 3 generated with the restored weights,
staleness 0) on the same third batch of the seeded data order.

Whether the tiny rollout is still running when the update ends is up to timing, so the weight-version
guard is also checked with a forced order: the actor worker's rollout is held inside the engine until the
update has returned (`test_overlapped_rollout_keeps_one_weight_version_through_the_update`).
"""
from __future__ import annotations

import asyncio
import math
import threading

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


def test_overlapped_rollout_keeps_one_weight_version_through_the_update(tiny_model):
    """The worker side of the overlap, in a forced order (no timing): the rollout runs in a second thread,
    as in the workers' `rollout` concurrency group, and its first generate call waits inside the engine
    until the update (meta sync_weights=False, as the trainer sends it) has returned. The engine's weight
    version at every generate call, before and after it, is the version at the rollout's start."""
    import numpy as np
    from omegaconf import OmegaConf
    from unit.verl.workers.test_fsdp_workers import actor_worker, dict_config, make_batch

    from verl.protocol import DataProto

    cfg = OmegaConf.merge(dict_config(tiny_model), OmegaConf.from_dotlist([
        "actor_rollout_ref.actor.use_kl_loss=false", "data.max_prompt_length=256", "data.max_response_length=16",
        "actor_rollout_ref.rollout.max_tokens=4"]))
    worker = actor_worker(cfg, role="actor_rollout")
    worker.init_model()
    entered, release, seen, rollout = threading.Event(), threading.Event(), [], {}
    generate = worker.engine.generate

    async def held(prompt_ids, sampling):
        seen.append(worker.engine_version)
        entered.set()
        await asyncio.to_thread(release.wait, 120)  # until the update has returned
        out = await generate(prompt_ids, sampling)
        seen.append(worker.engine_version)
        return out

    def run_rollout(prompts):
        try:
            rollout["out"] = worker.generate_sequences(prompts)
        except Exception as exc:  # reported by the asserts below
            rollout["error"] = exc

    prompts = DataProto.from_dict(non_tensors={"prompt": np.array(
        [[{"role": "user", "content": f"question {i}"}] for i in range(2)], dtype=object)},
        meta_info={"global_step": 2})
    worker.engine.generate = held
    thread = threading.Thread(target=run_rollout, args=(prompts,))
    try:
        thread.start()
        assert entered.wait(120), f"the rollout never reached the engine: {rollout}"
        start_version = seen[0]
        data = make_batch(worker.tokenizer)
        data = data.union(worker.compute_log_prob(data))
        data.meta_info["sync_weights"] = False  # RayPPOTrainer._update_actor under trainer.rollout_overlap
        worker.update_actor(data)
        assert worker.actor_version == start_version + 1
    finally:
        release.set()
        thread.join(120)
    try:
        assert "error" not in rollout, rollout.get("error")
        assert len(seen) == 4 and set(seen) == {start_version}, seen
        assert rollout["out"].meta_info["rollout_weights_version"] == start_version
        worker.sync_weights()  # the join: only now does the engine get the update
        assert worker.engine_version == start_version + 1
    finally:
        worker.shutdown()
