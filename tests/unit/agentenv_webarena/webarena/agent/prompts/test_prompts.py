"""Prompt templates and constructors on fixed inputs: layouts, the observation cut, extract_action,
and the raw -> JSON round trip (the shipped JSON files are up to date)."""
from __future__ import annotations

import json
import os

import pytest

from agentenv_webarena.webarena.agent.prompts import DEFAULT_INSTRUCTION, JSON_DIR
from agentenv_webarena.webarena.agent.prompts.prompt_constructor import (
    CharCodec,
    CoTPromptConstructor,
    DirectPromptConstructor,
    PromptState,
    build_prompt_constructor,
    split_prompt_text,
)
from agentenv_webarena.webarena.agent.prompts.to_json import load_raw, template_names
from agentenv_webarena.webarena.agent.prompts.to_json import main as to_json_main
from agentenv_webarena.webarena.browser_env.actions import ActionParsingError

STATE = PromptState(observation="Tab 0 (current): Home\n\n[1] RootWebArea 'Home'\n\t[7] link 'Next'",
                    url="http://onestopmarket.com/", objective="Open the next page", previous_action="None")
BLOCK = ("OBSERVATION:\nTab 0 (current): Home\n\n[1] RootWebArea 'Home'\n\t[7] link 'Next'\n"
         "URL: http://onestopmarket.com/\nOBJECTIVE: Open the next page\nPREVIOUS ACTION: None")


def _json(name):
    return os.path.join(JSON_DIR, f"{name}.json")


def test_to_json_round_trip_and_shipped_files_are_current(tmp_path):
    names = template_names()
    assert names == ["p_cot_id_actree_2s", "p_cot_id_actree_2s_no_na", "p_direct_id_actree_0s_completion",
                     "p_direct_id_actree_2s", "p_direct_id_actree_2s_no_na"]
    to_json_main(["--out", str(tmp_path)])
    for name in names:
        written = json.loads((tmp_path / f"{name}.json").read_text())
        assert written == load_raw(name)
        with open(_json(name)) as f:
            assert json.load(f) == written, (
                f"{name}.json is stale: run python -m agentenv_webarena.webarena.agent.prompts.to_json"
            )
    with pytest.raises(ValueError, match="p_cot_id_actree_2s"):
        load_raw("p_nope")


def test_na_rule_only_in_the_templates_that_state_it():
    assert "stop [N/A]" in load_raw("p_cot_id_actree_2s")["intro"]
    assert "stop [N/A]" not in load_raw("p_cot_id_actree_2s_no_na")["intro"]
    assert "N/A" not in load_raw("p_direct_id_actree_2s_no_na")["intro"]
    assert "step by step" in load_raw("p_cot_id_actree_2s")["intro"]
    assert "step by step" not in load_raw("p_direct_id_actree_2s")["intro"]


def test_chat_layout():
    pc = build_prompt_constructor(DEFAULT_INSTRUCTION)
    assert isinstance(pc, CoTPromptConstructor)
    messages = pc.construct(STATE, mode="chat")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[0]["content"] == load_raw("p_cot_id_actree_2s")["intro"]
    assert messages[-1]["content"] == BLOCK
    assert messages[2]["content"].endswith("```stop [$12.80]```")


def test_completion_layout_ends_with_the_force_prefix():
    pc = build_prompt_constructor(_json("p_direct_id_actree_0s_completion"))
    assert isinstance(pc, DirectPromptConstructor)
    text = pc.construct(STATE, mode="completion")
    assert text.startswith(load_raw("p_direct_id_actree_0s_completion")["intro"])
    assert text.endswith(f"Your turn:\n{BLOCK}\nREPLY: ```")
    cot = build_prompt_constructor(DEFAULT_INSTRUCTION).construct(STATE, mode="completion")
    assert cot.count("Example ") == 2 and cot.endswith("REPLY: ")
    with pytest.raises(ValueError, match="completion"):
        pc.construct(STATE, mode="speech")


def test_observation_cut_in_tokens():
    class Words:
        def encode(self, text):
            return text.split(" ")

        def decode(self, ids):
            return " ".join(ids)

    pc = build_prompt_constructor(DEFAULT_INSTRUCTION, max_obs_length=3, codec=Words())
    block = pc.step_block(PromptState("a b c d e", "u", "o"))
    assert block.startswith("OBSERVATION:\na b c\nURL: u")
    chars = build_prompt_constructor(DEFAULT_INSTRUCTION, max_obs_length=4, codec=CharCodec())
    assert chars.step_block(PromptState("abcdef", "u", "o")).startswith("OBSERVATION:\nabcd\n")
    assert build_prompt_constructor(DEFAULT_INSTRUCTION).step_block(PromptState("abcdef", "u", "o")).startswith(
        "OBSERVATION:\nabcdef\n")


@pytest.mark.parametrize("response, action", [
    ("Clicking it. In summary, the next action I will perform is ```click [7]```", "click [7]"),
    # the block after the answer phrase wins over one quoted earlier in the reasoning
    ("Earlier I did ```scroll [down]```. In summary, the next action I will perform is ```type [3] [hi] [0]```",
     "type [3] [hi] [0]"),
    ("No phrase, just ```go_back```", "go_back"),
    ("In summary, the next action I will perform is ``` stop [N/A] ```", "stop [N/A]"),
])
def test_cot_extract_action(response, action):
    assert build_prompt_constructor(DEFAULT_INSTRUCTION).extract_action(response) == action


def test_direct_extract_action_and_force_prefix():
    direct = build_prompt_constructor(_json("p_direct_id_actree_2s"))
    assert direct.extract_action("```click [1]``` then ```click [2]```") == "click [1]"
    forced = build_prompt_constructor(_json("p_direct_id_actree_0s_completion"))
    assert forced.extract_action("hover [5]```") == "hover [5]"
    for pc in (direct, build_prompt_constructor(DEFAULT_INSTRUCTION)):
        with pytest.raises(ActionParsingError, match="cannot find an action"):
            pc.extract_action("I would click the link")


def test_split_prompt_text_reads_the_env_layout():
    assert split_prompt_text(BLOCK) == STATE
    tricky = BLOCK.replace("[7] link 'Next'", "[7] link 'Next'\nURL: fake\nOBJECTIVE: fake")
    assert split_prompt_text(tricky).url == "http://onestopmarket.com/"
    with pytest.raises(ValueError, match="prompt layout"):
        split_prompt_text("Tab 0 (current): Home")


def test_bad_instruction_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="jsons"):
        build_prompt_constructor(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    data = load_raw("p_cot_id_actree_2s") | {"meta_data": dict(load_raw("p_cot_id_actree_2s")["meta_data"],
                                                                prompt_constructor="Nope")}
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="CoTPromptConstructor"):
        build_prompt_constructor(bad)
    bad.write_text(json.dumps({"intro": "x"}))
    with pytest.raises(ValueError, match="examples"):
        build_prompt_constructor(bad)
