"""Completion style for base or small local models: direct answer, no examples, and the reply is
started for the model with the opening triple backticks (`force_prefix`), so the model only writes
the action and the closing backticks."""
from agentenv_webarena.webarena.agent.prompts.raw import _parts

PROMPT = {
    "intro": _parts.intro(cot=False, with_na=True),
    "examples": [],
    "template": _parts.TEMPLATE,
    "meta_data": _parts.meta_data("DirectPromptConstructor", force_prefix=_parts.ACTION_SPLITTER),
}
