"""WebshopSession navigation and action grammar on a small hand-made catalog (WebShop's grammar)."""
from __future__ import annotations

import random
import re
import time
import tracemalloc

import pytest

from agentenv_webshop.engine.reward import get_reward
from agentenv_webshop.environment import WebshopSession, WebshopWorld, parse_action


def _unpack(out):
    """A `StepResult` as WebShop's (observation, reward, done, info)."""
    return out.observation, out.reward, out.done, out.info


def _products():
    out = []
    for i in range(14):
        out.append({
            "asin": f"B00000{i:04d}", "name": f"Brand{i} Green Tea Bags", "Title": f"Brand{i} Green Tea Bags",
            "Price": f"${i + 1}.99", "product_price": i + 1.99, "Rating": "N.A.", "Reviews": [],
            "Description": f"Tea number {i}.", "BulletPoints": [f"bullet {i}"], "Attributes": ["caffeine free"],
            "query": "green tea", "category": "food", "product_category": "Food › Tea",
            "options": {"flavor": ["mint", "lemon"], "size": ["small", "large"]} if i == 3 else {},
        })
    out.append({**out[0], "asin": "B000009999", "name": "Coffee Mug", "Title": "Coffee Mug", "options": {}})
    return out


class _WordSearch:
    """Test double for the BM25 engine: products whose title has every query word, in catalog order."""

    def __init__(self, products):
        self.products = products

    def search(self, query, k=50):
        words = query.split()
        hits = [p["asin"] for p in self.products if words and all(w in p["Title"].lower() for w in words)]
        return hits[:k]


def _goals():
    return [{"asin": "B000000003", "name": "Brand3 Green Tea Bags", "query": "green tea", "category": "food",
             "product_category": "Food › Tea", "attributes": ["caffeine free"], "price_upper": 10.0,
             "goal_options": {"flavor": "mint", "size": "large"}, "weight": 1.0,
             "instruction_text": "i need green tea bags with flavor: mint, and size: large, "
                                 "and price lower than 10.00 dollars"},
            {"asin": "B000009999", "name": "Coffee Mug", "query": "mug", "category": "home",
             "product_category": "Home › Mugs", "attributes": ["ceramic"], "price_upper": 20.0,
             "goal_options": {}, "weight": 3.0, "instruction_text": "i want a coffee mug"}]


@pytest.fixture
def world():
    products = _products()
    return WebshopWorld(products, _goals(), _WordSearch(products))


@pytest.fixture
def session(world):
    s = WebshopSession(world)
    s.reset(0)
    return s


INSTR = _goals()[0]["instruction_text"]


def test_reset_gives_search_page(session):
    assert session.observation == f"WebShop [SEP] Instruction: [SEP] {INSTR} [SEP] Search"
    assert session.instruction_text == INSTR and session.goal_index == 0 and session.goal["asin"] == "B000000003"
    assert session.available_actions() == {"has_search_bar": True, "clickables": ["search"]}
    assert session.state()["url"] == "http://127.0.0.1:3000/fixed_0"


@pytest.mark.parametrize("bad", [2, -1, 10**9])
def test_reset_out_of_range(world, bad):
    with pytest.raises(ValueError, match=r"0\.\.1"):
        WebshopSession(world).reset(bad)


def test_reset_type_and_weighted_draw(world):
    with pytest.raises(TypeError):
        WebshopSession(world).reset("3")
    a = WebshopWorld(_products(), _goals(), None, seed=7)
    b = WebshopWorld(_products(), _goals(), None, seed=7)
    seq_a = [a.sample_goal_index() for _ in range(20)]
    assert seq_a == [b.sample_goal_index() for _ in range(20)]
    assert set(seq_a) <= {0, 1}
    s = WebshopSession(a)
    s.reset(None)
    assert s.goal_index in (0, 1) and s.goal is a.goals[s.goal_index]


def test_parse_action_grammar():
    assert parse_action("search[Green Tea]") == ("search", "green tea")
    assert parse_action("click[b000000003] trailing") == ("click", "b000000003")  # anchored at start only
    assert parse_action("click[a][b]") == ("click[a]", "b")  # greedy name
    assert parse_action("search[]") == ("search[]", None)
    assert parse_action("hello") == ("hello", None)


def test_parse_action_equals_webshop_regex_and_is_linear():
    webshop = re.compile(r"(.+)\[(.+)\]")
    rng = random.Random(0)
    for _ in range(20000):
        action = "".join(rng.choice("ab[]\n C") for _ in range(rng.randint(0, 10)))
        match = webshop.match(action)
        expected = (action, None) if match is None else (match.group(1), match.group(2).lower())
        assert parse_action(action) == expected, repr(action)
    start = time.perf_counter()
    parse_action("[" * 1_000_000)  # quadratic for the backtracking regex
    assert time.perf_counter() - start < 0.5


def test_search_next_prev_and_total(session):
    obs, reward, done, info = _unpack(session.step("search[Green TEA]"))
    assert (reward, done, info) == (0.0, False, None)
    assert obs.startswith(f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] Page 1 (Total results: 14) "
                          "[SEP] Next > [SEP] B000000000 [SEP] Brand0 Green Tea Bags [SEP] $1.99 [SEP] B000000001")
    actions = session.available_actions()
    assert actions["has_search_bar"] is False
    assert actions["clickables"][:3] == ["back to search", "next >", "b000000000"]
    assert len(actions["clickables"]) == 12
    obs, *_ = _unpack(session.step("click[next >]"))
    assert "Page 2 (Total results: 14) [SEP] < Prev [SEP] Next > [SEP] B000000010" in obs
    assert obs.endswith("B000000013 [SEP] Brand13 Green Tea Bags [SEP] $14.99")
    assert session.state()["url"] == "http://127.0.0.1:3000/search_results/fixed_0/green+tea/2"
    obs, *_ = _unpack(session.step("click[next >]"))  # past the end: no products, Next > still shown
    assert obs.endswith("Page 3 (Total results: 14) [SEP] < Prev [SEP] Next >")
    session.step("click[< prev]")
    obs, *_ = _unpack(session.step("click[< prev]"))
    assert "Page 1 (Total results: 14) [SEP] Next >" in obs


def test_item_options_subpages_and_back(session):
    session.step("search[green tea]")
    obs, _, _, info = _unpack(session.step("click[b000000003]"))
    assert info is None
    assert obs == (f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] < Prev [SEP] flavor [SEP] mint [SEP] lemon "
                   "[SEP] size [SEP] small [SEP] large [SEP] Brand3 Green Tea Bags [SEP] Price: $4.99 "
                   "[SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now")
    session.step("click[mint]")
    session.step("click[large]")
    assert '%22flavor%22%3A%20%22mint%22' in session.state()["url"]
    obs, *_ = _unpack(session.step("click[features]"))
    assert obs == f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] < Prev [SEP] bullet 3"
    assert session.available_actions()["clickables"] == ["back to search", "< prev"]
    assert session.step("click[mint]").info["valid"] is False  # options are not clickable on a sub-page
    obs, *_ = _unpack(session.step("click[< prev]"))  # sub-page -> item page, options kept
    assert obs.startswith(f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] < Prev [SEP] flavor")
    assert "size%22%3A%20%22large" in session.state()["url"]
    obs, *_ = _unpack(session.step("click[< prev]"))  # item -> the same results page
    assert "Page 1 (Total results: 14)" in obs


def test_search_from_any_page_and_back_to_search(session):
    session.step("search[green tea]")
    session.step("click[b000000003]")
    session.step("click[mint]")
    obs, *_ = _unpack(session.step("search[coffee mug]"))  # no search bar here, still allowed
    assert "Page 1 (Total results: 1) [SEP] Next > [SEP] B000009999" in obs
    obs, *_ = _unpack(session.step("click[back to search]"))
    assert obs.startswith("WebShop [SEP] Instruction:")
    assert session.state()["url"].endswith("/fixed_0")


@pytest.mark.parametrize("action", ["click[search]", "click[buy now]", "click[b000000003]", "hello", "search[]",
                                    "look[around]", "click[]", ""])
def test_invalid_actions_are_noops(session, action):
    before = session.observation
    obs, reward, done, info = _unpack(session.step(action))
    assert (obs, reward, done) == (before, 0.0, False)
    assert info["valid"] is False and info["reason"]
    assert session.observation == before


def test_click_search_rejected_but_listed(session):
    assert "search" in session.available_actions()["clickables"]
    assert "not clickable" in session.step("click[search]").info["reason"]


def test_buy_now_reward_done_and_after(world, session):
    session.step("search[green tea]")
    session.step("click[b000000003]")
    session.step("click[mint]")
    session.step("click[large]")
    obs, reward, done, info = _unpack(session.step("click[buy now]"))
    assert done is True and info is None and reward == pytest.approx(1.0)
    assert obs.startswith("Thank you for shopping with us! [SEP] Your code: [SEP] None")
    assert "[SEP] Your score (min 0.0, max 1.0) [SEP] 1.0" in obs
    assert session.available_actions() == {"has_search_bar": False, "clickables": []}
    # after done every action is a harmless no-op
    obs2, reward2, done2, info2 = _unpack(session.step("search[green tea]"))
    assert (obs2, reward2, done2, info2["valid"]) == (obs, 0.0, True, False)
    # a partial purchase: only one option chosen -> same number as get_reward
    session.reset(0)
    session.step("search[green tea]")
    session.step("click[b000000003]")
    session.step("click[lemon]")
    _, reward, done, _ = _unpack(session.step("click[buy now]"))
    expected = get_reward(world.by_asin["B000000003"], world.goals[0], 4.99, {"flavor": "lemon"})
    assert done and reward == pytest.approx(expected) and reward < 1.0


def test_step_before_reset_is_invalid(world):
    s = WebshopSession(world)
    obs, reward, done, info = _unpack(s.step("search[tea]"))
    assert reward == 0.0 and done is False and info["valid"] is False


def test_state_html_and_goal(session):
    session.step("search[green tea]")
    state = session.state()
    assert set(state) == {"url", "html", "instruction_text"}
    assert 'class="product-link"' in state["html"] and state["instruction_text"] == INSTR


def test_sessions_are_small(world):
    assert not hasattr(WebshopSession(world), "__dict__")
    world.search("green tea")  # warm the shared search cache: it belongs to the world, not the sessions
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    sessions = [WebshopSession(world) for _ in range(500)]
    created = (tracemalloc.get_traced_memory()[0] - base) / len(sessions)
    for s in sessions:
        s.reset(0)
        s.step("search[green tea]")
        s.step("click[b000000003]")
        s.step("click[mint]")
    used = (tracemalloc.get_traced_memory()[0] - base) / len(sessions)
    tracemalloc.stop()
    assert created < 256, f"{created:.0f} bytes per fresh session"
    assert used < 2048, f"{used:.0f} bytes per active session"
