"""Hand-computed checks of every estimator, loss, aggregation mode and KL estimator in core_algos."""
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from verl.agent_trainer.ppo import core_algos as ca
from verl.config.schema import ActorConfig, PolicyLossConfig
from verl.protocol import DataProto
from verl.utils import torch_functional as VF

ALGO = SimpleNamespace(gamma=1.0, lam=1.0, norm_adv_by_std_in_grpo=True)


# ----------------------------------------------------------------------------- registries
def test_register_adv_est_semantics():
    def my_est(token_level_rewards, response_mask, config=None, **kw):
        return token_level_rewards, token_level_rewards

    def other(token_level_rewards, response_mask, config=None, **kw):
        return token_level_rewards, token_level_rewards

    try:
        assert ca.register_adv_est("my_test_est")(my_est) is my_est
        assert ca.register_adv_est("my_test_est")(my_est) is my_est          # same function: no-op
        with pytest.raises(ValueError, match="my_test_est"):
            ca.register_adv_est("my_test_est")(other)
        assert ca.get_adv_estimator_fn("my_test_est") is my_est
        assert ca.get_adv_estimator_fn(ca.AdvantageEstimator.GRPO) is ca.compute_grpo_outcome_advantage
    finally:
        ca.ADV_ESTIMATOR_REGISTRY.pop("my_test_est", None)
    with pytest.raises(ValueError) as err:
        ca.get_adv_estimator_fn("GAE")                                       # case-sensitive
    assert "'GAE'" in str(err.value) and "gae" in str(err.value) and "gigpo" in str(err.value)
    for member in ca.AdvantageEstimator:
        assert member.value in ca.ADV_ESTIMATOR_REGISTRY


def test_register_policy_loss_semantics():
    with pytest.raises(ValueError, match="vanilla"):
        ca.register_policy_loss("vanilla")(lambda *a, **k: None)
    assert ca.get_policy_loss_fn("vanilla") is ca.compute_policy_loss_vanilla
    with pytest.raises(ValueError) as err:
        ca.get_policy_loss_fn("ppo")
    for name in ("vanilla", "gspo", "gpg", "cispo", "clip_cov", "kl_cov"):
        assert name in str(err.value)


# ----------------------------------------------------------------------------- outcome estimators
def _scores(*vals, T=3):
    r = torch.zeros(len(vals), T)
    r[:, -1] = torch.tensor(vals, dtype=torch.float32)
    return r


def test_grpo_two_sample_groups_give_pm_0707_and_equal_scores_give_zero():
    torch.manual_seed(0)
    r = _scores(0.3, 1.7, 5.0, -2.0, 1.0, 1.0)
    m = torch.ones(6, 3)
    idx = np.array(["a", "a", "b", "b", "c", "c"], dtype=object)
    adv, ret = ca.compute_grpo_outcome_advantage(r, m, index=idx, config=ALGO)
    expected = torch.tensor([-1, 1, 1, -1, 0, 0]) / math.sqrt(2)
    assert torch.allclose(adv[:, 0], expected, atol=1e-5)
    assert torch.equal(adv, ret)
    m2 = torch.tensor([[1.0, 1, 0]] * 6)
    adv2, _ = ca.compute_grpo_outcome_advantage(r, m2, index=idx, config=ALGO)
    assert torch.all(adv2[:, 2] == 0)                                        # masked tokens are 0
    dr, _ = ca.compute_grpo_outcome_advantage(r, m, index=idx, norm_adv_by_std_in_grpo=False, config=ALGO)
    assert torch.allclose(dr[:2, 0], torch.tensor([-0.7, 0.7]), atol=1e-6)   # Dr.GRPO: s - mean
    single, _ = ca.compute_grpo_outcome_advantage(_scores(2.0), torch.ones(1, 3), index=["z"], config=ALGO)
    assert single[0, 0].item() == pytest.approx(2.0, rel=1e-5)               # singleton: mean 0, std 1


def _grpo_loop(scores, index, eps=1e-6, norm=True):
    out = torch.zeros_like(scores)
    for i in range(len(scores)):
        members = torch.stack([scores[j] for j in range(len(scores)) if index[j] == index[i]])
        mean, std = (members.mean(), members.std()) if len(members) > 1 else (torch.tensor(0.0), torch.tensor(1.0))
        out[i] = (scores[i] - mean) / (std + eps) if norm else scores[i] - mean
    return out


def _rloo_loop(scores, index):
    out = torch.zeros_like(scores)
    for i in range(len(scores)):
        others = [scores[j] for j in range(len(scores)) if index[j] == index[i] and j != i]
        out[i] = scores[i] - torch.stack(others).mean() if others else scores[i]
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_grpo_and_rloo_match_loop_versions_including_singletons(seed):
    g = torch.Generator().manual_seed(seed)
    bs, T = 40, 7
    index = np.array([f"g{int(i)}" for i in torch.randint(0, 12, (bs,), generator=g)], dtype=object)
    m = (torch.rand(bs, T, generator=g) > 0.3).float()
    m[:, 0] = 1
    r = torch.randn(bs, T, generator=g) * m
    s = r.sum(-1)
    for norm in (True, False):
        adv, _ = ca.compute_grpo_outcome_advantage(r, m, index=index, norm_adv_by_std_in_grpo=norm)
        assert torch.allclose(adv, _grpo_loop(s, index, norm=norm).unsqueeze(-1) * m, rtol=1e-5, atol=1e-5)
    adv, _ = ca.compute_rloo_outcome_advantage(r, m, index=index)
    assert torch.allclose(adv, _rloo_loop(s, index).unsqueeze(-1) * m, rtol=1e-5, atol=1e-5)


def test_rloo_hand_values():
    adv, _ = ca.compute_rloo_outcome_advantage(_scores(1.0, 2.0, 3.0, 4.0), torch.ones(4, 3),
                                               index=["a", "a", "a", "s"])
    assert torch.allclose(adv[:, 1], torch.tensor([-1.5, 0.0, 1.5, 4.0]))


def test_grpo_passk_only_best_sample_gets_gap():
    adv, _ = ca.compute_grpo_passk_outcome_advantage(_scores(1.0, 3.0, 3.0, 0.0, 2.0), torch.ones(5, 3),
                                                     index=["a", "a", "a", "b", "b"], norm_adv_by_std_in_grpo=False)
    assert adv[:, 0].tolist() == [0.0, 0.0, 0.0, 0.0, 2.0]                   # tie in 'a': gap 0, first best
    adv, _ = ca.compute_grpo_passk_outcome_advantage(_scores(0.0, 1.0), torch.ones(2, 3), index=["a", "a"],
                                                     norm_adv_by_std_in_grpo=True)
    assert adv[:, 0].tolist() == pytest.approx([0.0, 1.0 / (1 / math.sqrt(2) + 1e-6)])
    with pytest.raises(ValueError, match="at least 2"):
        ca.compute_grpo_passk_outcome_advantage(_scores(1.0), torch.ones(1, 3), index=["a"])


def test_opo_gpg_remax_and_rpp_baseline_hand_values():
    r = _scores(1.0, 0.0)
    m = torch.tensor([[1.0, 1, 1], [1.0, 0, 0]])                             # lengths 3 and 1
    opo, _ = ca.compute_opo_outcome_advantage(r, m, index=["a", "a"])
    assert opo[0, 0].item() == pytest.approx(1 - 0.75) and opo[1, 0].item() == pytest.approx(-0.75)
    gpg, _ = ca.compute_gpg_outcome_advantage(_scores(1.0, 0.0, 0.0, 0.0), torch.ones(4, 3), index=["a", "a", "b", "b"])
    assert gpg[:, 0].tolist() == pytest.approx([2.0, -2.0, 0.0, 0.0])        # alpha = 4 / 1 nonzero
    rr = torch.tensor([[0.0, 1.0, 0.0, 2.0]])
    mm = torch.tensor([[1.0, 1.0, 0.0, 1.0]])
    adv, ret = ca.compute_remax_outcome_advantage(rr, reward_baselines=torch.tensor([0.5]), response_mask=mm)
    assert ret.tolist() == [[3.0, 3.0, 0.0, 2.0]] and adv.tolist() == [[2.5, 2.5, 0.0, 1.5]]
    base, _ = ca.compute_reinforce_plus_plus_baseline_outcome_advantage(_scores(1.0, 3.0, 0.0, 4.0), torch.ones(4, 3),
                                                                        index=["a", "a", "b", "b"])
    assert VF.masked_mean(base, torch.ones(4, 3)).item() == pytest.approx(0.0, abs=1e-6)
    assert base[0, 0] < 0 < base[1, 0] and base[2, 0] < base[0, 0]           # -1, +1, -2, +2 then whitened


# ----------------------------------------------------------------------------- temporal estimators
def _gae_loop(r, v, m, gamma, lam):
    """verl's loop: mask-0 tokens keep nextV and lastgae unchanged."""
    bs, T = r.shape
    adv = torch.zeros(bs, T)
    next_v = torch.zeros(bs)
    last = torch.zeros(bs)
    for t in reversed(range(T)):
        delta = r[:, t] + gamma * next_v - v[:, t]
        cand = delta + gamma * lam * last
        next_v = torch.where(m[:, t] > 0, v[:, t], next_v)
        last = torch.where(m[:, t] > 0, cand, last)
        adv[:, t] = last
    returns = adv + v
    return VF.masked_whiten(adv, m) * m, returns * m


def test_multi_turn_gae_ignores_observation_tokens():
    r = torch.tensor([[0, 0, 0.1, 0.1, 0.1, 0, 0, 0.1, 1, 0, 0]])
    m = torch.tensor([[0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 0]], dtype=torch.float32)
    torch.manual_seed(3)
    gamma, lam = torch.rand(2).tolist()
    v1 = torch.randn(1, 11)
    v2 = torch.randn(1, 11)
    v1[m.bool()] = v2[m.bool()] = torch.tensor([4.0, 5, 6, 7, 9])
    r2 = r.clone()
    r2[~m.bool()] = torch.randn(int((m == 0).sum()))                         # rewards on mask-0 tokens change too
    a1, ret1 = ca.compute_gae_advantage_return(r, v1, m, gamma=gamma, lam=lam)
    a2, ret2 = ca.compute_gae_advantage_return(r2, v2, m, gamma=gamma, lam=lam)
    assert torch.equal(a1, a2) and torch.equal(ret1 * m, ret2 * m)
    ra, rret = _gae_loop(r, v1, m, gamma, lam)
    assert torch.allclose(a1, ra, atol=1e-5) and torch.allclose(ret1, rret, atol=1e-5)


@pytest.mark.parametrize("gamma,lam", [(1.0, 1.0), (0.99, 0.95), (0.5, 0.0)])
def test_gae_blocked_scan_matches_loop_on_long_sequences(gamma, lam):
    g = torch.Generator().manual_seed(7)
    bs, T = 4, 300                                                           # > one 64-token block, ragged tail
    m = (torch.rand(bs, T, generator=g) > 0.5).float()
    r = torch.randn(bs, T, generator=g) * m * 0.1
    v = torch.randn(bs, T, generator=g)
    adv, ret = ca.compute_gae_advantage_return(r, v, m, config=SimpleNamespace(gamma=gamma, lam=lam))
    ra, rret = _gae_loop(r, v, m, gamma, lam)
    assert torch.allclose(adv, ra, atol=1e-4) and torch.allclose(ret, rret, atol=1e-4)


def test_reinforce_plus_plus_skips_observations_and_matches_loop():
    g = torch.Generator().manual_seed(11)
    bs, T, gamma = 3, 150, 0.9
    m = (torch.rand(bs, T, generator=g) > 0.4).float()
    r = torch.randn(bs, T, generator=g) * m
    adv, ret = ca.compute_reinforce_plus_plus_outcome_advantage(r, m, config=SimpleNamespace(gamma=gamma))
    ref = torch.zeros(bs, T)
    G = torch.zeros(bs)
    for t in reversed(range(T)):                                             # recursion over model tokens only
        G = torch.where(m[:, t] > 0, r[:, t] + gamma * G, G)
        ref[:, t] = G
    assert torch.allclose(ret, ref * m, atol=1e-4)
    assert torch.allclose(adv, VF.masked_whiten(ref, m) * m, atol=1e-4)
    # The final reward reaches the first turn even though observation tokens sit in between.
    _, ret1 = ca.compute_reinforce_plus_plus_outcome_advantage(
        torch.tensor([[0.0, 0, 0, 1.0]]), torch.tensor([[1.0, 0, 0, 1.0]]), gamma=1.0)
    assert ret1.tolist() == [[1.0, 0.0, 0.0, 1.0]]


def test_missing_hyperparameter_names_the_key():
    with pytest.raises(ValueError, match="algorithm.gamma"):
        ca.compute_gae_advantage_return(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), lam=1.0)


# ----------------------------------------------------------------------------- GiGPO
def test_gigpo_step_groups_on_constructed_example():
    # Two trajectories of one prompt (uid u), one of another (uid w).
    # Turns are runs of mask-1 tokens: sample 0 has 2 turns, sample 1 has 2 turns, sample 2 has 1.
    m = torch.tensor([[1, 1, 0, 1, 0, 0],
                      [1, 0, 0, 1, 1, 0],
                      [1, 1, 1, 0, 0, 0]], dtype=torch.float32)
    r = torch.zeros(3, 6)
    r[0, 3], r[1, 4], r[2, 2] = 1.0, 0.0, 1.0                                # final reward on last model token
    anchor = np.empty(3, dtype=object)
    anchor[:] = [["home", "results"], ["home", "item"], ["home"]]
    turn_rewards = np.empty(3, dtype=object)
    turn_rewards[:] = [[0.0, 1.0], [0.0, 0.0], [1.0]]
    cfg = SimpleNamespace(gamma=0.5, gigpo=SimpleNamespace(step_advantage_w=1.0, mode="mean_norm"))
    adv, _ = ca.compute_gigpo_outcome_advantage(r, m, index=["u", "u", "w"], anchor_obs=anchor,
                                                turn_rewards=turn_rewards, config=cfg)
    # Episode: u scores (1, 0) -> +-0.5; w singleton -> mean 0 -> 1.0.
    # Steps: ("u","home") = {s0 t0: G=0.5, s1 t0: G=0} -> +-0.25; "results", "item", ("w","home") singletons -> 0.
    expected = torch.tensor([[0.75, 0.75, 0, 0.5, 0, 0],
                             [-0.75, 0, 0, -0.5, -0.5, 0],
                             [1.0, 1.0, 1.0, 0, 0, 0]])
    assert torch.allclose(adv, expected, atol=1e-6)
    # Same anchor text under a different uid is a different step group.
    anchor2 = np.empty(3, dtype=object)
    anchor2[:] = [["home", "results"], ["home", "results"], ["home"]]
    adv2, _ = ca.compute_gigpo_outcome_advantage(r, m, index=["u", "u", "w"], anchor_obs=anchor2,
                                                 turn_rewards=turn_rewards, config=cfg)
    assert adv2[0, 3].item() == pytest.approx(0.5 + 0.5) and adv2[1, 3].item() == pytest.approx(-0.5 - 0.5)
    std_mode = SimpleNamespace(gamma=0.5, gigpo=SimpleNamespace(step_advantage_w=0.0, mode="mean_std_norm"))
    adv3, _ = ca.compute_gigpo_outcome_advantage(r, m, index=["u", "u", "w"], anchor_obs=anchor,
                                                 turn_rewards=turn_rewards, config=std_mode)
    assert adv3[0, 0].item() == pytest.approx(1 / math.sqrt(2), rel=1e-4)


def test_gigpo_derives_anchors_from_messages_and_checks_lengths():
    msgs = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "Ok."},
            {"role": "user", "content": "obs1"}, {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "obs2"}, {"role": "assistant", "content": "a2"}]
    anchors = ca.anchor_obs_from_messages([msgs], [2])
    assert anchors[0] == ["obs1", "obs2"]
    m = torch.tensor([[1.0, 0, 1.0]])
    with pytest.raises(ValueError, match="sample 0"):
        ca.compute_gigpo_outcome_advantage(torch.zeros(1, 3), m, index=["u"], anchor_obs=[["x"]],
                                           turn_rewards=[[0.0]], gamma=1.0)


# ----------------------------------------------------------------------------- aggregation
def test_agg_loss_modes_on_2x3_mask():
    L = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    m = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    assert ca.agg_loss(L, m, "token-mean").item() == pytest.approx((1 + 2 + 4) / 3)
    assert ca.agg_loss(L, m, "seq-mean-token-sum").item() == pytest.approx((3 + 4) / 2)
    assert ca.agg_loss(L, m, "seq-mean-token-mean").item() == pytest.approx((1.5 + 4) / 2)
    assert ca.agg_loss(L, m, "seq-mean-token-sum-norm").item() == pytest.approx((3 + 4) / 2 / 3)
    assert ca.agg_loss(L, m, "seq-mean-token-sum-norm", loss_scale_factor=10).item() == pytest.approx(0.35)
    assert ca.agg_loss(L, m, "token-mean", batch_num_tokens=7, dp_size=2).item() == pytest.approx(2.0)
    assert ca.agg_loss(L, torch.zeros(2, 3), "token-mean").item() == 0.0
    with pytest.raises(ValueError, match="sample-mean"):
        ca.agg_loss(L, m, "sample-mean")


# ----------------------------------------------------------------------------- policy losses
def test_vanilla_at_ratio_one_is_minus_mean_adv_with_reinforce_gradient():
    torch.manual_seed(0)
    old = torch.randn(3, 5)
    adv = torch.randn(3, 5)
    m = (torch.rand(3, 5) > 0.3).float()
    logp = old.clone().requires_grad_(True)
    loss, metrics = ca.compute_policy_loss_vanilla(old, logp, adv, m, "token-mean", ActorConfig())
    assert loss.item() == pytest.approx(-VF.masked_mean(adv, m).item(), abs=1e-6)
    assert metrics["actor/pg_clipfrac"] == 0.0 and metrics["actor/ppo_kl"] == 0.0
    (grad,) = torch.autograd.grad(loss, logp)
    logp2 = old.clone().requires_grad_(True)
    reinforce = -(adv * logp2 * m).sum() / m.sum()
    (grad2,) = torch.autograd.grad(reinforce, logp2)
    assert torch.allclose(grad, grad2, atol=1e-7)


def test_vanilla_dual_clip_caps_negative_advantages_and_clip_higher():
    old = torch.zeros(1, 2)
    adv = torch.tensor([[-2.0, 1.0]])
    m = torch.tensor([[1.0, 0.0]])
    logp = torch.log(torch.tensor([[5.0, 1.0]])).requires_grad_(True)        # ratio 5 > c = 3
    loss, metrics = ca.compute_policy_loss_vanilla(old, logp, adv, m, "token-mean", ActorConfig(clip_ratio_c=3.0))
    assert loss.item() == pytest.approx(6.0)                                 # -A * c
    (grad,) = torch.autograd.grad(loss, logp)
    assert grad.abs().sum().item() == 0.0
    assert metrics["actor/pg_clipfrac_lower"] == 1.0
    with pytest.raises(ValueError, match="clip_ratio_c"):
        ca.compute_policy_loss_vanilla(old, logp, adv, m, "token-mean", ActorConfig(clip_ratio_c=1.0))
    # Clip-higher: ratio 1.25 with A > 0 is clipped at 1.2 but not at 1.28.
    lp = torch.log(torch.tensor([[1.25]]))
    sym, _ = ca.compute_policy_loss_vanilla(torch.zeros(1, 1), lp, torch.ones(1, 1), torch.ones(1, 1), "token-mean",
                                            ActorConfig())
    high, _ = ca.compute_policy_loss_vanilla(torch.zeros(1, 1), lp, torch.ones(1, 1), torch.ones(1, 1), "token-mean",
                                             ActorConfig(clip_ratio_high=0.28))
    assert sym.item() == pytest.approx(-1.2) and high.item() == pytest.approx(-1.25)


def test_other_policy_losses_hand_values():
    old = torch.zeros(2, 3)
    adv = torch.tensor([[1.0, 1.0, 1.0], [-1.0, -1.0, 0.0]])
    m = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    cfg = ActorConfig()
    # gspo at ratio 1: seq-mean-token-mean of -A = (-1 + 1) / 2 = 0
    loss, _ = ca.compute_policy_loss_gspo(old, old.clone(), adv, m, "token-mean", cfg)
    assert loss.item() == pytest.approx(0.0, abs=1e-7)
    # gpg: -logp * A, token-mean
    logp = torch.full((2, 3), -0.5)
    loss, _ = ca.compute_policy_loss_gpg(old, logp, adv, m, "token-mean", cfg)
    assert loss.item() == pytest.approx((0.5 * 3 - 0.5 * 2) / 5)
    # cispo: gradient wrt logp is -sg(clip(r)) * A / N
    lp = torch.log(torch.tensor([[2.0, 1.0, 1.0], [1.0, 1.0, 1.0]])).requires_grad_(True)
    loss, _ = ca.compute_policy_loss_cispo(old, lp, adv, m, "token-mean", cfg)
    (grad,) = torch.autograd.grad(loss, lp)
    assert grad[0, 0].item() == pytest.approx(-1.2 / 5) and grad[1, 0].item() == pytest.approx(1.0 / 5)


def test_kl_cov_penalises_top_covariance_token_and_clip_cov_runs():
    old = torch.zeros(1, 4)
    logp = torch.tensor([[-0.1, -2.0, -2.0, -2.0]])                          # token 0: high A, high logp -> top cov
    adv = torch.tensor([[3.0, 0.0, 0.0, 0.0]])
    m = torch.ones(1, 4)
    cfg = ActorConfig(policy_loss=PolicyLossConfig(kl_cov_ratio=0.01, ppo_kl_coef=0.5))
    loss, _ = ca.compute_policy_loss_kl_cov(old, logp, adv, m, "token-mean", cfg)
    expected = (-3.0 * math.exp(-0.1) + 0.5 * 0.1) / 4
    assert loss.item() == pytest.approx(expected, rel=1e-5)
    cfg2 = ActorConfig(policy_loss=PolicyLossConfig(clip_cov_ratio=0.01, clip_cov_lb=-1e9, clip_cov_ub=1e9))
    loss2, _ = ca.compute_policy_loss_clip_cov(old, old.clone(), adv, m, "token-mean", cfg2)
    # Exactly one of the 4 tokens loses its term: the remaining sum is -3 (token 0 kept) or 0.
    assert loss2.item() * 4 in (pytest.approx(-3.0), pytest.approx(0.0))


# ----------------------------------------------------------------------------- KL / value / entropy
@pytest.mark.parametrize("kind", ["kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3", "k1+", "low_var_kl+", "k3+"])
def test_kl_estimators_zero_when_equal(kind):
    lp = torch.randn(4, 5)
    assert torch.all(ca.kl_penalty(lp, lp.clone(), kind) == 0)


def test_k3_nonnegative_and_straight_through_gradient():
    torch.manual_seed(0)
    lp = torch.randn(100).requires_grad_(True)
    ref = torch.randn(100)
    k3 = ca.kl_penalty(lp, ref, "k3")
    assert torch.all(k3 >= 0)
    st = ca.kl_penalty(lp, ref, "k3+")
    assert torch.allclose(st, k3)
    (g_st,) = torch.autograd.grad(st.sum(), lp)
    assert torch.allclose(g_st, (lp - ref).detach())                         # k2's gradient
    with pytest.raises(ValueError, match="full"):
        ca.kl_penalty(lp, ref, "full")


def test_kl_controllers():
    fixed = ca.get_kl_controller(SimpleNamespace(type="fixed", kl_coef=0.1, horizon=10, target_kl=0.1))
    fixed.update(5.0, 10)
    assert fixed.value == 0.1
    ada = ca.get_kl_controller(SimpleNamespace(type="adaptive", kl_coef=0.1, horizon=100, target_kl=0.1))
    ada.update(current_kl=1.0, n_steps=10)                                   # error clipped to +0.2
    assert ada.value == pytest.approx(0.1 * (1 + 0.2 * 10 / 100))
    with pytest.raises(ValueError, match="pid"):
        ca.get_kl_controller(SimpleNamespace(type="pid", kl_coef=0.1))


def test_value_loss_clipping_and_entropy_loss():
    vpreds = torch.tensor([[2.0, 0.0]])
    values = torch.tensor([[0.0, 0.0]])
    returns = torch.tensor([[1.0, 0.0]])
    loss, clipfrac = ca.compute_value_loss(vpreds, returns, values, torch.tensor([[1.0, 0.0]]), cliprange_value=0.5)
    # unclipped (2-1)^2 = 1, clipped (0.5-1)^2 = 0.25 -> max 1 -> 0.5 * 1
    assert loss.item() == pytest.approx(0.5) and clipfrac.item() == 0.0
    loss, clipfrac = ca.compute_value_loss(torch.tensor([[0.9]]), torch.tensor([[0.0]]), torch.tensor([[0.0]]),
                                           torch.ones(1, 1), cliprange_value=0.5)
    assert loss.item() == pytest.approx(0.5 * 0.81) and clipfrac.item() == 0.0
    loss, clipfrac = ca.compute_value_loss(torch.tensor([[0.9]]), torch.tensor([[2.0]]), torch.tensor([[0.0]]),
                                           torch.ones(1, 1), cliprange_value=0.5)
    assert loss.item() == pytest.approx(0.5 * 2.25) and clipfrac.item() == 1.0
    ent = ca.compute_entropy_loss(torch.zeros(1, 2, 4), torch.tensor([[1.0, 0.0]]))
    assert ent.item() == pytest.approx(math.log(4))


# ----------------------------------------------------------------------------- batch helpers
def test_compute_advantage_and_apply_kl_penalty_on_dataproto():
    scores = _scores(1.0, 0.0)
    data = DataProto.from_dict(
        tensors={"token_level_scores": scores, "response_mask": torch.ones(2, 3),
                 "old_log_probs": torch.zeros(2, 3), "ref_log_prob": torch.full((2, 3), -0.1)},
        non_tensors={"uid": ["a", "a"]})
    ctrl = ca.FixedKLController(0.5)
    data, metrics = ca.apply_kl_penalty(data, ctrl, "kl")
    assert torch.allclose(data.batch["token_level_rewards"], scores - 0.05)
    assert metrics["actor/reward_kl_penalty"] == pytest.approx(0.1)
    ca.compute_advantage(data, "grpo", config=ALGO)
    assert torch.allclose(data.batch["advantages"][:, 0], torch.tensor([1.0, -1.0]) / math.sqrt(2), atol=1e-5)



@pytest.mark.parametrize("estimator", ["grpo", "grpo_passk", "rloo", "reinforce_plus_plus_baseline", "opo", "gpg"])
def test_a_group_left_with_one_member_by_a_failure_drops_its_survivor(estimator):
    """rollout.n=2: prompt b's second sample failed (it left the group, masked, reward 0). The survivor has
    no baseline: it is dropped (mask 0, advantage 0), never trained on its raw reward 1.0."""
    mask = torch.ones(4, 3)
    mask[3] = 0                                                              # the failed row: masked by the loop
    data = DataProto.from_dict(tensors={"token_level_rewards": _scores(1.0, 0.0, 1.0, 0.0), "response_mask": mask},
                               non_tensors={"uid": ["a", "a", "b", "b#env_error3"]})
    ca.compute_advantage(data, estimator, config=ALGO)
    adv, kept = data.batch["advantages"], data.batch["response_mask"]
    assert kept[2].sum() == 0 and kept[:2].sum() == 6                        # the survivor carries no loss
    assert adv[2:].abs().sum() == 0
    assert data.meta_info["lone_survivors"] == 1
    assert adv[0, -1] > 0 and (adv[1, -1] == 0 if estimator == "grpo_passk" else adv[1, -1] < 0)  # as before
    if estimator == "grpo":
        assert torch.allclose(adv[:2, -1], torch.tensor([1.0, -1.0]) / math.sqrt(2), atol=1e-5)


def test_lone_survivors_are_dropped_only_for_group_estimators():
    data = DataProto.from_dict(tensors={"token_level_rewards": _scores(1.0), "response_mask": torch.ones(1, 3),
                                        "values": torch.zeros(1, 3)}, non_tensors={"uid": ["a"]})
    ca.compute_advantage(data, "reinforce_plus_plus", config=ALGO)
    assert data.batch["response_mask"].sum() == 3 and "lone_survivors" not in data.meta_info

def test_gigpo_handles_turn_without_env_step_and_single_turn_samples():
    # Sample 0: two turns, the second cut by the budget (no env step, so one reward for two anchors).
    # Sample 1: same prompt, two full turns. Sample 2: single-turn data (no anchors at all).
    m = torch.tensor([[1, 0, 1, 1], [1, 0, 1, 0], [1, 1, 0, 0]], dtype=torch.float32)
    anchor = np.empty(3, dtype=object)
    anchor[:] = [["s0", "s1"], ["s0", "s1"], []]
    rewards = np.empty(3, dtype=object)
    rewards[:] = [[0.0], [0.0, 1.0], []]
    r = torch.zeros(3, 4)
    r[1, 2] = 1.0
    adv, _ = ca.compute_gigpo_outcome_advantage(r, m, index=["u", "u", "v"], anchor_obs=anchor, turn_rewards=rewards,
                                                gamma=1.0, step_advantage_w=1.0, mode="mean_norm")
    # episode: u -> (-0.5, +0.5), v singleton -> 0. steps: s0 G=(0, 1) -> -+0.5, s1 G=(0, 1) -> -+0.5.
    assert torch.allclose(adv, torch.tensor([[-1.0, 0, -1.0, -1.0], [1.0, 0, 1.0, 0], [0.0, 0.0, 0, 0]]))
