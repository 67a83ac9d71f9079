"""Helpers for the actor tests (imported by name; pytest puts this directory on sys.path): a tiny random Qwen2
and a padded multi-turn-like batch."""
from __future__ import annotations

import torch

from verl.protocol import DataProto

VOCAB = 97


def tiny_qwen2(seed: int = 0, vocab: int = VOCAB):
    """A 2-layer Qwen2ForCausalLM with random weights (no files involved)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    cfg = Qwen2Config(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128,
                      tie_word_embeddings=False, use_cache=False)
    return Qwen2ForCausalLM(cfg).float()


def make_batch(bs: int = 4, prompt_len: int = 6, resp_len: int = 8, seed: int = 0, vocab: int = VOCAB,
               common_pad: int = 0) -> DataProto:
    """Left-padded prompts, right-padded responses; response_mask has model spans separated by
    observation tokens, with a different number of model tokens per row. `common_pad` more
    padding columns on both sides of every row (prompt start and response end)."""
    g = torch.Generator().manual_seed(seed)
    prompts = torch.randint(1, vocab, (bs, prompt_len), generator=g)
    responses = torch.randint(1, vocab, (bs, resp_len), generator=g)
    p_mask = torch.ones(bs, prompt_len, dtype=torch.long)
    r_mask = torch.ones(bs, resp_len, dtype=torch.long)
    response_mask = torch.zeros(bs, resp_len, dtype=torch.long)
    for i in range(bs):
        left_pad = i % 3 + common_pad
        p_mask[i, :left_pad] = 0
        prompts[i, :left_pad] = 0
        valid = resp_len - i - common_pad  # right padding grows with i
        r_mask[i, valid:] = 0
        responses[i, valid:] = 0
        response_mask[i, : 2 + i % 2] = 1                 # first model turn
        response_mask[i, 4 : min(valid - 1, 6)] = 1        # second model turn, then an observation
    attention_mask = torch.cat([p_mask, r_mask], dim=1)
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    tensors = {
        "prompts": prompts, "responses": responses,
        "input_ids": torch.cat([prompts, responses], dim=1),
        "attention_mask": attention_mask, "position_ids": position_ids,
        "response_mask": response_mask,
        "advantages": torch.randn(bs, resp_len, generator=g) * response_mask,
    }
    return DataProto.from_dict(tensors=tensors, meta_info={"temperature": 1.0})
