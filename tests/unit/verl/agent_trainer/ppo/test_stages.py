"""The stages of a training step follow the config: the old_log_prob pass is skipped when the update uses the
engine's log-probs as pi_old and nothing else reads it."""
import pytest
from omegaconf import OmegaConf

from verl.agent_trainer.ppo.ray_trainer import RayPPOTrainer
from verl.config.schema import default_config_path, load_config


def _stages(*overrides):
    from verl.utils.tiny_model import build_tiny_model

    base = ["actor_rollout_ref.rollout.name=hf", f"actor_rollout_ref.model.path={build_tiny_model()}"]
    cfg = load_config(OmegaConf.merge(OmegaConf.load(default_config_path()),
                                      OmegaConf.from_dotlist([*base, *overrides])),
                      resolve_auto=False)
    return [name for name, _ in RayPPOTrainer(cfg)._stages()]


@pytest.mark.parametrize("overrides, expected", [
    ([], ["gen", "reward", "old_log_prob", "adv", "update_actor"]),
    (["actor_rollout_ref.actor.use_kl_loss=true"], ["gen", "reward", "old_log_prob", "ref", "adv", "update_actor"]),
    (["actor_rollout_ref.actor.use_rollout_log_probs=true"], ["gen", "reward", "adv", "update_actor"]),
    (["actor_rollout_ref.actor.use_rollout_log_probs=true", "algorithm.use_kl_in_reward=true"],
     ["gen", "reward", "old_log_prob", "ref", "adv", "update_actor"]),
])
def test_old_log_prob_stage_only_when_something_reads_it(overrides, expected):
    assert _stages("algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=2", *overrides) == expected


def test_filter_groups_adds_a_filter_stage_after_the_reward():
    stages = _stages("algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=2",
                     "actor_rollout_ref.actor.use_rollout_log_probs=true", "algorithm.filter_groups.enable=true")
    assert stages == ["gen", "reward", "filter", "adv", "update_actor"]


@pytest.mark.parametrize("overrides, message", [
    (["algorithm.filter_groups.enable=true", "actor_rollout_ref.rollout.n=1", "algorithm.adv_estimator=gae"],
     "rollout.n >= 2"),
    (["algorithm.filter_groups.metric=reward"], "algorithm.filter_groups.metric"),
    (["algorithm.filter_groups.max_num_gen_batches=-1"], "max_num_gen_batches"),
])
def test_filter_groups_config_errors_name_the_key(overrides, message):
    with pytest.raises(ValueError, match=message):
        _stages(*overrides)


def test_the_advantage_stage_drops_a_lone_survivor_and_logs_it():
    """rollout.n=2, GRPO: prompt b's other sample failed; the adv stage drops its survivor (no loss) and logs
    `rollout/lone_survivors`."""
    import torch

    from verl.protocol import DataProto
    from verl.utils.tiny_model import build_tiny_model

    base = ["actor_rollout_ref.rollout.name=hf", f"actor_rollout_ref.model.path={build_tiny_model()}",
            "algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=2"]
    trainer = RayPPOTrainer(load_config(OmegaConf.merge(OmegaConf.load(default_config_path()),
                                                        OmegaConf.from_dotlist(base)), resolve_auto=False))
    scores = torch.zeros(4, 3)
    scores[:, -1] = torch.tensor([1.0, 0.0, 1.0, 0.0])
    mask = torch.ones(4, 3, dtype=torch.long)
    mask[3] = 0
    batch = DataProto.from_dict(tensors={"token_level_scores": scores, "response_mask": mask},
                                non_tensors={"uid": ["a", "a", "b", "b#env_error3"]})
    metrics = {}
    out = trainer._advantages(batch, metrics)
    assert metrics["rollout/lone_survivors"] == 1 and "lone_survivors" not in out.meta_info
    assert out.batch["response_mask"][2:].sum() == 0 and out.batch["advantages"][2:].abs().sum() == 0
