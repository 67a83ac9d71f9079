"""The SFT loss (`sft_batch`): the LM head on the loss-mask positions only gives the full-logits NLL (value and
gradient), padding to a multiple changes nothing, and autocast is a validated knob."""
from __future__ import annotations

import pytest
import torch

from verl.agent_trainer.sft_batch import collate_sft_examples, sft_nll_sum


@pytest.fixture(scope="module")
def model():
    from transformers import AutoModelForCausalLM

    from verl.utils.tiny_model import build_tiny_model

    torch.manual_seed(0)
    return AutoModelForCausalLM.from_pretrained(build_tiny_model(), dtype=torch.float32)


def _examples(vocab: int) -> list[tuple[list[int], list[int]]]:
    g = torch.Generator().manual_seed(1)
    out = []
    for length, spans in ((37, [(10, 15), (30, 37)]), (52, [(20, 26), (40, 44)])):
        ids = torch.randint(3, vocab, (length,), generator=g).tolist()
        mask = [int(any(a <= i < b for a, b in spans)) for i in range(length)]
        out.append((ids, mask))
    return out


def _reference_nll(model, batch) -> torch.Tensor:
    """The textbook loss: full logits, log-softmax, gather, masked sum."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1].float()
    logp = torch.log_softmax(logits, -1).gather(-1, batch["input_ids"][:, 1:, None])[..., 0]
    return -(logp * batch["loss_mask"][:, 1:]).sum()


def test_selected_positions_equal_full_logits_value_and_gradient(model):
    batch = collate_sft_examples(_examples(model.config.vocab_size), pad_id=0)
    model.zero_grad()
    ours = sft_nll_sum(model, batch)
    ours.backward()
    ours_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    ref = _reference_nll(model, batch)
    ref.backward()
    assert float(ours.detach()) == pytest.approx(float(ref.detach()), rel=1e-5)
    for a, p in zip(ours_grads, model.parameters(), strict=True):
        torch.testing.assert_close(a, p.grad, rtol=1e-4, atol=1e-6)


def test_padding_width_is_rounded_and_does_not_change_the_loss(model):
    examples = _examples(model.config.vocab_size)
    tight = collate_sft_examples(examples, 0, pad_multiple=1)
    rounded = collate_sft_examples(examples, 0, pad_multiple=64)
    assert tight["input_ids"].shape[1] == 52 and rounded["input_ids"].shape[1] == 64
    with torch.no_grad():
        assert float(sft_nll_sum(model, rounded)) == pytest.approx(float(sft_nll_sum(model, tight)), rel=1e-5)


def test_autocast_bfloat16_is_close_and_bad_dtypes_are_refused(model):
    from verl.config.sft_schema import load_sft_config

    batch = collate_sft_examples(_examples(model.config.vocab_size), pad_id=0)
    with torch.no_grad():
        full = float(sft_nll_sum(model, batch))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            low = float(sft_nll_sum(model, batch))
    assert low == pytest.approx(full, rel=0.02)
    bf16 = load_sft_config({"trainer": {"autocast_dtype": "bfloat16"}}, resolve_auto=False)
    assert bf16.trainer.autocast_dtype == "bfloat16"
    with pytest.raises(ValueError, match="autocast_dtype"):
        load_sft_config({"trainer": {"autocast_dtype": "int8"}}, resolve_auto=False)


def test_observation_weight_adds_the_other_real_tokens_with_that_weight(model):
    """observation_loss_weight w: loss = assistant NLL + w x NLL of the other real tokens (padding never counts)."""
    batch = collate_sft_examples(_examples(model.config.vocab_size), pad_id=0)
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1].float()
        nll = -torch.log_softmax(logits, -1).gather(-1, batch["input_ids"][:, 1:, None])[..., 0]
        assistant = batch["loss_mask"][:, 1:].float()
        other = batch["attention_mask"][:, 1:].float() - assistant
        assert float(other.sum()) > 0 and float((1 - batch["attention_mask"][:, 1:]).sum()) > 0  # both kinds exist
        expected = float((nll * assistant).sum() + 0.25 * (nll * other).sum())
        assert float(sft_nll_sum(model, batch, observation_weight=0.25)) == pytest.approx(expected, rel=1e-5)
        assert float(sft_nll_sum(model, batch, observation_weight=0.0)) == pytest.approx(
            float((nll * assistant).sum()), rel=1e-5)
