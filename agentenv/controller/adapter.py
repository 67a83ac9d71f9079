"""Action adapters: turn the agent's text into the environment's action string.

Owns the parsers of AgentGym's three action formats -- ReAct (the action is the text after the
LAST "Action:"), function calling (a JSON tool call) and code as action (a Python tool call) --
and their registry. Environment-specific parts (ReAct fallback markers, tool name -> action
template) are passed in by the environment client; this module knows no endpoint or environment.
"""
from __future__ import annotations

import abc
import json
import re
from typing import Callable, Mapping, Sequence

from agentenv.controller.types import ActionFormat, ActionWithThought

__all__ = [
    "ActionParseError",
    "BaseAdapter",
    "CodeAsActionAdapter",
    "FunctionCallingAdapter",
    "ReActAdapter",
    "get_adapter",
    "register_adapter",
]


class ActionParseError(ValueError):
    """The agent's text contains no usable action."""


class BaseAdapter(abc.ABC):
    """Parses one agent turn into an `ActionWithThought`. Subclasses implement `parse`."""

    action_format: ActionFormat

    @abc.abstractmethod
    def parse(self, text: str) -> ActionWithThought:
        """Return the thought and action in `text`; raise `ActionParseError` when there is none."""


class ReActAdapter(BaseAdapter):
    """ReAct ("Thought: ... Action: ...") parsing as in AgentGym.

    The action is the stripped text after the last "Action:". When there is no "Action:", the
    whole stripped text is the action if it contains one of `fallback_markers` (WebShop:
    "search[" or "click["); otherwise, and when the action is empty, the text is unparseable.

    Args:
        fallback_markers: substrings that make a bare text count as an action.
    """

    action_format = ActionFormat.REACT
    marker = "Action:"

    def __init__(self, fallback_markers: Sequence[str] = (), **_: object):
        self.fallback_markers = tuple(fallback_markers)

    def parse(self, text: str) -> ActionWithThought:
        """Split `text` into thought and action (see the class docstring for the rules)."""
        head, sep, tail = text.rpartition(self.marker)
        if sep:
            thought, action = head.strip(), tail.strip()
        elif any(m in text for m in self.fallback_markers):
            thought, action = "", text.strip()
        else:
            raise ActionParseError(
                f"no {self.marker!r} line found and none of {list(self.fallback_markers)} in the text"
            )
        if thought.startswith("Thought:"):
            thought = thought[len("Thought:"):].strip()
        if not action:
            raise ActionParseError(f"the text after the last {self.marker!r} is empty")
        return ActionWithThought(thought=thought, action=action)


# Tool name -> (argument name, action template), e.g. {"search": ("keywords", "search[{}]")}.
ToolTemplates = Mapping[str, tuple[str, str]]

_FENCE_RE = re.compile(r"```(?:[a-zA-Z]*)\n?(.*?)```", re.DOTALL)


class FunctionCallingAdapter(BaseAdapter):
    """Function-calling format: the turn is a JSON object
    `{"thought": str, "function_name": <tool>, "arguments": {<arg>: str}}` (optionally inside a
    ``` fence); the call is rendered with the environment's template, e.g. `search[red shoes]`.

    Args:
        tools: tool name -> (argument name, action template with one `{}`).
    """

    action_format = ActionFormat.FUNCTION_CALLING

    def __init__(self, tools: ToolTemplates = (), **_: object):
        self.tools = dict(tools)

    def parse(self, text: str) -> ActionWithThought:
        """Decode the JSON call in `text` and render it as an action string."""
        fenced = _FENCE_RE.findall(text)
        candidate = fenced[-1] if fenced else text[text.find("{"): text.rfind("}") + 1]
        try:
            call = json.loads(candidate)
        except ValueError as exc:
            raise ActionParseError(f"no JSON function call found ({exc})") from None
        if not isinstance(call, dict):
            raise ActionParseError("the function call must be a JSON object")
        name, args = call.get("function_name"), call.get("arguments")
        if name not in self.tools:
            raise ActionParseError(f"function_name {name!r} is not one of {sorted(self.tools)}")
        arg_name, template = self.tools[name]
        if not isinstance(args, dict) or not isinstance(args.get(arg_name), str) or not args[arg_name].strip():
            raise ActionParseError(f"{name} needs a non-empty string argument {arg_name!r}")
        return ActionWithThought(thought=str(call.get("thought", "")), action=template.format(args[arg_name].strip()))


class CodeAsActionAdapter(BaseAdapter):
    """Code-as-action format: the turn contains Python calling one tool, e.g.
    ```python\nsearch("red shoes")\n```; the LAST call in the last code block (or in the whole
    text when there is no block) becomes the action via the environment's template.

    Args:
        tools: tool name -> (argument name, action template with one `{}`).
    """

    action_format = ActionFormat.CODE_AS_ACTION

    def __init__(self, tools: ToolTemplates = (), **_: object):
        self.tools = dict(tools)
        names = "|".join(re.escape(n) for n in self.tools) or r"(?!)"
        self._call_re = re.compile(
            rf"\b({names})\(\s*(?:\w+\s*=\s*)?(?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\")\s*\)")

    def parse(self, text: str) -> ActionWithThought:
        """Find the last tool call and render it as an action string."""
        fenced = _FENCE_RE.findall(text)
        code = fenced[-1] if fenced else text
        calls = list(self._call_re.finditer(code))
        if not calls:
            raise ActionParseError(f"no call of {sorted(self.tools)} with a string literal found")
        last = calls[-1]
        arg = last.group(2) if last.group(2) is not None else last.group(3)
        if not arg.strip():
            raise ActionParseError(f"{last.group(1)}() was called with an empty string")
        thought = text[: text.find("```")] if fenced else text[: last.start()]
        return ActionWithThought(thought=thought.strip(), action=self.tools[last.group(1)][1].format(arg.strip()))


_ADAPTERS: dict[str, Callable[..., BaseAdapter]] = {}


def register_adapter(name: str) -> Callable[[Callable[..., BaseAdapter]], Callable[..., BaseAdapter]]:
    """Decorator registering an adapter factory under an action-format name."""

    def wrap(factory: Callable[..., BaseAdapter]) -> Callable[..., BaseAdapter]:
        if name in _ADAPTERS and _ADAPTERS[name] is not factory:
            raise ValueError(f"action format {name!r} is already registered to {_ADAPTERS[name]!r}")
        _ADAPTERS[name] = factory
        return factory

    return wrap


register_adapter(ActionFormat.REACT.value)(ReActAdapter)
register_adapter(ActionFormat.FUNCTION_CALLING.value)(FunctionCallingAdapter)
register_adapter(ActionFormat.CODE_AS_ACTION.value)(CodeAsActionAdapter)


def get_adapter(action_format: str | ActionFormat, **kwargs) -> BaseAdapter:
    """Build the adapter registered for `action_format` (kwargs go to its constructor).

    Raises:
        ValueError: the format is not registered; the message lists the registered ones.
    """
    name = action_format.value if isinstance(action_format, ActionFormat) else str(action_format)
    if name not in _ADAPTERS:
        raise ValueError(f"action_format={name!r} is not supported; choose one of {sorted(_ADAPTERS)}")
    return _ADAPTERS[name](**kwargs)
