"""Scaffold of the embedded wiki site (being built: issue 28)."""
from __future__ import annotations

from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

SCHEMA = ""


def seed(conn) -> None:
    """No data yet."""


def create_app(store) -> Starlette:
    """A placeholder app."""
    async def home(request):
        return HTMLResponse("<html><body><h1>wiki</h1></body></html>")
    return Starlette(routes=[Route("/", home)])
