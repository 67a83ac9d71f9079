"""Action adapters: turn the agent's text into the environment's action string.

Owns the ReAct parser (the action is the text after the LAST "Action:") and the registry of
action formats. Environment-specific grammars (what counts as a fallback) are passed in by the
environment client; this module knows no endpoint and no environment.
"""
from __future__ import annotations

import abc
from typing import Callable, Sequence

from agentenv.controller.types import ActionFormat, ActionWithThought

__all__ = ["ActionParseError", "BaseAdapter", "ReActAdapter", "get_adapter", "register_adapter"]


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

    def __init__(self, fallback_markers: Sequence[str] = ()):
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


def get_adapter(action_format: str | ActionFormat, **kwargs) -> BaseAdapter:
    """Build the adapter registered for `action_format` (kwargs go to its constructor).

    Raises:
        ValueError: the format is not registered; the message lists the registered ones.
    """
    name = action_format.value if isinstance(action_format, ActionFormat) else str(action_format)
    if name not in _ADAPTERS:
        raise ValueError(f"action_format={name!r} is not supported; choose one of {sorted(_ADAPTERS)}")
    return _ADAPTERS[name](**kwargs)
