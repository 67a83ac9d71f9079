"""WebArena as a verl interaction (`class_name: verl.interactions.webarena_interaction.WebarenaInteraction`)."""
from verl.interactions.env_interaction import EnvInteraction

__all__ = ["WebarenaInteraction"]


class WebarenaInteraction(EnvInteraction):
    """`EnvInteraction` on a WebArena server (name and task "webarena"; config `env_server_base`,
    `timeout`, `max_retries`); `session_id` is the task index."""

    default_task = "webarena"
