"""verl-style interactions (BaseInteraction), the WebShop interaction, and the adapter that lets the
one agent loop drive any interaction like an env client."""
from verl.interactions.base import BaseInteraction
from verl.interactions.env_adapter import InteractionEnvClient, interaction_client_factory
from verl.interactions.registry import initialize_interactions_from_config
from verl.interactions.webshop_interaction import WebshopInteraction

__all__ = ["BaseInteraction", "InteractionEnvClient", "WebshopInteraction", "initialize_interactions_from_config",
           "interaction_client_factory"]
