"""Micro-batching of the actor: token-budget micro-batches (use_dynamic_bsz) give the gradient and the
log-probs of fixed micro-batches, the per-epoch shuffle is seeded, activation offloading changes nothing
numerically, and gspo's entropy/KL terms accumulate exactly."""
from __future__ import annotations

import copy
import random

import pytest
import torch
from actor_testlib import make_batch, tiny_qwen2
from tensordict import TensorDict
from unit.verl.workers.agent_actor.test_dp_actor import make_actor, param_delta

from verl.workers.agent_actor.base import MicroBatching, activation_offload_context, run_ppo_epochs, token_budget_bins

AGG_MODES = ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"]


def varied_batch(seed: int = 1):
    """8 rows of 12..20 real tokens (left-padded prompts, right-padded responses)."""
    return make_batch(bs=8, prompt_len=8, resp_len=12, seed=seed)


def seq_lens(data) -> list[int]:
    return data.batch["attention_mask"].sum(-1).tolist()


# ------------------------------------------------------------------ the packing itself
def test_token_budget_bins_respect_the_budget_and_cover_every_row_once():
    rng = random.Random(0)
    for _ in range(200):
        lens = [rng.randint(1, 60) for _ in range(rng.randint(1, 40))]
        budget = rng.randint(10, 120)
        for min_bins in (1, rng.randint(1, len(lens))):
            bins = token_budget_bins(lens, budget, min_bins=min_bins)
            assert sorted(i for b in bins for i in b) == list(range(len(lens)))
            assert len(bins) >= min_bins
            for b in bins:
                assert len(b) >= 1
                assert sum(lens[i] for i in b) <= budget or len(b) == 1  # only a lone row may exceed it


def test_a_row_longer_than_the_budget_gets_a_micro_batch_of_its_own():
    bins = token_budget_bins([5, 50, 3, 2], 10)
    assert [1] in bins and len(bins) == 2 and sorted(max(bins, key=len)) == [0, 2, 3]


def test_fixed_micro_batching_is_consecutive_rows():
    mask = torch.ones(5, 3, dtype=torch.long)
    assert [t.tolist() for t in MicroBatching(2).split(mask)] == [[0, 1], [2, 3], [4]]


def test_by_length_micro_batches_group_rows_of_similar_length():
    data = varied_batch()
    split = [t.tolist() for t in MicroBatching(2, by_length=True).split(data.batch["attention_mask"])]
    assert split == [[0, 1], [2, 3], [4, 6], [5, 7]]  # lengths 20 18 | 16 17 | 15 14 | 13 12


def test_by_length_micro_batches_give_the_log_probs_and_the_update_of_consecutive_ones():
    """Rows regrouped by length: the same log-probs in the same row order, the same gradient (padding
    trimmed per micro-batch is what changes)."""
    results = []
    for by_length in (False, True):
        model = tiny_qwen2(seed=3)
        actor = make_actor(model, lr=1.0, ppo_micro_batch_size_per_gpu=2)
        actor.micro_batching = MicroBatching(2, by_length=by_length)
        data = varied_batch()
        log_probs, _ = actor.compute_log_prob(data, calculate_entropy=False)
        data.batch["old_log_probs"] = log_probs
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        actor.update_policy(data)
        results.append((log_probs, param_delta(before, model)))
    (lp0, d0), (lp1, d1) = results
    assert d0.abs().max() > 0
    torch.testing.assert_close(lp1, lp0, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(d1, d0, atol=1e-6, rtol=1e-4)


def test_dynamic_micro_batches_are_not_contiguous_slices_here():
    """The equality tests below are only meaningful if the token budget really regroups rows."""
    data = varied_batch()
    assert seq_lens(data) == [20, 18, 16, 17, 15, 13, 14, 12]
    split = [t.tolist() for t in MicroBatching(1, 40).split(data.batch["attention_mask"])]
    assert split == [[0, 1], [2, 3], [4, 6], [5, 7]]


# ------------------------------------------------------------------ exactness against fixed micro-batches
def _update(data, model0, **cfg):
    model = copy.deepcopy(model0)
    actor = make_actor(model, lr=1.0, **cfg)  # SGD lr=1: delta == -gradient
    d = copy.deepcopy(data)
    lp, _ = actor.compute_log_prob(d, calculate_entropy=False)
    d.batch["old_log_probs"] = lp.detach() - 0.05 * d.batch["response_mask"]  # ratio != 1: clipping is live
    d.batch["ref_log_prob"] = lp.detach() + 0.1
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    metrics = actor.update_policy(d)
    return param_delta(before, model), metrics


@pytest.mark.parametrize("loss_mode", ["vanilla", "gspo"])
@pytest.mark.parametrize("agg", AGG_MODES)
def test_dynamic_bsz_gives_the_fixed_micro_batch_gradient(agg, loss_mode):
    data = varied_batch(seed=2)
    model0 = tiny_qwen2(seed=7)
    common = dict(loss_agg_mode=agg, policy_loss={"loss_mode": loss_mode}, entropy_coeff=0.05, use_kl_loss=True,
                  kl_loss_coef=0.5, ppo_mini_batch_size=8)
    whole, m_whole = _update(data, model0, ppo_micro_batch_size_per_gpu=8, **common)
    fixed, _ = _update(data, model0, ppo_micro_batch_size_per_gpu=1, **common)
    dynamic, _ = _update(data, model0, ppo_micro_batch_size_per_gpu=1, use_dynamic_bsz=True,
                         ppo_max_token_len_per_gpu=40, **common)
    assert whole.abs().max() > 0
    torch.testing.assert_close(fixed, whole, atol=1e-6, rtol=1e-4)
    torch.testing.assert_close(dynamic, whole, atol=1e-6, rtol=1e-4)


def test_dynamic_bsz_over_two_mini_batches_matches_fixed():
    data = varied_batch(seed=3)
    model0 = tiny_qwen2(seed=8)
    common = dict(ppo_mini_batch_size=4, ppo_epochs=2, entropy_coeff=0.01)
    fixed, m_fixed = _update(data, model0, ppo_micro_batch_size_per_gpu=4, **common)
    dynamic, m_dyn = _update(data, model0, use_dynamic_bsz=True, ppo_max_token_len_per_gpu=33, **common)
    assert fixed.abs().max() > 0
    torch.testing.assert_close(dynamic, fixed, atol=1e-6, rtol=1e-4)
    assert m_dyn["actor/grad_norm"] == pytest.approx(m_fixed["actor/grad_norm"], rel=1e-4)


def test_dynamic_bsz_log_probs_equal_fixed_and_keep_the_row_order():
    data = varied_batch(seed=4)
    model = tiny_qwen2(seed=9)
    fixed_lp, fixed_ent = make_actor(model, ppo_micro_batch_size_per_gpu=1).compute_log_prob(copy.deepcopy(data))
    dyn = copy.deepcopy(data)
    dyn.meta_info.update(use_dynamic_bsz=True, max_token_len=40)  # the worker's log-prob request (verl's keys)
    dyn_lp, dyn_ent = make_actor(model).compute_log_prob(dyn)
    real = data.batch["attention_mask"][:, -12:].bool()
    assert real.sum(-1).unique().numel() > 1  # rows differ, so a row-order mix-up would show
    torch.testing.assert_close(dyn_lp[real], fixed_lp[real], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(dyn_ent[real], fixed_ent[real], atol=1e-5, rtol=1e-5)
    # The actor's own use_dynamic_bsz is the default for its log-prob passes too.
    own_lp, _ = make_actor(model, use_dynamic_bsz=True, ppo_max_token_len_per_gpu=40).compute_log_prob(
        copy.deepcopy(data), calculate_entropy=False)
    torch.testing.assert_close(own_lp[real], fixed_lp[real], atol=1e-5, rtol=1e-5)


# ------------------------------------------------------------------ shuffle
def _mini_batches_seen(shuffle_seed, epochs=2):
    """Row ids of each mini-batch run_ppo_epochs forms for an 8-row batch, 4 rows per mini-batch."""
    module = torch.nn.Linear(1, 1)
    batch = TensorDict({"row": torch.arange(8), "attention_mask": torch.ones(8, 3, dtype=torch.long),
                        "response_mask": torch.ones(8, 2)}, batch_size=[8])
    seen = []

    def micro_loss(micro, mask, metrics):
        seen.append(sorted(micro["row"].tolist()))
        return module.weight.sum() * 0

    run_ppo_epochs(module, torch.optim.SGD(module.parameters(), lr=0.1), batch, micro_loss, ppo_epochs=epochs,
                   mini_batch_size=4, micro_batching=MicroBatching(4), loss_agg_mode="token-mean", grad_clip=None,
                   prefix="t", shuffle_seed=shuffle_seed)
    return seen


def test_shuffle_changes_the_mini_batches_reproducibly():
    in_order = _mini_batches_seen(None)
    assert in_order == [[0, 1, 2, 3], [4, 5, 6, 7]] * 2
    shuffled = _mini_batches_seen((1, 5))
    assert shuffled == _mini_batches_seen((1, 5))                 # same trainer seed and step: same batches
    assert shuffled[:2] != in_order[:2]                           # composition changes
    assert shuffled[:2] != shuffled[2:]                           # reshuffled each epoch
    assert _mini_batches_seen((1, 6)) != shuffled                 # another step: another order
    for epoch in (shuffled[:2], shuffled[2:]):
        assert sorted(epoch[0] + epoch[1]) == list(range(8))      # every row once per epoch


def test_actor_shuffle_setting_is_honoured_and_seeded_by_step():
    data = varied_batch(seed=5)
    model0 = tiny_qwen2(seed=10)
    common = dict(ppo_mini_batch_size=4, ppo_micro_batch_size_per_gpu=4)

    def delta(shuffle, step, seed=1):
        model = copy.deepcopy(model0)
        actor = make_actor(model, lr=0.5, shuffle=shuffle, **common)
        actor.shuffle_seed = seed
        d = copy.deepcopy(data)
        d.meta_info["global_step"] = step
        d.batch["old_log_probs"] = actor.compute_log_prob(d, calculate_entropy=False)[0]
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        actor.update_policy(d)
        return param_delta(before, model)

    plain = delta(False, 3)
    assert torch.equal(delta(True, 3), delta(True, 3))        # reproducible
    assert not torch.allclose(delta(True, 3), plain)          # two SGD steps on other mini-batches
    assert not torch.allclose(delta(True, 3), delta(True, 4))  # the step enters the seed
    assert torch.equal(delta(False, 3), delta(False, 4))      # off: the step changes nothing


# ------------------------------------------------------------------ activation offloading
def test_activation_offloading_gives_the_same_update():
    data = varied_batch(seed=6)
    model0 = tiny_qwen2(seed=11)
    results = []
    for offload in (False, True):
        model = copy.deepcopy(model0)
        actor = make_actor(model, lr=1.0, ppo_micro_batch_size_per_gpu=3, entropy_coeff=0.01)
        actor.activation_offload = offload
        d = copy.deepcopy(data)
        d.batch["old_log_probs"] = actor.compute_log_prob(d, calculate_entropy=False)[0] - 0.05
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        metrics = actor.update_policy(d)
        results.append((param_delta(before, model), metrics))
    (d_off, m_off), (d_on, m_on) = results
    assert d_off.abs().max() > 0
    torch.testing.assert_close(d_on, d_off, atol=0, rtol=0)
    assert m_on["actor/pg_loss"] == m_off["actor/pg_loss"]


def test_activation_offload_context_offloads_on_cuda_only():
    assert isinstance(activation_offload_context(True, torch.device("cuda")), torch.autograd.graph.save_on_cpu)
    for enabled, device in ((True, "cpu"), (False, "cuda"), (False, "cpu")):
        assert not isinstance(activation_offload_context(enabled, torch.device(device)),
                              torch.autograd.graph.save_on_cpu)
