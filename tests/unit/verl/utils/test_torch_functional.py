"""Masked statistics, log-probs/entropy from logits, response masks."""
import math

import pytest
import torch

from verl.utils import torch_functional as VF


def test_masked_mean_nan_outside_mask_is_harmless():
    m = torch.tensor([1, 0, 0, 1])
    assert VF.masked_mean(torch.tensor([1.0, 2, 3, 4]), m).item() == pytest.approx(2.5)
    assert VF.masked_mean(torch.tensor([1.0, 2, math.nan, 4]), m).item() == pytest.approx(2.5)
    assert math.isnan(VF.masked_mean(torch.tensor([1.0, 2, math.nan, 4]), torch.tensor([1, 0, 1, 0])).item())
    assert VF.masked_mean(torch.tensor([1.0, 2]), torch.zeros(2)).item() == 0.0


def test_masked_var_hand_values_and_edge_cases():
    v = torch.tensor([1.0, 5.0, 3.0, 100.0])
    m = torch.tensor([1, 0, 1, 0])
    assert VF.masked_var(v, m).item() == pytest.approx(2.0)          # (1,3): unbiased var 2
    assert VF.masked_var(v, m, unbiased=False).item() == pytest.approx(1.0)
    assert VF.masked_var(v, torch.tensor([0, 0, 1, 0])).item() == 0.0
    assert VF.masked_var(v, torch.zeros(4)).item() == 0.0


def test_masked_whiten_mean_zero_var_one_on_mask():
    torch.manual_seed(0)
    v = torch.randn(8, 16) * 3 + 2
    m = (torch.rand(8, 16) > 0.4).float()
    v[m == 0] = math.nan  # garbage outside the mask must not leak in
    w = VF.masked_whiten(v, m)
    assert VF.masked_mean(w, m).item() == pytest.approx(0.0, abs=1e-5)
    assert VF.masked_var(w, m).item() == pytest.approx(1.0, abs=1e-4)
    assert torch.equal(VF.masked_whiten(v, torch.zeros_like(m)), torch.zeros_like(v))


def test_logprobs_from_logits_matches_log_softmax_chunked_and_grad():
    torch.manual_seed(0)
    logits = torch.randn(3, 5, 17, requires_grad=True)
    labels = torch.randint(0, 17, (3, 5))
    ref = torch.log_softmax(logits, -1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    got = VF.logprobs_from_logits(logits, labels, chunk_elements=40)  # forces several chunks
    assert torch.allclose(got, ref, atol=1e-6)
    (g1,) = torch.autograd.grad(got.sum(), logits)
    (g2,) = torch.autograd.grad(ref.sum(), logits)
    assert torch.allclose(g1, g2, atol=1e-6)
    assert VF.logprobs_from_logits(logits.bfloat16(), labels).dtype == torch.float32


def test_entropy_from_logits_matches_definition():
    torch.manual_seed(1)
    logits = torch.randn(4, 6, 11)
    p = torch.softmax(logits, -1)
    ref = -(p * torch.log(p)).sum(-1)
    assert torch.allclose(VF.entropy_from_logits(logits, chunk_elements=30), ref, atol=1e-5)
    uniform = torch.zeros(2, 8)
    assert torch.allclose(VF.entropy_from_logits(uniform), torch.full((2,), math.log(8)))


def test_get_response_mask_includes_first_eos_only():
    ids = torch.tensor([[5, 2, 7, 2], [1, 1, 1, 1], [9, 9, 3, 0]])
    assert VF.get_response_mask(ids, eos_token=2).tolist() == [[1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]]
    assert VF.get_response_mask(ids, eos_token=[3, 7]).tolist() == [[1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 1, 0]]


def test_position_ids_clip_and_padding():
    mask = torch.tensor([[0, 0, 1, 1, 1]])
    assert VF.compute_position_id_with_mask(mask).tolist() == [[0, 0, 0, 1, 2]]
    clipped = VF.clip_by_value(torch.tensor([-2.0, 0.5, 3.0]), -1.0, torch.tensor([1.0, 1.0, 2.0]))
    assert clipped.tolist() == [-1.0, 0.5, 2.0]
    assert VF.pad_sequence_to_length(torch.tensor([[1, 2]]), 4, 0, left_pad=True).tolist() == [[0, 0, 1, 2]]
    assert VF.pad_2d_list_to_length([[1], [2, 3]], pad_token_id=9).tolist() == [[1, 9], [2, 3]]
