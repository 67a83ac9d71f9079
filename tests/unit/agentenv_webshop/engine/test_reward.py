"""WebShop reward components, each with hand-computed cases (WebShop's get_reward)."""
from __future__ import annotations

import pytest

from agentenv_webshop.engine import nouns, reward
from agentenv_webshop.engine.colors import COLOR_SET, normalize_color
from agentenv_webshop.engine.reward import (
    fuzzy_score,
    get_attribute_reward,
    get_option_reward,
    get_reward,
    get_type_reward,
)

# Noun lists for the type-reward tests, so the ladder is tested independently of the noun backend.
_NOUNS = {
    "goal six": ("tea", "bag", "box", "cup", "mug", "pot"),
    "goal eleven": tuple("abcdefghijk"),
    "goal dup": ("tea", "tea", "cup"),
    "goal none": (),
    "shares tea": ("tea", "kettle"),
    "shares a": ("a", "zz"),
    "shares nothing": ("lamp",),
    "shares two": ("tea", "bag"),
}


@pytest.fixture
def fixed_nouns(monkeypatch):
    monkeypatch.setattr(reward, "extract_nouns", lambda text: _NOUNS[text])


def _prod(name, query="q-product", category="Home › Kitchen › Mugs"):
    return {"name": name, "query": query, "product_category": category}


def _goal(name, query="q-goal", category="Food › Snacks › Chips"):
    return {"name": name, "query": query, "product_category": category}


@pytest.mark.parametrize("product, goal, r_type, title_score", [
    # 1/6 shared nouns: 0.167 is not > 0.2, no query/category match -> 0.5
    (_prod("shares tea"), _goal("goal six"), 0.5, 1 / 6),
    # same title score, but the query matches -> 1.0
    (_prod("shares tea", query="tea"), _goal("goal six", query="tea"), 1.0, 1 / 6),
    # 2/6 > 0.2 -> 1.0 without query or category
    (_prod("shares two"), _goal("goal six"), 1.0, 2 / 6),
    # categories share 2 pieces (order and whitespace ignored) -> 1.0
    (_prod("shares tea", category="A › B › C"), _goal("goal six", category="C ›B› Z"), 1.0, 1 / 6),
    # categories share only 1 piece -> 0.5
    (_prod("shares tea", category="A › B › C"), _goal("goal six", category="A › X › Y"), 0.5, 1 / 6),
    # 1/11 < 0.1 overrides a query match -> 0.1
    (_prod("shares a", query="x"), _goal("goal eleven", query="x"), 0.1, 1 / 11),
    # no shared noun overrides query and category matches -> 0.0
    (_prod("shares nothing", query="x", category="A › B"), _goal("goal six", query="x", category="A › B"), 0.0, 0.0),
    # goal without nouns: title_score 0.2 (not > 0.2) -> 0.5 without other matches, 1.0 with a query match
    (_prod("shares tea"), _goal("goal none"), 0.5, 0.2),
    (_prod("shares tea", query="x"), _goal("goal none", query="x"), 1.0, 0.2),
    # the denominator is the goal noun LIST length (duplicates count): |{tea,cup} & {tea,kettle}| / 3
    (_prod("shares tea"), _goal("goal dup"), 1.0, 1 / 3),
])
def test_type_reward_ladder(fixed_nouns, product, goal, r_type, title_score):
    out = get_type_reward(product, goal)
    assert out["r_type"] == r_type
    assert out["title_score"] == pytest.approx(title_score)
    assert set(out) == {"r_type", "query_match", "category_match", "title_score"}


def test_type_reward_flags(fixed_nouns):
    out = get_type_reward(_prod("shares tea", query="tea", category="A › B › C"),
                          _goal("goal six", query="tea", category="B › C"))
    assert out["query_match"] is True and out["category_match"] is True


def test_rule_noun_backend_drops_adjectives_numbers_and_stopwords():
    if nouns.noun_backend() != "rules":
        pytest.skip("spaCy model installed; the rule backend is not active")
    got = nouns.extract_nouns("Organic Green Tea Bags, 100 Count (Pack of 2) for the Office")
    assert got == ("tea", "bags", "count", "pack", "office")
    assert nouns.extract_nouns("Tea tea Cup") == ("tea", "tea", "cup")  # duplicates kept, lowercased


def _attr_product():
    return {"Attributes": ["essential oils", "hand wash"], "Title": "Lavender Soap Bar, Tea Tree",
            "BulletPoints": ["Made with shea butter", "Cruelty free"], "Description": "A gentle SOAP for dry skin."}


@pytest.mark.parametrize("goal_attrs, expected", [
    (["essential oil"], 1),       # token_set_ratio 96 > 85 against 'essential oils'
    (["machine wash"], 0),        # 67 against 'hand wash', and not a substring anywhere
    (["tea tree"], 1),            # substring of the lowercased title
    (["Tea Tree"], 0),            # the goal side is NOT lowercased for the substring test
    (["shea butter"], 1),         # substring of the joined bullets
    (["butter cruelty"], 1),      # bullets are joined with a space before the substring test
    (["dry skin"], 1),            # substring of the description
    (["soap for dry"], 1),        # description is lowercased ('SOAP')
    (["essential oil", "machine wash", "dry skin"], 2),
])
def test_attribute_reward(goal_attrs, expected):
    r_att, matches = get_attribute_reward(_attr_product(), {"attributes": goal_attrs})
    assert matches == expected
    assert r_att == pytest.approx(expected / len(goal_attrs))


def test_fuzzy_score_facts():
    assert fuzzy_score("essential oil", "essential oils") == pytest.approx(96.3, abs=0.1)
    assert fuzzy_score("blue", "grey") == 25
    assert fuzzy_score("small", "x-small") == 100  # subset
    assert fuzzy_score("", "abc") == 0
    assert fuzzy_score("XL", ("size", "XL")) == 100  # non-strings compared as str(tuple)


def test_normalize_color():
    assert normalize_color("violet lavender") == "lavender"  # first in list order, not in the string
    assert normalize_color("standard") == "tan"               # WebShop's substring quirk
    assert normalize_color(("color", "grey")) == "grey"      # tuple: element membership
    assert normalize_color(("color", "dark grey")) == ("color", "dark grey")
    assert normalize_color("x-large") == "x-large"
    assert list(COLOR_SET) == sorted(COLOR_SET)  # roughly alphabetical: here exactly


@pytest.mark.parametrize("purchased, goal_options, expected", [
    (["xl"], [("size", "XL")], 1),                        # "('size', 'XL')" -> "size xl" contains "xl"
    (["violet lavender"], [("color", "lavender")], 1),     # both normalise to 'lavender'
    (["grey"], [("color", "blue")], 0),                   # 'grey' vs 'blue' = 25
    (["black | white"], ["black"], 1),                   # human-goal list: both -> 'black'
    (["standard"], ["standard"], 1),                     # both -> 'tan'
    (["standard"], [("style", "standard")], 0),          # 'tan' vs "style standard": the quirk bites
    (["small", "red"], [("size", "x-small"), ("color", "blue")], 1),
    (["red"], [("color", "red"), ("pattern", "red")], 2),  # one purchased option may match several
])
def test_option_reward(purchased, goal_options, expected):
    r_option, matches = get_option_reward(purchased, goal_options)
    assert matches == expected
    assert r_option == pytest.approx(expected / len(goal_options))


def test_option_reward_without_goal_options_is_none():
    assert get_option_reward(["red"], []) == (None, 0)


def _full_product():
    return {"asin": "B000000001", "name": "shares tea", "Title": "Green Tea, caffeine free",
            "query": "tea", "product_category": "Food › Tea", "Attributes": ["caffeine free"],
            "BulletPoints": [], "Description": ""}


def _full_goal(**kw):
    goal = {"asin": "B000000002", "name": "goal six", "query": "coffee", "product_category": "Home › Mugs",
            "attributes": ["caffeine free", "organic"], "goal_options": {"size": "large", "color": "red"},
            "price_upper": 20.0}
    goal.update(kw)
    return goal


def test_total_reward_hand_computed(fixed_nouns):
    # r_type 0.5 (1/6 nouns, no query/category); attrs 1/2; options: 'large' matches, 'blue' != 'red'; price ok.
    # N = 2 + 2 + 1 = 5 -> 0.5 * (1 + 1 + 1) / 5 = 0.3. No ASIN check: the goal ASIN differs.
    total, info = get_reward(_full_product(), _full_goal(), price=19.99,
                             purchased_options={"size": "large", "color": "blue"}, verbose=True)
    assert total == pytest.approx(0.3)
    assert info == pytest.approx({"r_type": 0.5, "r_att": 0.5, "w_att": 0.4, "query_match": False,
                                  "category_match": False, "title_score": 1 / 6, "r_option": 0.5,
                                  "w_option": 0.4, "r_price": True, "w_price": 0.2})
    assert get_reward(_full_product(), _full_goal(), 19.99, {"size": "large", "color": "blue"}) == pytest.approx(0.3)


def test_total_reward_price_and_no_options(fixed_nouns):
    goal = _full_goal(goal_options={}, name="shares two", query="tea")
    # r_type 1 (query match); 1 attr of 2; price 25 > 20 -> 0; N = 3 -> 1/3
    total, info = get_reward(_full_product(), goal, price=25.0, purchased_options={}, verbose=True)
    assert total == pytest.approx(1 / 3)
    assert "r_option" not in info and "w_option" not in info
    assert info["r_price"] is False and info["w_price"] == pytest.approx(1 / 3)
    # exactly at the bound counts; list-valued (human) goal options and a purchased-values list work
    goal = _full_goal(goal_options=["large"], name="shares two", query="tea", attributes=["caffeine free"])
    assert get_reward(_full_product(), goal, 20.0, ["large"]) == pytest.approx(1.0)
