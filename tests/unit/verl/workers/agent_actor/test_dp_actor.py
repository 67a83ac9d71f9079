"""Properties of DataParallelPPOActor: log-probs, updates, gradient accumulation, masking, KL."""
from __future__ import annotations

import copy
from dataclasses import replace

import pytest
import torch
from actor_testlib import make_batch, tiny_qwen2

from verl.config.schema import ActorConfig, from_dict
from verl.workers.agent_actor import base as actor_base
from verl.workers.agent_actor.base import (
    BatchTotals,
    batch_totals,
    left_aligned_rows,
    micro_weight,
    padding_trim_bounds,
)
from verl.workers.agent_actor.dp_actor import DataParallelPPOActor


@pytest.fixture
def batch():
    return make_batch()


def actor_cfg(**overrides):
    base = dict(ppo_mini_batch_size=4, ppo_micro_batch_size_per_gpu=2, ppo_epochs=1, clip_ratio=0.2,
                clip_ratio_low=None, clip_ratio_high=None, clip_ratio_c=3.0, policy_loss={"loss_mode": "vanilla"},
                loss_agg_mode="token-mean", entropy_coeff=0.0, use_kl_loss=False, kl_loss_coef=0.001,
                kl_loss_type="low_var_kl", grad_clip=0.0)
    base.update(overrides)
    return from_dict(ActorConfig, base, "actor_rollout_ref.actor")


def make_actor(model, lr=1.0, sgd=True, **overrides):
    opt = (torch.optim.SGD(model.parameters(), lr=lr) if sgd
           else torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0))
    return DataParallelPPOActor(actor_cfg(**overrides), model, opt)


def with_old_log_probs(actor, data):
    lp, _ = actor.compute_log_prob(data, calculate_entropy=False)
    data.batch["old_log_probs"] = lp
    return data


def param_delta(before, model):
    return torch.cat([(p.detach() - before[n]).flatten() for n, p in model.named_parameters()])


@pytest.mark.parametrize("masked_head", [False, True])
def test_log_probs_match_direct_forward(batch, masked_head):
    """Full head: every response position; masked head (the default): the response_mask positions, 0 elsewhere."""
    model = tiny_qwen2()
    actor = make_actor(model, ppo_micro_batch_size_per_gpu=3)  # 4 rows -> micro-batches of 3 and 1
    actor.micro_batching = replace(actor.micro_batching, by_length=False)  # rows 0-2, then row 3
    actor.head_on_response_mask = masked_head
    batch.meta_info["temperature"] = 0.7
    log_probs, entropys = actor.compute_log_prob(batch)
    R = batch.batch["responses"].shape[1]
    with torch.no_grad():
        logits = model(input_ids=batch.batch["input_ids"], attention_mask=batch.batch["attention_mask"],
                       position_ids=batch.batch["position_ids"]).logits / 0.7
    logp_all = torch.log_softmax(logits, -1)
    # Rows 0-2 share a micro-batch whose row 0 fills R; row 3 is alone, so its padding is trimmed (0).
    computed = torch.ones(4, R, dtype=torch.bool)
    computed[3] = batch.batch["attention_mask"][3, -R:].bool()
    if masked_head:
        computed &= batch.batch["response_mask"].bool()
        assert 0 < int(computed.sum()) < int(batch.batch["attention_mask"][:, -R:].sum())  # the mask drops some
    for i in range(len(batch)):
        for t in range(R):
            pos = batch.batch["input_ids"].shape[1] - R + t  # index of response token t
            expected = logp_all[i, pos - 1, batch.batch["responses"][i, t]] if computed[i, t] else 0.0
            assert torch.allclose(log_probs[i, t], torch.as_tensor(expected), atol=1e-5)
    p = logp_all.exp()[:, -R - 1:-1]
    expected_ent = -(p * logp_all[:, -R - 1:-1]).sum(-1) * computed
    assert torch.allclose(entropys, expected_ent, atol=1e-4)
    assert log_probs.shape == entropys.shape == (4, R)


def test_masked_head_update_equals_the_full_head_update(batch):
    """The policy update with the LM head on response_mask positions only moves the weights exactly as the
    full-head update (gradient accumulation, token-mean and the entropy/KL terms included)."""
    batch.batch["advantages"] = torch.linspace(-1, 1, batch.batch["responses"].numel()).reshape(
        batch.batch["responses"].shape) * batch.batch["response_mask"]
    deltas, metrics = [], []
    for masked in (False, True):
        model = tiny_qwen2()
        actor = make_actor(model, lr=1.0, entropy_coeff=0.01)  # SGD: the weight change is the gradient
        actor.head_on_response_mask = masked
        data = with_old_log_probs(actor, copy.deepcopy(batch))
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        metrics.append(actor.update_policy(data))
        deltas.append(param_delta(before, model))
    torch.testing.assert_close(deltas[1], deltas[0], rtol=1e-4, atol=1e-6)
    for key in ("actor/pg_loss", "actor/entropy", "actor/grad_norm"):
        assert metrics[1][key] == pytest.approx(metrics[0][key], rel=1e-4, abs=1e-7), key


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
    totals = batch_totals(mini)
    assert (totals.num_tokens, totals.num_seqs, totals.dp_size) == (4, 2, 1)
    assert micro_weight(mini[:1], totals, "token-mean") == pytest.approx(3 / 4)
    assert micro_weight(mini[1:], totals, "token-mean") == pytest.approx(1 / 4)
    assert micro_weight(mini[1:2], totals, "seq-mean-token-mean") == pytest.approx(1 / 2)
    assert micro_weight(mini[[0, 2]], totals, "seq-mean-token-sum") == pytest.approx(1 / 2)  # any index set
    assert micro_weight(mini[2:], totals, "token-mean") == 0.0  # no model tokens: no gradient
    # two ranks, 10 tokens in all: this rank's 3-token row is 3/10 of the loss, x2 for FSDP's gradient mean
    assert micro_weight(mini[:1], BatchTotals(10, 5, 2), "token-mean") == pytest.approx(2 * 3 / 10)
    with pytest.raises(ValueError, match="token-mean"):
        micro_weight(mini, totals, "sum")


def test_padding_trim_bounds_hand_cases():
    # P = 4, R = 3; common left padding 2 columns, longest response 2 tokens
    mask = torch.tensor([[0, 0, 1, 1, 1, 1, 0], [0, 0, 0, 1, 1, 0, 0]])
    assert padding_trim_bounds(mask, 3) == (2, 2)
    assert padding_trim_bounds(torch.ones(2, 7, dtype=torch.long), 3) == (0, 3)  # nothing to trim
    empty = torch.zeros(2, 7, dtype=torch.long)
    assert padding_trim_bounds(empty, 3) == (3, 1)  # keeps one prompt and one response column


def _trim_vs_full(model0, data, **cfg):
    """(log-probs, entropies, metrics, parameter delta) of compute_log_prob + update_policy with and without trim."""
    out = []
    for trim in (True, False):
        model = copy.deepcopy(model0)
        actor = make_actor(model, lr=1.0, **cfg)
        actor.trim_padding = trim
        d = copy.deepcopy(data)
        lp, ent = actor.compute_log_prob(d)
        d.batch["old_log_probs"] = lp.detach() - 0.05 * d.batch["response_mask"]  # ratio != 1: clipping is live
        d.batch["ref_log_prob"] = lp.detach() + 0.1
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        metrics = actor.update_policy(d)
        out.append((lp, ent, metrics, param_delta(before, model)))
    return out


def test_padding_trim_matches_full_length_forward_and_gradients():
    data = make_batch(bs=4, prompt_len=8, resp_len=12, seed=5, common_pad=2)
    R = 12
    am = data.batch["attention_mask"]
    for sl in (slice(0, 2), slice(2, 4)):  # each micro-batch really is trimmed, differently
        start, keep = padding_trim_bounds(am[sl], R)
        assert start >= 2 and keep < R
    assert padding_trim_bounds(am[0:2], R) != padding_trim_bounds(am[2:4], R)
    (lp_t, ent_t, m_t, d_t), (lp_f, ent_f, m_f, d_f) = _trim_vs_full(
        tiny_qwen2(seed=6), data, ppo_micro_batch_size_per_gpu=2, entropy_coeff=0.01, use_kl_loss=True,
        kl_loss_coef=0.5,
    )
    real = am[:, -R:].bool()
    torch.testing.assert_close(lp_t[real], lp_f[real], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ent_t[real], ent_f[real], atol=1e-5, rtol=1e-5)
    for sl in (slice(0, 2), slice(2, 4)):  # trimmed positions are exact zeros
        keep = padding_trim_bounds(am[sl], R)[1]
        assert torch.all(lp_t[sl, keep:] == 0) and torch.all(ent_t[sl, keep:] == 0)
    assert d_f.abs().max() > 0
    torch.testing.assert_close(d_t, d_f, atol=1e-6, rtol=1e-4)
    for key in ("actor/pg_loss", "actor/entropy", "actor/kl_loss", "actor/pg_clipfrac", "actor/grad_norm"):
        assert m_t[key] == pytest.approx(m_f[key], rel=1e-4, abs=1e-6), key


def test_left_aligned_rows_hand_cases():
    ids = torch.tensor([[0, 0, 5, 6, 7, 0], [0, 4, 5, 6, 7, 8]])
    mask = torch.tensor([[0, 0, 1, 1, 1, 0], [0, 1, 1, 1, 1, 1]])
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    moved, positions, shift = left_aligned_rows(ids, mask, pos)
    assert shift.tolist() == [2, 1]
    assert moved[0, :3].tolist() == [5, 6, 7] and moved[1, :5].tolist() == [4, 5, 6, 7, 8]
    assert positions.tolist() == [[0, 1, 2, 3, 4, 5]] * 2  # padding continues the positions
    gap = torch.tensor([[1, 1, 0, 1, 1, 0], [0, 1, 1, 1, 1, 1]])
    assert left_aligned_rows(ids, gap, pos) is None  # real tokens not one run
    jump = pos.clone()
    jump[1, 3:] += 4
    assert left_aligned_rows(ids, mask, jump) is None  # positions not consecutive
    assert left_aligned_rows(ids, torch.zeros_like(mask), pos) is None  # an empty row


def test_left_aligned_forward_equals_the_padding_mask_forward(batch, monkeypatch):
    """The decoder on left-aligned rows without a mask gives the log-probs and the gradients of the padded rows
    under their padding mask."""
    results = []
    for aligned in (True, False):
        if not aligned:
            monkeypatch.setattr(actor_base, "left_aligned_rows", lambda *a: None)
        model = tiny_qwen2(seed=5)
        actor = make_actor(model, lr=1.0, ppo_micro_batch_size_per_gpu=4)
        data = copy.deepcopy(batch)
        log_probs, entropys = actor.compute_log_prob(data)
        data.batch["old_log_probs"] = log_probs
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        actor.update_policy(data)
        results.append((log_probs, entropys, param_delta(before, model)))
    (lp_a, ent_a, d_a), (lp_m, ent_m, d_m) = results
    assert batch.batch["attention_mask"][:, 0].eq(0).any()  # some rows are left-padded: the rows do move
    assert d_m.abs().max() > 0
    torch.testing.assert_close(lp_a, lp_m, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ent_a, ent_m, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(d_a, d_m, atol=1e-6, rtol=1e-4)
