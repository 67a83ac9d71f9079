"""WebShop client and task: the zero-shot ReAct prompt, action parsing, and the HTTP calls.

Talks to any AgentGym-compatible WebShop server (ours in agentenv_webshop, or AgentGym's own).
Unlike AgentGym's client: the timeout is honoured, only idempotent calls are retried (never
/step or /create), `close()` frees the server session, and an unparseable action returns an
observation saying so without calling the server.
"""
from __future__ import annotations

import logging
from typing import Any, Optional

from agentenv.controller.adapter import ActionParseError, get_adapter
from agentenv.controller.http_env import HttpEnvClient
from agentenv.controller.task import BaseTask
from agentenv.controller.types import ActionFormat, ConversationMessage, ResetResult, StepResult

__all__ = [
    "INVALID_ACTION_PREFIX",
    "WEBSHOP_CODE_AS_ACTION_INSTRUCTION",
    "WEBSHOP_FUNCTION_CALLING_INSTRUCTION",
    "WEBSHOP_REACT_INSTRUCTION",
    "WebshopEnvClient",
    "WebshopTask",
]

logger = logging.getLogger(__name__)

INVALID_ACTION_PREFIX = "Invalid Action.\n\n"

WEBSHOP_REACT_INSTRUCTION = (
    "You are shopping on a website on behalf of a customer. Each round you receive an observation "
    "of the current web page, and you reply with exactly one action.\n"
    "Two kinds of action exist:\n"
    "- search[keywords]: run a search, allowed only when the page shows a search bar. Choose the "
    "keywords with care: they decide which products you will see.\n"
    "- click[value]: click one of the clickable items on the page, such as a product id, an option "
    "value or a button like \"Buy Now\"; the value must be one of the clickable items shown.\n"
    "An action that is not allowed on the current page has no effect.\n"
    "Reply in this format:\n"
    "Thought:\nI think ... (your reasoning about what to do next)\n\n"
    "Action:\nclick[something]"
)

_ACTIONS_INTRO = (
    "You are shopping on a website on behalf of a customer. Each round you receive an observation "
    "of the current web page, and you reply with exactly one action. Two tools exist:\n"
)

WEBSHOP_FUNCTION_CALLING_INSTRUCTION = _ACTIONS_INTRO + (
    "- search, argument \"keywords\" (string): run a search; allowed only when the page shows a "
    "search bar. Choose the keywords with care.\n"
    "- click, argument \"item\" (string): click one clickable item shown on the page (a product id, "
    "an option value, or a button such as \"Buy Now\").\n"
    "An action that is not allowed on the current page has no effect.\n"
    "Reply with one JSON object and nothing else, for example:\n"
    '{"thought": "I think I should look for wool socks.", "function_name": "search", '
    '"arguments": {"keywords": "wool socks"}}'
)

WEBSHOP_CODE_AS_ACTION_INSTRUCTION = _ACTIONS_INTRO + (
    "- search(keywords: str): run a search; allowed only when the page shows a search bar. Choose "
    "the keywords with care.\n"
    "- click(item: str): click one clickable item shown on the page (a product id, an option value, "
    "or a button such as \"Buy Now\").\n"
    "An action that is not allowed on the current page has no effect.\n"
    "Think first, then end your reply with one Python code block that calls exactly one tool, e.g.\n"
    "```python\nclick(\"Buy Now\")\n```"
)

_INSTRUCTIONS = {
    ActionFormat.REACT: WEBSHOP_REACT_INSTRUCTION,
    ActionFormat.FUNCTION_CALLING: WEBSHOP_FUNCTION_CALLING_INSTRUCTION,
    ActionFormat.CODE_AS_ACTION: WEBSHOP_CODE_AS_ACTION_INSTRUCTION,
}

# A bare text counts as an action when it contains one of these (AgentGym's ReAct fallback).
_WEBSHOP_ACTION_MARKERS = ("search[", "click[")
# Tool name -> (argument, WebShop action template) for the function-calling and code formats.
_WEBSHOP_TOOLS = {"search": ("keywords", "search[{}]"), "click": ("item", "click[{}]")}


def _conversation_start(action_format: ActionFormat) -> tuple[ConversationMessage, ...]:
    return (
        {"from": "human", "loss": None, "value": _INSTRUCTIONS[action_format]},
        {"from": "gpt", "loss": False, "value": "Ok."},
    )


_REACT_START = _conversation_start(ActionFormat.REACT)


class WebshopEnvClient(HttpEnvClient):
    """A client bound to one session on a WebShop server.

    Args:
        env_server_base: server base URL, e.g. "http://127.0.0.1:36001".
        data_len: number of goal indices this client may be reset to (`len(client)`).
        timeout: seconds allowed per connect/read of every request.
        action_format: "react" (Thought/Action text; the default), "function_calling" (a JSON
            tool call) or "code_as_action" (a Python tool call); each has its own conversation_start.
        max_retries: extra attempts for idempotent calls (GET, /reset, /close).

    Raises:
        EnvClientError: the server could not create a session.
    """

    conversation_start = _REACT_START
    # the ReAct action is `search[...]` / `click[...]` after the last "Action:": it ends at the first "]" after it
    action_end = ("Action:", "]")

    env_label = "WebShop"

    def __init__(
        self,
        env_server_base: str,
        data_len: int,
        *args: Any,
        timeout: float = 300,
        action_format: str | ActionFormat = ActionFormat.REACT,
        max_retries: int = 3,
        **kwargs: Any,
    ):
        super().__init__(
            env_server_base,
            data_len,
            timeout=timeout,
            max_retries=max_retries,
            action_format=action_format,
        )
        self.adapter = get_adapter(self.action_format, fallback_markers=_WEBSHOP_ACTION_MARKERS, tools=_WEBSHOP_TOOLS)
        self.conversation_start = _conversation_start(self.action_format)
        self._last_observation: Optional[str] = None

    def observe(self) -> str:
        """Current page text (GET /observation)."""
        self._last_observation = self._get("observation")
        return self._last_observation

    def step(self, action: str) -> StepResult:
        """Parse the agent's text and, if it holds an action, POST /step with it.

        An unparseable text yields `"Invalid Action.\\n\\n" + <current observation>` with reward 0
        and done False; the server is not asked to step.
        """
        if action.endswith("</s>"):
            action = action[: -len("</s>")]
        try:
            parsed = self.adapter.parse(action)
        except ActionParseError as exc:
            logger.debug("env %s: unparseable action (%s)", getattr(self, "env_id", "?"), exc)
            observation = self._last_observation if self._last_observation is not None else self.observe()
            return StepResult(observation=INVALID_ACTION_PREFIX + observation, reward=0.0, terminated=False,
                              info={"valid": False, "reason": f"unparseable action: {exc}"})
        result = self._post("step", {"action": parsed.action})
        self._last_observation = result["state"]
        return StepResult(observation=result["state"], reward=float(result["reward"]), terminated=bool(result["done"]),
                          info=result.get("info"))

    def reset(self, idx: int) -> ResetResult:
        """Start goal `idx` (POST /reset with session_id=idx).

        A session the server evicted is recreated once (see `HttpEnvClient._reset_recreating`), so
        long-lived pooled clients survive eviction.
        """
        result = self._reset_recreating(lambda: self._post("reset", {"session_id": idx}))
        self._last_observation = result[0]
        return ResetResult(observation=result[0])

    def available_actions(self) -> dict:
        """What can be clicked / whether search is possible on the current page (GET /available_actions)."""
        return self._get("available_actions")

    def instruction_text(self) -> str:
        """The current goal's instruction (GET /instruction_text)."""
        return self._get("instruction_text")


class WebshopTask(BaseTask):
    """WebShop task: `client_args` are `WebshopEnvClient`'s keyword arguments."""

    env_client_cls = WebshopEnvClient
    env_name = "WebShop"
