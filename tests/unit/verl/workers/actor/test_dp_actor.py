"""Properties of DataParallelPPOActor: log-probs, updates, gradient accumulation, masking, KL."""
from __future__ import annotations

import copy

import pytest
import torch
from omegaconf import OmegaConf

from actor_testlib import make_batch, tiny_qwen2
from verl.workers.actor.base import micro_weight
from verl.workers.actor.dp_actor import DataParallelPPOActor


@pytest.fixture
def batch():
    return make_batch()


def actor_cfg(**overrides):
    base = dict(ppo_mini_batch_size=4, ppo_micro_batch_size_per_gpu=2, ppo_epochs=1, clip_ratio=0.2,
                clip_ratio_low=None, clip_ratio_high=None, clip_ratio_c=3.0, policy_loss={"loss_mode": "vanilla"},
                loss_agg_mode="token-mean", entropy_coeff=0.0, use_kl_loss=False, kl_loss_coef=0.001,
                kl_loss_type="low_var_kl", grad_clip=0.0)
    base.update(overrides)
    return OmegaConf.create(base)


def make_actor(model, lr=1.0, sgd=True, **overrides):
    opt = torch.optim.SGD(model.parameters(), lr=lr) if sgd else torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    return DataParallelPPOActor(actor_cfg(**overrides), model, opt)


def with_old_log_probs(actor, data):
    lp, _ = actor.compute_log_prob(data, calculate_entropy=False)
    data.batch["old_log_probs"] = lp
    return data


def param_delta(before, model):
    return torch.cat([(p.detach() - before[n]).flatten() for n, p in model.named_parameters()])


def test_log_probs_match_direct_forward(batch):
    model = tiny_qwen2()
    actor = make_actor(model, ppo_micro_batch_size_per_gpu=3)  # 4 rows -> micro-batches of 3 and 1
    batch.meta_info["temperature"] = 0.7
    log_probs, entropys = actor.compute_log_prob(batch)
    R = batch.batch["responses"].shape[1]
    with torch.no_grad():
        logits = model(input_ids=batch.batch["input_ids"], attention_mask=batch.batch["attention_mask"],
                       position_ids=batch.batch["position_ids"]).logits / 0.7
    logp_all = torch.log_softmax(logits, -1)
    for i in range(len(batch)):
        for t in range(R):
            pos = batch.batch["input_ids"].shape[1] - R + t  # index of response token t
            expected = logp_all[i, pos - 1, batch.batch["responses"][i, t]]
            assert torch.allclose(log_probs[i, t], expected, atol=1e-5)
    p = logp_all.exp()[:, -R - 1:-1]
    assert torch.allclose(entropys, -(p * logp_all[:, -R - 1:-1]).sum(-1), atol=1e-4)
    assert log_probs.shape == entropys.shape == (4, R)


def test_update_with_ratio_one_raises_advantaged_log_probs(batch):
    model = tiny_qwen2()
    actor = make_actor(model, lr=1e-2, sgd=False)
    mask = batch.batch["response_mask"]
    batch.batch["advantages"] = mask.float()  # every model token is good
    data = with_old_log_probs(actor, batch)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    metrics = actor.update_policy(data)
    # ratio == 1 at the first step: loss = -mean(A) = -1, nothing clipped, no KL to pi_old yet
    assert metrics["actor/pg_loss"] == pytest.approx(-1.0, abs=1e-5)
    assert metrics["actor/pg_clipfrac"] == 0.0
    assert abs(metrics["actor/ppo_kl"]) < 1e-6
    for key in ("actor/entropy", "actor/grad_norm", "actor/lr"):
        assert key in metrics
    assert param_delta(before, model).abs().max() > 0
    new_lp, _ = actor.compute_log_prob(data, calculate_entropy=False)
    gain = ((new_lp - data.batch["old_log_probs"]) * mask).sum() / mask.sum()
    assert gain > 0


@pytest.mark.parametrize("agg", ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"])
def test_gradient_accumulation_matches_one_big_micro_batch(agg):
    data = make_batch(seed=1)
    deltas = []
    for micro in (1, 2, 4):
        model = tiny_qwen2(seed=3)
        actor = make_actor(model, lr=1.0, ppo_micro_batch_size_per_gpu=micro, loss_agg_mode=agg)
        d = with_old_log_probs(actor, data.copy() if hasattr(data, "copy") else copy.deepcopy(data))
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        actor.update_policy(d)
        deltas.append(param_delta(before, model))  # SGD lr=1: delta == -gradient
    assert deltas[0].abs().max() > 0
    torch.testing.assert_close(deltas[0], deltas[2], atol=1e-6, rtol=1e-4)
    torch.testing.assert_close(deltas[1], deltas[2], atol=1e-6, rtol=1e-4)


def test_loss_ignores_tokens_outside_response_mask():
    data = make_batch(seed=2)
    model0 = tiny_qwen2(seed=4)
    actor0 = make_actor(copy.deepcopy(model0))
    data = with_old_log_probs(actor0, data)

    altered = copy.deepcopy(data)
    mask = altered.batch["response_mask"].bool()
    g = torch.Generator().manual_seed(9)
    noise = torch.randn(mask.shape, generator=g) * 100
    altered.batch["advantages"] = torch.where(mask, altered.batch["advantages"], noise)
    altered.batch["old_log_probs"] = torch.where(mask, altered.batch["old_log_probs"], noise)
    # Change token ids after each row's last model token (they cannot influence earlier positions).
    R = mask.shape[1]
    last = torch.where(mask, torch.arange(R), torch.full_like(mask, -1, dtype=torch.long)).max(-1).values
    after_last = torch.arange(R)[None, :] > last[:, None]
    new_ids = torch.randint(1, 97, mask.shape, generator=g)
    altered.batch["responses"] = torch.where(after_last, new_ids, altered.batch["responses"])
    altered.batch["input_ids"][:, -R:] = altered.batch["responses"]
    assert not torch.equal(altered.batch["responses"], data.batch["responses"])

    deltas = []
    for d in (data, altered):
        model = copy.deepcopy(model0)
        actor = make_actor(model, lr=1.0)
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        actor.update_policy(d)
        deltas.append(param_delta(before, model))
    assert deltas[0].abs().max() > 0
    torch.testing.assert_close(deltas[0], deltas[1], atol=1e-6, rtol=1e-5)


def test_kl_loss_is_zero_when_ref_equals_current(batch):
    model = tiny_qwen2()
    actor = make_actor(model, lr=1e-2, sgd=False, use_kl_loss=True, kl_loss_coef=1.0)
    data = with_old_log_probs(actor, batch)
    data.batch["ref_log_prob"] = data.batch["old_log_probs"].clone()
    data.batch["advantages"] = torch.zeros_like(data.batch["advantages"])
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    metrics = actor.update_policy(data)
    assert metrics["actor/kl_loss"] == pytest.approx(0.0, abs=1e-7)
    assert metrics["actor/grad_norm"] == pytest.approx(0.0, abs=1e-6)
    assert param_delta(before, model).abs().max() == 0

    # A shifted reference gives a positive KL loss
    data.batch["ref_log_prob"] = data.batch["old_log_probs"] - 0.5
    assert make_actor(model, use_kl_loss=True).update_policy(data)["actor/kl_loss"] > 0


def test_rollout_log_probs_fallback_and_missing_ref(batch):
    model = tiny_qwen2()
    actor = make_actor(model, lr=1e-3, sgd=False)
    lp, _ = actor.compute_log_prob(batch, calculate_entropy=False)
    batch.batch["rollout_log_probs"] = lp * batch.batch["response_mask"]
    metrics = actor.update_policy(batch)  # no old_log_probs: pi_old = the engine's log-probs
    assert abs(metrics["actor/ppo_kl"]) < 1e-5
    with pytest.raises(KeyError, match="ref_log_prob"):
        make_actor(model, use_kl_loss=True).update_policy(batch)


def test_micro_weight_hand_cases():
    mini = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    assert micro_weight(mini[:1], mini, 0, "token-mean") == pytest.approx(3 / 4)
    assert micro_weight(mini[1:], mini, 1, "token-mean") == pytest.approx(1 / 4)
    assert micro_weight(mini[1:2], mini, 1, "seq-mean-token-mean") == pytest.approx(1 / 2)
    assert micro_weight(mini[2:], mini, 2, "token-mean") == 0.0  # no model tokens: no gradient
    with pytest.raises(ValueError, match="token-mean"):
        micro_weight(mini, mini, 0, "sum")
