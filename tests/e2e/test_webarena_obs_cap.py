"""The CPU profile's observation cap never cuts an answer a question task needs.

Each question task (scored by a `must_include` / `exact_match` string) is replayed to the page where its
answer is read, in the default observation (viewport only), and that accessibility tree is cut as the CPU
profile's agent loop cuts it: `max_obs_tokens` of scripts/profiles/webarena_{train,eval}_cpu.args, in tokens
of the tiny model's tokenizer (the CPU profile's policy). Every answer the page shows must survive the cut.
One task per template by default; every question task in the slow run (`bench/webarena_obs_cap.py` is the
same measurement with more caps, recorded in bench/RESULTS.md).
"""
from __future__ import annotations

import os
import sys

import pytest
from helpers import require_chromium

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from webarena_obs_cap import answer_page_tree, answers, cpu_profile_cap, found, question_tasks  # noqa: E402

from agentenv.controller import HFTokenCodec, cut_to_tokens  # noqa: E402

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
def tiny_codec():
    from transformers import AutoTokenizer

    from verl.utils.tiny_model import build_tiny_model

    return HFTokenCodec(AutoTokenizer.from_pretrained(build_tiny_model()))


def _cut_answers(env, codec, indices: list[int]) -> tuple[int, list[str]]:
    world, session = env
    assert world.config.browser.current_viewport_only, "the default observation is viewport-only"
    cap = min(cpu_profile_cap("train"), cpu_profile_cap("eval"))
    checked, cut = 0, []
    for index in indices:
        try:
            tree = answer_page_tree(world, session, index)
        except Exception:  # noqa: BLE001 - a replay that breaks is the suite replay test's business
            continue
        shown = cut_to_tokens(tree, codec, cap)
        for answer in answers(world.tasks[index]):
            if found(answer, tree) >= 0:
                checked += 1
                if found(answer, shown) < 0:
                    cut.append(f"task {index}: {answer!r} at character {found(answer, tree)} of {len(tree)}")
    return checked, cut


def test_cpu_profile_cap_keeps_the_answer_one_task_per_template(env, tiny_codec):
    world, _ = env
    first = {}
    for index in question_tasks(world.tasks):
        first.setdefault(world.tasks[index]["intent_template_id"], index)
    checked, cut = _cut_answers(env, tiny_codec, sorted(first.values()))
    assert checked >= len(first) // 2, f"only {checked} answers were found on their pages"
    assert not cut, cut


@pytest.mark.slow
def test_cpu_profile_cap_keeps_every_answer(env, tiny_codec):
    world, _ = env
    checked, cut = _cut_answers(env, tiny_codec, question_tasks(world.tasks))
    assert checked > 100 and not cut, cut
