"""The observation cap: `cut_to_tokens` with a real tokenizer (the shipped WebShop SFT policy's), the
approximate codec, and the client hook (`BaseEnvClient.cap_observation` cuts the whole text;
`WebarenaEnvClient` cuts only the accessibility tree and keeps URL / OBJECTIVE / PREVIOUS ACTION)."""
from __future__ import annotations

import os

import pytest

from agentenv.controller import ApproxTokenCodec, BaseEnvClient, HFTokenCodec, cut_to_tokens
from agentenv.envs.webarena import OBSERVATION_LAYOUT, WEBARENA_MAX_OBS_TOKENS, WebarenaEnvClient
from agentenv.envs.webshop import WebshopEnvClient

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
SFT_TOKENIZER = os.path.join(ROOT, "agentenv_webshop", "sft_policy")

TREE = "\n".join(["Tab 0 (current): One Stop Market", "", "[1] RootWebArea 'One Stop Market' focused: True"]
                 + [f"\t[{i}] link 'Product {i} with a fairly long name' " for i in range(2, 400)]
                 + ["\t[400] StaticText 'Price: $19.95'"])
TAIL = ("\nURL: http://onestopmarket.com/\nOBJECTIVE: What is the price of Product 7?\n"
        "PREVIOUS ACTION: click [12] where [12] is link 'Next'")
OBS = "OBSERVATION:\n" + TREE + TAIL


@pytest.fixture(scope="module")
def codec():
    from transformers import AutoTokenizer

    return HFTokenCodec(AutoTokenizer.from_pretrained(SFT_TOKENIZER))


def test_cut_keeps_the_first_n_tokens_of_a_real_tokenizer(codec):
    ids = codec.encode(TREE)
    assert len(ids) > 300
    cut = cut_to_tokens(TREE, codec, 300)
    assert TREE.startswith(cut) and len(cut) < len(TREE)
    assert cut == codec.decode(ids[:300])  # WebArena's decode(encode(obs)[:n])
    assert len(codec.encode(cut)) <= 300
    assert cut_to_tokens(TREE, codec, len(ids)) == TREE  # within the cap: unchanged
    assert cut_to_tokens(TREE, codec, 0) == TREE  # 0: no cap
    with pytest.raises(ValueError, match="max_tokens"):
        cut_to_tokens(TREE, codec, -1)


def test_a_character_split_by_the_cut_is_dropped(codec):
    text = "price " + "€" * 50  # multi-byte characters a byte-level BPE splits into several tokens
    for n in range(1, len(codec.encode(text))):
        cut = cut_to_tokens(text, codec, n)
        assert text.startswith(cut), (n, cut)


def test_approx_codec_counts_four_characters_a_token():
    approx = ApproxTokenCodec()
    text = "ab\x00c€defghij"
    assert len(approx.encode(text)) == 3 and approx.decode(approx.encode(text)) == text
    assert cut_to_tokens("x" * 10_000, approx, WEBARENA_MAX_OBS_TOKENS) == "x" * 7680
    with pytest.raises(ValueError, match="chars_per_token"):
        ApproxTokenCodec(0)


def test_default_hook_cuts_the_whole_text(codec):
    assert BaseEnvClient.default_max_obs_tokens == 0 and WebshopEnvClient.default_max_obs_tokens == 0
    assert WebshopEnvClient.cap_observation(OBS, codec, 50) == cut_to_tokens(OBS, codec, 50)
    assert BaseEnvClient.cap_observation(OBS, codec, 0) == OBS


def test_webarena_hook_cuts_the_tree_and_keeps_url_objective_previous_action(codec):
    assert WebarenaEnvClient.default_max_obs_tokens == WEBARENA_MAX_OBS_TOKENS == 1920
    capped = WebarenaEnvClient.cap_observation(OBS, codec, 200)
    fields = OBSERVATION_LAYOUT.match(capped)
    assert fields is not None and capped.endswith(TAIL)
    assert fields["observation"] == cut_to_tokens(TREE, codec, 200)
    assert fields["url"] == "http://onestopmarket.com/"
    assert fields["objective"] == "What is the price of Product 7?"
    assert fields["previous_action"] == "click [12] where [12] is link 'Next'"
    assert "Price: $19.95" not in capped  # the tree's tail is what the cap drops
    # the tree within the cap, or no cap: the observation comes back unchanged
    assert WebarenaEnvClient.cap_observation(OBS, codec, 10**6) == OBS
    assert WebarenaEnvClient.cap_observation(OBS, codec, 0) == OBS
    # a tree line that looks like a field does not move the cut
    tricky = "OBSERVATION:\n[1] StaticText 'x'\nURL: fake\n" + TREE + TAIL
    assert WebarenaEnvClient.cap_observation(tricky, codec, 10_000).endswith(TAIL)
    assert WebarenaEnvClient.cap_observation(tricky, codec, 5).endswith(TAIL)
    # not the server's layout: cut as a whole, as the default does
    assert WebarenaEnvClient.cap_observation(TREE, codec, 20) == cut_to_tokens(TREE, codec, 20)
