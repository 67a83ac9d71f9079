"""The expert (cheat oracle) earns reward 1.0 on >= 95% of the embedded catalog's goals; item-id files."""
from __future__ import annotations

import json
import os
import re

import pytest

from agentenv_webshop.environment import WebshopSession, WebshopWorld
from agentenv_webshop.expert import (
    ClientEnv,
    ExpertPolicy,
    SessionEnv,
    candidate_queries,
    evaluate,
    request_text,
    to_conversation,
)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="module")
def world():
    return WebshopWorld.load()  # the embedded catalog, its goals and BM25 index


def test_queries_come_from_the_instruction():
    goal = {"asin": "B0X", "instruction_text": "i want to buy a dried cranberry trail mix which is non gmo with "
            "flavor name: original, and size: 4 ounce, and price lower than 50.00 dollars",
            "attributes": ["non gmo"], "goal_options": {"flavor name": "original", "size": "4 ounce"}}
    assert request_text(goal) == "i want to buy a dried cranberry trail mix which is non gmo"
    queries = candidate_queries(goal)
    assert queries[0] == "dried cranberry trail mix non gmo"
    assert queries[1] == "dried cranberry trail mix"
    instruction_words = set(re.findall(r"[a-z0-9]+", goal["instruction_text"]))
    for query in queries:
        assert set(query.split()) <= instruction_words  # nothing a model could not read off the instruction
        assert "price" not in query and "dollars" not in query


def test_expert_success_rate_on_embedded_goals(world):
    indices = range(0, world.num_goals, 5)  # a fifth of all goals, spread over the shuffled order
    rate, episodes = evaluate(SessionEnv(WebshopSession(world)), world.goals, indices)
    assert len(episodes) >= 1000
    assert rate >= 0.95, f"expert success {rate:.3f} < 0.95"
    assert all(e.done == e.found for e in episodes)  # it buys exactly when it found the goal product
    assert max(len(e.actions) for e in episodes) <= 4 * 6 + 2 + 4  # searches, pages, open, options, buy


def test_demonstration_conversation(world):
    episode = ExpertPolicy().play(SessionEnv(WebshopSession(world)), 3, world.goals[3])
    demo = to_conversation(episode)
    assert demo["item_id"] == "webshop_3"
    turns = demo["conversations"]
    assert [t["from"] for t in turns[:2]] == ["human", "gpt"] and turns[1]["value"] == "Ok."
    body = turns[2:]
    assert len(body) == 2 * len(episode.actions)
    assert body[0]["value"].startswith("WebShop [SEP] Instruction:")
    for human, gpt, action in zip(body[::2], body[1::2], episode.actions, strict=True):
        assert human["from"] == "human" and human["loss"] is None
        assert gpt["from"] == "gpt" and gpt["loss"] is True
        assert re.fullmatch(r"Thought:\nI think .+\n\nAction:\n" + re.escape(action), gpt["value"], re.S)
    assert episode.actions[-1] == "click[buy now]" and episode.success


def test_click_as_shown_uses_the_displayed_id(world):
    """Both spellings of a product click reach the same product page and the same reward."""
    lower = ExpertPolicy().play(SessionEnv(WebshopSession(world)), 3, world.goals[3])
    shown = ExpertPolicy(click_as_shown=True).play(SessionEnv(WebshopSession(world)), 3, world.goals[3])
    asin = world.goals[3]["asin"]
    assert f"click[{asin.lower()}]" in lower.actions and f"click[{asin.upper()}]" in shown.actions
    assert [a.lower() for a in shown.actions] == lower.actions
    assert shown.observations == lower.observations and shown.reward == lower.reward == 1.0


def test_expert_over_http(webshop_url, world):
    env = ClientEnv(webshop_url)
    try:
        rate, episodes = evaluate(env, world.goals, [0, 1, 2])
    finally:
        env.close()
    assert rate == 1.0 and all(e.actions[-1] == "click[buy now]" for e in episodes)


def test_item_id_files(world):
    ids = {}
    for split in ("train", "test"):
        with open(os.path.join(REPO, "AgentItemId", f"webshop_{split}.json"), encoding="utf-8") as fh:
            items = json.load(fh)
        assert all(set(item) == {"item_id"} for item in items)
        ids[split] = [int(item["item_id"].removeprefix("webshop_")) for item in items]
        assert all(0 <= i < world.num_goals for i in ids[split])
        assert len(set(ids[split])) == len(ids[split])
    assert not set(ids["train"]) & set(ids["test"])
    assert 200 <= len(ids["test"]) <= 500
    assert len(ids["train"]) + len(ids["test"]) == world.num_goals  # regenerate with scripts/make_item_ids.py
