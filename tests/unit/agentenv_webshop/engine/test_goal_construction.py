"""Goal construction (synthetic + human), price rule, weights, shuffle, sampling, cross-process determinism."""
import json
import os
import random
import subprocess
import sys

import pytest

from agentenv_webshop.engine.catalog import load_catalog
from agentenv_webshop.engine.goal import (
    GOAL_SHUFFLE_SEED,
    build_goals,
    get_human_goals,
    get_reward,
    get_synthetic_goals,
    price_upper_for,
    sample_goal_index,
)


def _product(asin, options, price, instruction, attrs, instructions=None):
    return {"asin": asin, "category": "fashion", "query": "shirt", "name": f"Shirt {asin}", "Title": f"Shirt {asin}",
            "product_category": "a › b", "options": options, "product_price": price,
            "instruction_text": instruction, "instruction_attributes": attrs, "instructions": instructions or []}


@pytest.fixture()
def products():
    return [
        _product("A1", {"size": ["small", "large"], "color": ["red", "blue", "green"]}, 25.0,
                 "i need a cotton shirt", ["cotton"]),
        _product("B2", {}, 995.0, "i need a leather shirt", ["cotton", "leather"]),
        _product("C3", {"color": ["red"]}, 10.0, None, None),
    ]


def test_synthetic_goals_cartesian_text_price_and_weights(products):
    goals = get_synthetic_goals(products, random.Random(0))
    assert [g["asin"] for g in goals] == ["A1"] * 6 + ["B2"]
    # option names sorted ("color" before "size"), values in product order, size varying fastest
    assert [tuple(g["goal_options"].values()) for g in goals[:6]] == [
        ("red", "small"), ("red", "large"), ("blue", "small"), ("blue", "large"),
        ("green", "small"), ("green", "large")]
    first = goals[0]
    assert first["price_upper"] in (40.0, 50.0, 60.0)  # candidates 30..60, never the first one
    assert first["instruction_text"] == (
        "i need a cotton shirt with color: red, and size: small, "
        f"and price lower than {first['price_upper']:.2f} dollars")
    assert first["name"] == "Shirt A1" and first["attributes"] == ["cotton"] and first["query"] == "shirt"
    b2 = goals[6]
    assert b2["goal_options"] == {} and b2["price_upper"] == 1000000
    assert b2["instruction_text"] == "i need a leather shirt"  # no options, no price candidates -> no suffixes
    # inverse frequency: cotton appears in 7 goals, leather in 1
    assert first["weight"] == pytest.approx(1 / 7)
    assert b2["weight"] == pytest.approx((1 / 7 + 1) / 2)


def test_price_rule():
    rng = random.Random(5)
    seen = {price_upper_for(25.0, rng)[0] for _ in range(300)}
    assert seen == {40.0, 50.0, 60.0}
    assert price_upper_for(975.0, rng) == (990.0, ", and price lower than 990.00 dollars")
    assert price_upper_for(985.0, rng) == (1000000, "")
    assert price_upper_for(30.0, random.Random(1))[0] in (50.0, 60.0, 70.0)  # strictly greater than the price


def test_human_goals_skip_empty_attributes(products):
    products[0]["instructions"] = [
        {"instruction": "I want a red shirt.", "instruction_attributes": ["cotton"], "instruction_options": ["red"]},
        {"instruction": "Anything", "instruction_attributes": [], "instruction_options": []},
    ]
    goals = get_human_goals(products, random.Random(0))
    assert len(goals) == 1
    g = goals[0]
    assert g["instruction_text"].startswith("I want a red shirt, and price lower than ")
    assert g["goal_options"] == ["red"] and g["weight"] == 1 and g["name"] == "Shirt A1"


def test_build_goals_is_seed_233_shuffle_of_construction_order(products):
    goals = build_goals(products)
    expected = get_synthetic_goals(products)
    random.Random(GOAL_SHUFFLE_SEED).shuffle(expected)
    assert goals == expected
    assert build_goals(products) == goals
    random.seed(999)  # the global random state must not matter
    assert build_goals(products) == goals


def test_sample_goal_index_is_webshops_random_idx():
    goals = [{"weight": w} for w in (1.0, 0.0, 0.0, 0.0)]
    rng = random.Random(3)
    # cum = [0, 1, 1, 1, 1]: bisect lands on 1 (WebShop's off-by-one), never 0
    assert {sample_goal_index(goals, rng) for _ in range(100)} == {1}
    goals = [{"weight": 1.0} for _ in range(10)]
    a = [sample_goal_index(goals, random.Random(7)) for _ in range(3)]
    assert a[0] == a[1] == a[2] and 1 <= a[0] <= 9
    assert sample_goal_index([{"weight": 2.0}], random.Random(0)) == 0
    with pytest.raises(ValueError, match="empty"):
        sample_goal_index([], random.Random(0))


def test_buying_the_goal_product_with_goal_options_earns_full_reward():
    catalog = load_catalog()
    goals = build_goals(catalog.products)
    for goal in goals[:150]:
        product = catalog.by_asin[goal["asin"]]
        reward = get_reward(product, goal, product["product_price"], dict(goal["goal_options"]))
        assert reward == 1.0, goal["instruction_text"]


_CHILD = """
import hashlib, json
from agentenv_webshop.engine.catalog import load_catalog
from agentenv_webshop.engine.goal import build_goals
for human in (False, True):
    goals = build_goals(load_catalog(human_goals=human).products, human_goals=human)
    blob = json.dumps([(g["asin"], g["instruction_text"], g["price_upper"], g["weight"]) for g in goals])
    print(len(goals), hashlib.sha256(blob.encode()).hexdigest(), json.dumps(goals[17]["instruction_text"]))
"""


def test_goals_identical_across_processes():
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=dict(os.environ, PYTHONHASHSEED=hash_seed))
             for hash_seed in ("1", "12345")]  # two processes at once, different str-hash seeds
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outs.append(out)
    assert outs[0] == outs[1]
    goals = build_goals(load_catalog().products)
    n, _, text17 = outs[0].splitlines()[0].split(" ", 2)
    assert int(n) == len(goals) and json.loads(text17) == goals[17]["instruction_text"]
