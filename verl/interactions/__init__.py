"""verl-style interactions: `BaseInteraction`, `EnvInteraction` (any AgentGym env server) with its
WebShop and WebArena forms, the registry building them from verl's interaction YAML, and the adapter
that lets the one agent loop drive any interaction like an env client."""
from verl.interactions.base import BaseInteraction
from verl.interactions.env_adapter import InteractionEnvClient, interaction_client_factory
from verl.interactions.env_interaction import EnvInteraction
from verl.interactions.registry import initialize_interactions_from_config
from verl.interactions.webarena_interaction import WebarenaInteraction
from verl.interactions.webshop_interaction import WebshopInteraction

__all__ = ["BaseInteraction", "EnvInteraction", "InteractionEnvClient", "WebarenaInteraction", "WebshopInteraction",
           "initialize_interactions_from_config", "interaction_client_factory"]
