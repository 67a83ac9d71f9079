"""WebArena's browser environment re-implemented on async Playwright: actions, observation, browser.

`actions` owns the id-based action grammar, `observation` the accessibility-tree text (pure
functions of CDP data), `browser` Chromium, contexts, tabs and action execution.
"""
from agentenv_webarena.browser_env.actions import (
    Action,
    ActionParsingError,
    ActionTypes,
    create_id_based_action,
    create_none_action,
    create_stop_action,
    extract_action,
    is_equivalent,
    parse_action,
)
from agentenv_webarena.browser_env.browser import (
    ActionExecutionError,
    BrowserConfig,
    BrowserHost,
    BrowserSession,
    Observation,
    url_allowed,
)

__all__ = [
    "Action",
    "ActionParsingError",
    "ActionTypes",
    "create_id_based_action",
    "create_none_action",
    "create_stop_action",
    "extract_action",
    "is_equivalent",
    "parse_action",
    "ActionExecutionError",
    "BrowserConfig",
    "BrowserHost",
    "BrowserSession",
    "Observation",
    "url_allowed",
]
