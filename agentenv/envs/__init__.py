"""Environment clients and tasks (one module per environment)."""
from agentenv.envs.webshop import WebshopEnvClient, WebshopTask

__all__ = ["WebshopEnvClient", "WebshopTask"]
