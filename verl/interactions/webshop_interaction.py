"""WebShop as a verl interaction (`class_name: verl.interactions.webshop_interaction.WebshopInteraction`)."""
from verl.interactions.env_interaction import EnvInteraction

__all__ = ["WebshopInteraction"]


class WebshopInteraction(EnvInteraction):
    """`EnvInteraction` on a WebShop server (name and task "webshop"; config `env_server_base`,
    `timeout`, `max_retries`)."""

    default_task = "webshop"
