"""WebShop's purchase reward: type, attribute, option and price components.

Owns the reward formula (WebShop's `get_reward`) with WebShop's thresholds and quirks:

    reward = r_type * (attr_hits + option_hits + [price <= price_upper]) / (|attrs| + |options| + 1)

- fuzzy matches use ``token_set_ratio > 85`` (rapidfuzz with ``utils.default_process``: lowercase,
  non-alphanumerics to spaces, trimmed; a token subset scores 100; non-strings are compared as
  ``str(x)``, like thefuzz);
- option values go through `normalize_color` first; for synthetic goals (dict ``goal_options``)
  each goal option is the ``(name, value)`` tuple, as in WebShop;
- r_type ladder 1 / 0.5 / 0.1 / 0 from query, category and title-noun agreement;
- there is no ASIN check: another product with the same features earns the same reward.

Does not own: noun extraction (`nouns`), colour names (`colors`), goal construction (`goal`).
"""
from __future__ import annotations

from typing import Any, Iterable

from rapidfuzz import fuzz, utils

from agentenv_webshop.engine.colors import normalize_color
from agentenv_webshop.engine.nouns import extract_nouns

__all__ = ["get_reward", "get_type_reward", "get_attribute_reward", "get_option_reward", "fuzzy_score"]

FUZZY_THRESHOLD = 85  # a match needs a token_set_ratio strictly above this


def fuzzy_score(a: Any, b: Any) -> float:
    """thefuzz-style ``token_set_ratio`` of two values (non-strings compared as ``str(x)``)."""
    a = a if isinstance(a, str) else str(a)
    b = b if isinstance(b, str) else str(b)
    return fuzz.token_set_ratio(a, b, processor=utils.default_process)


def _category_set(product_category: str) -> set[str]:
    return {piece.strip() for piece in (product_category or "").split("›")}


def get_type_reward(purchased_product: dict, goal: dict) -> dict:
    """Product-type agreement between the purchased product and the goal.

    Args:
        purchased_product: WebShop product dict (``query``, ``product_category``, ``name``).
        goal: WebShop goal dict (``query``, ``product_category``, ``name``).

    Returns:
        ``{"r_type", "query_match", "category_match", "title_score"}``. ``title_score`` is
        |purchased nouns ∩ goal nouns| / len(goal noun list) (0.2 if the goal name has no noun).
    """
    query_match = purchased_product.get("query") == goal.get("query")
    shared = (_category_set(purchased_product.get("product_category", ""))
              & _category_set(goal.get("product_category", "")))
    category_match = len(shared) >= 2
    purchased_nouns = extract_nouns(purchased_product.get("name", ""))
    goal_nouns = extract_nouns(goal.get("name", ""))
    if goal_nouns:
        title_score = len(set(purchased_nouns) & set(goal_nouns)) / len(goal_nouns)
    else:
        title_score = 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    # The title rules come last, so they override a query or category match (as in WebShop).
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return {"r_type": r_type, "query_match": query_match, "category_match": category_match, "title_score": title_score}


def get_attribute_reward(purchased_product: dict, goal: dict) -> tuple[float, int]:
    """Share of goal attributes the purchased product has.

    A goal attribute matches if a product ``Attributes`` entry has token_set_ratio > 85 with it,
    or else if it is a plain (case-sensitive on the goal side) substring of the lowercased title,
    joined bullet points or description.

    Returns:
        ``(r_att, num_attr_matches)``; ``r_att`` is 0.0 for a goal without attributes (WebShop
        would divide by zero there).
    """
    goal_attrs = goal.get("attributes") or []
    product_attrs = purchased_product.get("Attributes") or []
    title = (purchased_product.get("Title") or "").lower()
    bullets = " ".join(purchased_product.get("BulletPoints") or []).lower()
    description = (purchased_product.get("Description") or "").lower()
    matches = 0
    for g_attr in goal_attrs:
        if any(fuzzy_score(p_attr, g_attr) > FUZZY_THRESHOLD for p_attr in product_attrs):
            matches += 1
        elif g_attr in title or g_attr in bullets or g_attr in description:
            matches += 1
    r_att = matches / len(goal_attrs) if goal_attrs else 0.0
    return r_att, matches


def get_option_reward(purchased_options: Iterable[Any], goal_options: Iterable[Any]) -> tuple[float | None, int]:
    """Share of goal options matched by some purchased option (after colour normalisation).

    Args:
        purchased_options: the chosen option values (WebShop passes ``session['options'].values()``).
        goal_options: value strings (human goals) or ``(name, value)`` tuples (synthetic goals,
            from ``goal_options.items()``).

    Returns:
        ``(r_option, num_option_matches)``; ``r_option`` is None when there are no goal options.
    """
    purchased = [normalize_color(o) for o in purchased_options]
    wanted = [normalize_color(o) for o in goal_options]
    matches = 0
    for g_option in wanted:
        if any(fuzzy_score(p_option, g_option) > FUZZY_THRESHOLD for p_option in purchased):
            matches += 1
    r_option = matches / len(wanted) if wanted else None
    return r_option, matches


def get_reward(purchased_product: dict, goal: dict, price: float, purchased_options: Any,
               verbose: bool = False) -> float | tuple[float, dict]:
    """WebShop's total reward for buying `purchased_product` at `price` with `purchased_options`.

    Args:
        purchased_product: WebShop product dict.
        goal: WebShop goal dict (``attributes``, ``goal_options`` dict or list, ``price_upper``, ...).
        price: the purchase price (``product['product_price']``).
        purchased_options: ``{option_name: value}`` as in a WebShop session (only values are
            used), or an iterable of values.
        verbose: also return the component info dict.

    Returns:
        The reward in [0, 1], or ``(reward, info)`` with ``r_type, r_att, w_att, query_match,
        category_match, title_score`` and, when present, ``r_option, w_option, r_price, w_price``.
    """
    type_info = get_type_reward(purchased_product, goal)
    price_upper = goal["price_upper"]
    r_price = (price <= price_upper) if price_upper > 0 else None
    r_att, num_attr_matches = get_attribute_reward(purchased_product, goal)
    goal_options = goal.get("goal_options") or []
    num_options = len(goal_options)
    option_items = goal_options.items() if isinstance(goal_options, dict) else goal_options
    values = purchased_options.values() if isinstance(purchased_options, dict) else (purchased_options or [])
    r_option, num_option_matches = get_option_reward(list(values), list(option_items))
    num_attrs = len(goal.get("attributes") or [])
    denom = num_attrs + num_options + 1
    total = (num_attr_matches + num_option_matches + (r_price or 0)) / denom * type_info["r_type"]
    if not verbose:
        return total
    info = {"r_type": type_info["r_type"], "r_att": r_att, "w_att": num_attrs / denom,
            "query_match": type_info["query_match"], "category_match": type_info["category_match"],
            "title_score": type_info["title_score"]}
    if r_option is not None:
        info["r_option"] = r_option
        info["w_option"] = num_options / denom
    if r_price is not None:
        info["r_price"] = r_price
        info["w_price"] = 1 / denom
    return total, info
