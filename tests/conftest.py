"""Suite-wide fixtures. `webshop_url` starts one real WebShop server for the whole session."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from helpers import launched_server  # noqa: E402


@pytest.fixture(scope="session")
def webshop_url():
    """Base URL of a real WebShop server (embedded catalog) started with `python -m agentenv_webshop.launch`."""
    with launched_server("agentenv_webshop.launch") as (base, _proc):
        yield base


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """Path of a freshly built tiny random model, one per test module (the e2e and GPU training tests)."""
    from verl.utils.tiny_model import build_tiny_model

    return build_tiny_model(str(tmp_path_factory.mktemp("tiny") / "model"))


def pytest_collection_modifyitems(config, items):
    """Tests marked `gpu` skip, with the reason, where torch sees no CUDA device (the default CPU run
    collects and skips them; `bash scripts/run_tests.sh -m gpu` selects only them)."""
    try:
        import torch
        has_cuda = torch.cuda.is_available()
        why = "torch.cuda.is_available() is False"
    except Exception as exc:  # torch missing or broken
        has_cuda, why = False, f"torch failed to import ({exc})"
    skip_gpu = pytest.mark.skip(reason=f"needs CUDA: {why}; run on a GPU machine (bash scripts/run_tests.sh -m gpu)")
    for item in items:
        if item.get_closest_marker("gpu") is not None and not has_cuda:
            item.add_marker(skip_gpu)
