"""AgentGym-compatible client-side building blocks: types, env client base, task, adapters, HTTP."""
from agentenv.controller.adapter import ActionParseError, BaseAdapter, ReActAdapter, get_adapter, register_adapter
from agentenv.controller.env import BaseEnvClient
from agentenv.controller.http import EnvClientError, EnvHttp
from agentenv.controller.http_env import HttpEnvClient
from agentenv.controller.task import BaseTask, Policy
from agentenv.controller.tokens import ApproxTokenCodec, HFTokenCodec, TokenCodec, cut_to_tokens
from agentenv.controller.types import (
    SUCCESS_REWARD,
    ActionFormat,
    ActionWithThought,
    ConversationMessage,
    ExperienceOutput,
    ResetResult,
    StepResult,
    is_success,
)

__all__ = [
    "ActionFormat",
    "ActionParseError",
    "ActionWithThought",
    "ApproxTokenCodec",
    "BaseAdapter",
    "BaseEnvClient",
    "BaseTask",
    "ConversationMessage",
    "EnvClientError",
    "EnvHttp",
    "ExperienceOutput",
    "HFTokenCodec",
    "HttpEnvClient",
    "Policy",
    "ReActAdapter",
    "ResetResult",
    "StepResult",
    "SUCCESS_REWARD",
    "TokenCodec",
    "cut_to_tokens",
    "get_adapter",
    "is_success",
    "register_adapter",
]
