"""Faults that only show with several ranks, reproduced on CPU with 2 gloo ranks (FSDP2)."""
from __future__ import annotations

import json
import os
import time

import pytest
import torch
from helpers import free_port
from unit.verl.workers.test_fsdp_workers import actor_worker, dict_config, make_batch


def _run_ranks(fn, args: tuple, world: int = 2, deadline_s: float = 150.0) -> None:
    """mp.spawn with a deadline: a rank stuck in a mismatched collective fails the test, not hangs it."""
    import torch.multiprocessing as mp

    ctx = mp.spawn(fn, args=(world, *args), nprocs=world, join=False)
    end = time.monotonic() + deadline_s
    try:
        while not ctx.join(timeout=1.0):
            if time.monotonic() > end:
                pytest.fail(f"ranks still running after {deadline_s:.0f} s (a collective mismatch hangs)")
    finally:
        for proc in ctx.processes:
            if proc.is_alive():
                proc.kill()


def _all_masked_micro_batch_rank(rank: int, world: int, port: int, model_path: str, out: str) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    from omegaconf import OmegaConf

    cfg = OmegaConf.merge(dict_config(model_path), OmegaConf.from_dotlist([
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1", "actor_rollout_ref.actor.use_kl_loss=false"]))
    worker = actor_worker(cfg, role="actor")
    worker.init_model()
    data = make_batch(worker.tokenizer)[rank * 2:(rank + 1) * 2]
    if rank == 1:  # e.g. a trajectory whose env reset failed: nothing of it is trained
        data.batch["response_mask"][0] = 0
        data.batch["advantages"][0] = 0
    data = data.union(worker.compute_log_prob(data))
    metrics = worker.update_actor(data).meta_info["metrics"]
    with open(os.path.join(out, f"rank{rank}.json"), "w") as fh:
        json.dump({"grad_norm": metrics["actor/grad_norm"]}, fh)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


def test_all_masked_micro_batch_on_one_rank_keeps_collectives_matched(tmp_path):
    from verl.utils.tiny_model import build_tiny_model

    model_path = build_tiny_model(str(tmp_path / "model"))
    _run_ranks(_all_masked_micro_batch_rank, (free_port(), model_path, str(tmp_path)))
    norms = [json.loads((tmp_path / f"rank{r}.json").read_text())["grad_norm"] for r in range(2)]
    assert norms[0] == pytest.approx(norms[1]) and norms[0] > 0


# ---------------------------------------------------------------- rollouts split across 2 ranks
def _split_like_call_dp(batch, world: int = 2):
    """What `WorkerGroup.call_dp` sends each rank: the batch padded to a multiple of world, chunked."""
    from verl.protocol import pad_dataproto_to_divisor

    padded, _ = pad_dataproto_to_divisor(batch, world)
    return padded.chunk(world)


def _prompts_times_n(num_prompts: int, n: int, item_ids=None):
    """The trainer's batch: one uid per prompt, n interleaved samples, rows numbered before the split."""
    import numpy as np

    from verl.protocol import DataProto

    ntb = {"uid": np.array([f"u{i}" for i in range(num_prompts)], dtype=object)}
    if item_ids is not None:
        ntb["item_id"] = np.array(item_ids, dtype=object)
    else:
        ntb["prompt"] = np.array([[{"role": "user", "content": f"question {i}"}] for i in range(num_prompts)],
                                 dtype=object)
    batch = DataProto.from_dict(non_tensors=ntb, meta_info={"global_step": 3, "max_rounds": 5})
    batch = batch.repeat(n, interleave=True)
    batch.non_tensor_batch["rollout_row"] = np.arange(len(batch))  # RayPPOTrainer._generate
    return batch


class _SeedRecorder:
    """Wraps an engine and records the sampling seed of every request."""

    def __init__(self, inner):
        self.inner, self.seeds = inner, []

    async def generate(self, prompt_ids, sampling):
        self.seeds.append(sampling.seed)
        return await self.inner.generate(prompt_ids, sampling)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer

    from verl.utils.tiny_model import build_tiny_model

    return AutoTokenizer.from_pretrained(build_tiny_model())


def _loop(engine, tok, url="http://127.0.0.1:9", **agentgym):
    from verl.workers.rollout.agent_loop import AgentLoop

    return AgentLoop(engine, tok, {"max_tokens": 32, "temperature": 1.0, "max_model_len": 4096},
                     {"task_name": "webshop", "env_addr": url, "max_retries": 0, "timeout": 10, **agentgym},
                     {"max_prompt_length": 1024, "max_response_length": 1024})


def test_seeds_unique_across_two_ranks_when_n_does_not_divide_the_share(tok):
    from scripted_engine import ScriptedWebshopEngine

    batch = _prompts_times_n(num_prompts=3, n=3)  # 9 rows -> 5 + 5 (one pad): groups straddle the ranks
    seeds = []
    for share in _split_like_call_dp(batch):
        engine = _SeedRecorder(ScriptedWebshopEngine(tok))
        loop = _loop(engine, tok)
        try:
            loop.run(share)
        finally:
            loop.close()
        seeds.append(engine.seeds)
    assert len(seeds[0]) == len(seeds[1]) == 5
    real = seeds[0] + seeds[1][:4]  # the pad row repeats row 0 and is dropped after the call
    assert len(set(real)) == 9, "two samples got the same seed"


def test_uneven_env_failures_at_step_across_ranks_carry_no_loss_and_leave_their_groups(webshop_url, tok):
    """Rank 1's env server resets but fails every /step: its trajectories produced tokens, then failed.
    Their rows carry no loss, and the survivor their failure left alone in its group is dropped."""
    import numpy as np
    from scripted_engine import ScriptedWebshopEngine
    from toy_env_server import ToyWebshopServer

    from verl.agent_trainer.ppo import core_algos
    from verl.protocol import DataProto

    batch = _prompts_times_n(3, 2, item_ids=["webshop_0", "webshop_1", "webshop_2"])  # 6 rows -> 3 + 3
    failing = ToyWebshopServer()
    failing.step_error_status = 503
    outs = []
    try:
        for rank, share in enumerate(_split_like_call_dp(batch)):
            loop = _loop(ScriptedWebshopEngine(tok), tok, webshop_url if rank == 0 else failing.url)
            try:
                outs.append(loop.run(share))
            finally:
                loop.close()
    finally:
        failing.stop()
    assert outs[0].meta_info["rollout/env_errors"] == 0 and outs[1].meta_info["rollout/env_errors"] == 3
    out = DataProto.concat(outs)
    errors = list(out.non_tensor_batch["env_error"])
    failed = np.array([bool(e) for e in errors])
    assert failed.tolist() == [False, False, False, True, True, True]
    assert all("503" in e for e in errors[3:]), errors
    R = out.batch["responses"].shape[1]
    produced = out.batch["attention_mask"][:, -R:].sum(-1)
    assert all(int(n) > 0 for n in produced[failed])  # the agent wrote its action before the env failed
    mask = out.batch["response_mask"]
    assert int(mask[failed].sum()) == 0 and all(int(m.sum()) > 0 for m in mask[~failed])
    uids = list(out.non_tensor_batch["uid"])
    assert uids[:3] == ["u0", "u0", "u1"] and all("#env_error" in u for u in uids[3:])

    # the advantage step as the trainer runs it: group u1 straddles the ranks (row 2 ok, row 3 failed), so
    # row 2 is alone in its group and is dropped; group u0 gets what it would get had no failure been drawn
    scores = out.batch["token_level_scores"].clone()
    out.batch["token_level_rewards"] = out.batch["token_level_scores"]
    core_algos.compute_advantage(out, "grpo")
    assert out.meta_info["lone_survivors"] == 1
    kept = out.batch["response_mask"]
    assert int(kept[2:].sum()) == 0 and int(kept[:2].sum()) == int(mask[:2].sum())
    adv = out.batch["advantages"]
    alone, _ = core_algos.compute_grpo_outcome_advantage(scores[:2], mask[:2], np.array(uids[:2], dtype=object))
    assert torch.equal(adv[:2], alone) and float(adv[2:].abs().sum()) == 0.0
    # the policy loss on these rows: whatever advantage a dropped or failed row had, it gets no gradient
    log_probs = out.batch["rollout_log_probs"].clone().requires_grad_(True)
    loss, _ = core_algos.compute_policy_loss_vanilla(out.batch["rollout_log_probs"], log_probs,
                                                     torch.ones_like(adv), kept)
    loss.backward()
    assert float(log_probs.grad[2:].abs().sum()) == 0.0 and float(log_probs.grad[:2].abs().sum()) > 0


def test_a_rollout_where_most_env_calls_fail_stops_the_step(tok):
    from scripted_engine import ScriptedWebshopEngine

    from verl.workers.rollout.agent_loop import TooManyEnvFailures, check_env_failures

    batch = _prompts_times_n(2, 2, item_ids=["webshop_0", "webshop_1"])
    loop = _loop(ScriptedWebshopEngine(tok), tok)  # nothing listens: every reset fails
    try:
        out = loop.run(batch)  # the loop itself reports, it does not raise
    finally:
        loop.close()
    assert out.meta_info["rollout/env_errors"] == 4
    with pytest.raises(TooManyEnvFailures, match=r"4/4 trajectories failed .*max_failed_frac=0.5.*127.0.0.1:9"):
        check_env_failures(out, 0.5, "http://127.0.0.1:9")
    assert check_env_failures(out, 1.0) == 4


# ---------------------------------------------------------------- global token-mean and dynamic micro-batches
def _uneven_batch(tokenizer):
    """4 rows for 2 ranks: rank 0's rows have 7 model tokens each, rank 1's 2 each, and row 3's response
    is 6 tokens shorter (so the two ranks' token budgets give different micro-batch counts)."""
    data = make_batch(tokenizer)
    R = data.batch["responses"].shape[1]
    data.batch["response_mask"][2:] = 0
    data.batch["response_mask"][2:, :2] = 1
    data.batch["attention_mask"][3, -6:] = 0
    data.batch["position_ids"] = (data.batch["attention_mask"].cumsum(-1) - 1).clamp(min=0)
    data.batch["advantages"] = data.batch["advantages"] * data.batch["response_mask"]
    assert data.batch["response_mask"][:, :R].sum() == 7 * 2 + 2 * 2
    return data


def _dynamic_overrides(budget: int | None) -> list[str]:
    base = ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1", "actor_rollout_ref.actor.use_kl_loss=false",
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1"]
    if budget is None:
        return base
    return base + ["actor_rollout_ref.actor.use_dynamic_bsz=true",
                   f"actor_rollout_ref.actor.ppo_max_token_len_per_gpu={budget}",
                   f"actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu={budget}"]


def _global_batch_rank(rank: int, world: int, port: int, model_path: str, out: str, budget: int) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    from omegaconf import OmegaConf

    worker = actor_worker(OmegaConf.merge(dict_config(model_path), OmegaConf.from_dotlist(
        _dynamic_overrides(budget))), role="actor")
    worker.init_model()
    data = _uneven_batch(worker.tokenizer)[rank * 2:(rank + 1) * 2]
    bins = worker.actor.micro_batching.split(data.batch["attention_mask"])  # synced: both ranks see 2
    data = data.union(worker.compute_log_prob(data))
    metrics = worker.update_actor(data).meta_info["metrics"]
    torch.save({"grad_norm": metrics["actor/grad_norm"], "old_log_probs": data.batch["old_log_probs"],
                "bins": [b.tolist() for b in bins]}, os.path.join(out, f"rank{rank}.pt"))
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


def test_two_ranks_with_uneven_tokens_and_token_budgets_give_the_single_process_gradient(tmp_path):
    """token-mean over both ranks' tokens (not each rank's own mean), and token-budget micro-batch counts
    synced across ranks (rank 0 needs 2 micro-batches, rank 1 alone 1: unsynced, FSDP's collectives
    would mismatch). Log-probs (also token-budgeted) and the gradient norm equal one process on all rows."""
    from omegaconf import OmegaConf

    from verl.utils.tiny_model import build_tiny_model
    from verl.workers.agent_actor.base import token_budget_bins

    model_path = build_tiny_model(str(tmp_path / "model"))
    ref = actor_worker(OmegaConf.merge(dict_config(model_path), OmegaConf.from_dotlist(
        _dynamic_overrides(None))), role="actor")
    ref.init_model()
    full = _uneven_batch(ref.tokenizer)
    lens = full.batch["attention_mask"].sum(-1).tolist()
    budget = lens[2] + lens[3]
    assert lens[0] + lens[1] > budget  # rank 0 alone would pack into 2 micro-batches, rank 1 into 1
    assert len(token_budget_bins(lens[:2], budget)) == 2 and len(token_budget_bins(lens[2:], budget)) == 1
    full = full.union(ref.compute_log_prob(full))
    ref_norm = ref.update_actor(full).meta_info["metrics"]["actor/grad_norm"]

    _run_ranks(_global_batch_rank, (free_port(), model_path, str(tmp_path), budget))
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    assert [len(r["bins"]) for r in ranks] == [2, 2]
    # on the model's own tokens (one process runs the LM head there only; FSDP ranks on every position)
    mask = full.batch["response_mask"].bool()
    torch.testing.assert_close(torch.cat([r["old_log_probs"] for r in ranks])[mask], full.batch["old_log_probs"][mask],
                               atol=1e-5, rtol=1e-5)
    for r in ranks:
        assert r["grad_norm"] == pytest.approx(ref_norm, rel=1e-4)


# ---------------------------------------------------------------- metrics of data-parallel calls
class _MetricsWorker:
    """Answers like the real workers: a rollout with per-rank metrics, an update with meta-only metrics."""

    def __init__(self):
        self.rank = int(os.environ["RANK"])

    def generate_sequences(self, data):
        from verl.protocol import DataProto

        out = DataProto.from_dict(tensors={"x": data.batch["x"] * 2})
        out.meta_info = {"rollout/env_errors": self.rank * 2, "rollout/reward_mean": float(self.rank),
                         "timing_s/rollout": 1.0 + self.rank, "global_step": 5}
        return out

    def update_actor(self, data):
        from verl.protocol import DataProto

        return DataProto(meta_info={"metrics": {"actor/pg_loss": float(data.batch["x"].sum()),
                                                "actor/grad_norm": 1.5}})


def test_call_dp_reduces_rollout_and_update_metrics_over_all_ranks():
    import sys

    import ray
    from ray import cloudpickle

    from verl.agent_trainer.ppo.worker_group import WorkerGroup
    from verl.protocol import DataProto

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray's workers cannot import a test module
    ray.init(num_cpus=1, include_dashboard=False, object_store_memory=100_000_000, log_to_driver=False)
    try:
        wg = WorkerGroup(_MetricsWorker, (), world_size=2, num_cpus=0.1)
        batch = DataProto.from_dict(tensors={"x": torch.arange(4.0)})
        out = wg.call_dp("generate_sequences", batch)
        assert out.batch["x"].tolist() == [0.0, 2.0, 4.0, 6.0]
        assert out.meta_info == {"rollout/env_errors": 2.0, "rollout/reward_mean": 0.5, "timing_s/rollout": 2.0,
                                 "global_step": 5}
        metrics = wg.call_dp("update_actor", batch).meta_info["metrics"]
        assert metrics == {"actor/pg_loss": (1.0 + 5.0) / 2, "actor/grad_norm": 1.5}  # rank 0 alone: 1.0
    finally:
        ray.shutdown()
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
