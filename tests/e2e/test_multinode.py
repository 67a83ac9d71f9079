"""End to end: one GRPO step on a two-node Ray cluster (`ray.cluster_utils.Cluster` on this machine,
CPU workers): the trainer joins it through `ray_init.address`, places one rank per node with
per-node placement groups, launches one WebShop server per node as the env fleet, trains a step
against both, and stops the fleet at the end."""
from __future__ import annotations

import dataclasses
import json
import math
import time

import pytest

from agentenv.health import server_answers

pytestmark = pytest.mark.timeout(300)

TRAIN_IDS = [f"webshop_{i}" for i in (3, 11, 25, 40)]


@pytest.fixture(scope="module")
def two_node_cluster():
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "object_store_memory": 100_000_000, "include_dashboard": False})
    cluster.add_node(num_cpus=1, object_store_memory=100_000_000)
    cluster.wait_for_nodes()
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def _two_node_config(tmp_path, address: str, *extra: str):
    """The typed config of a small GRPO run over both nodes (a rank and an env server on each)."""
    from omegaconf import OmegaConf

    from verl.config.schema import default_config_path, load_config
    from verl.utils.tiny_model import build_tiny_model

    model = build_tiny_model(str(tmp_path / "model"))
    train = tmp_path / "webshop_train.json"
    train.write_text(json.dumps([{"item_id": i} for i in TRAIN_IDS]))
    overrides = [
        "algorithm.adv_estimator=grpo", f"data.train_file={train}", "data.val_file=null",
        "data.train_batch_size=2", "data.max_prompt_length=1024", "data.max_response_length=128",
        f"actor_rollout_ref.model.path={model}", "actor_rollout_ref.rollout.name=hf",
        "actor_rollout_ref.rollout.n=2", "actor_rollout_ref.rollout.max_tokens=8",
        "actor_rollout_ref.rollout.max_model_len=2048", "actor_rollout_ref.agentgym.task_name=webshop",
        "actor_rollout_ref.agentgym.timeout=30", "actor_rollout_ref.agentgym.max_rounds=2",
        "actor_rollout_ref.agentgym.env_servers.num=2", "actor_rollout_ref.agentgym.env_servers.per_node=1",
        "actor_rollout_ref.actor.ppo_mini_batch_size=2", "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "algorithm.rounds_ctrl.rounds=2", "trainer.device=cpu", "trainer.nnodes=2", "trainer.total_training_steps=1",
        "trainer.logger=[console]", f"trainer.default_local_dir={tmp_path / 'ckpt'}", "trainer.export_hf=false",
        "trainer.resume_mode=disable", f"ray_init.address={address}", *extra,
    ]
    return load_config(OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist(overrides)))


def test_one_grpo_step_on_two_nodes(two_node_cluster, tmp_path):
    import ray

    from verl.agent_trainer.main_ppo import init_ray
    from verl.agent_trainer.ppo.ray_trainer import RayPPOTrainer

    config = _two_node_config(tmp_path, two_node_cluster.address)
    init_ray(config)
    nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert len(nodes) == 2

    trainer = RayPPOTrainer(config)
    try:
        trainer.init_workers()
        assert set(trainer.actor_wg.node_ids()) == nodes  # one training rank on each node
        assert sorted(trainer.env_fleet.node_ids()) == sorted(nodes)  # one env server on each node
        addrs = trainer.config.actor_rollout_ref.agentgym.env_addrs
        assert addrs == trainer.env_fleet.addresses and len(addrs) == 2
        metrics = trainer.fit()
    finally:
        trainer.shutdown()
    assert metrics["training/global_step"] == 1 and math.isfinite(metrics["actor/pg_loss"])
    # both servers served trajectories of the step; none failed
    sessions = [metrics[f"rollout/env_server{i}/sessions"] for i in range(2)]
    assert sum(sessions) == 4 and min(sessions) >= 1
    assert metrics["rollout/env_server0/failures"] == metrics["rollout/env_server1/failures"] == 0
    assert all(_stopped(a) for a in addrs)  # the fleet was stopped with the trainer


def test_rollout_overlap_on_two_ranks(two_node_cluster, tmp_path):
    """trainer.rollout_overlap with an FSDP rank per node: the overlapped rollout runs on both ranks
    beside the update's collectives; step 2 trains on step 1's pre-update weights' rollout."""
    from verl.agent_trainer.main_ppo import init_ray
    from verl.agent_trainer.ppo.ray_trainer import RayPPOTrainer

    config = _two_node_config(tmp_path, two_node_cluster.address, "trainer.rollout_overlap=true")
    config = dataclasses.replace(config, trainer=dataclasses.replace(config.trainer, total_training_steps=2))
    init_ray(config)
    trainer = RayPPOTrainer(config)
    try:
        trainer.init_workers()
        metrics = trainer.fit()
    finally:
        trainer.shutdown()
    assert metrics["training/global_step"] == 2 and math.isfinite(metrics["actor/pg_loss"])
    assert metrics["training/weight_staleness"] == 1 and metrics["timing_s/sync_weights"] > 0


def _stopped(addr: str, within_s: float = 20) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not server_answers(addr, timeout_s=2):
            return True
        time.sleep(0.2)
    return False
