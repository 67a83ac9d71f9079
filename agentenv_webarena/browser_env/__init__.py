"""WebArena's browser environment re-implemented on async Playwright: actions, observation, browser.

`actions` owns the id-based action grammar, `observation` the accessibility-tree text (pure
functions of CDP data), `browser` Chromium, contexts, tabs and action execution. The package
re-exports the public names of `actions` and `browser`.
"""
from agentenv_webarena.browser_env import actions as _actions
from agentenv_webarena.browser_env import browser as _browser
from agentenv_webarena.browser_env.actions import *  # noqa: F401,F403  (re-export: actions.__all__)
from agentenv_webarena.browser_env.browser import *  # noqa: F401,F403  (re-export: browser.__all__)

__all__ = [*_actions.__all__, *_browser.__all__]
