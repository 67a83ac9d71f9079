"""DataParallelPPOCritic: value shapes/masking, and the clipped value loss going down."""
from __future__ import annotations

import copy

import pytest
import torch

from verl.config.schema import CriticConfig, from_dict
from verl.protocol import DataProto
from verl.workers.agent_actor.base import padding_trim_bounds
from verl.workers.agent_critic.dp_critic import DataParallelPPOCritic


def tiny_value_model(seed: int = 0):
    from transformers import Qwen2Config, Qwen2ForTokenClassification

    torch.manual_seed(seed)
    cfg = Qwen2Config(vocab_size=61, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=1, num_labels=1, classifier_dropout=0.0, use_cache=False)
    return Qwen2ForTokenClassification(cfg).float()


def value_batch(bs=4, P=5, R=7, seed=0, common_pad=0) -> DataProto:
    """Uneven left/right padding; `common_pad` more padding columns at both ends of every row."""
    g = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, 61, (bs, P + R), generator=g)
    attention_mask = torch.ones(bs, P + R, dtype=torch.long)
    attention_mask[:, :common_pad] = 0
    attention_mask[:, P + R - common_pad:] = 0
    attention_mask[0, :2 + common_pad] = 0          # left padding
    attention_mask[1, P + R - 2 - common_pad:] = 0  # right padding
    input_ids = input_ids * attention_mask
    response_mask = torch.zeros(bs, R, dtype=torch.long)
    response_mask[:, :3] = 1
    response_mask[:, 4] = 1            # token 3 is an observation token
    response_mask *= attention_mask[:, P:]
    return DataProto.from_dict(tensors={
        "input_ids": input_ids, "attention_mask": attention_mask,
        "position_ids": (attention_mask.cumsum(-1) - 1).clamp(min=0), "responses": input_ids[:, P:],
        "response_mask": response_mask,
    })


def critic_cfg(**keys) -> CriticConfig:
    return from_dict(CriticConfig, keys, "critic")


def make_critic(model, **overrides):
    base = dict(ppo_mini_batch_size=4, ppo_micro_batch_size_per_gpu=2, ppo_epochs=1, cliprange_value=100.0,
                loss_agg_mode="token-mean", grad_clip=1.0)
    cfg = critic_cfg(**{**base, **overrides})
    return DataParallelPPOCritic(cfg, model, torch.optim.AdamW(model.parameters(), lr=3e-3))


def test_values_shape_mask_and_positions():
    model = tiny_value_model()
    data = value_batch()
    values = make_critic(model).compute_values(data)
    assert values.shape == (4, 7) and values.dtype == torch.float32
    mask = data.batch["response_mask"].bool()
    assert torch.all(values[~mask] == 0)
    with torch.no_grad():
        direct = model(input_ids=data.batch["input_ids"], attention_mask=data.batch["attention_mask"],
                       position_ids=data.batch["position_ids"]).logits[..., 0]
    # V at response token t is the head output at the position before it
    torch.testing.assert_close(values[mask], direct[:, 4:-1][mask], atol=1e-5, rtol=1e-4)


def test_value_loss_decreases_on_fixed_target():
    model = tiny_value_model(seed=1)
    critic = make_critic(model, ppo_epochs=5)
    data = value_batch(seed=1)
    mask = data.batch["response_mask"].float()
    data.batch["returns"] = torch.full((4, 7), 2.0) * mask
    losses = []
    for _ in range(4):
        data.batch["values"] = critic.compute_values(data)
        metrics = critic.update_critic(data)
        losses.append(metrics["critic/vf_loss"])
        assert {"critic/vf_clipfrac", "critic/grad_norm", "critic/lr", "critic/vpred_mean"} <= set(metrics)
    assert losses[-1] < 0.5 * losses[0]
    err = ((critic.compute_values(data) - data.batch["returns"]) ** 2 * mask).sum() / mask.sum()
    assert err < losses[0]


def test_update_critic_without_optimizer_fails():
    critic = DataParallelPPOCritic(critic_cfg(ppo_mini_batch_size=2), tiny_value_model(), None)
    with pytest.raises(RuntimeError, match="optimizer"):
        critic.update_critic(value_batch())


def test_padding_trim_matches_full_length_values_and_gradients():
    data = value_batch(bs=4, P=6, R=9, seed=3, common_pad=2)
    am = data.batch["attention_mask"].clone()
    am[1, :4] = 0  # micro-batch 0 (rows 0, 1) gets more padding than micro-batch 1
    am[0, 6 + 5:] = 0
    ids = data.batch["input_ids"] * am
    data.batch["attention_mask"], data.batch["input_ids"], data.batch["responses"] = am, ids, ids[:, 6:]
    data.batch["position_ids"] = (am.cumsum(-1) - 1).clamp(min=0)
    data.batch["response_mask"] = data.batch["response_mask"] * am[:, 6:]
    assert padding_trim_bounds(am[0:2], 9) == (4, 5) and padding_trim_bounds(am[2:4], 9) == (2, 7)
    model0 = tiny_value_model(seed=2)
    results = []
    for trim in (True, False):
        model = copy.deepcopy(model0)
        critic = DataParallelPPOCritic(critic_cfg(ppo_mini_batch_size=4, ppo_micro_batch_size_per_gpu=2,
                                                  cliprange_value=0.05, grad_clip=0.0),
                                       model, torch.optim.SGD(model.parameters(), lr=1.0))
        critic.trim_padding = trim
        d = copy.deepcopy(data)
        values = critic.compute_values(d)
        d.batch["values"] = values + 0.1 * d.batch["response_mask"]  # some predictions get clipped
        d.batch["returns"] = torch.linspace(-1, 1, 9).expand(4, 9) * d.batch["response_mask"]
        before = [p.detach().clone() for p in model.parameters()]
        metrics = critic.update_critic(d)
        delta = torch.cat([(p.detach() - b).flatten() for p, b in zip(model.parameters(), before, strict=True)])
        results.append((values, metrics, delta))
    (v_t, m_t, d_t), (v_f, m_f, d_f) = results
    torch.testing.assert_close(v_t, v_f, atol=1e-5, rtol=1e-5)
    assert d_f.abs().max() > 0
    torch.testing.assert_close(d_t, d_f, atol=1e-6, rtol=1e-4)
    for key in ("critic/vf_loss", "critic/vf_clipfrac", "critic/grad_norm"):
        assert m_t[key] == pytest.approx(m_f[key], rel=1e-4, abs=1e-6), key


def _varied_value_batch(seed=4):
    """6 rows with 5..10 real tokens, so token budgets regroup them."""
    data = value_batch(bs=6, P=5, R=7, seed=seed)
    am = data.batch["attention_mask"].clone()
    for i in range(6):
        am[i, :i % 3] = 0           # left padding of the prompt
        am[i, 12 - i:] = 0          # right padding of the response
    ids = data.batch["input_ids"] * am
    data.batch["attention_mask"], data.batch["input_ids"], data.batch["responses"] = am, ids, ids[:, 5:]
    data.batch["position_ids"] = (am.cumsum(-1) - 1).clamp(min=0)
    data.batch["response_mask"] = data.batch["response_mask"] * am[:, 5:]
    return data


def _critic_update(model0, data, **cfg):
    model = copy.deepcopy(model0)
    base = dict(ppo_mini_batch_size=6, ppo_micro_batch_size_per_gpu=1, cliprange_value=0.05, grad_clip=0.0)
    critic = DataParallelPPOCritic(critic_cfg(**{**base, **cfg}), model, torch.optim.SGD(model.parameters(), lr=1.0))
    d = copy.deepcopy(data)
    values = critic.compute_values(d)
    d.batch["values"] = values + 0.1 * d.batch["response_mask"]
    d.batch["returns"] = torch.linspace(-1, 1, 7).expand(6, 7) * d.batch["response_mask"]
    before = [p.detach().clone() for p in model.parameters()]
    metrics = critic.update_critic(d)
    delta = torch.cat([(p.detach() - b).flatten() for p, b in zip(model.parameters(), before, strict=True)])
    return values, delta, metrics


@pytest.mark.parametrize("agg", ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"])
def test_dynamic_bsz_gives_the_fixed_micro_batch_values_and_gradient(agg):
    from verl.workers.agent_actor.base import MicroBatching

    data = _varied_value_batch()
    lens = data.batch["attention_mask"].sum(-1).tolist()
    assert lens == [10, 9, 8, 9, 7, 5]
    split = [t.tolist() for t in MicroBatching(1, 18).split(data.batch["attention_mask"])]
    assert split == [[0, 2], [1, 3], [4, 5]]  # not contiguous: the test below checks exactness and order
    model0 = tiny_value_model(seed=5)
    v_whole, d_whole, _ = _critic_update(model0, data, loss_agg_mode=agg, ppo_micro_batch_size_per_gpu=6)
    v_fixed, d_fixed, m_fixed = _critic_update(model0, data, loss_agg_mode=agg)
    v_dyn, d_dyn, m_dyn = _critic_update(model0, data, loss_agg_mode=agg, use_dynamic_bsz=True,
                                         ppo_max_token_len_per_gpu=18)
    torch.testing.assert_close(v_dyn, v_fixed, atol=1e-5, rtol=1e-5)
    assert d_whole.abs().max() > 0
    torch.testing.assert_close(d_fixed, d_whole, atol=1e-6, rtol=1e-4)
    torch.testing.assert_close(d_dyn, d_whole, atol=1e-6, rtol=1e-4)
    assert m_dyn["critic/grad_norm"] == pytest.approx(m_fixed["critic/grad_norm"], rel=1e-4)


def test_critic_shuffle_is_honoured_and_reproducible():
    data = _varied_value_batch(seed=6)
    data.meta_info["global_step"] = 2
    model0 = tiny_value_model(seed=6)
    cfg = dict(ppo_mini_batch_size=3, ppo_micro_batch_size_per_gpu=3)
    plain = _critic_update(model0, data, **cfg)[1]
    shuffled = _critic_update(model0, data, shuffle=True, **cfg)[1]
    assert torch.equal(shuffled, _critic_update(model0, data, shuffle=True, **cfg)[1])
    assert not torch.allclose(shuffled, plain)  # other mini-batches -> another pair of SGD steps
