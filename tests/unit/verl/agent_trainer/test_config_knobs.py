"""Knobs the code reads are settable from the config and change behaviour (one test per family)."""
import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from verl.agent_trainer.config.schema import default_config_path, load_config
from verl.agent_trainer.ppo import core_algos as ca
from verl.workers.actor.dp_actor import DataParallelPPOActor


def _cfg(*overrides):
    return load_config(OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist(list(overrides))),
                       resolve_auto=False)


def _gigpo(algo):
    m = torch.tensor([[1, 0, 1, 1], [1, 0, 1, 0], [1, 0, 1, 0]], dtype=torch.float32)
    anchor = np.empty(3, dtype=object)
    anchor[:] = [["s0", "s1"], ["s0", "s1"], ["s0", "s2"]]
    rewards = np.empty(3, dtype=object)
    rewards[:] = [[0.0, 0.0], [0.0, 1.0], [0.5, 0.0]]
    r = torch.zeros(3, 4)
    r[1, 2], r[2, 2] = 1.0, 0.5
    adv, _ = ca.compute_gigpo_outcome_advantage(r, m, index=["u", "u", "u"], anchor_obs=anchor, turn_rewards=rewards,
                                                config=algo)
    return adv


def test_gigpo_knobs_are_settable_and_change_advantages():
    base = _cfg("algorithm.adv_estimator=gigpo")
    assert base.algorithm.gigpo.step_advantage_w == 1.0 and base.algorithm.gigpo.mode == "mean_norm"
    a = _gigpo(base.algorithm)
    no_step = _gigpo(_cfg("algorithm.gigpo.step_advantage_w=0.0").algorithm)
    std = _gigpo(_cfg("algorithm.gigpo.mode=mean_std_norm").algorithm)
    assert not torch.allclose(a, no_step) and not torch.allclose(a, std)
    # Without the step term only the episode advantage is left: one value per sample on its model tokens.
    assert torch.allclose(no_step[:, 0], no_step[:, 2])
    with pytest.raises(ValueError, match=r"algorithm\.gigpo\.mode='mean'"):
        _cfg("algorithm.gigpo.mode=mean")


def _actor_loss(*overrides):
    actor = DataParallelPPOActor(_cfg(*overrides).actor_rollout_ref.actor, torch.nn.Linear(1, 1), None)
    old = torch.zeros(2, 4)
    logp = torch.tensor([[-0.1, -2.0, -2.0, -2.0], [-0.5, -0.3, -1.0, -2.0]])
    adv = torch.tensor([[3.0, 0.0, 0.0, 0.0], [1.0, -1.0, 0.5, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0]])
    loss, _ = actor._policy_loss(old, logp, adv, mask)
    return loss.item()


def test_policy_loss_knobs_reach_the_loss():
    kl_cov = "actor_rollout_ref.actor.policy_loss.loss_mode=kl_cov"
    base = _actor_loss(kl_cov, "actor_rollout_ref.actor.policy_loss.kl_cov_ratio=0.2")
    assert _actor_loss(kl_cov, "actor_rollout_ref.actor.policy_loss.kl_cov_ratio=0.2",
                       "actor_rollout_ref.actor.policy_loss.ppo_kl_coef=5.0") != pytest.approx(base)
    assert _actor_loss(kl_cov, "actor_rollout_ref.actor.policy_loss.kl_cov_ratio=0.0") != pytest.approx(base)
    clip_cov = "actor_rollout_ref.actor.policy_loss.loss_mode=clip_cov"
    wide = ["actor_rollout_ref.actor.policy_loss.clip_cov_lb=-1e9", "actor_rollout_ref.actor.policy_loss.clip_cov_ub=1e9"]
    kept = _actor_loss(clip_cov, *wide, "actor_rollout_ref.actor.policy_loss.clip_cov_ratio=0.0")
    cut = _actor_loss(clip_cov, *wide, "actor_rollout_ref.actor.policy_loss.clip_cov_ratio=0.5")
    assert kept != pytest.approx(cut)
    with pytest.raises(ValueError, match=r"policy_loss\.clip_cov_lb"):
        _cfg("actor_rollout_ref.actor.policy_loss.clip_cov_lb=9.0")


def test_loss_scale_factor_divides_the_dr_grpo_loss():
    mode = "actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum-norm"
    by_length = _actor_loss(mode)                                   # null: divide by the response length (4)
    by_one = _actor_loss(mode, "actor_rollout_ref.actor.loss_scale_factor=1.0")
    assert by_one == pytest.approx(4 * by_length)
    with pytest.raises(ValueError, match=r"actor_rollout_ref\.actor\.loss_scale_factor"):
        _cfg("actor_rollout_ref.actor.loss_scale_factor=-1")
