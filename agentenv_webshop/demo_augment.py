"""Product-id permutation of WebShop demonstrations: teach a policy to copy ids instead of recalling them.

A small policy trained on expert demonstrations learns which id belongs to which product and then
recalls an id instead of copying it from the results page: on held-out goals it clicks ids that the page
does not show (`bench/webshop_failures.py`). In a permuted copy of a demonstration every product id is
replaced, consistently within the episode, by another catalog id, so the only way to predict the clicked id
is to copy it from the observation. The texts stay well-formed (an id is replaced by an id).

    python -m agentenv_webshop.demo_augment DEMOS OUT [--copies 1] [--seed 0] [--no-originals]
                                            [--until-product-click]

writes OUT = the original conversations (unless --no-originals) followed by `--copies` permuted copies of
each, in the `main_sft` format (`{"item_id", "conversations": [{"from", "loss", "value"}]}`).
`--until-product-click` cuts every conversation after its first assistant turn that clicks a product id
(the choice from the results page): a copy curriculum of shorter rows, each ending in the decision to learn.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re

__all__ = ["PRODUCT_ID", "permute_product_ids", "until_product_click", "augment"]

# WebShop ASINs as the pages show them (B0 + 8 upper-case letters or digits); ids clicked in lower case
# (click_as_shown=False demos) are matched too and keep their case.
PRODUCT_ID = re.compile(r"\b[Bb]0[0-9A-Za-z]{8}\b")


def permute_product_ids(conversation: dict, catalog_ids: list[str], rng: random.Random) -> dict:
    """A copy of `conversation` whose product ids are mapped to distinct random `catalog_ids`.

    The same id always maps to the same replacement within the conversation, whatever its case; the
    replacement keeps the case the text used (upper as shown, lower as typed).
    """
    found: list[str] = []
    for turn in conversation["conversations"]:
        for hit in PRODUCT_ID.findall(turn["value"]):
            if hit.upper() not in found:
                found.append(hit.upper())
    if len(found) > len(catalog_ids):
        raise ValueError(f"{len(found)} ids in one conversation but only {len(catalog_ids)} catalog ids")
    mapping = dict(zip(found, rng.sample(catalog_ids, len(found)), strict=True))

    def swap(match: re.Match) -> str:
        new = mapping[match.group(0).upper()]
        return new if match.group(0)[0] == "B" else new.lower()

    turns = [{**turn, "value": PRODUCT_ID.sub(swap, turn["value"])} for turn in conversation["conversations"]]
    return {**conversation, "conversations": turns, "ids_permuted": True}


_CLICKS_PRODUCT = re.compile(r"click\[\s*" + PRODUCT_ID.pattern + r"\s*\]")


def until_product_click(conversation: dict) -> dict | None:
    """`conversation` cut after its first assistant turn that clicks a product id; None if none does."""
    turns = conversation["conversations"]
    for i, turn in enumerate(turns):
        if turn["from"] == "gpt" and _CLICKS_PRODUCT.search(turn["value"]):
            return {**conversation, "conversations": turns[: i + 1]}
    return None


def augment(demos: list[dict], catalog_ids: list[str], copies: int = 1, seed: int = 0,
            keep_originals: bool = True, cut_after_click: bool = False) -> list[dict]:
    """The demos (if `keep_originals`) followed by `copies` id-permuted copies of each (seeded).

    `cut_after_click`: every row ends at its first product click (`until_product_click`); demos without one
    are dropped.
    """
    if cut_after_click:
        demos = [c for c in map(until_product_click, demos) if c is not None]
    rng = random.Random(seed)
    ids = sorted(i.upper() for i in catalog_ids)
    out = list(demos) if keep_originals else []
    for _ in range(copies):
        out.extend(permute_product_ids(d, ids, rng) for d in demos)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Add product-id-permuted copies of WebShop demonstrations")
    ap.add_argument("demos", help="demonstrations JSON (scripts/webshop_sft.sh writes saves/sft/webshop_demos.json)")
    ap.add_argument("out", help="output JSON")
    ap.add_argument("--copies", type=int, default=1, help="permuted copies of each demonstration")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-originals", action="store_true", help="write only the permuted copies")
    ap.add_argument("--until-product-click", action="store_true",
                    help="cut each conversation after its first product-id click (the results-page choice)")
    args = ap.parse_args(argv)
    if args.copies < 0:
        ap.error("--copies must be >= 0")
    from agentenv_webshop.environment import WebshopWorld

    with open(args.demos, encoding="utf-8") as fh:
        demos = json.load(fh)
    rows = augment(demos, list(WebshopWorld.load().by_asin), args.copies, args.seed, not args.no_originals,
                   args.until_product_click)
    with open(args.out + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(rows, fh)
    os.replace(args.out + ".tmp", args.out)
    print(f"[demo_augment] {len(demos)} demonstrations -> {len(rows)} conversations "
          f"({args.copies} permuted cop{'y' if args.copies == 1 else 'ies'} each) in {args.out}")


if __name__ == "__main__":
    main()
