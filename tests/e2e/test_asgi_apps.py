"""`python -m uvicorn agentenv_webshop:app` (and the webarena twin) serve AgentGym's API, as in AgentGym."""
from __future__ import annotations

import os

import pytest
from helpers import launched_server

from agentenv.envs.webshop import WebshopEnvClient


def test_uvicorn_serves_the_webshop_app():
    with launched_server("uvicorn", "agentenv_webshop:app",
                         env={"WEBSHOP_NUM_PRODUCTS": "300"}) as (base, _proc):
        client = WebshopEnvClient(base, data_len=10, timeout=60)
        try:
            client.reset(0)
            assert "search" in client.observe().lower()
            out = client.step("Action: search[blue shirt]")
            assert "Back to Search" in out.state
        finally:
            client.close()


def test_uvicorn_serves_the_webarena_app():
    pytest.importorskip("playwright")
    from agentenv.envs.webarena import WebarenaEnvClient
    from agentenv_webarena.webarena.browser_env import default_chromium

    if not os.path.exists(default_chromium()):
        pytest.skip(f"no Chromium at {default_chromium()}")
    env = {k: "" for k in ("SHOPPING", "SHOPPING_ADMIN", "REDDIT")}
    with launched_server("uvicorn", "agentenv_webarena:app", env=env) as (base, _proc):
        client = WebarenaEnvClient(base, data_len=10, timeout=120)
        try:
            client.reset(0)
            assert "Tab 0 (current)" in client.observe()
            out = client.step("```scroll [down]```")
            assert out.reward == 0.0 and not out.done
        finally:
            client.close()
