"""Fixtures for the WebArena evaluator tests: a loopback site (also the OpenAI-compatible judge) and one
real Chromium per module, built from the helpers in wa_eval_fixtures.py."""
from __future__ import annotations

import os

import pytest
from wa_eval_fixtures import CHROMIUM, BrowserRunner, LoopbackSite


@pytest.fixture(scope="module")
def site():
    server = LoopbackSite()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium not found at {CHROMIUM}; set WEBARENA_CHROMIUM")
    runner = BrowserRunner()
    try:
        yield runner
    finally:
        runner.close()
