"""WebArena's browser environment re-implemented on async Playwright: actions, observation, browser.

`actions` owns the id-based action grammar, `observation` the accessibility-tree text (pure
functions of CDP data), `config` the launch settings and the URL policy, `host` the one Chromium
and its loop, `session` one environment's context, tabs and action execution. The package
re-exports the public names of `actions`, `config`, `host` and `session`.
"""
from agentenv_webarena.webarena.browser_env import actions as _actions
from agentenv_webarena.webarena.browser_env import config as _config
from agentenv_webarena.webarena.browser_env import host as _host
from agentenv_webarena.webarena.browser_env import session as _session
from agentenv_webarena.webarena.browser_env.actions import *  # noqa: F401,F403  (re-export: actions.__all__)
from agentenv_webarena.webarena.browser_env.config import *  # noqa: F401,F403  (re-export: config.__all__)
from agentenv_webarena.webarena.browser_env.host import *  # noqa: F401,F403  (re-export: host.__all__)
from agentenv_webarena.webarena.browser_env.session import *  # noqa: F401,F403  (re-export: session.__all__)

__all__ = [*_actions.__all__, *_config.__all__, *_host.__all__, *_session.__all__]
