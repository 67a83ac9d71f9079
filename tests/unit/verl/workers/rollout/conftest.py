"""Fixtures for rollout tests: one tiny model per session, its tokenizer, a scripted engine, a fake env."""
from __future__ import annotations

import threading

import pytest

from verl.workers.rollout.base import GenerationOutput, RolloutEngine


@pytest.fixture(scope="session")
def tiny_model_dir():
    """The shared tiny model (built once per machine in the default cache dir, reused afterwards)."""
    from verl.utils.tiny_model import build_tiny_model

    return build_tiny_model()


@pytest.fixture(scope="session")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)


class ScriptedEngine(RolloutEngine):
    """Engine returning a fixed text per turn (mock that isolates the agent loop from a model).

    `script(prompt_ids, sampling) -> (ids, finish_reason)`; log-probs are -0.01 * (position + 1).
    Every call is recorded as (prompt_ids, sampling, output).
    """

    def __init__(self, script):
        self.script = script
        self.calls = []
        self._lock = threading.Lock()

    async def _generate_ids(self, prompt_ids, sampling):
        ids, finish = self.script(list(prompt_ids), sampling)
        ids = ids[: sampling.max_tokens]
        if finish == "stop" and len(ids) == sampling.max_tokens and ids[-1] not in sampling.stop_token_ids:
            finish = "length"
        out = GenerationOutput(token_ids=ids, log_probs=[-0.01 * (k + 1) for k in range(len(ids))],
                               finish_reason=finish)
        with self._lock:
            self.calls.append((list(prompt_ids), sampling, out))
        return out

    def update_weights(self, named_tensors):
        pass


@pytest.fixture
def scripted_engine_cls():
    return ScriptedEngine
