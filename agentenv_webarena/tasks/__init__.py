"""WebArena task configs: loading, validation and site-URL substitution (`config`), site logins
(`auth`), and the embedded task set (`embedded.raw.json`, built by `generate`)."""
from agentenv_webarena.tasks.config import (
    EMBEDDED_TASK_FILE,
    EVAL_TYPES,
    PLACEHOLDERS,
    SITE_ENV_VARS,
    load_task_config,
    load_tasks,
    site_urls_from_env,
    start_urls,
    substitute_urls,
    validate_task,
)

__all__ = [
    "EMBEDDED_TASK_FILE",
    "EVAL_TYPES",
    "PLACEHOLDERS",
    "SITE_ENV_VARS",
    "load_task_config",
    "load_tasks",
    "site_urls_from_env",
    "start_urls",
    "substitute_urls",
    "validate_task",
]
