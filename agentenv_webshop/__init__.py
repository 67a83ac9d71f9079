"""The WebShop environment: catalog, goals, search, pages, reward, expert policy, server.

`agentenv_webshop:app` is the ASGI app, built on first access, so the server also runs as in AgentGym:
``python -m uvicorn agentenv_webshop:app --host 127.0.0.1 --port 36003``. It reads ``WEBSHOP_DATA_DIR``
(WebShop's data folder; default: the embedded catalog) and ``WEBSHOP_NUM_PRODUCTS`` (first N products).
`python -m agentenv_webshop.launch` takes the same settings as flags, and more. `SFT_POLICY_DIR` is the shipped
SFT policy (an HF model folder, package data): the CPU profile's model in `scripts/webshop_train.sh`.
"""
from __future__ import annotations

import os
from typing import Any

SFT_POLICY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sft_policy")


def _build_app() -> Any:
    from agentenv.server import hide_accelerators

    hide_accelerators()  # before the engine import: bm25s pulls in JAX when installed
    from agentenv_webshop.server import create_app

    num_products = os.environ.get("WEBSHOP_NUM_PRODUCTS")
    return create_app(data_dir=os.environ.get("WEBSHOP_DATA_DIR") or None,
                      num_products=int(num_products) if num_products else None)


def __getattr__(name: str) -> Any:
    if name == "app":
        app = globals()["app"] = _build_app()
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
