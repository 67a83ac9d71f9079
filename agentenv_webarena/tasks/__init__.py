"""WebArena task configs: loading, validation and site-URL substitution (`config`), site logins
(`auth`), reference action sequences (`reference`), and the embedded task set
(`embedded.raw.json`, built by `generate`). The package re-exports the public names of `config`."""
from agentenv_webarena.tasks import config as _config
from agentenv_webarena.tasks.config import *  # noqa: F401,F403  (re-export: config.__all__)

__all__ = list(_config.__all__)
