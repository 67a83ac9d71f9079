"""Deterministic generator of a WebShop-format product catalog (the embedded default and scale tests).

Owns the vocabulary (product types, attributes, styles, option groups, brands) and the writers of
WebShop's three files: ``items_shuffle.json`` (JSON list of raw products), ``items_ins_v2.json``
(``asin -> {attributes, instruction?, instruction_attributes?}``) and ``items_human_ins.json``
(``asin -> [{instruction, instruction_attributes, instruction_options}]``). It does not load or
normalise products (that is :mod:`agentenv_webshop.engine.catalog`).

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


# ---- option pools: key -> (option name as in the raw file, values) ----------------------------
COLORS = (
    "Black", "White", "Navy Blue", "Grey", "Red", "Beige", "Pink", "Green", "Brown", "Khaki",
    "Light Blue", "Dark Grey", "Black/White", "Purple", "Olive Green", "Burgundy", "Yellow",
    "Orange", "Teal", "Ivory", "Charcoal", "Coral", "Mint Green", "Gold", "Silver", "Rose Gold",
    "Espresso", "Walnut", "Natural", "Dark Brown",
)
OPTION_POOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "color": ("color", COLORS),
    "apparel_size": ("size", ("X-Small", "Small", "Medium", "Large", "X-Large", "XX-Large", "3X-Large")),
    "shoe_size": ("size", ("6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12", "13")),
    "waist_size": ("size", ("28W x 30L", "30W x 30L", "32W x 32L", "34W x 32L", "36W x 32L", "38W x 34L")),
    "fl_oz": ("size", ("2 Fl Oz", "4 Fl Oz", "8 Fl Oz", "12 Fl Oz", "16 Fl Oz", "33.8 Fl Oz")),
    "oz": ("size", ("4 Ounce", "8 Ounce", "12 Ounce", "16 Ounce", "24 Ounce", "2 Pound", "5 Pound")),
    "pack": ("pack", ("Pack of 1", "Pack of 2", "Pack of 3", "Pack of 4", "Pack of 6", "Pack of 12")),
    "count": ("size", ("6 Count", "12 Count", "18 Count", "24 Count", "36 Count", "48 Count")),
    "flavor": ("flavor name", (
        "Original", "Vanilla", "Chocolate", "Sea Salt", "Barbecue", "Honey Roasted", "Strawberry",
        "Peanut Butter", "Cinnamon", "Mango", "Lemon", "Spicy Chili", "Caramel", "Mixed Berry",
        "Hazelnut", "Garlic Herb", "Cookies and Cream", "Wild Berry")),
    "scent": ("scent", (
        "Unscented", "Lavender", "Eucalyptus", "Citrus", "Rose", "Sandalwood", "Ocean Breeze",
        "Vanilla Bean", "Cucumber Melon", "Jasmine", "Fresh Linen", "Cherry Blossom")),
    "shade": ("color", (
        "01 Nude", "02 Blush", "03 Ruby", "04 Berry", "05 Mauve", "06 Coral Crush", "07 Plum",
        "08 Cocoa", "09 Classic Red", "10 Peach")),
    "furniture_size": ("size", ("Small", "Medium", "Large", "2 Pack", "4 Pack", "24 Inch", "30 Inch", "36 Inch", "48 Inch")),
    "bed_size": ("size", ("Twin", "Full", "Queen", "King", "California King")),
    "length": ("size", ("1 ft", "3.3 ft", "6 ft", "6.6 ft", "10 ft", "15 ft")),
    "capacity": ("capacity", ("5000mAh", "10000mAh", "20000mAh", "26800mAh")),
    "device": ("style", (
        "iPhone 14", "iPhone 15 Pro", "iPhone 15 Pro Max", "Galaxy S23", "Galaxy S24 Ultra",
        "Pixel 8", "iPad Air", "iPad Pro 11")),
    "elec_style": ("style", ("Basic", "Pro", "Mini", "Max", "Plus", "Lite")),
    "material_style": ("style", ("Modern", "Classic", "Rustic", "Industrial", "Farmhouse", "Scandinavian")),
}

_BEAUTY_ATTRS = ("sulfate free", "paraben free", "cruelty free", "natural ingredients", "long lasting",
                 "dry skin", "sensitive skin", "easy to use", "travel size", "anti aging", "dermatologist tested",
                 "fragrance free", "non toxic", "hyaluronic acid", "vitamin c", "high quality")
_HAIR_ATTRS = ("sulfate free", "paraben free", "natural ingredients", "dry hair", "damaged hair", "hair growth",
               "hair loss", "color treated", "cruelty free", "curly hair", "fine hair", "long lasting")
_FOOD_ATTRS = ("gluten free", "non gmo", "sugar free", "low carb", "keto friendly", "high protein", "usda organic",
               "natural flavors", "kosher certified", "individually wrapped", "ready to eat", "low calorie",
               "dairy free", "plant based", "no artificial flavors", "resealable bag")
_FASHION_ATTRS = ("machine wash", "slim fit", "relaxed fit", "long sleeve", "short sleeve", "cotton spandex",
                  "button closure", "elastic waist", "quick drying", "moisture wicking", "high waist",
                  "polyester spandex", "hand wash", "regular fit", "soft material", "classic fit")
_SHOE_ATTRS = ("rubber sole", "non slip", "lace up", "memory foam", "arch support", "slip on", "water resistant",
               "lightweight", "ankle strap", "breathable mesh", "wide width", "closed toe")
_FURNITURE_ATTRS = ("easy assembly", "solid wood", "metal legs", "living room", "storage space",
                    "high density foam", "mid century", "space saving", "wood finish", "lumbar support",
                    "heavy duty", "pu leather", "engineered wood", "dining room", "steel frame", "easy clean")
_ELEC_ATTRS = ("fast charging", "high speed", "noise cancelling", "easy install", "long battery life",
               "water resistant", "hands free", "plug and play", "aluminum alloy", "high definition",
               "heavy duty", "usb port", "compact size", "wireless bluetooth", "easy carry", "dual band")

_B, _FO, _FA, _FU, _E = "beauty", "food", "fashion", "furniture", "electronics"
_BC = "Beauty & Personal Care"
_GR = "Grocery & Gourmet Food"
_CL = "Clothing, Shoes & Jewelry"
_HK = "Home & Kitchen › Furniture"
_EL = "Electronics"

PRODUCT_TYPES: tuple[ProductType, ...] = (
    # beauty
    ProductType(_B, "shampoo", f"{_BC} › Hair Care › Shampoo & Conditioner › Shampoos",
                ("argan oil", "tea tree", "coconut milk", "biotin", "rosemary mint", "keratin", "charcoal", "aloe vera"),
                _HAIR_ATTRS, ("fl_oz", "pack", "scent"), (6, 38)),
    ProductType(_B, "conditioner", f"{_BC} › Hair Care › Shampoo & Conditioner › Conditioners",
                ("argan oil", "shea butter", "coconut milk", "avocado", "keratin", "jojoba", "honey", "silk protein"),
                _HAIR_ATTRS, ("fl_oz", "pack", "scent"), (6, 35)),
    ProductType(_B, "body wash", f"{_BC} › Skin Care › Body › Cleansers › Body Washes",
                ("oatmeal", "shea butter", "charcoal", "eucalyptus", "coconut", "goat milk", "tea tree", "honey"),
                _BEAUTY_ATTRS, ("fl_oz", "pack", "scent"), (5, 28)),
    ProductType(_B, "face moisturizer", f"{_BC} › Skin Care › Face › Creams & Moisturizers › Face Moisturizers",
                ("retinol", "hyaluronic", "ceramide", "niacinamide", "green tea", "collagen", "squalane", "peptide"),
                _BEAUTY_ATTRS, ("fl_oz", "pack"), (9, 65)),
    ProductType(_B, "face serum", f"{_BC} › Skin Care › Face › Treatments & Masks › Serums",
                ("retinol", "vitamin e", "rosehip", "niacinamide", "snail mucin", "salicylic", "bakuchiol", "peptide"),
                _BEAUTY_ATTRS, ("fl_oz", "pack"), (8, 70)),
    ProductType(_B, "lipstick", f"{_BC} › Makeup › Lips › Lipstick",
                ("matte", "satin", "velvet", "glossy", "liquid", "cream", "metallic", "sheer"),
                ("long lasting", "cruelty free", "paraben free", "natural ingredients", "non toxic", "easy to use",
                 "waterproof formula", "highly pigmented", "moisturizing formula", "travel size"),
                ("shade", "pack"), (5, 30)),
    ProductType(_B, "nail polish", f"{_BC} › Foot, Hand & Nail Care › Nail Art & Polish › Nail Polish",
                ("gel", "glitter", "matte", "chrome", "pastel", "neon", "holographic", "quick dry"),
                ("long lasting", "non toxic", "cruelty free", "easy to use", "high quality", "nail art",
                 "quick drying", "travel size", "salon quality", "chip resistant"),
                ("color", "pack"), (4, 22)),
    ProductType(_B, "eyeshadow palette", f"{_BC} › Makeup › Eyes › Eyeshadow",
                ("nude", "smoky", "shimmer", "glitter", "neutral", "sunset", "rose", "bronze"),
                ("long lasting", "highly pigmented", "cruelty free", "easy to use", "waterproof formula",
                 "travel size", "paraben free", "high quality", "blendable formula", "natural ingredients"),
                ("pack",), (7, 45)),
    ProductType(_B, "makeup brush set", f"{_BC} › Tools & Accessories › Makeup Brushes & Tools › Brush Sets",
                ("bamboo", "synthetic", "kabuki", "rose gold", "marble", "travel", "vegan", "professional"),
                ("high quality", "easy to clean", "cruelty free", "travel size", "soft bristles", "synthetic hair",
                 "easy to use", "storage case", "dense bristles", "wooden handle"),
                ("color", "pack"), (8, 40)),
    ProductType(_B, "hair dryer", f"{_BC} › Hair Care › Styling Tools & Appliances › Hair Dryers",
                ("ionic", "ceramic", "tourmaline", "compact", "diffuser", "salon", "foldable", "infrared"),
                ("fast drying", "low noise", "travel size", "high quality", "hair salon", "damaged hair",
                 "easy to use", "negative ions", "heat settings", "lightweight design"),
                ("color", "elec_style"), (19, 120)),
    # food
    ProductType(_FO, "ground coffee", f"{_GR} › Beverages › Coffee, Tea & Cocoa › Coffee › Ground Coffee",
                ("dark roast", "medium roast", "espresso", "french roast", "colombian", "decaf", "hazelnut", "breakfast blend"),
                _FOOD_ATTRS, ("oz", "pack"), (7, 40)),
    ProductType(_FO, "green tea", f"{_GR} › Beverages › Coffee, Tea & Cocoa › Tea › Green",
                ("matcha", "jasmine", "sencha", "mint", "lemon ginger", "honey", "peach", "chai"),
                _FOOD_ATTRS, ("count", "pack"), (5, 30)),
    ProductType(_FO, "protein bar", f"{_GR} › Snack Foods › Bars › Protein Bars",
                ("whey", "peanut butter", "almond", "chocolate chip", "oat", "cookie dough", "cashew", "brownie"),
                _FOOD_ATTRS, ("flavor", "count"), (12, 45)),
    ProductType(_FO, "potato chips", f"{_GR} › Snack Foods › Chips & Crisps › Potato",
                ("kettle cooked", "baked", "sea salt", "jalapeno", "sour cream", "salt vinegar", "truffle", "crinkle cut"),
                _FOOD_ATTRS, ("oz", "pack"), (3, 28), True),
    ProductType(_FO, "dark chocolate", f"{_GR} › Snack Foods › Candy & Chocolate › Chocolate Bars",
                ("sea salt", "almond", "raspberry", "orange", "mint", "espresso", "caramel", "coconut"),
                _FOOD_ATTRS, ("oz", "pack"), (4, 35)),
    ProductType(_FO, "beef jerky", f"{_GR} › Meat & Seafood › Jerky & Dried Meats › Beef",
                ("teriyaki", "peppered", "sweet hot", "original", "smoked", "sriracha", "honey bbq", "garlic"),
                _FOOD_ATTRS, ("oz", "pack"), (6, 40)),
    ProductType(_FO, "olive oil", f"{_GR} › Pantry Staples › Cooking & Baking › Oils › Olive",
                ("extra virgin", "cold pressed", "greek", "italian", "spanish", "garlic infused", "lemon infused", "light"),
                _FOOD_ATTRS, ("fl_oz", "pack"), (8, 48)),
    ProductType(_FO, "honey", f"{_GR} › Pantry Staples › Jams, Jellies & Sweet Spreads › Honey",
                ("raw", "manuka", "clover", "wildflower", "orange blossom", "buckwheat", "acacia", "creamed"),
                _FOOD_ATTRS, ("oz", "pack"), (6, 60)),
    ProductType(_FO, "granola", f"{_GR} › Breakfast Foods › Cereals › Granola",
                ("almond", "blueberry", "maple pecan", "coconut", "cranberry", "honey oat", "cinnamon", "dark chocolate"),
                _FOOD_ATTRS, ("oz", "pack"), (4, 30)),
    ProductType(_FO, "trail mix", f"{_GR} › Snack Foods › Nuts & Seeds › Trail Mix",
                ("cashew", "pistachio", "dried cranberry", "tropical", "chocolate", "walnut", "sunflower", "mixed nuts"),
                _FOOD_ATTRS, ("flavor", "oz", "pack"), (5, 35)),
    ProductType(_FO, "seasoning blend", f"{_GR} › Pantry Staples › Herbs, Spices & Seasonings › Mixed Spices & Seasonings",
                ("cajun", "lemon pepper", "italian herb", "taco", "garlic", "smoked paprika", "everything bagel", "curry"),
                _FOOD_ATTRS, ("oz", "pack"), (3, 22)),
    ProductType(_FO, "gummy candy", f"{_GR} › Snack Foods › Candy & Chocolate › Gummy Candy",
                ("sour", "fruit", "peach ring", "bear", "worm", "watermelon", "cola", "vegan"),
                _FOOD_ATTRS, ("flavor", "oz", "pack"), (3, 25)),
    # fashion
    ProductType(_FA, "t-shirt", f"{_CL} › Men › Clothing › Shirts › T-Shirts",
                ("crew neck", "v neck", "graphic", "henley", "pocket", "tie dye", "vintage", "athletic"),
                _FASHION_ATTRS, ("color", "apparel_size"), (9, 35)),
    ProductType(_FA, "hoodie", f"{_CL} › Men › Clothing › Fashion Hoodies & Sweatshirts",
                ("pullover", "zip up", "fleece", "sherpa lined", "oversized", "graphic", "lightweight", "heavyweight"),
                _FASHION_ATTRS, ("color", "apparel_size"), (18, 60)),
    ProductType(_FA, "jeans", f"{_CL} › Men › Clothing › Jeans",
                ("straight leg", "skinny", "bootcut", "ripped", "stretch denim", "tapered", "carpenter", "dark wash"),
                _FASHION_ATTRS, ("color", "waist_size"), (19, 70), True),
    ProductType(_FA, "maxi dress", f"{_CL} › Women › Clothing › Dresses › Casual",
                ("floral", "boho", "wrap", "off shoulder", "smocked", "tiered", "sleeveless", "button down"),
                _FASHION_ATTRS, ("color", "apparel_size"), (20, 60)),
    ProductType(_FA, "running shoes", f"{_CL} › Men › Shoes › Athletic › Running › Road Running",
                ("mesh", "knit", "trail", "cushioned", "minimalist", "stability", "carbon plate", "walking"),
                _SHOE_ATTRS, ("color", "shoe_size"), (29, 120), True),
    ProductType(_FA, "ankle boots", f"{_CL} › Women › Shoes › Boots › Ankle & Bootie",
                ("chelsea", "suede", "combat", "block heel", "western", "lug sole", "faux leather", "platform"),
                _SHOE_ATTRS, ("color", "shoe_size"), (30, 110), True),
    ProductType(_FA, "slide sandals", f"{_CL} › Women › Shoes › Sandals › Slides",
                ("platform", "pillow", "cork", "braided", "open toe", "flat", "cloud", "leather"),
                _SHOE_ATTRS, ("color", "shoe_size"), (12, 50), True),
    ProductType(_FA, "yoga leggings", f"{_CL} › Women › Clothing › Active › Active Leggings",
                ("high rise", "pocket", "butt lifting", "seamless", "flare", "capri", "fleece lined", "crossover"),
                _FASHION_ATTRS, ("color", "apparel_size"), (14, 48), True),
    ProductType(_FA, "rain jacket", f"{_CL} › Women › Clothing › Coats, Jackets & Vests › Raincoats",
                ("packable", "hooded", "windbreaker", "lightweight", "insulated", "trench", "softshell", "waterproof"),
                _FASHION_ATTRS, ("color", "apparel_size"), (30, 120)),
    ProductType(_FA, "crew socks", f"{_CL} › Men › Clothing › Socks › Athletic Socks",
                ("cushioned", "wool", "bamboo", "compression", "striped", "cotton", "ankle", "hiking"),
                _FASHION_ATTRS, ("color", "pack"), (8, 30), True),
    ProductType(_FA, "polo shirt", f"{_CL} › Men › Clothing › Shirts › Polos",
                ("pique", "golf", "performance", "striped", "jersey", "classic", "dry fit", "stretch"),
                _FASHION_ATTRS, ("color", "apparel_size"), (14, 55)),
    ProductType(_FA, "swimsuit", f"{_CL} › Women › Clothing › Swimsuits & Cover Ups › One-Pieces",
                ("tummy control", "halter", "ruched", "cutout", "high neck", "tankini", "v neck", "ribbed"),
                _FASHION_ATTRS, ("color", "apparel_size"), (18, 55)),
    # furniture
    ProductType(_FU, "office chair", f"{_HK} › Home Office Furniture › Home Office Desk Chairs",
                ("ergonomic", "mesh", "executive", "swivel", "gaming", "drafting", "armless", "reclining"),
                _FURNITURE_ATTRS, ("color", "material_style"), (60, 350)),
    ProductType(_FU, "coffee table", f"{_HK} › Living Room Furniture › Tables › Coffee Tables",
                ("lift top", "round", "glass", "farmhouse", "marble", "nesting", "oval", "rattan"),
                _FURNITURE_ATTRS, ("color", "furniture_size"), (60, 400)),
    ProductType(_FU, "bookshelf", f"{_HK} › Home Office Furniture › Bookcases",
                ("ladder", "corner", "cube", "etagere", "5 tier", "industrial", "floating", "rotating"),
                _FURNITURE_ATTRS, ("color", "furniture_size"), (40, 300)),
    ProductType(_FU, "nightstand", f"{_HK} › Bedroom Furniture › Nightstands",
                ("2 drawer", "charging station", "floating", "rattan", "fabric", "open shelf", "led", "mirrored"),
                _FURNITURE_ATTRS, ("color", "furniture_size"), (35, 220)),
    ProductType(_FU, "bar stool", f"{_HK} › Kitchen & Dining Room Furniture › Bar Stools",
                ("swivel", "counter height", "velvet", "backless", "adjustable", "woven", "saddle", "cushioned"),
                _FURNITURE_ATTRS, ("color", "furniture_size"), (40, 260)),
    ProductType(_FU, "loveseat sofa", f"{_HK} › Living Room Furniture › Sofas & Couches",
                ("sleeper", "velvet", "tufted", "convertible", "linen", "chesterfield", "modular", "futon"),
                _FURNITURE_ATTRS, ("color", "material_style"), (150, 900)),
    ProductType(_FU, "tv stand", f"{_HK} › Living Room Furniture › TV & Media Furniture › Television Stands & Entertainment Centers",
                ("fireplace", "corner", "floating", "sliding barn door", "glass shelf", "low profile", "rustic", "led"),
                _FURNITURE_ATTRS, ("color", "furniture_size"), (60, 450)),
    ProductType(_FU, "writing desk", f"{_HK} › Home Office Furniture › Home Office Desks",
                ("standing", "l shaped", "computer", "folding", "corner", "ladder", "vanity", "executive"),
                _FURNITURE_ATTRS, ("color", "furniture_size"), (50, 380)),
    ProductType(_FU, "storage ottoman", f"{_HK} › Living Room Furniture › Ottomans",
                ("folding", "round", "tufted", "velvet", "cube", "bench", "faux leather", "woven"),
                _FURNITURE_ATTRS, ("color", "furniture_size"), (25, 180)),
    ProductType(_FU, "bed frame", f"{_HK} › Bedroom Furniture › Beds, Frames & Bases › Beds",
                ("platform", "upholstered", "canopy", "metal", "wingback", "storage", "headboard", "bookcase"),
                _FURNITURE_ATTRS, ("color", "bed_size"), (120, 800)),
    ProductType(_FU, "shoe rack", f"{_HK} › Storage & Organization › Clothing & Closet Storage › Shoe Organizers",
                ("bamboo", "stackable", "over the door", "entryway", "bench", "rotating", "narrow", "cabinet"),
                _FURNITURE_ATTRS, ("color", "furniture_size"), (18, 150)),
    # electronics
    ProductType(_E, "wireless earbuds", f"{_EL} › Headphones, Earbuds & Accessories › Earbud Headphones",
                ("sport", "true wireless", "open ear", "bone conduction", "gaming", "mini", "hifi stereo", "waterproof"),
                _ELEC_ATTRS, ("color", "elec_style"), (19, 180), True),
    ProductType(_E, "bluetooth speaker", f"{_EL} › Portable Audio & Video › Portable Speakers & Docks › Portable Bluetooth Speakers",
                ("portable", "outdoor", "shower", "party", "bass boost", "smart", "retro", "rugged"),
                _ELEC_ATTRS, ("color", "elec_style"), (20, 200)),
    ProductType(_E, "phone case", f"{_EL} › Cell Phones & Accessories › Cases, Holsters & Sleeves › Basic Cases",
                ("clear", "magnetic", "wallet", "shockproof", "slim", "silicone", "glitter", "kickstand"),
                _ELEC_ATTRS, ("device", "color"), (8, 40)),
    ProductType(_E, "usb c cable", f"{_EL} › Computers & Accessories › Computer Accessories & Peripherals › Cables & Accessories › Cables › USB Cables",
                ("braided", "right angle", "coiled", "magnetic", "thunderbolt", "short", "retractable", "flat"),
                _ELEC_ATTRS, ("length", "pack"), (6, 30)),
    ProductType(_E, "power bank", f"{_EL} › Cell Phones & Accessories › Chargers & Power Adapters › Portable Power Banks",
                ("solar", "slim", "magnetic", "mini", "led display", "rugged", "wireless", "laptop"),
                _ELEC_ATTRS, ("capacity", "color"), (15, 90)),
    ProductType(_E, "wireless charger", f"{_EL} › Cell Phones & Accessories › Chargers & Power Adapters › Wireless Chargers",
                ("3 in 1", "foldable", "magnetic", "stand", "pad", "car mount", "travel", "dual"),
                _ELEC_ATTRS, ("color", "elec_style"), (12, 70)),
    ProductType(_E, "hdmi cable", f"{_EL} › Television & Video › Accessories › Cables › HDMI Cables",
                ("8k", "4k", "braided", "fiber optic", "slim", "right angle", "coiled", "gold plated"),
                _ELEC_ATTRS, ("length", "pack"), (7, 45)),
    ProductType(_E, "smart watch band", f"{_EL} › Wearable Technology › Accessories › Bands",
                ("silicone", "leather", "nylon", "stainless steel", "magnetic", "sport loop", "braided", "metal"),
                _ELEC_ATTRS, ("color", "elec_style"), (7, 40)),
    ProductType(_E, "laptop stand", f"{_EL} › Computers & Accessories › Laptop Accessories › Lap Desks",
                ("adjustable", "foldable", "ventilated", "vertical", "portable", "riser", "rotating", "wooden"),
                _ELEC_ATTRS, ("color", "elec_style"), (15, 80)),
    ProductType(_E, "webcam", f"{_EL} › Computers & Accessories › Computer Accessories & Peripherals › Audio & Video Accessories › Webcams",
                ("1080p", "4k", "autofocus", "wide angle", "streaming", "privacy cover", "ring light", "conference"),
                _ELEC_ATTRS, ("elec_style", "pack"), (20, 150)),
    ProductType(_E, "mechanical keyboard", f"{_EL} › Computers & Accessories › Computer Accessories & Peripherals › Keyboards, Mice & Accessories › Keyboards",
                ("rgb", "tenkeyless", "hot swappable", "compact", "gaming", "retro", "low profile", "ergonomic"),
                _ELEC_ATTRS, ("color", "elec_style"), (30, 170)),
    ProductType(_E, "security camera", f"{_EL} › Camera & Photo › Video Surveillance › Surveillance Cameras › Dome Cameras",
                ("outdoor", "indoor", "pan tilt", "doorbell", "solar", "floodlight", "night vision", "battery"),
                _ELEC_ATTRS, ("elec_style", "pack"), (25, 220)),
)

_BRAND_SYLLABLES = ("lu", "mo", "ra", "ve", "ni", "ta", "ko", "sa", "bel", "dor", "fin", "gar", "hal", "jin",
                    "kel", "mar", "nor", "pel", "quin", "ros", "sol", "tav", "ul", "vex", "wyn", "zan", "cor",
                    "lin", "ax", "bri", "den", "ely", "fax", "gio", "hep", "ir", "jo", "kai", "lem", "myr")


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

_CATEGORY_SENTENCES: dict[str, tuple[str, ...]] = {
    _B: ("Gentle enough for daily use and suitable for all skin types.",
         "Formulated in small batches and tested for quality.",
         "A great gift for women and men on birthdays and holidays.",
         "Apply a small amount and massage gently, then rinse if needed.",
         "Store in a cool dry place away from direct sunlight.",
         "Our formula leaves a fresh feeling that lasts all day.",
         "Packaged in a recyclable bottle that is easy to carry."),
    _FO: ("Perfect for snacking at home, at work or on the go.",
          "Made in a facility that follows strict food safety standards.",
          "Enjoy it as a quick breakfast, an afternoon treat or a late night snack.",
          "Each batch is taste tested to ensure a consistent flavor.",
          "Store in a cool pantry and enjoy before the best by date.",
          "A thoughtful gift basket addition for family and friends.",
          "Crafted with simple ingredients you can pronounce."),
    _FA: ("Pair it with your favorite outfit for a casual or dressy look.",
          "Designed for everyday wear, travel, workouts and weekends.",
          "Please check the size chart before ordering for the best fit.",
          "The fabric keeps its shape and color after many washes.",
          "A versatile piece for spring, summer, fall and winter.",
          "Tailored details give it a clean modern silhouette.",
          "Makes a great gift for birthdays, holidays and anniversaries."),
    _FU: ("Fits well in the bedroom, office, apartment or dorm.",
          "All hardware and step by step instructions are included.",
          "The sturdy construction supports daily use for years.",
          "Wipe clean with a damp cloth; avoid harsh chemicals.",
          "A timeless design that matches most home decor styles.",
          "Smooth edges and a stable base keep the family safe.",
          "Ships in one box with clearly labeled parts."),
    _E: ("Compatible with most phones, tablets and laptops on the market.",
         "Backed by a friendly customer service team and a worry free warranty.",
         "The compact design fits easily in a backpack or travel bag.",
         "Built with premium components that are tested for durability.",
         "Simple setup: no app or extra software required.",
         "Ideal for home, office, travel and outdoor use.",
         "Certified for safety with protection against overheating."),
}

_INSTRUCTION_TEMPLATES = (
    "i am looking for {art}{attrs} {style} {type}",
    "i need {art}{style} {type} that is {attrs}",
    "find me {art}{attrs} {type} in {style} style",
    "i want to buy {art}{style} {type} which is {attrs}",
    "i'm looking for {art}{type} with {style}, {attrs}",
    "can you find me {art}{attrs} {style} {type}",
    "please get me {art}{style} {type}, {attrs}",
)
_HUMAN_TEMPLATES = (
    "I'd like {art}{style} {type} that is {attrs}, in {opts}",
    "Looking for {art}{attrs} {style} {type}; I want {opts}",
    "I need {art}{style} {type} ({attrs}) in {opts}.",
    "Buy me {art}{attrs} {type} with {style}, get {opts}",
)


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
        bullets.append(f"{_title_case(a)} - {rng.choice(('designed to be', 'crafted to be', 'tested to be', 'proudly'))} {a} for everyday use.")
    sentences = _CATEGORY_SENTENCES[ptype.category]
    extra = rng.sample(sentences, 3)
    bullets.append(extra[0])
    rng.shuffle(bullets)
    description = (f"The {brand} {style} {ptype.name} is {_join_attrs(attrs[:2])}. " + " ".join(extra[1:])
                   + f" Order the {ptype.name} today and enjoy {rng.choice(('free returns', 'fast shipping', 'our satisfaction guarantee', 'great value'))}.")

    customization = {name: [{"value": v, "image": f"https://images.example.com/{asin}/{i}.jpg" if name == "color" else None}
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
    paths = [os.path.join(out_dir, f"{stem}{suffix}.json") for stem in ("items_shuffle", "items_ins_v2", "items_human_ins")]
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
