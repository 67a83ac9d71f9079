"""Product catalog loading, faithful to WebShop's ``engine.load_products``.

Owns reading WebShop's data files (``items_shuffle*.json``, ``items_ins_v2*.json``,
``items_human_ins.json``, optionally gzipped) from a directory or from the embedded default catalog
in ``agentenv_webshop/data/``, the per-product normalisation WebShop applies (pricing parse,
``Price`` string, options, ``Attributes``, instructions) and the seeded purchase price. Goals live
in :mod:`agentenv_webshop.engine.goal`, search in :mod:`agentenv_webshop.engine.search`.

Unlike WebShop, the purchase price of a ranged product (``product_price``) is drawn from a
``random.Random`` seeded with the ASIN, so it is identical in every process.
"""
from __future__ import annotations

import gzip
import json
import logging
import os
import random
import re
import threading
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["Catalog", "load_catalog", "load_products", "parse_pricing", "normalize_options",
           "product_purchase_price", "EMBEDDED_DATA_DIR", "clear_cache"]

EMBEDDED_DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")

# Keys WebShop pops from every raw product (never shown, never used).
_JUNK_KEYS = ("product_information", "brand", "brand_url", "list_price", "availability_quantity",
              "availability_status", "total_reviews", "total_answered_questions", "seller_id",
              "seller_name", "fulfilled_by_amazon", "fast_track_message", "aplus_present",
              "small_description_old")
_NON_PRICE_CHARS = re.compile(r"[^\d.]")


@dataclass
class Catalog:
    """A loaded catalog: WebShop-shaped product dicts in file order, plus lookups.

    Attributes:
        products: product dicts (see the module docstring of interfaces: Title, Description, ...).
        by_asin: uppercase ASIN -> product dict.
        source: where the products came from (``"embedded:<dir>"`` or the items file path).
        attribute_to_asins: attribute -> set of ASINs having it (WebShop's ``attribute_to_asins``).
        human_goals: whether instructions were loaded in human mode (``instructions`` key).
    """

    products: list[dict]
    by_asin: dict[str, dict]
    source: str
    attribute_to_asins: dict[str, set] = field(default_factory=dict)
    human_goals: bool = False

    def __len__(self) -> int:
        return len(self.products)

    @property
    def product_prices(self) -> dict[str, float]:
        """WebShop's ``product_prices``: ASIN -> purchase price."""
        return {p["asin"]: p["product_price"] for p in self.products}


def parse_pricing(pricing: Any) -> tuple[list[float], str]:
    """Parse WebShop's raw ``pricing`` string into (list of at most 2 floats, ``Price`` display string).

    ``"$12.99"`` -> ``([12.99], "$12.99")``; ``"$9.99 - $15.99"`` -> ``([9.99, 15.99], "$9.99 to $15.99")``;
    missing/empty -> ``([100.0], "$100.0")``. Pieces that hold no number are skipped.
    """
    if not pricing:
        return [100.0], "$100.0"
    if isinstance(pricing, (list, tuple)):  # already parsed (e.g. a re-saved catalog)
        values = [float(v) for v in pricing][:2]
    else:
        values = []
        for piece in str(pricing).split("$")[1:]:
            cleaned = _NON_PRICE_CHARS.sub("", piece)
            try:
                values.append(float(Decimal(cleaned)))
            except InvalidOperation:
                continue
        values = values[:2]
    if not values:
        return [100.0], "$100.0"
    if len(values) == 1:
        return values, f"${values[0]}"
    return values, f"${values[0]} to ${values[1]}"


def normalize_options(customization_options: Any) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """WebShop's option normalisation.

    Returns ``({name.lower(): [value.strip().replace('/', ' | ').lower()]}, option_to_image)``.

    Option groups whose content is null are dropped.
    """
    options: dict[str, list[str]] = {}
    option_to_image: dict[str, Any] = {}
    if not customization_options:
        return options, option_to_image
    for name, contents in customization_options.items():
        if contents is None:
            continue
        values = []
        for content in contents:
            value = content["value"].strip().replace("/", " | ").lower()
            values.append(value)
            option_to_image[value] = content.get("image")
        options[name.lower()] = values
    return options, option_to_image


def product_purchase_price(asin: str, pricing: list[float]) -> float:
    """The price the product is bought at: the single price, or a seeded uniform draw in a range."""
    if not pricing:
        return 100.0
    if len(pricing) == 1:
        return pricing[0]
    return random.Random(f"agentenv_webshop.price:{asin}").uniform(pricing[0], pricing[1])


def _read_json(path: str) -> Any:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def _find(data_dir: str, stem: str, num_products: int | None) -> str | None:
    """Pick ``<stem>_1000.json`` for small requests, else ``<stem>.json``, accepting ``.gz`` too."""
    small = [f"{stem}_1000.json", f"{stem}_1000.json.gz"]
    full = [f"{stem}.json", f"{stem}.json.gz"]
    order = small + full if (num_products is not None and num_products <= 1000) else full + small
    for name in order:
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            return path
    others = sorted(n for n in os.listdir(data_dir) if n.startswith(stem) and n.endswith((".json", ".json.gz")))
    return os.path.join(data_dir, others[0]) if others else None


def load_products(items: list[dict], attributes: dict, human_attributes: dict | None = None,
                  num_products: int | None = None, human_goals: bool = False) -> list[dict]:
    """Normalise raw WebShop products as ``engine.load_products`` does (in place where possible).

    Args:
        items: raw products (``items_shuffle`` list).
        attributes: ``items_ins_v2`` dict.
        human_attributes: ``items_human_ins`` dict (used when ``human_goals``).
        num_products: keep only the first N raw entries (before skipping bad ones), as WebShop.
        human_goals: attach ``instructions`` (human) instead of ``instruction_text`` (synthetic).

    Returns:
        The products that survived: ASIN not ``'nan'``, at most 10 characters, not a duplicate.
    """
    if num_products is not None:
        items = items[:num_products]
    human_attributes = human_attributes or {}
    seen: set[str] = set()
    products: list[dict] = []
    skipped = 0
    for p in items:
        raw_asin = p.get("asin")
        if not isinstance(raw_asin, str) or raw_asin == "nan" or len(raw_asin) > 10 or raw_asin in seen:
            skipped += 1
            continue
        seen.add(raw_asin)
        for key in _JUNK_KEYS:
            p.pop(key, None)
        p["asin"] = raw_asin.upper()
        p["query"] = (p.get("query") or "").lower().strip()
        p["Title"] = p.get("name") or ""
        p["Description"] = p.get("full_description") or ""
        bullets = p.get("small_description")
        p["BulletPoints"] = list(bullets) if isinstance(bullets, list) else ([bullets] if bullets else [])
        p["Reviews"] = []
        p["Rating"] = "N.A."
        images = p.get("images") or []
        p["MainImage"] = images[0] if images else None
        p["pricing"], p["Price"] = parse_pricing(p.get("pricing"))
        p["options"], p["option_to_image"] = normalize_options(p.get("customization_options"))
        entry = attributes.get(raw_asin) or {}
        p["Attributes"] = entry["attributes"] if "attributes" in entry else ["DUMMY_ATTR"]
        if human_goals:
            if raw_asin in human_attributes:
                p["instructions"] = human_attributes[raw_asin]
        else:
            p["instruction_text"] = entry.get("instruction")
            p["instruction_attributes"] = entry.get("instruction_attributes")
        p["product_price"] = product_purchase_price(p["asin"], p["pricing"])
        products.append(p)
    if skipped:
        logger.info("skipped %d products with a bad or duplicate asin", skipped)
    return products


_CACHE: dict[tuple, Catalog] = {}
_CACHE_LOCK = threading.Lock()


def clear_cache() -> None:
    """Forget the per-process loaded catalogs (tests)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def load_catalog(data_dir: str | None = None, num_products: int | None = None,
                 human_goals: bool = False) -> Catalog:
    """Load (once per process and arguments) a WebShop catalog.

    Args:
        data_dir: directory holding WebShop's files; ``None`` loads the embedded catalog.
            With ``num_products <= 1000`` the ``*_1000.json`` files are preferred, else the full ones.
        num_products: keep the first N products of the items file (WebShop's ``num_products``).
        human_goals: load ``items_human_ins`` instructions (``instructions`` key) instead of the
            synthetic ones (``instruction_text``/``instruction_attributes``).

    Returns:
        A shared :class:`Catalog`; callers must not mutate its products.

    Raises:
        FileNotFoundError: if ``data_dir`` lacks an items file (the message lists what is there).
        ValueError: if ``num_products`` is not positive.
    """
    if num_products is not None and num_products < 1:
        raise ValueError(f"num_products must be a positive int or None, got {num_products!r}")
    root = os.path.abspath(data_dir) if data_dir is not None else EMBEDDED_DATA_DIR
    key = (root, num_products, bool(human_goals))
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
        if not os.path.isdir(root):
            raise FileNotFoundError(f"WebShop data dir {root!r} does not exist; pass --data-dir with "
                                    "items_shuffle*.json and items_ins_v2*.json, or omit it for the embedded catalog")
        items_path = _find(root, "items_shuffle", num_products)
        if items_path is None:
            raise FileNotFoundError(f"no items_shuffle*.json(.gz) in {root!r} (found: {sorted(os.listdir(root))})")
        ins_path = _find(root, "items_ins_v2", num_products)
        human_path = _find(root, "items_human_ins", None)
        if human_goals and human_path is None:
            raise FileNotFoundError(f"human_goals=True needs items_human_ins.json(.gz) in {root!r}")
        items = _read_json(items_path)
        if num_products is not None:
            items = items[:num_products]
        attributes = _read_json(ins_path) if ins_path else {}
        if ins_path is None:
            logger.warning("no items_ins_v2*.json in %s: every product gets Attributes=['DUMMY_ATTR'] and no goal",
                           root)
        human = _read_json(human_path) if (human_goals and human_path) else {}
        products = load_products(items, attributes, human, num_products, human_goals)
        attribute_to_asins: dict[str, set] = {}
        for p in products:
            for a in p["Attributes"]:
                attribute_to_asins.setdefault(a, set()).add(p["asin"])
        source = f"embedded:{root}" if data_dir is None else items_path
        catalog = Catalog(products=products, by_asin={p["asin"]: p for p in products}, source=source,
                          attribute_to_asins=attribute_to_asins, human_goals=bool(human_goals))
        logger.info("loaded %d products from %s", len(products), source)
        _CACHE[key] = catalog
        return catalog
