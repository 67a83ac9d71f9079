"""Vocabulary the embedded shop's seed is drawn from: categories, product words, people, review text.

Owns only constant data; `seed` combines it with a fixed `random.Random` into the catalog,
customers, orders and reviews. Product names are `<brand> <adjective> <noun>`; every noun carries
its base price and the options (sizes, colours) its products offer.
"""
from __future__ import annotations

__all__ = ["CATEGORIES", "PRODUCTS_PER_NOUN", "BASE_PRODUCTS", "CATEGORY_TREE", "COLORS", "CUSTOMERS", "NICKNAMES",
           "REVIEW_TITLES", "REVIEW_DETAILS", "ADMIN", "CMS_PAGES", "SALES_RULES", "SEARCH_QUERIES"]

# (name, slug, brands, adjectives, [(noun, base price, sizes, colours?)]); sizes/colours: "" = none,
# "C" = pick colours from COLORS, "S" = clothing sizes, "N" = shoe sizes.
CATEGORIES: list[tuple[str, str, list[str], list[str], list[tuple[str, float, str, str]]]] = [
    ("Beauty & Personal Care", "beauty-personal-care",
     ["Lumiere", "Pure Bloom", "Velvet Leaf", "Aqua Vera", "Rosewood"],
     ["Hydrating", "Organic", "Gentle", "Revitalizing", "Daily", "Soothing"],
     [("Face Cream", 18.0, "", ""), ("Vitamin C Serum", 22.0, "", ""), ("Lip Balm Set", 9.0, "", ""),
      ("Hair Dryer", 45.0, "", "C"), ("Shampoo", 12.0, "", ""), ("Body Lotion", 11.0, "", ""),
      ("Nail Polish Kit", 16.0, "", ""), ("Makeup Brush Set", 24.0, "", "C"), ("Sunscreen SPF 50", 14.0, "", ""),
      ("Facial Cleanser", 13.0, "", "")]),
    ("Sports & Outdoors", "sports-outdoors",
     ["Trailpeak", "Summit Gear", "Iron Ridge", "Northwind", "Bluewater"],
     ["Lightweight", "Durable", "Foldable", "Waterproof", "Compact", "Pro"],
     [("Yoga Mat", 29.0, "", "C"), ("Camping Tent", 119.0, "", ""), ("Water Bottle", 19.0, "", "C"),
      ("Hiking Backpack", 69.0, "", "C"), ("Resistance Bands", 15.0, "", ""), ("Jump Rope", 11.0, "", "C"),
      ("Sleeping Bag", 59.0, "", ""), ("Trekking Poles", 39.0, "", ""), ("Dumbbell Set", 79.0, "", ""),
      ("Cycling Gloves", 21.0, "S", "C")]),
    ("Clothing, Shoes & Jewelry", "clothing-shoes-jewelry",
     ["Urban Thread", "Maple & Co", "Coastline", "Everwear", "Nordic Fox"],
     ["Classic", "Slim Fit", "Relaxed", "Vintage", "Essential", "Cozy"],
     [("Cotton T-Shirt", 17.0, "S", "C"), ("Pullover Hoodie", 39.0, "S", "C"), ("Running Shoes", 79.0, "N", "C"),
      ("Denim Jacket", 64.0, "S", "C"), ("Rain Jacket", 58.0, "S", "C"), ("Leggings", 26.0, "S", "C"),
      ("Canvas Sneakers", 49.0, "N", "C"), ("Wool Socks", 14.0, "S", "C"), ("Knit Sweater", 45.0, "S", "C"),
      ("Silver Pendant Necklace", 35.0, "", "")]),
    ("Home & Kitchen", "home-kitchen",
     ["Hearthstone", "Casa Verde", "Oak & Ember", "Kitchenly", "Willow Lane"],
     ["Ceramic", "Stainless Steel", "Modern", "Rustic", "Premium", "Nonstick"],
     [("Coffee Mug", 12.0, "", "C"), ("Chef Knife", 39.0, "", ""), ("Cast Iron Skillet", 34.0, "", ""),
      ("Throw Pillow", 19.0, "", "C"), ("Bath Towel Set", 32.0, "", "C"), ("Cutting Board", 22.0, "", ""),
      ("French Press", 27.0, "", ""), ("Table Lamp", 44.0, "", "C"), ("Storage Basket", 18.0, "", ""),
      ("Countertop Blender", 69.0, "", "")]),
    ("Electronics", "electronics",
     ["Voltix", "Sonara", "Pixelon", "Nexbridge", "Auralink"],
     ["Wireless", "Portable", "Smart", "Ultra Slim", "Rechargeable", "High Speed"],
     [("Earbuds", 49.0, "", "C"), ("Bluetooth Speaker", 39.0, "", "C"), ("USB-C Charger", 19.0, "", ""),
      ("HDMI Cable", 9.0, "", ""), ("Portable SSD 1TB", 89.0, "", ""), ("HD Webcam", 42.0, "", ""),
      ("Smart Plug", 15.0, "", ""), ("Power Bank", 29.0, "", "C"), ("Optical Mouse", 18.0, "", "C"),
      ("Mechanical Keyboard", 74.0, "", "")]),
    ("Office Products", "office-products",
     ["Papermint", "Deskwise", "Inkwell", "Officio", "Brightline"],
     ["Refillable", "Heavy Duty", "Colorful", "Ergonomic", "Recycled", "Executive"],
     [("Gel Pens", 8.0, "", ""), ("Spiral Notebook", 7.0, "", "C"), ("Desk Organizer", 21.0, "", ""),
      ("Stapler", 13.0, "", "C"), ("Sticky Notes", 6.0, "", ""), ("Dry Erase Whiteboard", 36.0, "", ""),
      ("Paper Shredder", 58.0, "", ""), ("File Folders", 11.0, "", ""), ("Label Maker", 32.0, "", ""),
      ("Desk Pad", 17.0, "", "C")]),
    ("Grocery & Gourmet Food", "grocery-gourmet-food",
     ["Golden Harvest", "Farmstead", "Bella Terra", "Wild Meadow", "Sunnyvale"],
     ["Organic", "Roasted", "Gourmet", "Natural", "Artisan", "Family Size"],
     [("Dark Chocolate Bar", 4.0, "", ""), ("Green Tea", 7.0, "", ""), ("Ground Coffee", 12.0, "", ""),
      ("Almond Butter", 9.0, "", ""), ("Olive Oil", 15.0, "", ""), ("Granola", 6.0, "", ""),
      ("Wildflower Honey", 11.0, "", ""), ("Pasta Sauce", 5.0, "", ""), ("Trail Mix", 8.0, "", ""),
      ("Maple Syrup", 13.0, "", "")]),
    ("Health & Household", "health-household",
     ["CareWell", "Freshly", "Vitacore", "Homestead", "Clearwave"],
     ["Daily", "Unscented", "Extra Strength", "Eco", "Family Pack", "Travel"],
     [("Multivitamin", 16.0, "", ""), ("Hand Sanitizer", 5.0, "", ""), ("Laundry Detergent", 14.0, "", ""),
      ("Paper Towels", 19.0, "", ""), ("Dish Soap", 4.0, "", ""), ("First Aid Kit", 24.0, "", ""),
      ("Digital Thermometer", 12.0, "", ""), ("Trash Bags", 13.0, "", ""), ("Air Freshener", 6.0, "", ""),
      ("Disinfecting Wipes", 8.0, "", "")]),
    ("Video Games", "video-games",
     ["GameForge", "Pixel Rush", "Hyperplay", "Questline", "Arcadia"],
     ["Wireless", "Pro", "Compact", "RGB", "Ergonomic", "Deluxe"],
     [("Controller", 54.0, "", "C"), ("Gaming Headset", 59.0, "", "C"), ("Charging Dock", 24.0, "", ""),
      ("Racing Wheel", 149.0, "", ""), ("Mouse Pad", 14.0, "", ""), ("Memory Card", 22.0, "", ""),
      ("Carrying Case", 19.0, "", "C"), ("Thumb Grips", 7.0, "", ""), ("Cooling Fan", 26.0, "", ""),
      ("Console Stand", 29.0, "", "")]),
    ("Patio, Lawn & Garden", "patio-lawn-garden",
     ["GreenThumb", "Backyard Co", "Terra Firma", "Bloomfield", "Sunpatch"],
     ["Expandable", "Weatherproof", "Solar", "Heavy Duty", "Decorative", "Outdoor"],
     [("Garden Hose", 34.0, "", ""), ("Pruning Shears", 18.0, "", ""), ("Bird Feeder", 23.0, "", ""),
      ("Planter Pot", 16.0, "", "C"), ("Path Lights", 29.0, "", ""), ("Patio Umbrella", 79.0, "", "C"),
      ("Watering Can", 15.0, "", "C"), ("Garden Gloves", 9.0, "S", ""), ("Rope Hammock", 49.0, "", ""),
      ("Compost Bin", 44.0, "", "")]),
]

PRODUCTS_PER_NOUN = 2  # brand/adjective pairs the seed draws for each noun
BASE_PRODUCTS = PRODUCTS_PER_NOUN * sum(len(nouns) for *_, nouns in CATEGORIES)  # the base catalog's ids: 1..200

# Magento's category tree under each top category (by slug): the sub-categories as (url path below the top
# category, name), parents before children, and where each noun's products sit: noun -> leaf path(s); with two
# paths, a noun's first product goes to the first path and its second to the second.
CATEGORY_TREE: dict[str, tuple[list[tuple[str, str]], dict[str, tuple[str, ...]]]] = {
    "beauty-personal-care": (
        [("skin-care", "Skin Care"), ("makeup", "Makeup"), ("makeup/lips", "Lips"), ("makeup/nails", "Nails"),
         ("hair-care", "Hair Care"), ("tools-accessories", "Tools & Accessories")],
        {"Face Cream": ("skin-care",), "Vitamin C Serum": ("skin-care",), "Body Lotion": ("skin-care",),
         "Sunscreen SPF 50": ("skin-care",), "Facial Cleanser": ("skin-care",), "Lip Balm Set": ("makeup/lips",),
         "Nail Polish Kit": ("makeup/nails",), "Shampoo": ("hair-care",), "Hair Dryer": ("hair-care",),
         "Makeup Brush Set": ("tools-accessories",)}),
    "sports-outdoors": (
        [("exercise-fitness", "Exercise & Fitness"), ("outdoor-recreation", "Outdoor Recreation"),
         ("outdoor-recreation/camping-hiking", "Camping & Hiking"), ("outdoor-recreation/cycling", "Cycling")],
        {"Yoga Mat": ("exercise-fitness",), "Resistance Bands": ("exercise-fitness",),
         "Jump Rope": ("exercise-fitness",), "Dumbbell Set": ("exercise-fitness",),
         "Camping Tent": ("outdoor-recreation/camping-hiking",), "Water Bottle": ("outdoor-recreation/camping-hiking",),
         "Hiking Backpack": ("outdoor-recreation/camping-hiking",),
         "Sleeping Bag": ("outdoor-recreation/camping-hiking",),
         "Trekking Poles": ("outdoor-recreation/camping-hiking",), "Cycling Gloves": ("outdoor-recreation/cycling",)}),
    "clothing-shoes-jewelry": (
        [("women", "Women"), ("women/clothing", "Clothing"), ("women/shoes", "Shoes"), ("women/jewelry", "Jewelry"),
         ("men", "Men"), ("men/clothing", "Clothing"), ("men/shoes", "Shoes")],
        {"Cotton T-Shirt": ("men/clothing", "women/clothing"), "Pullover Hoodie": ("men/clothing", "women/clothing"),
         "Running Shoes": ("men/shoes", "women/shoes"), "Denim Jacket": ("men/clothing", "women/clothing"),
         "Rain Jacket": ("women/clothing", "men/clothing"), "Leggings": ("women/clothing",),
         "Canvas Sneakers": ("women/shoes", "men/shoes"), "Wool Socks": ("men/clothing", "women/clothing"),
         "Knit Sweater": ("women/clothing", "men/clothing"), "Silver Pendant Necklace": ("women/jewelry",)}),
    "home-kitchen": (
        [("kitchen-dining", "Kitchen & Dining"), ("kitchen-dining/coffee-tea-espresso", "Coffee, Tea & Espresso"),
         ("kitchen-dining/cookware", "Cookware"), ("kitchen-dining/cutlery-knife-accessories",
                                                    "Cutlery & Knife Accessories"),
         ("kitchen-dining/small-appliances", "Small Appliances"), ("bath", "Bath"), ("home-decor", "Home Decor"),
         ("lighting-ceiling-fans", "Lighting & Ceiling Fans"), ("storage-organization", "Storage & Organization")],
        {"Coffee Mug": ("kitchen-dining/coffee-tea-espresso",), "French Press": ("kitchen-dining/coffee-tea-espresso",),
         "Cast Iron Skillet": ("kitchen-dining/cookware",), "Chef Knife": ("kitchen-dining/cutlery-knife-accessories",),
         "Cutting Board": ("kitchen-dining/cutlery-knife-accessories",),
         "Countertop Blender": ("kitchen-dining/small-appliances",), "Bath Towel Set": ("bath",),
         "Throw Pillow": ("home-decor",), "Table Lamp": ("lighting-ceiling-fans",),
         "Storage Basket": ("storage-organization",)}),
    "electronics": (
        [("headphones", "Headphones"), ("portable-audio-video", "Portable Audio & Video"),
         ("cell-phones-accessories", "Cell Phones & Accessories"), ("computers-accessories", "Computers & Accessories"),
         ("computers-accessories/computer-accessories-peripherals", "Computer Accessories & Peripherals"),
         ("computers-accessories/data-storage", "Data Storage"), ("smart-home", "Smart Home")],
        {"Earbuds": ("headphones",), "Bluetooth Speaker": ("portable-audio-video",),
         "USB-C Charger": ("cell-phones-accessories",), "Power Bank": ("cell-phones-accessories",),
         "HDMI Cable": ("computers-accessories/computer-accessories-peripherals",),
         "HD Webcam": ("computers-accessories/computer-accessories-peripherals",),
         "Optical Mouse": ("computers-accessories/computer-accessories-peripherals",),
         "Mechanical Keyboard": ("computers-accessories/computer-accessories-peripherals",),
         "Portable SSD 1TB": ("computers-accessories/data-storage",), "Smart Plug": ("smart-home",)}),
    "office-products": (
        [("office-school-supplies", "Office & School Supplies"),
         ("office-school-supplies/writing-correction-supplies", "Writing & Correction Supplies"),
         ("office-school-supplies/paper", "Paper"),
         ("office-school-supplies/desk-accessories-workspace-organizers", "Desk Accessories & Workspace Organizers"),
         ("office-school-supplies/presentation-boards", "Presentation Boards"),
         ("office-electronics", "Office Electronics")],
        {"Gel Pens": ("office-school-supplies/writing-correction-supplies",),
         "Spiral Notebook": ("office-school-supplies/paper",), "Sticky Notes": ("office-school-supplies/paper",),
         "Desk Organizer": ("office-school-supplies/desk-accessories-workspace-organizers",),
         "Stapler": ("office-school-supplies/desk-accessories-workspace-organizers",),
         "File Folders": ("office-school-supplies/desk-accessories-workspace-organizers",),
         "Desk Pad": ("office-school-supplies/desk-accessories-workspace-organizers",),
         "Dry Erase Whiteboard": ("office-school-supplies/presentation-boards",),
         "Paper Shredder": ("office-electronics",), "Label Maker": ("office-electronics",)}),
    "grocery-gourmet-food": (
        [("beverages", "Beverages"), ("breakfast-foods", "Breakfast Foods"), ("candy-chocolate", "Candy & Chocolate"),
         ("cooking-baking", "Cooking & Baking"), ("sauces-gravies-marinades", "Sauces, Gravies & Marinades"),
         ("snacks-sweets", "Snacks and Sweets")],
        {"Green Tea": ("beverages",), "Ground Coffee": ("beverages",), "Granola": ("breakfast-foods",),
         "Maple Syrup": ("breakfast-foods",), "Almond Butter": ("breakfast-foods",),
         "Dark Chocolate Bar": ("candy-chocolate",), "Olive Oil": ("cooking-baking",),
         "Wildflower Honey": ("cooking-baking",), "Pasta Sauce": ("sauces-gravies-marinades",),
         "Trail Mix": ("snacks-sweets",)}),
    "health-household": (
        [("vitamins-dietary-supplements", "Vitamins & Dietary Supplements"),
         ("household-supplies", "Household Supplies"),
         ("household-supplies/laundry", "Laundry"), ("household-supplies/dishwashing", "Dishwashing"),
         ("household-supplies/paper-plastic", "Paper & Plastic"),
         ("household-supplies/household-cleaning", "Household Cleaning"), ("health-care", "Health Care")],
        {"Multivitamin": ("vitamins-dietary-supplements",), "Laundry Detergent": ("household-supplies/laundry",),
         "Dish Soap": ("household-supplies/dishwashing",), "Paper Towels": ("household-supplies/paper-plastic",),
         "Trash Bags": ("household-supplies/paper-plastic",),
         "Disinfecting Wipes": ("household-supplies/household-cleaning",),
         "Air Freshener": ("household-supplies/household-cleaning",), "Hand Sanitizer": ("health-care",),
         "First Aid Kit": ("health-care",), "Digital Thermometer": ("health-care",)}),
    "video-games": (
        [("playstation-4", "PlayStation 4"), ("playstation-4/accessories", "Accessories"), ("xbox-one", "Xbox One"),
         ("xbox-one/accessories", "Accessories"), ("nintendo-switch", "Nintendo Switch"),
         ("nintendo-switch/accessories", "Accessories"), ("pc", "PC"), ("pc/accessories", "Accessories")],
        {"Controller": ("playstation-4/accessories", "xbox-one/accessories"),
         "Gaming Headset": ("playstation-4/accessories", "pc/accessories"),
         "Charging Dock": ("playstation-4/accessories", "xbox-one/accessories"),
         "Racing Wheel": ("playstation-4/accessories", "pc/accessories"), "Mouse Pad": ("pc/accessories",),
         "Memory Card": ("nintendo-switch/accessories",), "Carrying Case": ("nintendo-switch/accessories",),
         "Thumb Grips": ("playstation-4/accessories", "nintendo-switch/accessories"),
         "Cooling Fan": ("playstation-4/accessories", "xbox-one/accessories"),
         "Console Stand": ("xbox-one/accessories", "playstation-4/accessories")}),
    "patio-lawn-garden": (
        [("gardening-lawn-care", "Gardening & Lawn Care"), ("birding-wildlife", "Birding & Wildlife"),
         ("outdoor-decor", "Outdoor Decor"), ("patio-furniture-accessories", "Patio Furniture & Accessories")],
        {"Garden Hose": ("gardening-lawn-care",), "Pruning Shears": ("gardening-lawn-care",),
         "Planter Pot": ("gardening-lawn-care",), "Watering Can": ("gardening-lawn-care",),
         "Garden Gloves": ("gardening-lawn-care",), "Compost Bin": ("gardening-lawn-care",),
         "Bird Feeder": ("birding-wildlife",), "Path Lights": ("outdoor-decor",),
         "Patio Umbrella": ("patio-furniture-accessories",), "Rope Hammock": ("patio-furniture-accessories",)}),
}

COLORS = ["Black", "White", "Blue", "Red", "Green", "Gray", "Pink", "Navy", "Beige", "Purple"]
CLOTHING_SIZES = ["XS", "S", "M", "L", "XL"]
SHOE_SIZES = ["6", "7", "8", "9", "10", "11"]

# (first, last, email, street, city, region, postcode, phone); the first is WebArena's shopping account.
CUSTOMERS: list[tuple[str, str, str, str, str, str, str, str]] = [
    ("Emma", "Lopez", "emma.lopez@gmail.com", "101 S San Mateo Dr", "San Mateo", "California", "94010", "6505551212"),
    ("Alex", "Martin", "alex.martin@yahoo.com", "42 Elm Street", "Springfield", "Illinois", "62704", "2175550143"),
    ("Grace", "Nguyen", "grace.nguyen@gmail.com", "780 Pine Ave", "Seattle", "Washington", "98101", "2065550177"),
    ("Olivia", "Jackson", "olivia.jackson@outlook.com", "15 Harbor Rd", "Boston", "Massachusetts", "02110",
     "6175550190"),
    ("Daniel", "Kim", "daniel.kim@gmail.com", "2300 Lakeshore Blvd", "Chicago", "Illinois", "60614", "3125550121"),
    ("Sophia", "Young", "sophia.young@hotmail.com", "9 Maple Court", "Austin", "Texas", "78701", "5125550165"),
    ("Liam", "Patel", "liam.patel@gmail.com", "501 Sunset Ave", "Phoenix", "Arizona", "85004", "6025550134"),
    ("Ava", "Thompson", "ava.thompson@yahoo.com", "77 Ocean Dr", "Miami", "Florida", "33139", "3055550112"),
    ("Noah", "Garcia", "noah.garcia@gmail.com", "1200 Mission St", "San Francisco", "California", "94103",
     "4155550188"),
    ("Mia", "Robinson", "mia.robinson@outlook.com", "36 Birch Lane", "Denver", "Colorado", "80202", "3035550156"),
    ("Ethan", "Clark", "ethan.clark@gmail.com", "845 Peachtree St", "Atlanta", "Georgia", "30308", "4045550109"),
    ("Isabella", "Lewis", "isabella.lewis@yahoo.com", "18 Willow Way", "Portland", "Oregon", "97205", "5035550172"),
    ("Lucas", "Walker", "lucas.walker@gmail.com", "600 Congress Ave", "Nashville", "Tennessee", "37203", "6155550147"),
    ("Chloe", "Hall", "chloe.hall@hotmail.com", "24 Cedar St", "Minneapolis", "Minnesota", "55401", "6125550138"),
    ("James", "Allen", "james.allen@gmail.com", "410 Broadway", "New York", "New York", "10013", "2125550199"),
    ("Harper", "Wright", "harper.wright@outlook.com", "95 River Rd", "Columbus", "Ohio", "43215", "6145550126"),
    ("Benjamin", "Scott", "ben.scott@gmail.com", "3100 Main St", "Dallas", "Texas", "75226", "2145550183"),
    ("Ella", "Green", "ella.green@yahoo.com", "58 Spruce Ave", "Salt Lake City", "Utah", "84101", "8015550161"),
    ("Henry", "Adams", "henry.adams@gmail.com", "701 Pike St", "Pittsburgh", "Pennsylvania", "15222", "4125550115"),
    ("Zoe", "Baker", "zoe.baker@hotmail.com", "12 Magnolia Dr", "Charlotte", "North Carolina", "28202", "7045550150"),
]

# Review authors who are not customers (Magento lets guests review under any nickname).
NICKNAMES = [
    "Jessica", "Mike R.", "Sarah K", "happyshopper", "Tom", "Linda M.", "Chris", "bargainhunter", "Priya",
    "Kevin", "Rachel", "DIYdad", "Megan", "Carlos", "Jen", "Brian T.", "Amanda", "techie42", "Natalie",
    "Greg", "Monica", "Steve", "Hannah", "Victor", "Laura B.", "Omar", "Tina", "Frank", "Yuki", "Diana",
]

REVIEW_TITLES: dict[int, list[str]] = {
    5: ["Love it!", "Excellent quality", "Exactly what I needed", "Highly recommend", "Best purchase this year",
        "Five stars", "Perfect gift"],
    4: ["Very good", "Solid purchase", "Good value for the money", "Works well", "Happy with it", "Nice product"],
    3: ["It is okay", "Average", "Decent but not great", "Does the job", "Mixed feelings"],
    2: ["Disappointed", "Not as described", "Could be better", "Cheap feel", "Expected more"],
    1: ["Terrible", "Broke after a week", "Waste of money", "Do not buy", "Returned it"],
}

# {noun} is the product noun in lower case.
REVIEW_DETAILS: dict[int, list[str]] = {
    5: ["This {noun} is fantastic. It arrived quickly and works exactly as described.",
        "I bought this {noun} for my sister and she loves it. Great quality for the price.",
        "Best {noun} I have owned. Sturdy, well made and looks great.",
        "I would buy this {noun} again in a heartbeat. Highly recommended to everyone."],
    4: ["Good {noun} overall. Shipping took a little longer than expected.",
        "The {noun} works well, although the packaging was a bit damaged.",
        "Nice {noun} for everyday use. I took off one star because of the color."],
    3: ["The {noun} is fine but nothing special. It does what it says.",
        "Average {noun}. Quality is acceptable for the price but I expected a bit more.",
        "It is an okay {noun}. The instructions were confusing."],
    2: ["The {noun} stopped working properly after a month. Not impressed.",
        "This {noun} feels cheap and the finish started peeling quickly.",
        "Smaller than the pictures suggest. The {noun} is usable but disappointing."],
    1: ["The {noun} broke the first time I used it. Customer service did not help.",
        "Complete waste of money. The {noun} arrived damaged and I had to return it.",
        "Do not buy this {noun}. It looks nothing like the description."],
}

# The shop's back-office account (WebArena's shopping_admin / shopping_site_admin).
ADMIN = {"username": "admin", "password": "admin1234", "firstname": "Store", "lastname": "Admin",
         "email": "admin@onestopmarket.com"}

# Content pages (Magento's CMS pages, with Magento's page ids): (title, URL key, content heading, content, active).
CMS_PAGES = [
    ("404 Not Found", "no-route", "Whoops, our bad...",
     "The page you requested was not found, and we have a fine guess why. If you typed the URL directly, please "
     "make sure the spelling is correct.", 1),
    ("Home Page", "home", "", "Welcome to One Stop Market: beauty, sports, clothing, home, electronics, office, "
     "grocery, health, video game and garden products from hundreds of brands.", 1),
    ("Enable Cookies", "enable-cookies", "What are Cookies?",
     "Cookies are short pieces of data that are sent to your computer when you visit a website. Please enable "
     "cookies in your web browser to continue.", 1),
    ("Privacy and Cookie Policy", "privacy-policy-cookie-restriction-mode", "Privacy and Cookie Policy",
     "This privacy policy sets out how One Stop Market uses and protects any information that you give us when "
     "you use this website.", 1),
    ("About us", "about-us", "About us", "One Stop Market ships across the United States from our warehouse in "
     "Pittsburgh, Pennsylvania.", 1),
    ("Customer Service", "customer-service", "Customer Service",
     "Questions about an order, a return or a product? Our team answers within one business day.", 1),
]

# Cart price rules: (name, description, active, coupon code, action, amount, customer group ids).
SALES_RULES = [
    ("20% OFF Every $200-plus purchase!", "Shopping cart price rule for the spring sale.", 1, "", "by_percent", 20.0,
     "0,1,2,3"),
    ("Spend $50 or more - shipping is free!", "Free shipping on orders over $50.", 1, "", "by_fixed", 0.0, "0,1,2,3"),
    ("$4 off the water bottles", "Coupon for the sports category.", 0, "H20", "by_fixed", 4.0, "1"),
    ("Buy 3 tee shirts and pay for 2", "Buy X get Y on clothing.", 1, "", "buy_x_get_y", 1.0, "0,1,2,3"),
]

# What storefront visitors typed into the search box (Marketing > Search Terms): product words and brands, a few
# things the store does not sell. The seed draws how often each was searched.
SEARCH_QUERIES = [
    "yoga mat", "earbuds", "hoodie", "coffee mug", "running shoes", "voltix", "trailpeak", "water bottle",
    "sunscreen", "keyboard", "blender", "notebook", "camping tent", "sneakers", "face cream", "gel pens",
    "hdmi cable", "dumbbell", "rain jacket", "power bank", "throw pillow", "skillet", "leggings", "webcam",
    "lip balm", "smart plug", "backpack", "sonara", "urban thread", "air fryer", "kayak", "espresso machine",
    "drone", "standing desk",
]
