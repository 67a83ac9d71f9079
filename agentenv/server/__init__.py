"""The server kit shared by every env server (WebShop, WebArena): the `Session` contract, app factory
(with the generic routes), session registry, JSON error schema, request models, launch helpers."""
from agentenv.server.app import (
    ServerSettings,
    check_action,
    create_env_app,
    get_resources,
    get_sessions,
    get_settings,
    json_response,
)
from agentenv.server.errors import EnvServerError, error_body, install_error_handlers
from agentenv.server.launch import (
    CPU_ONLY_ENV,
    build_arg_parser,
    hide_accelerators,
    parse,
    serve,
    settings_from_args,
    stop_process,
)
from agentenv.server.models import EnvIdxRequest, ResetRequest, StepRequest
from agentenv.server.session import ResetResult, Session, StepResult, check_session
from agentenv.server.session_registry import SessionRegistry

__all__ = [
    "CPU_ONLY_ENV",
    "EnvIdxRequest",
    "EnvServerError",
    "ResetRequest",
    "ResetResult",
    "ServerSettings",
    "Session",
    "SessionRegistry",
    "StepRequest",
    "StepResult",
    "build_arg_parser",
    "check_action",
    "check_session",
    "create_env_app",
    "error_body",
    "get_resources",
    "get_sessions",
    "get_settings",
    "hide_accelerators",
    "install_error_handlers",
    "json_response",
    "parse",
    "serve",
    "settings_from_args",
    "stop_process",
]
