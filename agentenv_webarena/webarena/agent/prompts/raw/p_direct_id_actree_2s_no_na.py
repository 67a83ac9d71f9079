"""Direct answer (the action only), accessibility tree, two examples, without the N/A rule."""
from agentenv_webarena.webarena.agent.prompts.raw import _parts

PROMPT = {
    "intro": _parts.intro(cot=False, with_na=False),
    "examples": _parts.examples(_parts.DIRECT_RESPONSES),
    "template": _parts.TEMPLATE,
    "meta_data": _parts.meta_data("DirectPromptConstructor"),
}
