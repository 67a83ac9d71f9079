"""Goal construction and sampling, as WebShop's ``engine/goal.py`` but deterministic everywhere.

Owns synthetic goals (one per Cartesian combination of a product's option values, option names
sorted), human goals (one per non-empty human instruction), the ``price_upper`` rule, the
inverse-frequency weights and the seed-233 shuffle. All randomness comes from local
``random.Random`` instances (never the global ``random`` state), so goal ``i`` has the same text
and price in every process. The reward functions live in :mod:`agentenv_webshop.engine.reward`
and are re-exported at the bottom, because WebShop's ``engine/goal.py`` exposes them.
"""
from __future__ import annotations

import bisect
import itertools
import logging
import random
from collections import defaultdict
from typing import Iterable

logger = logging.getLogger(__name__)

__all__ = ["PRICE_RANGE", "GOAL_SHUFFLE_SEED", "PRICE_SAMPLE_SEED", "build_goals", "get_synthetic_goals",
           "get_human_goals", "sample_goal_index", "goal_cum_weights", "price_upper_for",
           "get_reward", "get_type_reward", "get_attribute_reward", "get_option_reward"]

PRICE_RANGE = [10.0 * i for i in range(1, 100)]  # 10, 20, ..., 990
GOAL_SHUFFLE_SEED = 233
PRICE_SAMPLE_SEED = 233
NO_PRICE_LIMIT = 1000000


def price_upper_for(price: float, rng: random.Random) -> tuple[float, str]:
    """WebShop's price rule: ``(price_upper, instruction suffix)``.

    Candidates are the first 4 values of ``PRICE_RANGE`` above ``price``; with at least 2 of them,
    two distinct ones are sampled and the larger becomes ``price_upper`` (so never the first);
    otherwise ``price_upper = 1000000`` and there is no suffix.
    """
    candidates = [p for p in PRICE_RANGE if p > price][:4]
    if len(candidates) >= 2:
        _, price_upper = sorted(rng.sample(candidates, 2))
        return price_upper, f", and price lower than {price_upper:.2f} dollars"
    return NO_PRICE_LIMIT, ""


def get_human_goals(products: Iterable[dict], rng: random.Random | None = None) -> list[dict]:
    """One goal per human instruction with non-empty ``instruction_attributes`` (weight 1)."""
    rng = rng or random.Random(PRICE_SAMPLE_SEED)
    goals: list[dict] = []
    skipped = 0
    for product in products:
        for instruction in product.get("instructions") or []:
            attributes = instruction["instruction_attributes"]
            if len(attributes) == 0:
                skipped += 1
                continue
            price_upper, price_text = price_upper_for(product["product_price"], rng)
            goals.append({
                "asin": product["asin"],
                "category": product["category"],
                "query": product["query"],
                "name": product["name"],
                "product_category": product["product_category"],
                "instruction_text": instruction["instruction"].strip(".") + price_text,
                "attributes": attributes,
                "price_upper": price_upper,
                "goal_options": instruction["instruction_options"],
                "weight": 1,
            })
    if skipped:
        logger.info("skipped %d human instructions without attributes", skipped)
    return goals


def get_synthetic_goals(products: Iterable[dict], rng: random.Random | None = None) -> list[dict]:
    """One goal per combination of option values of every product that has an ``instruction_text``."""
    rng = rng or random.Random(PRICE_SAMPLE_SEED)
    goals: list[dict] = []
    for product in products:
        if product.get("instruction_text") is None:
            continue
        attributes = product["instruction_attributes"]
        options = product["options"]
        option_names = sorted(options)
        for combination in itertools.product(*(options[name] for name in option_names)):
            goal_options = dict(zip(option_names, combination, strict=True))
            option_text = ", and ".join(f"{k}: {v}" for k, v in goal_options.items())
            option_text = " with " + option_text if option_text else ""
            price_upper, price_text = price_upper_for(product["product_price"], rng)
            goals.append({
                "asin": product["asin"],
                "category": product["category"],
                "query": product["query"],
                "name": product["Title"],
                "product_category": product["product_category"],
                "instruction_text": f"{product['instruction_text']}{option_text}{price_text}",
                "attributes": attributes,
                "price_upper": price_upper,
                "goal_options": goal_options,
            })
    # Inverse-frequency weights: a goal's weight is the mean of 1/count over its attributes.
    counts: dict[str, int] = defaultdict(int)
    for goal in goals:
        for attribute in goal["attributes"]:
            counts[attribute] += 1
    for goal in goals:
        attrs = goal["attributes"]
        # WebShop divides by len(attributes) unguarded; a goal without attributes gets weight 1 here.
        goal["weight"] = sum(1.0 / counts[a] for a in attrs) / len(attrs) if attrs else 1.0
    return goals


def build_goals(products: Iterable[dict], human_goals: bool = False) -> list[dict]:
    """Build and shuffle WebShop goals deterministically.

    Args:
        products: loaded product dicts (see :func:`agentenv_webshop.engine.catalog.load_catalog`).
        human_goals: human goals (``instructions``) instead of synthetic ones (``instruction_text``).

    Returns:
        Goal dicts ``{asin, category, query, name, product_category, instruction_text, attributes,
        price_upper, goal_options, weight}``, shuffled with ``random.Random(233)``.
    """
    rng = random.Random(PRICE_SAMPLE_SEED)
    goals = get_human_goals(products, rng) if human_goals else get_synthetic_goals(products, rng)
    random.Random(GOAL_SHUFFLE_SEED).shuffle(goals)
    logger.info("built %d %s goals", len(goals), "human" if human_goals else "synthetic")
    return goals


def goal_cum_weights(goals: list[dict]) -> list[float]:
    """``[0] + cumsum(weights)`` over the goals: the table ``sample_goal_index`` draws from."""
    return [0.0, *itertools.accumulate(g["weight"] for g in goals)]


def sample_goal_index(goals: list[dict], rng: random.Random, cum_weights: list[float] | None = None) -> int:
    """Weighted draw of a goal index exactly as WebShop's ``random_idx`` over ``[0] + cumsum(weights)``.

    WebShop quirk kept: ``idx = min(bisect(cum, U(0, total)), n - 1)``, so the index is shifted by
    one against the weights (goal ``j`` is drawn with goal ``j-1``'s weight, goal 0 only when n == 1).

    Args:
        goals: goal dicts with a ``weight``.
        rng: the caller's ``random.Random`` (its state advances).
        cum_weights: ``goal_cum_weights(goals)``, precomputed by callers that draw often.

    Raises:
        ValueError: if ``goals`` is empty.
    """
    if not goals:
        raise ValueError("cannot sample a goal from an empty goal list")
    if cum_weights is None:
        cum_weights = goal_cum_weights(goals)
    pos = rng.uniform(0, cum_weights[-1])
    return min(bisect.bisect(cum_weights, pos), len(cum_weights) - 2)


from agentenv_webshop.engine.reward import get_attribute_reward, get_option_reward, get_reward, get_type_reward  # noqa: F401,E402  (WebShop's engine/goal.py exposes these)
