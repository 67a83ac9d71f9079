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


def test_fitted_tokenizer_keeps_whole_tokens(tmp_path):
    """A corpus-trained BPE with product ids as single tokens; ids round-trip and the build is cached by data."""
    from transformers import AutoTokenizer

    corpus = [f"Instruction: [SEP] i need a red mug [SEP] B0AKEJYEPS [SEP] Mug number {i} [SEP] $1{i}.99"
              for i in range(200)] + ["Thought:\nI think I should search.\n\nAction:\nsearch[red mug]"]
    ids = ["B0AKEJYEPS", "B085KI6JUA", "B0AKEJYEPS"]  # duplicates are dropped
    path = build_tiny_model(str(tmp_path / "fitted"), vocab_size=400, num_layers=1, corpus=corpus, whole_tokens=ids)
    tok = AutoTokenizer.from_pretrained(path)
    plain = AutoTokenizer.from_pretrained(build_tiny_model(str(tmp_path / "plain"), num_layers=1))
    text = "Thought:\nI think B085KI6JUA matches.\n\nAction:\nclick[B085KI6JUA]"
    pieces = tok.tokenize(text)
    assert pieces.count("B085KI6JUA") == 2
    assert len(plain.tokenize("click[B085KI6JUA]")) > len(tok.tokenize("click[B085KI6JUA]"))
    assert tok.decode(tok.encode(text, add_special_tokens=False)) == text
    assert len(tok) == len(set(tok.get_vocab().values()))
    assert "b085ki6jua" not in tok.get_vocab()  # the ids are kept as written, nothing else is added
    assert build_tiny_model(path, vocab_size=400, num_layers=1, corpus=corpus, whole_tokens=ids) == path
    other = build_tiny_model(path, vocab_size=400, num_layers=1, corpus=corpus, whole_tokens=ids[:1])
    assert "B085KI6JUA" not in AutoTokenizer.from_pretrained(other).get_vocab()  # other data: rebuilt
