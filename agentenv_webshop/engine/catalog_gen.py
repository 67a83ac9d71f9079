"""Deterministic generator of a WebShop-format product catalog (the embedded default and scale tests).

Owns the generation logic and the writers of WebShop's three files: ``items_shuffle.json`` (JSON
list of raw products), ``items_ins_v2.json`` (``asin -> {attributes, instruction?,
instruction_attributes?}``) and ``items_human_ins.json`` (``asin -> [{instruction,
instruction_attributes, instruction_options}]``). It does not load or
normalise products (that is :mod:`agentenv_webshop.engine.catalog`). The vocabulary it draws from
(product types, attribute sets, styles, option pools, brand syllables, sentences, phrases,
instruction templates) is data: ``agentenv_webshop/data/catalog_vocab.json``.

Every product is drawn from one ``random.Random(seed)`` stream in order, so the first N products of
a large catalog are exactly the N-product catalog (like WebShop's pre-shuffled files), and the same
arguments always give byte-identical files. Files are written one product per line, streaming, so
a 1M+ product catalog needs little memory.

Goals are identifiable by construction: every instruction attribute is one of the product's
``attributes`` and appears verbatim (lowercase) in its title, bullets or description, and the
instruction names the product type and its distinctive style words, which are in the title.

CLI: ``python -m agentenv_webshop.engine.catalog_gen --num-products N --out DIR [--seed S] [--gzip]``
"""
from __future__ import annotations

import argparse
import functools
import gzip
import io
import json
import logging
import os
import random
import time
from dataclasses import dataclass
from typing import IO, Iterator

logger = logging.getLogger(__name__)

__all__ = ["ProductType", "PRODUCT_TYPES", "generate", "iter_products", "write_catalog", "main"]

DEFAULT_SEED = 20240521
EMBEDDED_NUM_PRODUCTS = 4000


@dataclass(frozen=True)
class ProductType:
    """One kind of product: its noun, scrape query, breadcrumb and the pools it draws from."""

    category: str
    name: str  # lowercase product noun phrase used in titles and instructions
    breadcrumb: str  # Amazon-style "a › b › c"
    styles: tuple[str, ...]  # distinctive words (ingredient, material, feature) put in the title
    attributes: tuple[str, ...]  # attribute phrases (lowercase) the instructions are built from
    options: tuple[str, ...]  # option group keys in OPTION_POOLS
    price: tuple[float, float]  # price band in dollars
    plural: bool = False


VOCAB_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "catalog_vocab.json")


def _load_vocab(path: str = VOCAB_PATH) -> dict:
    """Read the vocabulary file and check its cross-references (option keys, attribute sets, categories).

    Raises:
        ValueError: if a product type names an option pool, attribute set or category the file lacks.
    """
    with open(path, encoding="utf-8") as f:
        vocab = json.load(f)
    for i, ptype in enumerate(vocab["product_types"]):
        where = f"{path}: product_types[{i}] ({ptype.get('name')!r})"
        unknown = [k for k in ptype["options"] if k not in vocab["option_pools"]]
        if unknown:
            raise ValueError(f"{where}: options {unknown} are not in option_pools {sorted(vocab['option_pools'])}")
        if isinstance(ptype["attributes"], str) and ptype["attributes"] not in vocab["attribute_sets"]:
            raise ValueError(f"{where}: attributes={ptype['attributes']!r} is not in attribute_sets "
                             f"{sorted(vocab['attribute_sets'])}; give a set name or a list of phrases")
        if ptype["category"] not in vocab["category_sentences"]:
            raise ValueError(f"{where}: category={ptype['category']!r} has no category_sentences entry")
    return vocab


def _product_type(entry: dict, attribute_sets: dict[str, tuple[str, ...]]) -> ProductType:
    attrs = entry["attributes"]
    return ProductType(category=entry["category"], name=entry["name"], breadcrumb=entry["breadcrumb"],
                       styles=tuple(entry["styles"]),
                       attributes=attribute_sets[attrs] if isinstance(attrs, str) else tuple(attrs),
                       options=tuple(entry["options"]), price=tuple(entry["price"]),
                       plural=entry.get("plural", False))


# The vocabulary is data (agentenv_webshop/data/catalog_vocab.json), loaded once at import. Its list
# order is part of the seeded stream: editing it changes every generated catalog.
_VOCAB = _load_vocab()
OPTION_POOLS: dict[str, tuple[str, tuple[str, ...]]] = {  # key -> (option name as in the raw file, values)
    key: (pool["option"], tuple(pool["values"])) for key, pool in _VOCAB["option_pools"].items()}
COLORS = OPTION_POOLS["color"][1]
_ATTRIBUTE_SETS = {name: tuple(phrases) for name, phrases in _VOCAB["attribute_sets"].items()}
PRODUCT_TYPES: tuple[ProductType, ...] = tuple(_product_type(e, _ATTRIBUTE_SETS) for e in _VOCAB["product_types"])
_BRAND_SYLLABLES = tuple(_VOCAB["brand_syllables"])
_CATEGORY_SENTENCES: dict[str, tuple[str, ...]] = {
    category: tuple(sentences) for category, sentences in _VOCAB["category_sentences"].items()}
_INSTRUCTION_TEMPLATES = tuple(_VOCAB["instruction_templates"])
_HUMAN_TEMPLATES = tuple(_VOCAB["human_templates"])
_BULLET_PHRASES = tuple(_VOCAB["bullet_phrases"])
_CLOSING_OFFERS = tuple(_VOCAB["closing_offers"])


def _make_brands(n: int = 400) -> tuple[str, ...]:
    rng = random.Random(7)
    brands: list[str] = []
    seen: set[str] = set()
    while len(brands) < n:
        word = "".join(rng.choice(_BRAND_SYLLABLES) for _ in range(rng.choice((2, 2, 3))))
        if len(word) >= 4 and word not in seen:
            seen.add(word)
            brands.append(word.upper() if rng.random() < 0.25 else word.capitalize())
    return tuple(brands)


BRANDS = _make_brands()


def _asin(index: int) -> str:
    """Map a product index to a unique, random-looking 10-character ASIN ("B0" + 8 base-36 chars)."""
    n = (index * 2_654_435_761 + 1_718_281_828_459) % (36 ** 8)  # bijective: the multiplier is coprime with 36
    chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    out = []
    for _ in range(8):
        n, r = divmod(n, 36)
        out.append(chars[r])
    return "B0" + "".join(reversed(out))


def _join_attrs(attrs: list[str]) -> str:
    if len(attrs) == 1:
        return attrs[0]
    return ", ".join(attrs[:-1]) + " and " + attrs[-1]


def _article(ptype: ProductType, first_word: str) -> str:
    if ptype.plural:
        return ""
    return "an " if first_word[:1] in "aeiou" else "a "


def _fill(template: str, ptype: ProductType, style: str, attrs: list[str], opts: str = "") -> str:
    body = template.split("{art}", 1)[1] if "{art}" in template else template
    first = body.format(attrs=_join_attrs(attrs), style=style, type=ptype.name, opts=opts).split(" ", 1)[0]
    return template.format(art=_article(ptype, first), attrs=_join_attrs(attrs), style=style, type=ptype.name,
                           opts=opts)


@functools.lru_cache(maxsize=4096)
def _title_case(text: str) -> str:
    return " ".join(w if w[:1].isdigit() else w[:1].upper() + w[1:] for w in text.split(" "))


def _make_options(rng: random.Random, ptype: ProductType) -> dict[str, list[str]]:
    """Choose option groups and values; the Cartesian product is capped to keep the goal count small."""
    if rng.random() < 0.08:
        return {}
    groups: dict[str, list[str]] = {}
    for key in ptype.options:
        if len(groups) >= 1 and rng.random() < 0.3:
            continue
        name, pool = OPTION_POOLS[key]
        if name in groups:
            continue
        k = rng.randint(1, min(5, len(pool)))
        start = rng.randrange(len(pool))
        values = [pool[(start + j * 7) % len(pool)] for j in range(k)] if key == "color" else \
            sorted(rng.sample(pool, k), key=pool.index)
        groups[name] = list(dict.fromkeys(values))
    cap = rng.choice((1, 2, 3, 4, 4, 6, 6, 8, 9, 12))
    while True:
        total = 1
        for values in groups.values():
            total *= len(values)
        if total <= cap:
            break
        biggest = max(groups, key=lambda n: len(groups[n]))
        groups[biggest].pop()
    return groups


def _price(rng: random.Random, ptype: ProductType, ranged: bool) -> str:
    lo, hi = ptype.price
    p = round(lo * (hi / lo) ** rng.random(), 2)
    p = max(1.0, round(int(p) + rng.choice((0.99, 0.95, 0.49, 0.0, 0.99)), 2))
    if not ranged:
        return f"${p:.2f}"
    q = round(p * rng.uniform(1.15, 1.9), 2)
    q = round(int(q) + 0.99, 2)
    return f"${p:.2f} - ${q:.2f}"


def _product(rng: random.Random, index: int, instruction_rate: float, human_rate: float) -> tuple[dict, dict, list]:
    """Draw one product; returns (raw product, items_ins_v2 entry, human instructions list)."""
    ptype = PRODUCT_TYPES[rng.randrange(len(PRODUCT_TYPES))]
    asin = _asin(index)
    brand = BRANDS[rng.randrange(len(BRANDS))]
    style = rng.choice(ptype.styles)
    n_attrs = rng.choice((2, 3, 3, 4, 4, 5))
    attrs = rng.sample(ptype.attributes, n_attrs)
    options = _make_options(rng, ptype)
    ranged = bool(options) and rng.random() < 0.2
    pricing = _price(rng, ptype, ranged)

    title_attrs = attrs[: rng.choice((1, 2, 2, 3))]
    title = f"{brand} {_title_case(style)} {_title_case(ptype.name)}, " + ", ".join(_title_case(a) for a in title_attrs)
    if "size" in options and rng.random() < 0.3:
        title += f" - {options['size'][0]}"
    bullets = [f"{attrs[0].upper()}: this {style} {ptype.name} from {brand} is {attrs[0]} and made to last."]
    for a in attrs[1:]:
        bullets.append(f"{_title_case(a)} - {rng.choice(_BULLET_PHRASES)} {a} for everyday use.")
    sentences = _CATEGORY_SENTENCES[ptype.category]
    extra = rng.sample(sentences, 3)
    bullets.append(extra[0])
    rng.shuffle(bullets)
    description = (f"The {brand} {style} {ptype.name} is {_join_attrs(attrs[:2])}. " + " ".join(extra[1:])
                   + f" Order the {ptype.name} today and enjoy {rng.choice(_CLOSING_OFFERS)}.")

    customization = {name: [{"value": v,
                             "image": f"https://images.example.com/{asin}/{i}.jpg" if name == "color" else None}
                            for i, v in enumerate(values)] for name, values in options.items()} or None
    raw = {
        "asin": asin,
        "name": title,
        "full_description": description,
        "small_description": bullets,
        "pricing": pricing,
        "category": ptype.category,
        "query": ptype.name,
        "product_category": ptype.breadcrumb,
        "customization_options": customization,
        "images": [f"https://images.example.com/{asin}/main.jpg"],
        "brand": brand,
    }

    ins: dict = {"attributes": attrs if rng.random() > 0.08 else []}
    human: list = []
    if ins["attributes"] and rng.random() < instruction_rate:
        ins_attrs = rng.sample(attrs, rng.choice((1, 2, 2, 3)) if len(attrs) >= 3 else 1)
        ins["instruction"] = _fill(rng.choice(_INSTRUCTION_TEMPLATES), ptype, style, ins_attrs)
        ins["instruction_attributes"] = ins_attrs
        if rng.random() < human_rate:
            for _ in range(rng.choice((1, 1, 2))):
                h_attrs = rng.sample(attrs, min(len(attrs), rng.choice((1, 2))))
                raw_values = [rng.choice(vals) for vals in options.values()]
                opts_text = ", ".join(raw_values) if raw_values else "the default option"
                # WebShop's human instruction_options are the normalised (displayed) option values.
                opt_values = [v.strip().replace("/", " | ").lower() for v in raw_values]
                human.append({
                    "instruction": _fill(rng.choice(_HUMAN_TEMPLATES), ptype, style, h_attrs, opts_text),
                    "instruction_attributes": h_attrs,
                    "instruction_options": opt_values,
                })
    return raw, ins, human


def iter_products(num_products: int, seed: int = DEFAULT_SEED, instruction_rate: float = 0.5,
                  human_rate: float = 0.35) -> Iterator[tuple[dict, dict, list]]:
    """Yield ``(raw_product, ins_entry, human_instructions)`` for products 0..num_products-1, in order.

    Args:
        num_products: how many products to draw.
        seed: the single seed of the stream; the same seed always yields the same products.
        instruction_rate: share of products (with attributes) that get a synthetic instruction.
        human_rate: share of instructed products that also get human-style instructions.
    """
    rng = random.Random(seed)
    for index in range(num_products):
        yield _product(rng, index, instruction_rate, human_rate)


class _ClosingText(io.TextIOWrapper):
    """Text wrapper over a GzipFile that also closes the underlying file object."""

    def __init__(self, gz: gzip.GzipFile):
        super().__init__(gz, encoding="utf-8")
        self._fileobj = gz.fileobj

    def close(self) -> None:
        super().close()
        self._fileobj.close()


def _open(path: str, gz: bool) -> IO[str]:
    if gz:
        # mtime=0 and no embedded file name keep the .gz bytes identical from run to run.
        raw = gzip.GzipFile(filename="", mode="wb", compresslevel=6, fileobj=open(path + ".gz", "wb"), mtime=0)
        return _ClosingText(raw)
    return open(path, "w", encoding="utf-8")


def write_catalog(out_dir: str, num_products: int, seed: int = DEFAULT_SEED, gz: bool = False,
                  suffix: str = "") -> dict:
    """Stream a catalog into ``out_dir`` as WebShop's three files (one product per line).

    Args:
        out_dir: output directory (created if missing).
        num_products: number of products.
        seed: generator seed.
        gz: write ``*.json.gz`` instead of ``*.json``.
        suffix: file name suffix such as ``"_1000"`` (``items_shuffle_1000.json``).

    Returns:
        Counts: ``{"products", "instructions", "human_instructions", "seconds"}``.
    """
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.perf_counter()
    counts = {"products": 0, "instructions": 0, "human_instructions": 0}
    paths = [os.path.join(out_dir, f"{stem}{suffix}.json")
             for stem in ("items_shuffle", "items_ins_v2", "items_human_ins")]
    with _open(paths[0], gz) as f_items, _open(paths[1], gz) as f_ins, _open(paths[2], gz) as f_human:
        f_items.write("[\n")
        f_ins.write("{\n")
        f_human.write("{\n")
        first_human = True
        for i, (raw, ins, human) in enumerate(iter_products(num_products, seed)):
            sep = ",\n" if i else ""
            f_items.write(sep + json.dumps(raw, ensure_ascii=False))
            f_ins.write(sep + json.dumps(raw["asin"]) + ": " + json.dumps(ins, ensure_ascii=False))
            counts["instructions"] += "instruction" in ins
            if human:
                f_human.write(("" if first_human else ",\n") + json.dumps(raw["asin"]) + ": "
                              + json.dumps(human, ensure_ascii=False))
                first_human = False
                counts["human_instructions"] += len(human)
            counts["products"] += 1
        f_items.write("\n]\n")
        f_ins.write("\n}\n")
        f_human.write("\n}\n")
    counts["seconds"] = round(time.perf_counter() - t0, 2)
    return counts


def generate(num_products: int = EMBEDDED_NUM_PRODUCTS, seed: int = DEFAULT_SEED) -> tuple[list, dict, dict]:
    """Generate a catalog in memory: ``(items_shuffle list, items_ins_v2 dict, items_human_ins dict)``."""
    items, ins_all, human_all = [], {}, {}
    for raw, ins, human in iter_products(num_products, seed):
        items.append(raw)
        ins_all[raw["asin"]] = ins
        if human:
            human_all[raw["asin"]] = human
    return items, ins_all, human_all


def main(argv: list[str] | None = None) -> None:
    """CLI entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Generate a WebShop-format product catalog.")
    parser.add_argument("--num-products", type=int, default=EMBEDDED_NUM_PRODUCTS)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--gzip", action="store_true", help="write .json.gz files")
    parser.add_argument("--suffix", default="", help="file name suffix, e.g. _1000")
    args = parser.parse_args(argv)
    if args.num_products < 1:
        parser.error(f"--num-products must be >= 1, got {args.num_products}")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    counts = write_catalog(args.out, args.num_products, args.seed, args.gzip, args.suffix)
    logger.info("wrote %s to %s", counts, args.out)


if __name__ == "__main__":
    main()
