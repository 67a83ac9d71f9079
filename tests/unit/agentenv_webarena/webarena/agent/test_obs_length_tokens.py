"""The run CLI's `--max_obs_length` counts tokens of the model's tokenizer when one is known (`--tokenizer`,
or the served model's directory), and without one takes a token as 4 characters (logged), never one."""
from __future__ import annotations

import logging
import pathlib

import pytest

from agentenv.controller import ApproxTokenCodec, HFTokenCodec
from agentenv_webarena.webarena.agent import construct_agent
from agentenv_webarena.webarena.agent.llm import OpenAILLM
from agentenv_webarena.webarena.agent.prompts import DEFAULT_INSTRUCTION
from agentenv_webarena.webarena.agent.prompts.prompt_constructor import PromptState, build_prompt_constructor
from agentenv_webarena.webarena.run import RunConfig

ROOT = pathlib.Path(__file__).resolve().parents[5]
SFT_POLICY = str(ROOT / "agentenv_webshop" / "sft_policy")  # a shipped HF directory with a tokenizer
TREE = "Tab 0 (current): Home\n\n[1] RootWebArea 'Home'\n" + "\n".join(f"\t[{i}] link 'Item {i}'"
                                                                      for i in range(2, 2000))


def _llm(**kw) -> OpenAILLM:
    return OpenAILLM(base_url="http://127.0.0.1:9/v1", **kw)  # the client connects only when called


def test_without_a_tokenizer_a_token_is_four_characters_and_it_is_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="agentenv_webarena.webarena.agent.llm"):
        llm = _llm(model="gpt-4o")
    try:
        assert isinstance(llm.codec, ApproxTokenCodec)
        assert [r.getMessage() for r in caplog.records if "--max_obs_length" in r.getMessage()]
        agent = construct_agent(RunConfig(model="gpt-4o"), llm=llm)
        block = agent.prompt_constructor.step_block(PromptState(TREE, "http://x/", "Do it"))
        observation = block.split("OBSERVATION:\n", 1)[1].rsplit("\nURL: http://x/", 1)[0]
        assert observation == TREE[: 1920 * 4]  # 7,680 characters, not 1,920
        assert block.endswith("URL: http://x/\nOBJECTIVE: Do it\nPREVIOUS ACTION: None")
    finally:
        llm.close()


def test_the_served_model_directory_or_tokenizer_gives_real_tokens():
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(SFT_POLICY)
    for llm in (_llm(model=SFT_POLICY), _llm(model="served-name", tokenizer_path=SFT_POLICY)):
        try:
            assert isinstance(llm.codec, HFTokenCodec)
            pc = build_prompt_constructor(DEFAULT_INSTRUCTION, max_obs_length=1920, codec=llm.codec)
            block = pc.step_block(PromptState(TREE, "http://x/", "Do it"))
            observation = block.split("OBSERVATION:\n", 1)[1].rsplit("\nURL: http://x/", 1)[0]
            ids = tokenizer.encode(TREE, add_special_tokens=False)
            assert len(ids) > 1920 and observation == tokenizer.decode(ids[:1920])
        finally:
            llm.close()


def test_negative_cap_is_refused():
    with pytest.raises(ValueError, match="max_obs_length"):
        RunConfig(model="m", max_obs_length=-1)
