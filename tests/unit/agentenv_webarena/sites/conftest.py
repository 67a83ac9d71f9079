"""Fixtures for the embedded-site tests: one instance store holding every site's seeded tables."""
from __future__ import annotations

import pytest

from agentenv_webarena.sites.apps import build_database
from agentenv_webarena.sites.store import InstanceStore


@pytest.fixture(scope="module")
def store() -> InstanceStore:
    """A store whose instances start from the pristine seed of every embedded site."""
    return InstanceStore(build_database)
