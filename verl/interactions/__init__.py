"""verl-style interactions (BaseInteraction) and the WebShop interaction."""
from verl.interactions.base import BaseInteraction
from verl.interactions.webshop_interaction import WebshopInteraction

__all__ = ["BaseInteraction", "WebshopInteraction"]
