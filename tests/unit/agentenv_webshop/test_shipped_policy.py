"""The shipped SFT policy (agentenv_webshop/sft_policy): it loads as an HF causal LM, its model card matches its
config and weights, product ids are single tokens of its tokenizer, and it stays within the size limit."""
from __future__ import annotations

import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
POLICY = os.path.join(ROOT, "agentenv_webshop", "sft_policy")
MAX_BYTES = 100 * 2 ** 20


@pytest.fixture(scope="module")
def card():
    from verl.utils.model_card import read_model_card

    return read_model_card(POLICY)


def test_shipped_policy_fits_the_size_limit():
    total = sum(os.path.getsize(os.path.join(POLICY, name)) for name in os.listdir(POLICY))
    assert 0 < total <= MAX_BYTES, total


def test_card_matches_config_and_weights(card):
    import torch
    from transformers import AutoModelForCausalLM

    with open(os.path.join(POLICY, "config.json"), encoding="utf-8") as fh:
        config = json.load(fh)
    for key in ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                "intermediate_size", "vocab_size"):
        assert card["model"][key] == config[key], key
    model = AutoModelForCausalLM.from_pretrained(POLICY, dtype=torch.float32)
    assert card["model"]["parameters"] == sum(p.numel() for p in model.parameters())
    assert card["training"]["command"] == "bash scripts/webshop_sft.sh"
    assert card["training"]["steps"] == sum(stage["steps"] for stage in card["training"]["stages"])
    greedy = card["evaluation"]["greedy"]
    assert greedy["num_items"] >= 200 and greedy["temperature"] == 0.0
    lo, hi = greedy["success_ci95"]
    assert lo <= greedy["success_rate"] <= hi


def test_product_ids_are_single_tokens_and_the_policy_writes_an_action():
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agentenv.envs.webshop import WebshopEnvClient
    from agentenv_webshop.environment import WebshopWorld

    tokenizer = AutoTokenizer.from_pretrained(POLICY)
    asins = sorted(WebshopWorld.load().by_asin)[:50]
    assert all(len(tokenizer.encode(a, add_special_tokens=False)) == 1 for a in asins)
    model = AutoModelForCausalLM.from_pretrained(POLICY, dtype=torch.float32).eval()
    # the WebShop client's ReAct conversation start, then a first page, as in training and rollout
    messages = [{"role": "user" if turn["from"] == "human" else "assistant", "content": turn["value"]}
                for turn in WebshopEnvClient.conversation_start]
    messages.append({"role": "user", "content": "WebShop [SEP] Instruction: [SEP] i want a red cotton t-shirt, and "
                                                "price lower than 30.00 dollars [SEP] Search"})
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False).input_ids
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=60, do_sample=False)
    text = tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
    assert "Action:" in text and "search[" in text, text
