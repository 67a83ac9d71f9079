"""The tiny model builds offline, loads with the Auto classes, and its chat template round-trips."""
import os

import torch

from verl.utils.tiny_model import build_tiny_model, default_tiny_model_path


def test_builds_loads_and_chat_template_round_trips(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = build_tiny_model(str(tmp_path / "tiny"), hidden_size=128, num_heads=2)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    assert model.config.vocab_size == len(tok)
    assert model.config.hidden_size // model.config.num_attention_heads == 64
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"

    msgs = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "WebShop [SEP] Instruction: [SEP] i need a red mug [SEP] Search"},
            {"role": "assistant", "content": "Thought:\nI think I should search.\n\nAction:\nsearch[red mug]"}]
    text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    assert text == ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                    "<|im_start|>user\nWebShop [SEP] Instruction: [SEP] i need a red mug [SEP] Search<|im_end|>\n"
                    "<|im_start|>assistant\nThought:\nI think I should search.\n\nAction:\nsearch[red mug]<|im_end|>\n"
                    "<|im_start|>assistant\n")
    ids = tok.encode(text, add_special_tokens=False)
    assert tok.decode(ids) == text
    assert ids.count(tok.convert_tokens_to_ids("<|im_start|>")) == 4  # specials are single tokens
    assert tok.convert_tokens_to_ids("<|im_end|>") == tok.eos_token_id

    out = model(torch.tensor([ids])).logits
    assert out.shape == (1, len(ids), len(tok)) and torch.isfinite(out).all()


def test_idempotent_and_deterministic(tmp_path):
    a = build_tiny_model(str(tmp_path / "a"), num_layers=1)
    mtime = os.path.getmtime(os.path.join(a, "model.safetensors"))
    assert build_tiny_model(a, num_layers=1) == a
    assert os.path.getmtime(os.path.join(a, "model.safetensors")) == mtime  # reused, not rebuilt
    b = build_tiny_model(str(tmp_path / "b"), num_layers=1)
    with open(os.path.join(a, "tokenizer.json")) as fa, open(os.path.join(b, "tokenizer.json")) as fb:
        assert fa.read() == fb.read()
    from safetensors.torch import load_file

    sa, sb = load_file(os.path.join(a, "model.safetensors")), load_file(os.path.join(b, "model.safetensors"))
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_default_path_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv("WEBAGENT_TINY_MODEL", str(tmp_path / "x"))
    assert default_tiny_model_path() == str(tmp_path / "x")
