"""Catalog loading (WebShop's load_products semantics) and the embedded generated catalog."""
import gzip
import json
import os

import pytest

from agentenv_webshop.engine import catalog_gen
from agentenv_webshop.engine.catalog import (
    EMBEDDED_DATA_DIR,
    clear_cache,
    load_catalog,
    parse_pricing,
    product_purchase_price,
)
from agentenv_webshop.engine.goal import build_goals


def _raw(asin, pricing="$12.99", options=None, bullets=("first bullet", "second bullet"), **extra):
    product = {
        "asin": asin, "name": f"Title {asin}", "full_description": f"Description of {asin}",
        "small_description": list(bullets) if isinstance(bullets, tuple) else bullets,
        "pricing": pricing, "category": "beauty", "query": "  Shampoo ", "product_category": "a › b › c",
        "customization_options": options, "images": [f"http://img/{asin}.jpg"],
        "brand": "Acme", "list_price": "$1", "total_reviews": 3,
    }
    product.update(extra)
    return product


@pytest.fixture()
def webshop_dir(tmp_path):
    items = [
        _raw("B000000001", "$12.99", {"Color": [{"value": " Black/White ", "image": "u1"}, {"value": "Red"}],
                                     "Size": None, "size ": [{"value": "X-Large"}]}),
        _raw("B000000002", "$9.99 - $15.99"),
        _raw("B000000003", None, bullets="only one bullet"),
        _raw("nan"),
        _raw("B0000000040"),  # 11 characters: skipped
        _raw("B000000001", "$1.00"),  # duplicate: skipped
        _raw("B000000005", "$1,299.00"),
    ]
    ins = {
        "B000000001": {"attributes": ["tea tree", "natural"], "instruction": "find shampoo with tea tree",
                       "instruction_attributes": ["tea tree"]},
        "B000000002": {"attributes": []},
    }
    human = {"B000000001": [{"instruction": "I want shampoo.", "instruction_attributes": ["tea tree"],
                             "instruction_options": ["red"]}]}
    (tmp_path / "items_shuffle_1000.json").write_text(json.dumps(items))
    (tmp_path / "items_ins_v2_1000.json").write_text(json.dumps(ins))
    (tmp_path / "items_human_ins.json").write_text(json.dumps(human))
    # A "full" file with different content: chosen when num_products is None or > 1000.
    with gzip.open(tmp_path / "items_shuffle.json.gz", "wt") as f:
        json.dump([_raw("B00000FULL")], f)
    yield tmp_path
    clear_cache()


def test_parse_pricing_formats():
    assert parse_pricing("$12.99") == ([12.99], "$12.99")
    assert parse_pricing("$9.99 - $15.99") == ([9.99, 15.99], "$9.99 to $15.99")
    assert parse_pricing("$5 - $9") == ([5.0, 9.0], "$5.0 to $9.0")
    assert parse_pricing("$1,299.00") == ([1299.0], "$1299.0")
    assert parse_pricing("$1 - $2 - $3") == ([1.0, 2.0], "$1.0 to $2.0")
    assert parse_pricing(None) == ([100.0], "$100.0")
    assert parse_pricing("") == ([100.0], "$100.0")


def test_load_webshop_files_normalises_like_webshop(webshop_dir):
    cat = load_catalog(str(webshop_dir), num_products=1000)
    assert cat.source.endswith("items_shuffle_1000.json")
    assert [p["asin"] for p in cat.products] == ["B000000001", "B000000002", "B000000003", "B000000005"]
    p1, p2, p3, p5 = cat.products
    assert cat.by_asin["B000000002"] is p2
    # fields WebShop derives
    assert p1["Title"] == "Title B000000001" and p1["Description"] == "Description of B000000001"
    assert p1["BulletPoints"] == ["first bullet", "second bullet"] and p3["BulletPoints"] == ["only one bullet"]
    assert p1["Reviews"] == [] and p1["Rating"] == "N.A." and p1["MainImage"] == "http://img/B000000001.jpg"
    assert p1["query"] == "shampoo"
    for junk in ("brand", "list_price", "total_reviews"):
        assert junk not in p1
    # options: lowercase names, '/' -> ' | ', stripped lowercase values, null groups dropped
    assert p1["options"] == {"color": ["black | white", "red"], "size ": ["x-large"]}
    assert p1["option_to_image"]["black | white"] == "u1"
    # pricing / Price / purchase price
    assert (p1["pricing"], p1["Price"], p1["product_price"]) == ([12.99], "$12.99", 12.99)
    assert (p2["pricing"], p2["Price"]) == ([9.99, 15.99], "$9.99 to $15.99")
    assert 9.99 <= p2["product_price"] <= 15.99
    assert p2["product_price"] == product_purchase_price("B000000002", [9.99, 15.99])
    assert (p3["pricing"], p3["Price"], p3["product_price"]) == ([100.0], "$100.0", 100.0)
    assert p5["pricing"] == [1299.0]
    # attributes and instructions
    assert p1["Attributes"] == ["tea tree", "natural"] and p2["Attributes"] == []
    assert p3["Attributes"] == ["DUMMY_ATTR"]
    assert p1["instruction_text"] == "find shampoo with tea tree" and p1["instruction_attributes"] == ["tea tree"]
    assert p2["instruction_text"] is None and p3["instruction_text"] is None
    assert cat.attribute_to_asins["tea tree"] == {"B000000001"}


def test_num_products_takes_first_n_raw_entries_and_caches(webshop_dir):
    cat = load_catalog(str(webshop_dir), num_products=4)  # the 4th raw entry is 'nan'
    assert [p["asin"] for p in cat.products] == ["B000000001", "B000000002", "B000000003"]
    assert load_catalog(str(webshop_dir), num_products=4) is cat
    full = load_catalog(str(webshop_dir))
    assert [p["asin"] for p in full.products] == ["B00000FULL"]
    assert full.products[0]["Attributes"] == ["DUMMY_ATTR"]


def test_human_mode_attaches_instructions(webshop_dir):
    cat = load_catalog(str(webshop_dir), num_products=1000, human_goals=True)
    p1 = cat.by_asin["B000000001"]
    assert p1["instructions"][0]["instruction_options"] == ["red"]
    assert "instruction_text" not in p1 and "instructions" not in cat.by_asin["B000000002"]


def test_bad_arguments_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="items_shuffle"):
        load_catalog(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_catalog(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="num_products"):
        load_catalog(num_products=0)


def test_embedded_catalog_is_rich_and_goals_identifiable():
    cat = load_catalog()
    assert cat.source.startswith("embedded:")
    assert 3000 <= len(cat) <= 5000
    assert len(cat.by_asin) == len(cat)
    assert {p["category"] for p in cat.products} == {"beauty", "food", "fashion", "furniture", "electronics"}
    assert len({p["query"] for p in cat.products}) >= 40
    instructed = [p for p in cat.products if p["instruction_text"]]
    assert 0.4 <= len(instructed) / len(cat) <= 0.6
    assert sum(len(p["pricing"]) == 2 for p in cat.products) > 200  # price ranges
    option_names = {n for p in cat.products for n in p["options"]}
    assert {"color", "size", "pack"} <= option_names
    for p in instructed:
        text = " ".join([p["Title"], " ".join(p["BulletPoints"]), p["Description"]]).lower()
        assert p["query"] in p["instruction_text"] and p["query"] in p["Title"].lower()
        for attribute in p["instruction_attributes"]:
            assert attribute in p["Attributes"] and attribute in text, (p["asin"], attribute)
        # the option values are clickable values of the product, distinct across its groups
        values = [v for vs in p["options"].values() for v in vs]
        assert len(values) == len(set(values))
    assert 5000 <= len(build_goals(cat.products)) <= 20000
    size = sum(os.path.getsize(os.path.join(EMBEDDED_DATA_DIR, f)) for f in os.listdir(EMBEDDED_DATA_DIR))
    assert size < 4 * 2**20


def test_generator_is_deterministic_prefix_stable_and_matches_shipped_files(tmp_path):
    a = list(catalog_gen.iter_products(60))
    assert a == list(catalog_gen.iter_products(60))
    assert a[:25] == list(catalog_gen.iter_products(25))
    assert a != list(catalog_gen.iter_products(60, seed=1))
    catalog_gen.main(["--num-products", "40", "--out", str(tmp_path / "x"), "--gzip"])
    catalog_gen.main(["--num-products", "40", "--out", str(tmp_path / "y"), "--gzip"])
    for name in ("items_shuffle.json.gz", "items_ins_v2.json.gz", "items_human_ins.json.gz"):
        assert (tmp_path / "x" / name).read_bytes() == (tmp_path / "y" / name).read_bytes()
    loaded = load_catalog(str(tmp_path / "x"))
    assert [p["asin"] for p in loaded.products] == [raw["asin"] for raw, _, _ in a[:40]]
    # the shipped embedded files are exactly the generator's default output
    shipped = load_catalog()
    items, ins, _ = catalog_gen.generate(catalog_gen.EMBEDDED_NUM_PRODUCTS)
    assert [p["asin"] for p in shipped.products] == [r["asin"] for r in items]
    assert [p["Title"] for p in shipped.products[:200]] == [r["name"] for r in items[:200]]
    clear_cache()
