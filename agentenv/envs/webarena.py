"""WebArena client and task: the instruction prompt and the HTTP calls to a WebArena env server.

Talks to any server with AgentGym's WebArena API (ours in agentenv_webarena). The agent's raw text
goes to the server unchanged: the server takes the first ``` fenced block as the action, as
WebArena does, and counts unparseable replies towards WebArena's early stop. Unlike AgentGym's
client: the timeout is honoured, only idempotent calls are retried, the episode ends (`done`) on
`terminated` or `truncated` and keeps the evaluator's score either way, `close()` frees the
browser context, and `reset()` recreates a session the server evicted.

Observations come in WebArena's prompt layout (`OBSERVATION_LAYOUT`: OBSERVATION / URL / OBJECTIVE /
PREVIOUS ACTION). A token cap cuts the accessibility tree only, as WebArena's `--max_obs_length` does
(1,920 tokens of the model's tokenizer, `default_max_obs_tokens`); the other fields stay whole.
"""
from __future__ import annotations

import logging
import re
from typing import Any, Optional

from agentenv.controller.http_env import HttpEnvClient
from agentenv.controller.task import BaseTask
from agentenv.controller.tokens import TokenCodec, cut_to_tokens
from agentenv.controller.types import ConversationMessage, ResetResult, StepResult

__all__ = ["OBSERVATION_LAYOUT", "WEBARENA_INSTRUCTION", "WEBARENA_MAX_OBS_TOKENS", "WebarenaEnvClient",
           "WebarenaTask"]

logger = logging.getLogger(__name__)

# The server's observation text, read from the end so a page text can never shift the fields.
OBSERVATION_LAYOUT = re.compile(r"\AOBSERVATION:\n(?P<observation>.*)\nURL: (?P<url>[^\n]*)"
                                r"\nOBJECTIVE: (?P<objective>.*?)\nPREVIOUS ACTION: (?P<previous_action>.*)\Z", re.S)
# WebArena's run.py `--max_obs_length`: the accessibility tree is cut to this many tokens of the
# model's tokenizer before it goes into the prompt.
WEBARENA_MAX_OBS_TOKENS = 1920

WEBARENA_INSTRUCTION = (
    "You are an autonomous agent that completes tasks in a web browser. You will be given a task to "
    "accomplish through a series of browser actions.\n\n"
    "Each round you see:\n"
    "- the user's objective (the task to complete);\n"
    "- the current web page as an accessibility tree: one element per line, `[id] role 'name'`, "
    "indented by nesting; the id is how you refer to an element;\n"
    "- the current page URL and the open tabs;\n"
    "- your previous action.\n\n"
    "Actions:\n"
    "Page operations:\n"
    "`click [id]`: click the element with this id.\n"
    "`type [id] [content] [press_enter_after=0|1]`: type content into the field with this id; Enter is "
    "pressed afterwards unless press_enter_after is 0.\n"
    "`hover [id]`: move the mouse over the element.\n"
    "`press [key_comb]`: press a key combination, such as Ctrl+v.\n"
    "`scroll [down|up]`: scroll the page by one screen.\n"
    "Tab management:\n"
    "`new_tab`: open a new, empty tab.\n"
    "`tab_focus [tab_index]`: switch to the tab with this index.\n"
    "`close_tab`: close the current tab.\n"
    "URL navigation:\n"
    "`goto [url]`: open a URL.\n"
    "`go_back`: go to the previous page.\n"
    "`go_forward`: go to the next page (after a go_back).\n"
    "Completion:\n"
    "`stop [answer]`: finish the task. Give the answer inside the brackets when the objective asks a "
    "question; if you believe the task cannot be done, answer N/A.\n\n"
    "Rules:\n"
    "1. Issue exactly one action per reply, and only an action that is valid on the current page.\n"
    "2. Put every argument inside brackets, as shown above.\n"
    "3. Think step by step, then end your reply with: In summary, the next action I will perform is "
    "```action [arg]``` (the action inside a pair of triple backticks).\n"
    "4. Stop as soon as the objective is achieved."
)

_CONVERSATION_START: tuple[ConversationMessage, ...] = (
    {"from": "human", "loss": None, "value": WEBARENA_INSTRUCTION},
    {"from": "gpt", "loss": False, "value": "Ok."},
)


class WebarenaEnvClient(HttpEnvClient):
    """A client bound to one env (browser context) on a WebArena server.

    Args:
        env_server_base: server base URL, e.g. "http://127.0.0.1:36005".
        data_len: number of task indices this client may be reset to (`len(client)`).
        timeout: seconds allowed per connect/read of every request (a step drives a browser).
        max_retries: extra attempts for idempotent calls (GET, /reset, /close).

    Raises:
        EnvClientError: the server could not create an env.
    """

    conversation_start = _CONVERSATION_START
    # the server takes the first ``` fenced block as the action: it ends at the closing ```
    action_end = ("```", "```")
    default_max_obs_tokens = WEBARENA_MAX_OBS_TOKENS

    env_label = "WebArena"

    def __init__(self, env_server_base: str, data_len: int = 0, *args: Any, timeout: float = 300,
                 max_retries: int = 3, **kwargs: Any):
        super().__init__(env_server_base, data_len, timeout=timeout, max_retries=max_retries,
                         action_format=kwargs.get("action_format", "react"))
        self.info: Optional[dict] = None

    @staticmethod
    def _session_id(created: Any) -> int:
        return int(created["env_idx"])

    @classmethod
    def cap_observation(cls, text: str, codec: TokenCodec, max_tokens: int) -> str:
        """Cut the accessibility tree (between "OBSERVATION:\\n" and "\\nURL:") to `max_tokens` tokens
        of `codec`, as WebArena does; URL, OBJECTIVE and PREVIOUS ACTION stay whole. A text not in the
        layout (none the server sends) is cut as a whole."""
        match = OBSERVATION_LAYOUT.match(text) if max_tokens else None
        if match is None:
            return super().cap_observation(text, codec, max_tokens)
        tree = match["observation"]
        cut = cut_to_tokens(tree, codec, max_tokens)
        return text if cut == tree else "OBSERVATION:\n" + cut + text[match.end("observation"):]

    def observe(self) -> str:
        """The current observation (OBSERVATION / URL / OBJECTIVE / PREVIOUS ACTION)."""
        return self._get("observation")

    def step(self, action: str) -> StepResult:
        """Send the agent's text; the reward is the task score once the episode is over."""
        if action.endswith("</s>"):
            action = action[: -len("</s>")]
        result = self._post("step", {"action": action})
        self.info = result.get("info")
        terminated, truncated = bool(result["terminated"]), bool(result["truncated"])
        reward = float(result["reward"]) if terminated or truncated else 0.0
        return StepResult(observation=result["observation"], reward=reward, terminated=terminated,
                          truncated=truncated, info=self.info)

    def reset(self, idx: int) -> ResetResult:
        """Start task `idx` (one request); the observation is in the prompt layout (as `step`'s),
        `info` the rest of the server's reset answer (sites, objective, task id, timings).

        A session the server no longer knows (evicted, or the server restarted) is recreated once.
        """
        result = dict(self._reset_recreating(lambda: self._post("reset", {"idx": idx, "seed": 0})))
        return ResetResult(observation=result.pop("observation"), info=result)

    def observation_metadata(self) -> dict:
        """Element metadata of the current observation (id -> role, name, bounds)."""
        return self._get("observation_metadata")

    def screenshot(self) -> bytes:
        """A PNG of the current tab's viewport."""
        import base64

        return base64.b64decode(self._get("screenshot")["png_base64"])


class WebarenaTask(BaseTask):
    """WebArena task: `client_args` are `WebarenaEnvClient`'s keyword arguments."""

    env_client_cls = WebarenaEnvClient
    env_name = "WebArena"
