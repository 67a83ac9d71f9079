"""The CPU profile's observation cap never cuts an answer a question task needs.

Each question task (scored by a `must_include` / `exact_match` string) is replayed to the page where its
answer is read, in the default observation (viewport only), and that accessibility tree is cut as the CPU
profile's agent loop cuts it: `max_obs_tokens` of scripts/profiles/webarena_{train,eval}_cpu.args, in tokens
of the tiny model's tokenizer (the CPU profile's policy). Every answer the page shows must survive the cut.
Every question task, marked slow: the default run checks one task per template inside the reference replay of
tests/e2e/test_webarena_api.py (`bench/webarena_obs_cap.py` is the same measurement with more caps, recorded in
bench/RESULTS.md).
"""
from __future__ import annotations

import os
import sys

import pytest
from helpers import require_chromium

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from webarena_obs_cap import answer_page_tree, cpu_profile_codec_and_cap, cut_answers, question_tasks  # noqa: E402

pytestmark = pytest.mark.timeout(1800)
require_chromium()


@pytest.fixture(scope="module")
def env():
    from agentenv_webarena.environment import EnvConfig, WebarenaSession, WebarenaWorld

    world = WebarenaWorld.load(EnvConfig())
    session = WebarenaSession(world)
    try:
        yield world, session
    finally:
        session.close()
        world.close()


@pytest.fixture(scope="module")
def cpu_view():
    return cpu_profile_codec_and_cap()


def _cut_answers(env, cpu_view, indices: list[int]) -> tuple[int, list[str]]:
    world, session = env
    assert world.config.browser.current_viewport_only, "the default observation is viewport-only"
    codec, cap = cpu_view
    checked, cut = 0, []
    for index in indices:
        try:
            tree = answer_page_tree(world, session, index)
        except Exception:  # noqa: BLE001 - a replay that breaks is the suite replay test's business
            continue
        shown, lost = cut_answers(world.tasks[index], tree, codec, cap)
        checked, cut = checked + shown, cut + lost
    return checked, cut


@pytest.mark.slow
def test_cpu_profile_cap_keeps_every_answer(env, cpu_view):
    world, _ = env
    checked, cut = _cut_answers(env, cpu_view, question_tasks(world.tasks))
    assert checked > 100 and not cut, cut
