"""Prompt templates (`raw/` as Python, `jsons/` as shipped JSON, `to_json` between them) and the
prompt constructors that render them and read actions out of replies."""
import os

from agentenv_webarena.webarena.agent.prompts.prompt_constructor import (
    PROMPT_CONSTRUCTORS,
    CoTPromptConstructor,
    DirectPromptConstructor,
    PromptConstructor,
    PromptState,
    build_prompt_constructor,
    split_prompt_text,
)

JSON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jsons")
DEFAULT_INSTRUCTION = os.path.join(JSON_DIR, "p_cot_id_actree_2s.json")

__all__ = ["JSON_DIR", "DEFAULT_INSTRUCTION", "PROMPT_CONSTRUCTORS", "CoTPromptConstructor", "DirectPromptConstructor",
           "PromptConstructor", "PromptState", "build_prompt_constructor", "split_prompt_text"]
