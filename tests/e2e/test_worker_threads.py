"""CPU workers get the node's cores for torch (Ray alone pins a fractional-CPU actor to one thread)."""
from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.timeout(120)


class _ThreadsWorker:
    def threads(self):
        import os

        import torch

        return os.environ.get("OMP_NUM_THREADS"), torch.get_num_threads()


def test_cpu_worker_threads_follow_the_node_cores_or_the_config():
    import ray
    from ray import cloudpickle

    from verl.agent_trainer.ppo.ray_trainer import RayPPOTrainer
    from verl.agent_trainer.ppo.worker_group import WorkerGroup
    from verl.config.schema import load_config

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray's workers cannot import a test module
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100_000_000, log_to_driver=False)
    try:
        threads_for = RayPPOTrainer._cpu_threads_per_worker
        default = SimpleNamespace(config=load_config({}, resolve_auto=False))
        assert threads_for(default, 1) == 2 and threads_for(default, 2) == 1 and threads_for(default, 3) == 1
        pinned = SimpleNamespace(config=load_config({"ray_init": {"worker_cpu_threads": 3}}, resolve_auto=False))
        assert threads_for(pinned, 1) == 3

        plain = WorkerGroup(_ThreadsWorker, (), num_cpus=0.5)
        assert plain.call_rank0("threads") == ("1", 1)  # what Ray does on its own
        ours = WorkerGroup(_ThreadsWorker, (), num_cpus=0.5, env_vars={"OMP_NUM_THREADS": str(threads_for(default, 1))})
        assert ours.call_rank0("threads") == ("2", 2)
    finally:
        ray.shutdown()
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_worker_cpu_threads_must_be_positive():
    from verl.config.schema import load_config

    with pytest.raises(ValueError, match="worker_cpu_threads"):
        load_config({"ray_init": {"worker_cpu_threads": 0}}, resolve_auto=False)
