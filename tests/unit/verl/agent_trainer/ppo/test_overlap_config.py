"""`trainer.rollout_overlap`: off by default; settings it cannot honour fail when the trainer is built,
before any worker starts (the run itself: tests/e2e/test_rollout_overlap.py)."""
import pytest
from omegaconf import OmegaConf

from verl.agent_trainer.ppo.ray_trainer import RayPPOTrainer
from verl.config.schema import default_config_path, load_config


def _cfg(*overrides):
    return load_config(OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist(list(overrides))),
                       resolve_auto=False)


def test_rollout_overlap_is_off_by_default():
    assert _cfg().trainer.rollout_overlap is False


@pytest.mark.parametrize("overrides, message", [
    (["actor_rollout_ref.rollout.free_cache_engine=true"], "free_cache_engine=false"),
    (["trainer.device=cuda"], "null means on for CUDA"),  # free_cache_engine null resolves to on with CUDA
    (["algorithm.adv_estimator=remax"], "reward_baselines"),
    (["algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=2", "algorithm.filter_groups.enable=true"],
     "filter_groups"),
])
def test_rollout_overlap_refuses_what_it_cannot_honour(overrides, message):
    cfg = _cfg("trainer.rollout_overlap=true", "actor_rollout_ref.rollout.name=hf", *overrides)
    with pytest.raises(ValueError, match=message):
        RayPPOTrainer(cfg)


def test_rollout_overlap_refuses_sglang_at_start_up():
    cfg = _cfg("trainer.rollout_overlap=true", "actor_rollout_ref.rollout.name=sglang",
               "actor_rollout_ref.rollout.free_cache_engine=false")
    with pytest.raises(ValueError, match=r"rollout_overlap=true cannot run actor_rollout_ref\.rollout\.name=sglang"):
        RayPPOTrainer(cfg)


class _ActorGroup:
    """Records the meta_info each update_actor call sends to the workers."""

    def __init__(self):
        self.sent = []

    def call_dp(self, method, batch):
        from verl.protocol import DataProto

        self.sent.append((method, dict(batch.meta_info)))
        return DataProto(meta_info={"metrics": {}})


@pytest.mark.parametrize("overlap, sync", [(True, False), (False, True)])
def test_the_update_defers_the_weight_sync_only_under_overlap(overlap, sync):
    """Under overlap the update must leave the engine on the old weights (the next rollout is running on
    them); the join syncs. The worker side: tests/e2e/test_rollout_overlap.py."""
    from verl.protocol import DataProto
    from verl.utils.tiny_model import build_tiny_model

    cfg = _cfg(f"trainer.rollout_overlap={str(overlap).lower()}", "actor_rollout_ref.rollout.name=hf",
               "actor_rollout_ref.rollout.free_cache_engine=false",
               f"actor_rollout_ref.model.path={build_tiny_model()}")
    trainer = RayPPOTrainer(cfg)
    trainer.actor_wg = group = _ActorGroup()
    trainer.global_steps = 1
    trainer._update_actor(DataProto(meta_info={}), {})
    [(method, meta)] = group.sent
    assert method == "update_actor" and meta.get("sync_weights", True) is sync
