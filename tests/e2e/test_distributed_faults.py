"""Faults that only show with several ranks, reproduced on CPU with 2 gloo ranks (FSDP2)."""
from __future__ import annotations

import json
import os
import time

import pytest
import torch

from helpers import free_port
from unit.verl.workers.actor.test_fsdp_workers import dict_config, make_batch


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

    from verl.workers.fsdp_workers import ActorRolloutRefWorker

    cfg = OmegaConf.merge(dict_config(model_path), OmegaConf.from_dotlist([
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1", "actor_rollout_ref.actor.use_kl_loss=false"]))
    worker = ActorRolloutRefWorker(cfg, role="actor")
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
