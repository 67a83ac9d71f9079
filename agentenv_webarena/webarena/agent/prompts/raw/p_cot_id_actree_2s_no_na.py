"""Chain of thought, accessibility tree, two examples, without the N/A rule."""
from agentenv_webarena.webarena.agent.prompts.raw import _parts

PROMPT = {
    "intro": _parts.intro(cot=True, with_na=False),
    "examples": _parts.examples(_parts.COT_RESPONSES),
    "template": _parts.TEMPLATE,
    "meta_data": _parts.meta_data("CoTPromptConstructor"),
}
