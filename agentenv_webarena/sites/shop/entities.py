"""WebArena's catalog entities the shop's base vocabulary (`data`) lacks, and the scale they bring.

Owns the departments, categories and products of WebArena's kinds that the base catalog has not, more customers
and the reviews on the new products, and `seed_entities`, which inserts them after every base row with its own
`random.Random(ENTITY_SEED)`:

- One Stop Market's two missing departments, `Tools & Home Improvement` and `Cell Phones & Accessories`, in the
  category bar, with sub-categories and generated `<brand> <adjective> <noun>` products;
- Luma's catalog (the admin side's store in WebArena): `Women` and `Men` (Tops > Jackets, Hoodies & Sweatshirts,
  Tees, Tanks; Bottoms > Pants, Shorts), `Gear` (Bags, Fitness Equipment, Watches) and `Training`, under Luma's
  URL keys (`/women/tops-women/jackets-women.html`), with the products WebArena's tasks name (`Antonia Racer
  Tank`, `Selene Yoga Hoodie`, `Cora Parachute Pant`, ...; at WebArena's product ids where those are free) and
  generated `<name> <style> <garment>` ones with Luma's sizes and colours;
- customers with generated names, and approved reviews with generated text on the new products.

So that nothing the base data answers moves, the new rows stay out of its way: ids come after the base ids (the
admin's next new product still takes id 201, `model.next_product_id`); the new departments are new top-level
categories, so no base listing gains a product; Luma's are left out of the category bar (`include_in_menu` 0)
and its products out of the storefront search (visibility "Catalog"), as they belong to another store in
WebArena; the searchable products use no word of a base product's name or of a seeded search term
(`search_words`), so no search an existing task runs finds them; customers' first and last names are none of the
base ones; no order is added (orders feed the reports tasks read), and every review is approved, by a new
nickname and dated before the site clock.
"""
from __future__ import annotations

import datetime as dt
import random
import re
import sqlite3
from typing import NamedTuple

from agentenv_webarena.sites.shop import data as shop_data
from agentenv_webarena.sites.shop.model import format_ts, hash_password, slugify

__all__ = ["ENTITY_SEED", "FIRST_GENERATED_ID", "VISIBILITY", "Department", "DEPARTMENTS", "NAMED_PRODUCTS",
           "CUSTOMER_FIRST_NAMES", "CUSTOMER_LAST_NAMES", "ENTITY_CUSTOMERS", "search_words", "seed_entities"]

ENTITY_SEED = 7780  # WebArena's shopping_admin port
FIRST_GENERATED_ID = 2041  # after the ids of WebArena's Luma catalog (named products keep theirs)
ENTITY_CUSTOMERS = 160
# Magento's product visibility: where a product is listed (4 is the default of every base product).
VISIBILITY = {1: "Not Visible Individually", 2: "Catalog", 3: "Search", 4: "Catalog, Search"}
_REVIEW_START = dt.datetime(2022, 2, 1)
_REVIEW_SPAN_S = 675 * 86400  # to early December 2023, before the newest base timestamp: the site clock stays put

# Sizes and colours ("" none): "S" clothing letters, "W" waist sizes, "C" colours.
_LETTERS = ["XS", "S", "M", "L", "XL"]
_WAISTS = ["28", "29", "30", "31", "32", "33", "34", "36"]
_LUMA_COLORS = ["Black", "Blue", "Brown", "Gray", "Green", "Lavender", "Orange", "Purple", "Red", "White", "Yellow"]


class Department(NamedTuple):
    """A new top-level category: its tree (url path below the slug, name; parents first), whether the category
    bar and the storefront search show it, the words its generated names are made of, and its nouns as
    (noun, base price, leaf path, sizes, colours, how many products)."""

    name: str
    slug: str
    in_menu: bool
    nodes: list[tuple[str, str]]
    brands: list[str]
    adjectives: list[str]
    nouns: list[tuple[str, float, str, str, str, int]]
    features: list[str]


DEPARTMENTS: list[Department] = [
    Department(
        "Tools & Home Improvement", "tools-home-improvement", True,
        [("power-hand-tools", "Power & Hand Tools"), ("power-hand-tools/hand-tools", "Hand Tools"),
         ("power-hand-tools/power-tools", "Power Tools"), ("lighting-ceiling-fans", "Lighting & Ceiling Fans"),
         ("hardware", "Hardware"), ("safety-security", "Safety & Security"),
         ("painting-supplies", "Painting Supplies & Wall Treatments")],
        ["Torqmaster", "Gritworks", "Stanwick", "Plumbright", "Hammerhold"],
        ["Cordless", "Magnetic", "Insulated", "Adjustable", "Brushless", "Telescoping"],
        [("Drill Driver", 69.0, "power-hand-tools/power-tools", "", "", 5),
         ("Impact Wrench", 89.0, "power-hand-tools/power-tools", "", "", 4),
         ("Orbital Sander", 54.0, "power-hand-tools/power-tools", "", "", 4),
         ("Tape Measure", 12.0, "power-hand-tools/hand-tools", "", "", 4),
         ("Torpedo Level", 15.0, "power-hand-tools/hand-tools", "", "", 4),
         ("Box Cutter", 9.0, "power-hand-tools/hand-tools", "", "", 4),
         ("Locking Pliers", 17.0, "power-hand-tools/hand-tools", "", "", 4),
         ("Ceiling Fixture", 59.0, "lighting-ceiling-fans", "", "", 4),
         ("Floodlight", 39.0, "lighting-ceiling-fans", "", "", 4),
         ("Door Hinges", 11.0, "hardware", "", "", 3),
         ("Wall Anchors", 7.0, "hardware", "", "", 3),
         ("Smoke Detector", 21.0, "safety-security", "", "", 4),
         ("Deadbolt", 34.0, "safety-security", "", "", 3),
         ("Roller Frame", 13.0, "painting-supplies", "", "", 3),
         ("Caulking Gun", 10.0, "painting-supplies", "", "", 3)],
        ["Rated for job-site work", "Fits most standard fixtures", "Includes mounting screws",
         "Tested to OSHA specifications", "Tool-free installation"]),
    Department(
        "Cell Phones & Accessories", "cell-phones-accessories", True,
        [("cases-holsters-sleeves", "Cases, Holsters & Sleeves"), ("screen-protectors", "Screen Protectors"),
         ("mounts-stands", "Mounts & Stands"), ("chargers-adapters", "Chargers & Adapters"),
         ("selfie-sticks-tripods", "Selfie Sticks & Tripods")],
        ["Celltrix", "Dialtone", "Zentro", "Mobilink", "Phonexa"],
        ["Shockproof", "Tempered", "Rugged", "Transparent", "Kickstand", "Matte"],
        [("Phone Cover", 15.0, "cases-holsters-sleeves", "", "C", 6),
         ("Belt Holster", 18.0, "cases-holsters-sleeves", "", "", 4),
         ("Wallet Sleeve", 16.0, "cases-holsters-sleeves", "", "C", 4),
         ("Screen Protector", 9.0, "screen-protectors", "", "", 5),
         ("Camera Lens Guard", 8.0, "screen-protectors", "", "", 3),
         ("Dashboard Mount", 19.0, "mounts-stands", "", "", 4),
         ("Handlebar Mount", 17.0, "mounts-stands", "", "", 3),
         ("Wall Adapter", 14.0, "chargers-adapters", "", "", 4),
         ("Lightning Cord", 11.0, "chargers-adapters", "", "C", 4),
         ("Selfie Stick", 14.0, "selfie-sticks-tripods", "", "", 4),
         ("Phone Tripod", 22.0, "selfie-sticks-tripods", "", "", 3)],
        ["Fits iPhone 13, iPhone 14 and Galaxy S22", "Drop-tested to six feet", "Precise cutouts",
         "Twelve-month replacement guarantee", "Works alongside MagSafe"]),
    Department(
        "Women", "women", False,
        [("tops-women", "Tops"), ("tops-women/jackets-women", "Jackets"),
         ("tops-women/hoodies-and-sweatshirts-women", "Hoodies & Sweatshirts"), ("tops-women/tees-women", "Tees"),
         ("tops-women/tanks-women", "Bras & Tanks"), ("bottoms-women", "Bottoms"),
         ("bottoms-women/pants-women", "Pants"), ("bottoms-women/shorts-women", "Shorts")],
        ["Adrienne", "Augusta", "Daphne", "Fiona", "Gabrielle", "Inez", "Josie", "Juno", "Layla", "Mona", "Nora",
         "Prima", "Riona", "Zora", "Echo", "Elisa"],
        ["Compete", "Racer", "Zip", "Hooded", "Trek", "Seamless", "Breathe-Easy", "Tempo", "LumaTech"],
        [("Jacket", 56.0, "tops-women/jackets-women", "S", "C", 10),
         ("Hoodie", 52.0, "tops-women/hoodies-and-sweatshirts-women", "S", "C", 8),
         ("Sweatshirt", 48.0, "tops-women/hoodies-and-sweatshirts-women", "S", "C", 6),
         ("Tee", 29.0, "tops-women/tees-women", "S", "C", 12),
         ("Tank", 32.0, "tops-women/tanks-women", "S", "C", 10), ("Bra", 34.0, "tops-women/tanks-women", "S", "C", 6),
         ("Pant", 49.0, "bottoms-women/pants-women", "W", "C", 8),
         ("Capri", 41.0, "bottoms-women/pants-women", "W", "C", 4),
         ("Short", 29.0, "bottoms-women/shorts-women", "W", "C", 8)],
        ["Moisture-wicking fabric", "Flatlock seams", "Four-way stretch", "Reflective trim",
         "Relaxed through the hip"]),
    Department(
        "Men", "men", False,
        [("tops-men", "Tops"), ("tops-men/jackets-men", "Jackets"),
         ("tops-men/hoodies-and-sweatshirts-men", "Hoodies & Sweatshirts"), ("tops-men/tees-men", "Tees"),
         ("tops-men/tanks-men", "Tanks"), ("bottoms-men", "Bottoms"), ("bottoms-men/pants-men", "Pants"),
         ("bottoms-men/shorts-men", "Shorts")],
        ["Atlas", "Beaumont", "Cassius", "Deion", "Hyperion", "Kratos", "Lando", "Montana", "Orion", "Proteus",
         "Sparta", "Thorpe", "Typhon", "Zeppelin", "Jupiter", "Mars"],
        ["All-Weather", "Endurance", "HeatTec", "Crew", "Gym", "Trail", "Track", "Fleece", "LumaTech"],
        [("Jacket", 64.0, "tops-men/jackets-men", "S", "C", 10),
         ("Hoodie", 54.0, "tops-men/hoodies-and-sweatshirts-men", "S", "C", 8),
         ("Sweatshirt", 49.0, "tops-men/hoodies-and-sweatshirts-men", "S", "C", 6),
         ("Tee", 28.0, "tops-men/tees-men", "S", "C", 12), ("Tank", 26.0, "tops-men/tanks-men", "S", "C", 8),
         ("Pant", 52.0, "bottoms-men/pants-men", "W", "C", 10), ("Short", 32.0, "bottoms-men/shorts-men", "W", "C", 8)],
        ["Cocona performance fabric", "Zippered hand pockets", "Lightweight mesh panels", "Gusseted crotch",
         "Drawstring waist"]),
    Department(
        "Gear", "gear", False,
        [("bags", "Bags"), ("fitness-equipment", "Fitness Equipment"), ("watches", "Watches")],
        ["Voyage", "Driven", "Overnight", "Impulse", "Rival", "Strive", "Savvy", "Clamber", "Dash", "Cruise"],
        ["Duffle", "Messenger", "Tote", "Shoulder", "Field", "Summit", "Sprite", "Harmony", "Quest", "Luma"],
        [("Bag", 45.0, "bags", "", "", 12), ("Roller", 27.0, "fitness-equipment", "", "", 5),
         ("Kettlebell", 32.0, "fitness-equipment", "", "", 5), ("Strap", 14.0, "fitness-equipment", "", "", 4),
         ("Watch", 57.0, "watches", "", "", 9)],
        ["Padded shoulder strap", "Water-resistant shell", "Lifetime stitching warranty", "Fits a 15-inch laptop",
         "Stainless case"]),
    Department(
        "Training", "training", False,
        [("training-video", "Video Download")],
        ["Beginner's", "Advanced", "Morning", "Core", "Power Flow", "Total Body"],
        ["Yoga", "Pilates", "Stretch", "Strength", "Cardio"],
        [("Video", 12.0, "training-video", "", "", 10)],
        ["Streams on any device", "Sixty minutes of guided sessions", "Download yours to keep"]),
]

# Products WebArena's shopping_admin tasks name: (WebArena's product id, or 0 where it is taken by a base product
# or unknown, name, department slug, leaf path, price, sizes, colours).
NAMED_PRODUCTS: list[tuple[int, str, str, str, float, str, str]] = [
    (350, "Taurus Elements Shell", "men", "tops-men/jackets-men", 65.0, "XS,S,M,L,XL", "Blue,Red,White"),
    (446, "Gobi HeatTec Tee", "men", "tops-men/tees-men", 29.0, "XS,S,M,L,XL", "Black,Orange,Red"),
    (478, "Ryker Tee Crew Neck", "men", "tops-men/tees-men", 32.0, "XS,S,M,L,XL", "Black,Blue,Gray"),
    (676, "Helios Endurance Tank", "men", "tops-men/tanks-men", 24.0, "XS,S,M,L,XL", "Black,Gray,Green"),
    (682, "Rocco Gym Tank", "men", "tops-men/tanks-men", 24.0, "XS,S,M,L,XL", "Blue,Green"),
    (872, "Cronus Yoga Pant", "men", "bottoms-men/pants-men", 48.0, "32,33,34,36", "Black,Blue,Red"),
    (1108, "Selene Yoga Hoodie", "women", "tops-women/hoodies-and-sweatshirts-women", 42.0, "XS,S,M,L,XL",
     "Orange,Purple,White"),
    (1130, "Phoebe Zipper Sweatshirt", "women", "tops-women/hoodies-and-sweatshirts-women", 59.0, "XS,S,M,L,XL",
     "Gray,Purple,White"),
    (1492, "Minerva LumaTech V-Tee", "women", "tops-women/tees-women", 32.0, "XS,S,M,L,XL", "Black,Blue,Green"),
    (1573, "Desiree Fitness Tee", "women", "tops-women/tees-women", 24.0, "XS,S,M,L,XL", "Black,Orange,Yellow"),
    (1732, "Nona Fitness Tank", "women", "tops-women/tanks-women", 39.0, "XS,S,M,L,XL", "Blue,Purple,Red"),
    (1819, "Karmen Yoga Pant", "women", "bottoms-women/pants-women", 39.0, "28,29", "Black,Gray,White"),
    (1840, "Cora Parachute Pant", "women", "bottoms-women/pants-women", 60.0, "28,29", "Blue,Red,White"),
    (1854, "Diana Tights", "women", "bottoms-women/pants-women", 59.0, "28,29", "Black,Blue,Orange"),
    (1861, "Aeno Capri", "women", "bottoms-women/pants-women", 48.0, "28,29", "Black"),
    (0, "Antonia Racer Tank", "women", "tops-women/tanks-women", 34.0, "XS,S,M,L,XL", "Black,Purple,Yellow"),
    (0, "Chloe Compete Tank", "women", "tops-women/tanks-women", 39.0, "XS,S,M,L,XL", "Blue,Red,White"),
    (0, "Bella Tank", "women", "tops-women/tanks-women", 29.0, "XS,S,M,L,XL", "Black,Blue,Orange"),
    (0, "Electra Bra Top", "women", "tops-women/tanks-women", 39.0, "XS,S,M,L,XL", "Black,Blue,Red"),
    (0, "Lucia Cross-Fit Bra", "women", "tops-women/tanks-women", 29.0, "XS,S,M,L,XL", "Black,Blue,White"),
    (0, "Radiant Tee", "women", "tops-women/tees-women", 22.0, "XS,S,M,L,XL", "Blue,Orange,Purple"),
    (0, "Olivia 1/4 Zip Light Jacket", "women", "tops-women/jackets-women", 77.0, "XS,S,M,L,XL", "Black,Blue,Purple"),
    (0, "Ingrid Running Jacket", "women", "tops-women/jackets-women", 84.0, "XS,S,M,L,XL", "Orange,Red,White"),
    (0, "Circe Hooded Ice Fleece", "women", "tops-women/hoodies-and-sweatshirts-women", 68.0, "XS,S,M,L,XL",
     "Gray,Green,Purple"),
    (0, "Ana Running Short", "women", "bottoms-women/shorts-women", 40.0, "28,29,30,31,32", "Black,Blue,Orange"),
    (0, "Sybil Running Short", "women", "bottoms-women/shorts-women", 44.0, "28,29,30,31,32", "Gray,Purple"),
    (0, "Sahara Leggings", "women", "bottoms-women/pants-women", 47.0, "28,29", "Blue,Gray,Red"),
    (0, "Gwyn Endurance Tee", "women", "tops-women/tees-women", 24.0, "XS,S,M,L,XL", "Black,Green,Yellow"),
    (0, "Frankie Sweatshirt", "men", "tops-men/hoodies-and-sweatshirts-men", 60.0, "XS,S,M,L,XL", "Green,White"),
    (0, "Hollister Backyard Sweatshirt", "men", "tops-men/hoodies-and-sweatshirts-men", 52.0, "XS,S,M,L,XL",
     "Green,Red,White"),
    (0, "Teton Pullover Hoodie", "men", "tops-men/hoodies-and-sweatshirts-men", 70.0, "XS,S,M,L,XL",
     "Black,Green,Red"),
    (0, "Aero Daily Fitness Tee", "men", "tops-men/tees-men", 24.0, "XS,S,M,L,XL", "Black,Brown,Yellow"),
    (0, "Affirm Water Bottle", "gear", "fitness-equipment", 7.0, "", ""),
]
# WebArena's ids of products its tasks open without naming them ("Reduce the price of this product"): the first
# generated Luma products take them.
_UNNAMED_IDS = [237, 418, 710, 721, 996, 1481]

CUSTOMER_FIRST_NAMES = [
    "Adriana", "Bianca", "Camila", "Delia", "Esther", "Farah", "Gloria", "Helga", "Irene", "Jolene", "Kendra",
    "Lorena", "Marisol", "Nadia", "Opal", "Paloma", "Rosalind", "Selma", "Tamsin", "Ursula", "Vera", "Wendy",
    "Ximena", "Yolanda", "Abel", "Bruno", "Cedric", "Dorian", "Emil", "Felix", "Gideon", "Hector", "Ivan", "Jasper",
    "Kurt", "Leon", "Milo", "Nestor", "Otto", "Pablo", "Quentin", "Rafael", "Silas", "Tobias", "Vince", "Walter",
]
CUSTOMER_LAST_NAMES = [
    "Abernathy", "Bautista", "Castellano", "Dunmore", "Eriksen", "Fairbanks", "Galloway", "Hargrove", "Ishikawa",
    "Jablonski", "Kowalczyk", "Lindqvist", "Mancini", "Nakamura", "Okafor", "Pemberton", "Quintero", "Rasmussen",
    "Santoro", "Thornbury", "Underhill", "Valdivia", "Whitlock", "Yamada", "Zielinski", "Brennan", "Delacroix",
    "Ferreira", "Gallagher", "Holloway",
]
_MAIL_DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com"]
_STREETS = ["Forbes Ave", "Penn Ave", "Liberty Ave", "Walnut St", "Murray Ave", "Butler St", "Carson St",
            "Baum Blvd", "Ellsworth Ave", "Highland Ave", "Negley Ave", "Fifth Ave"]
# (city, state, zip prefix) of the towns the new customers live in (`world`'s cities).
_CITIES = [("Pittsburgh", "Pennsylvania", "152"), ("McKeesport", "Pennsylvania", "151"),
           ("Erie", "Pennsylvania", "165"), ("Harrisburg", "Pennsylvania", "171"),
           ("Philadelphia", "Pennsylvania", "191"), ("Buffalo", "New York", "142"), ("Cleveland", "Ohio", "441"),
           ("Morgantown", "West Virginia", "265")]

# Review text, assembled from parts: (stars -> titles), an opening, a remark about the product, a closing.
_REVIEW_TITLES = {
    5: ["Worth every penny", "Could not be happier", "Exceeded expectations", "A new favorite", "Superb"],
    4: ["Pretty great", "Nearly perfect", "Would recommend", "Good buy", "Solid choice"],
    3: ["Middle of the road", "Fine for now", "Some pros, some cons", "Okay overall"],
    2: ["Not for me", "Below expectations", "Meh", "Had issues"],
    1: ["Very unhappy", "Fell apart", "Avoid", "Sent it back"],
}
_OPENINGS = {
    5: ["Bought this on a whim and it turned out great.", "Second one I have ordered.", "Arrived two days early."],
    4: ["Took a chance on this one.", "Ordered after reading the reviews.", "Got it on sale."],
    3: ["Mixed experience here.", "Hard to say how I feel.", "It arrived on time."],
    2: ["Wanted to like this.", "The photos oversell it.", "Ordered two, kept none."],
    1: ["Really disappointed.", "Not what the listing shows.", "Returned within a week."],
}
_REMARKS = {
    5: ["The {noun} feels premium and the {feature} is a real plus.",
        "Everything about the {noun} is well thought out."],
    4: ["The {noun} does its job; {feature} as promised.", "Quality is good though the {noun} runs a bit large."],
    3: ["The {noun} is usable but the finish is rough.", "The {noun} is average; {feature} helps a little."],
    2: ["The {noun} started wearing out quickly.", "Sizing on the {noun} was way off."],
    1: ["The {noun} broke almost immediately.", "The seams of the {noun} split on day one."],
}
_CLOSINGS = ["", " Would buy again.", " Fast shipping too.", " Customer support was friendly.",
             " Five minutes to set up."]


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def search_words(conn: sqlite3.Connection) -> set[str]:
    """Words of the base catalog's product names and of the seeded search terms: no searchable new product may
    use one (in its name, description or department), or searches existing tasks run would find it."""
    words: set[str] = set()
    for (name,) in conn.execute("SELECT name FROM shop_products WHERE id <= ?", (shop_data.BASE_PRODUCTS,)):
        words |= _tokens(name)
    for query in shop_data.SEARCH_QUERIES:
        words |= _tokens(query)
    return words


def _options(rng: random.Random, sizes: str, colors: str) -> tuple[str, str]:
    if sizes == "S":
        start = rng.randint(0, 1)
        size_text = ",".join(_LETTERS[start:start + rng.randint(4, 5)])
    elif sizes == "W":
        start = rng.randint(0, 3)
        size_text = ",".join(_WAISTS[start:start + rng.randint(3, 5)])
    else:
        size_text = ""
    color_text = ",".join(rng.sample(_LUMA_COLORS, rng.randint(2, 4))) if colors else ""
    return size_text, color_text


def _price(rng: random.Random, base: float) -> float:
    return round(int(base * rng.uniform(0.75, 1.4)) + rng.choice([0.0, 0.99, 0.5, 0.99]), 2)


def _products(rng: random.Random) -> list[dict]:
    """Every new product (named ones first, then each department's generated ones), with ids assigned."""
    named = {name for _, name, *_ in NAMED_PRODUCTS}
    products = [{"id": pid, "name": name, "dept": dept, "leaf": leaf, "price": price, "sizes": sizes,
                 "colors": colors, "noun": name.rsplit(" ", 1)[-1], "feature": ""}
                for pid, name, dept, leaf, price, sizes, colors in NAMED_PRODUCTS]
    for dept in DEPARTMENTS:
        for noun, base, leaf, sizes, colors, count in dept.nouns:
            pairs = [(b, a) for b in dept.brands for a in dept.adjectives if f"{b} {a} {noun}" not in named]
            for brand, adjective in rng.sample(pairs, count):
                size_text, color_text = _options(rng, sizes, colors)
                products.append({"id": 0, "name": f"{brand} {adjective} {noun}", "dept": dept.slug, "leaf": leaf,
                                 "price": _price(rng, base), "sizes": size_text, "colors": color_text,
                                 "noun": noun, "feature": rng.choice(dept.features)})
    unnamed = iter(_UNNAMED_IDS)
    next_id = FIRST_GENERATED_ID
    for p in products:
        if p["id"]:
            continue
        if p["dept"] in ("women", "men") and p["name"] not in named:
            p["id"] = next(unnamed, 0)
        if not p["id"]:
            p["id"], next_id = next_id, next_id + 1
    return products


def _description(p: dict, dept: Department) -> str:
    if dept.in_menu:  # searchable: only the product's own words and its department's features
        return f"{p['name']}. {p['feature']}."
    feature = p["feature"] or dept.features[0]
    if p["sizes"]:
        return f"The {p['name']} is part of our {dept.name} collection. {feature}. Machine wash cold, tumble dry low."
    return f"The {p['name']}. {feature}."


def _seed_catalog(conn: sqlite3.Connection, rng: random.Random) -> list[dict]:
    by_slug = {d.slug: d for d in DEPARTMENTS}
    leaf_ids: dict[str, int] = {}
    top_ids: dict[str, int] = {}
    position = conn.execute("SELECT MAX(position) FROM shop_categories").fetchone()[0]
    sub_position = conn.execute("SELECT MAX(position) FROM shop_subcategories").fetchone()[0]
    for dept in DEPARTMENTS:
        position += 1
        top_ids[dept.slug] = conn.execute(
            "INSERT INTO shop_categories (name, slug, position, include_in_menu) VALUES (?, ?, ?, ?)",
            (dept.name, dept.slug, position, int(dept.in_menu))).lastrowid
        for path, name in dept.nodes:
            sub_position += 1
            parent = leaf_ids.get(f"{dept.slug}/{path.rpartition('/')[0]}") if "/" in path else None
            leaf_ids[f"{dept.slug}/{path}"] = conn.execute(
                "INSERT INTO shop_subcategories (category_id, parent_id, name, url_path, position) VALUES "
                "(?, ?, ?, ?, ?)", (top_ids[dept.slug], parent, name, f"{dept.slug}/{path}", sub_position)).lastrowid
    products = _products(rng)
    used = {r[0] for r in conn.execute("SELECT sku FROM shop_products")}
    for p in sorted(products, key=lambda p: p["id"]):
        dept = by_slug[p["dept"]]
        sku = slugify(p["name"]).upper().replace("-", "")[:12] + f"-{p['id']}"
        assert sku not in used, sku  # ids are unique, so SKUs are
        used.add(sku)
        qty = rng.choice([0] + [rng.randint(5, 300)] * 15)
        conn.execute(
            "INSERT INTO shop_products (id, sku, name, slug, price, description, category_id, sizes, colors, qty, "
            "enabled, position, stock_status, visibility) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
            (p["id"], sku, p["name"], slugify(p["name"]), p["price"], _description(p, dept), top_ids[dept.slug],
             p["sizes"], p["colors"], qty, p["id"], int(qty > 0), 4 if dept.in_menu else 2))
        conn.execute("INSERT INTO shop_subcategory_products (subcategory_id, product_id) VALUES (?, ?)",
                     (leaf_ids[f"{dept.slug}/{p['leaf']}"], p["id"]))
    return products


def _seed_customers(conn: sqlite3.Connection, rng: random.Random) -> list[tuple[int, str]]:
    names = rng.sample([(f, last) for f in CUSTOMER_FIRST_NAMES for last in CUSTOMER_LAST_NAMES], ENTITY_CUSTOMERS)
    out = []
    for first, last in names:
        email = f"{first.lower()}.{last.lower()}{rng.choice(['', '', str(rng.randint(1, 99))])}@" \
                f"{rng.choice(_MAIL_DOMAINS)}"
        since = dt.datetime(2022, 1, 1) + dt.timedelta(seconds=rng.randint(0, 700 * 86400))
        cid = conn.execute("INSERT INTO shop_customers (email, password_hash, firstname, lastname, created_at) "
                           "VALUES (?, ?, ?, ?, ?)", (email, hash_password(f"{first}.{last}!{rng.randint(100, 999)}"),
                                                      first, last, format_ts(since))).lastrowid
        city, state, zip_prefix = rng.choice(_CITIES)
        conn.execute("INSERT INTO shop_addresses (customer_id, firstname, lastname, street, city, region, postcode, "
                     "country, telephone, is_default) VALUES (?, ?, ?, ?, ?, ?, ?, 'United States', ?, 1)",
                     (cid, first, last, f"{rng.randint(10, 4999)} {rng.choice(_STREETS)}", city, state,
                      f"{zip_prefix}{rng.randint(1, 99):02d}", f"{rng.randint(201, 989)}555{rng.randint(1000, 9999)}"))
        out.append((cid, first))
    return out


def _seed_reviews(conn: sqlite3.Connection, rng: random.Random, products: list[dict],
                  customers: list[tuple[int, str]]) -> None:
    by_slug = {d.slug: d for d in DEPARTMENTS}
    rows = []
    for p in products:
        bias = rng.choice([5, 5, 4, 4, 3, 2])
        for customer_id, first in rng.sample(customers, rng.choice([0, 1, 2, 3, 4, 5, 6])):
            stars = max(1, min(5, bias + rng.choice([-2, -1, 0, 0, 0, 1])))
            feature = (p["feature"] or by_slug[p["dept"]].features[0]).lower()
            detail = (f"{rng.choice(_OPENINGS[stars])} "
                      f"{rng.choice(_REMARKS[stars]).format(noun=p['noun'].lower(), feature=feature)}"
                      f"{rng.choice(_CLOSINGS)}")
            when = _REVIEW_START + dt.timedelta(seconds=rng.randint(0, _REVIEW_SPAN_S))
            rows.append((p["id"], customer_id, f"{first} {rng.choice('ABCDEFGHJKLMNPRSTW')}.",
                         rng.choice(_REVIEW_TITLES[stars]), detail, stars * 20, format_ts(when)))
    rows.sort(key=lambda r: r[6])
    conn.executemany("INSERT INTO shop_reviews (product_id, customer_id, nickname, title, detail, rating_percent, "
                     "status, created_at) VALUES (?, ?, ?, ?, ?, ?, 'approved', ?)", rows)


def seed_entities(conn: sqlite3.Connection) -> None:
    """Insert the new departments, categories, products, customers and reviews after the base rows."""
    rng = random.Random(ENTITY_SEED)
    products = _seed_catalog(conn, rng)
    customers = _seed_customers(conn, rng)
    _seed_reviews(conn, rng, products, customers)
