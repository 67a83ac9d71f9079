"""Product-id permutation of demonstrations (agentenv_webshop.demo_augment)."""
import json
import random

from agentenv_webshop.demo_augment import PRODUCT_ID, augment, main, permute_product_ids, until_product_click

CATALOG = [f"B0{i:08d}" for i in range(50)]


def _demo(item_id="webshop_7"):
    return {"item_id": item_id, "conversations": [
        {"from": "human", "loss": None, "value": "Instruction: [SEP] a lamp [SEP] Search"},
        {"from": "gpt", "loss": True, "value": "Action:\nsearch[lamp]"},
        {"from": "human", "loss": None, "value": "[SEP] B0AAAAAAAA [SEP] Lamp one [SEP] B0BBBBBBBB [SEP] Lamp two"},
        {"from": "gpt", "loss": True, "value": "I think B0BBBBBBBB matches.\n\nAction:\nclick[b0bbbbbbbb]"},
    ]}


def test_ids_are_replaced_consistently_and_distinctly_keeping_case():
    out = permute_product_ids(_demo(), CATALOG, random.Random(0))
    page, answer = out["conversations"][2]["value"], out["conversations"][3]["value"]
    shown = PRODUCT_ID.findall(page)
    assert len(shown) == 2 and len(set(shown)) == 2 and set(shown) <= set(CATALOG)
    assert "B0AAAAAAAA" not in page and "B0BBBBBBBB" not in page
    # the clicked id is the replacement of the second product, in the case each mention used
    assert answer == f"I think {shown[1]} matches.\n\nAction:\nclick[{shown[1].lower()}]"
    # everything that is not an id is unchanged
    assert PRODUCT_ID.sub("ID", page) == "[SEP] ID [SEP] Lamp one [SEP] ID [SEP] Lamp two"
    assert out["conversations"][:2] == _demo()["conversations"][:2] and out["ids_permuted"] is True


def test_augment_keeps_originals_then_adds_seeded_copies():
    demos = [_demo("webshop_1"), _demo("webshop_2")]
    out = augment(demos, CATALOG, copies=2, seed=3)
    assert [d["item_id"] for d in out] == ["webshop_1", "webshop_2"] * 3
    assert out[:2] == demos and all(d.get("ids_permuted") for d in out[2:])
    assert out == augment(demos, CATALOG, copies=2, seed=3)  # deterministic
    assert out[2] != out[4]  # two copies of one demo differ
    assert len(augment(demos, CATALOG, copies=1, keep_originals=False)) == 2


def test_cli_writes_the_augmented_file(tmp_path):
    demos = tmp_path / "demos.json"
    demos.write_text(json.dumps([_demo()]))
    out = tmp_path / "aug.json"
    main([str(demos), str(out), "--copies", "1"])
    rows = json.loads(out.read_text())
    assert len(rows) == 2 and rows[0] == _demo() and rows[1]["ids_permuted"] is True


def test_until_product_click_ends_each_row_at_the_results_page_choice():
    demo = _demo()
    demo["conversations"] += [{"from": "human", "loss": None, "value": "[SEP] Buy Now"},
                              {"from": "gpt", "loss": True, "value": "Action:\nclick[buy now]"}]
    cut = until_product_click(demo)
    assert cut["conversations"] == _demo()["conversations"] and cut["item_id"] == "webshop_7"
    no_click = {"item_id": "x", "conversations": _demo()["conversations"][:2]}
    assert until_product_click(no_click) is None
    out = augment([demo, no_click], CATALOG, copies=1, keep_originals=False, cut_after_click=True)
    assert len(out) == 1 and len(out[0]["conversations"]) == 4
    chosen = PRODUCT_ID.findall(out[0]["conversations"][2]["value"])[1]
    assert out[0]["conversations"][3]["value"].endswith(f"click[{chosen.lower()}]")
