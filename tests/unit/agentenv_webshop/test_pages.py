"""WebShop page rendering: exact 'simple' text strings, clickables order and collisions, HTML, URLs."""
from __future__ import annotations

import json
from html.parser import HTMLParser

from agentenv_webshop import pages

INSTR = "i need a red tea kettle, and price lower than 40.00 dollars"


def _product(asin="B000000001", **kw):
    product = {"asin": asin, "Title": "Acme Tea Kettle", "Price": "$10.99", "Rating": "N.A.",
               "Description": "A kettle for tea.", "BulletPoints": ["Boils fast", "Whistles"], "Reviews": [],
               "Attributes": ["fast boil"], "category": "home", "query": "tea kettle",
               "product_category": "Home › Kitchen › Kettles",
               "options": {"color": ["red", "blue | white"], "size": ["small", "large"]}}
    product.update(kw)
    return product


def test_search_page():
    page = pages.search_page(INSTR)
    assert pages.text(page) == f"WebShop [SEP] Instruction: [SEP] {INSTR} [SEP] Search"
    assert list(pages.clickables(page)) == ["search"]
    assert pages.has_search_bar(page)


def test_results_page_one_and_two():
    products = [_product("B000000001"), _product("b00000000b", Title="Other Kettle", Price="$5.0 to $9.0")]
    page1 = pages.results_page(INSTR, 1, 50, products)
    assert pages.text(page1) == (
        f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > [SEP] "
        "B000000001 [SEP] Acme Tea Kettle [SEP] $10.99 [SEP] B00000000B [SEP] Other Kettle [SEP] $5.0 to $9.0")
    assert list(pages.clickables(page1)) == ["back to search", "next >", "b000000001", "b00000000b"]
    assert not pages.has_search_bar(page1)
    page2 = pages.results_page(INSTR, 2, 12, products[:1])
    assert pages.text(page2) == (
        f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] Page 2 (Total results: 12) [SEP] < Prev [SEP] "
        "Next > [SEP] B000000001 [SEP] Acme Tea Kettle [SEP] $10.99")
    assert list(pages.clickables(page2)) == ["back to search", "< prev", "next >", "b000000001"]


def test_results_page_past_the_end_keeps_next():
    page = pages.results_page(INSTR, 6, 50, [])
    assert pages.text(page).endswith("Page 6 (Total results: 50) [SEP] < Prev [SEP] Next >")


def test_item_page():
    page = pages.item_page(INSTR, _product())
    assert pages.text(page) == (
        f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] red [SEP] blue | white "
        "[SEP] size [SEP] small [SEP] large [SEP] Acme Tea Kettle [SEP] Price: $10.99 [SEP] Rating: N.A. [SEP] "
        "Description [SEP] Features [SEP] Reviews [SEP] Buy Now")
    assert list(pages.clickables(page)) == ["back to search", "< prev", "description", "features", "reviews",
                                            "buy now", "red", "blue | white", "small", "large"]
    with_attrs = pages.item_page(INSTR, _product(options={}), show_attrs=True)
    assert pages.text(with_attrs).endswith("Description [SEP] Features [SEP] Reviews [SEP] Attributes [SEP] Buy Now")
    assert "attributes" in pages.clickables(with_attrs)


def test_option_value_collision_last_group_wins_first_position_kept():
    product = _product(options={"color": ["red", "one size"], "size": ["one size", "large"]})
    targets = pages.clickables(pages.item_page(INSTR, product))
    assert list(targets)[6:] == ["red", "one size", "large"]
    assert targets["one size"] == ("option", "size")
    assert targets["red"] == ("option", "color")


def test_sub_pages():
    product = _product()
    head = f"Instruction: [SEP] {INSTR} [SEP] Back to Search [SEP] < Prev"
    assert pages.text(pages.sub_page(INSTR, product, "description")) == f"{head} [SEP] A kettle for tea."
    assert pages.text(pages.sub_page(INSTR, product, "features")) == f"{head} [SEP] Boils fast [SEP] Whistles"
    assert pages.text(pages.sub_page(INSTR, product, "reviews")) == head  # Reviews are always empty
    reviewed = _product(Reviews=[{"title": "Great", "score": 5, "body": "Love it"}])
    assert pages.text(pages.sub_page(INSTR, reviewed, "reviews")) == f'{head} [SEP] "Great" [SEP] 5 [SEP] Love it'
    assert pages.text(pages.sub_page(INSTR, product, "attributes")) == (
        f"{head} [SEP] fast boil [SEP] home [SEP] tea kettle [SEP] Home › Kitchen › Kettles")
    assert list(pages.clickables(pages.sub_page(INSTR, product, "features"))) == ["back to search", "< prev"]


def test_done_page():
    goal = {"asin": "B000000001", "goal_options": {"color": "red"}, "attributes": ["fast boil"], "price_upper": 40.0,
            "instruction_text": INSTR, "category": "home", "product_category": "Home › Kitchen › Kettles",
            "query": "tea kettle"}
    page = pages.done_page("B000000001", {"size": "small", "color": "red"}, _product(), goal, 1.0, {"r_type": 1.0})
    out = pages.text(page)
    assert out.startswith("Thank you for shopping with us! [SEP] Your code: [SEP] None [SEP] "
                          "(Paste it in your MTurk interface.) [SEP] Purchased [SEP] asin [SEP] B000000001 "
                          '[SEP] options [SEP] {"color": "red", "size": "small"} [SEP] attrs [SEP] [\'fast boil\']')
    assert "[SEP] instuction text [SEP] " + INSTR in out
    assert out.endswith("[SEP] Reward [SEP] Your score (min 0.0, max 1.0) [SEP] 1.0 [SEP] Reward Details "
                        "[SEP] {'r_type': 1.0}")
    assert pages.clickables(page) == {}


class _VisibleText(HTMLParser):
    """Collects text nodes the way WebShop's text mode does (all nodes, hidden ones too, not <title>)."""

    def __init__(self):
        super().__init__()
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("title", "script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("title", "script", "style")

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.parts.append(data.strip())


def test_html_has_the_same_visible_text():
    products = [_product(Title="Kettle <b> & Co")]
    for page in (pages.search_page(INSTR), pages.results_page(INSTR, 2, 12, products),
                 pages.item_page(INSTR, products[0]),
                 pages.done_page("B000000001", {}, products[0], {"asin": "B000000001"}, 0.5, {})):
        parser = _VisibleText()
        parser.feed(pages.html(page, "http://x"))
        assert " [SEP] ".join(parser.parts) == pages.text(page)
    assert 'id="search_input"' in pages.html(pages.search_page(INSTR))


def test_urls():
    assert pages.search_url("fixed_3") == "http://127.0.0.1:3000/fixed_3"
    assert pages.results_url("fixed_3", "red tea kettle", 2) == "http://127.0.0.1:3000/search_results/fixed_3/red+tea+kettle/2"
    url = pages.item_url("fixed_3", "B000000001", "tea", 1, {"color": "red"})
    assert url.startswith("http://127.0.0.1:3000/item_page/fixed_3/B000000001/tea/1/")
    assert json.loads(__import__("urllib.parse").parse.unquote(url.rsplit("/", 1)[1])) == {"color": "red"}
    assert "/item_sub_page/fixed_3/B000000001/tea/1/Features/" in pages.sub_page_url("fixed_3", "B000000001", "tea", 1,
                                                                                   "features", {})
    assert pages.done_url("fixed_3", "B000000001", {}).startswith("http://127.0.0.1:3000/done/fixed_3/B000000001/")


def test_pformat_matches_pprint():
    import pprint

    for value in ({"r_type": 1.0, "r_att": 0.5, "w_att": 0.4, "query_match": False, "category_match": True,
                   "title_score": 1 / 6, "r_option": 0.5, "w_option": 0.4, "r_price": True, "w_price": 0.2},
                  {"r_type": 1.0}, {}, None,
                  {"asin": "B0", "goal_options": {"size": "large"}, "instruction_text": "x " * 60}):
        assert pages.pformat(value) == pprint.pformat(value)
