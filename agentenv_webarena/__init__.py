"""WebArena environment server: Playwright-driven Chromium, WebArena's observations, actions and
evaluators, embedded sites and task suite (`python -m agentenv_webarena.launch`).

`agentenv_webarena:app` is the ASGI app, built on first access, so the server also runs as in AgentGym:
``python -m uvicorn agentenv_webarena:app --host 127.0.0.1 --port 36005``. Sites come from WebArena's
environment variables (``SHOPPING``, ``SHOPPING_ADMIN``, ``REDDIT``, ...; none set = the embedded sites),
the browser from ``WEBARENA_CHROMIUM``; the launch module takes every other setting as a flag.
"""
from __future__ import annotations

from typing import Any


def _build_app() -> Any:
    from agentenv.server import hide_accelerators

    hide_accelerators()
    from agentenv_webarena.server import create_app

    return create_app()


def __getattr__(name: str) -> Any:
    if name == "app":
        app = globals()["app"] = _build_app()
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
