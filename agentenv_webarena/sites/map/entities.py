"""WebArena's named places on the embedded map: the chain branches and landmarks its map tasks name.

Owns `PLACES` (Starbucks, Dunkin', CVS Pharmacy, Walgreens, Target, Costco, Trader Joe's, Whole Foods
Market, Apple Store branches; Carnegie Mellon's and Pitt's buildings, the airport hotels, New York's,
Philadelphia's and Boston's arenas and landmarks), at their real approximate coordinates (names,
addresses and years are facts; every description is ours), and the map-wide lookups over
`sites.world`'s places and these (`all_places`, `place_by_id`, `place_by_slug`, `branches`).

They are kept off `sites.world` on purpose: the world's places are what the task templates, the wiki and
the road graph's streets are built from, so a new place there would move existing routes and answers.
Here they are map-only: `roads` links each to the nodes around it as a terminal, which a route may
start or end at but never pass through (so no other route moves), `search` finds them by name and as brands
("Starbucks near Carnegie Mellon University"), while category listings ("cafes near X", "pharmacies in
Z") and town pages keep listing the world's places. Only places in the world's towns are here (MIT and
Harvard in Cambridge, Yale in New Haven, ... are not). Pure data; ids in ranges of their own.
"""
from __future__ import annotations

import functools
from typing import Optional

from agentenv_webarena.sites import world

__all__ = ["PLACES", "CATEGORY_LABELS", "WEBSITES", "all_places", "place_by_id", "place_by_slug", "branches"]

# Categories only these places have (the world's categories are labelled by `search.CATEGORY_LABELS`).
CATEGORY_LABELS = {"department_store": "Department store", "wholesale": "Wholesale club",
                   "electronics": "Electronics store", "outdoor": "Outdoor shop", "fast_food": "Fast food",
                   "bar": "Bar", "parking": "Parking"}
# A brand's website (the `website` tag its branches carry).
WEBSITES = {"Starbucks": "https://www.starbucks.com", "Dunkin'": "https://www.dunkindonuts.com",
            "CVS Pharmacy": "https://www.cvs.com", "Walgreens": "https://www.walgreens.com",
            "Target": "https://www.target.com", "Costco": "https://www.costco.com",
            "Trader Joe's": "https://www.traderjoes.com", "Whole Foods Market": "https://www.wholefoodsmarket.com",
            "Apple": "https://www.apple.com/retail", "REI": "https://www.rei.com", "Five Guys": "https://www.fiveguys.com",
            "ALDI": "https://www.aldi.us"}

# Postcodes that differ from the town's (`world.postcode`), by name (none of them a chain).
_POSTCODES = {"Wells Fargo Center": "19148", "Yankee Stadium": "10451", "Madison Square Garden": "10001",
              "Carnegie Hall": "10019", "Keens Steakhouse": "10018", "DoubleTree by Hilton New York Downtown": "10004",
              "TD Garden": "02114", "Boston Logan International Airport": "02128"}
_NODE_BASE, _WAY_BASE = 3_600_000_000, 44_000_000  # clear of the world's ranges (`world._osm_id`)

# osm type, name, category, town, street, lat, lon, opened, description, capacity, architect, operator (brand)
_ROWS: tuple[tuple, ...] = (
    # Coffee
    ("node", "Starbucks", "cafe", "Oakland", "417 South Craig Street", 40.44575, -79.94893, 2004,
     "A Starbucks coffee shop on Craig Street, a short walk from Carnegie Mellon.", None, "", "Starbucks"),
    ("node", "Starbucks", "cafe", "Oakland", "3618 Forbes Avenue", 40.44128, -79.95742, 2008,
     "A Starbucks coffee shop on Forbes Avenue near the University of Pittsburgh.", None, "", "Starbucks"),
    ("node", "Starbucks", "cafe", "Shadyside", "5509 Walnut Street", 40.45165, -79.93392, 1999,
     "A Starbucks coffee shop among the shops of Walnut Street.", None, "", "Starbucks"),
    ("node", "Starbucks", "cafe", "Downtown", "301 Fifth Avenue", 40.44035, -79.99882, 2002,
     "A Starbucks coffee shop in the Golden Triangle's shopping streets.", None, "", "Starbucks"),
    ("node", "Starbucks", "cafe", "Squirrel Hill", "5841 Forbes Avenue", 40.43790, -79.92310, 2001,
     "A Starbucks coffee shop at the corner of Forbes and Murray.", None, "", "Starbucks"),
    ("node", "Starbucks", "cafe", "South Side", "2717 East Carson Street", 40.42745, -79.96630, 2005,
     "A Starbucks coffee shop at SouthSide Works.", None, "", "Starbucks"),
    ("node", "Starbucks", "cafe", "Strip District", "1810 Smallman Street", 40.45120, -79.98260, 2014,
     "A Starbucks coffee shop in a converted warehouse of the Strip.", None, "", "Starbucks"),
    ("node", "Dunkin'", "cafe", "Oakland", "3710 Forbes Avenue", 40.44112, -79.95660, 2010,
     "A Dunkin' doughnut and coffee shop on Forbes Avenue.", None, "", "Dunkin'"),
    ("node", "Dunkin'", "cafe", "Downtown", "600 Liberty Avenue", 40.44245, -79.99910, 2012,
     "A Dunkin' doughnut and coffee shop for downtown commuters.", None, "", "Dunkin'"),
    ("node", "Dunkin'", "cafe", "Monroeville", "3790 William Penn Highway", 40.42610, -79.77420, 2006,
     "A Dunkin' with a drive-through on William Penn Highway.", None, "", "Dunkin'"),
    ("node", "Dunkin'", "cafe", "Mount Lebanon", "720 Washington Road", 40.37330, -80.05180, 2009,
     "A Dunkin' doughnut and coffee shop in Uptown Mount Lebanon.", None, "", "Dunkin'"),
    ("node", "Fuku Tea", "cafe", "Oakland", "3716 Forbes Avenue", 40.44105, -79.95628, 2014,
     "A bubble tea shop on Forbes Avenue.", None, "", ""),
    # Pharmacies
    ("node", "CVS Pharmacy", "pharmacy", "Oakland", "4610 Centre Avenue", 40.45255, -79.94840, 2003,
     "A CVS drugstore and pharmacy on Centre Avenue, between Oakland and Shadyside.", None, "", "CVS Pharmacy"),
    ("node", "CVS Pharmacy", "pharmacy", "Downtown", "534 Smithfield Street", 40.44000, -79.99790, 1998,
     "A CVS drugstore and pharmacy on Smithfield Street.", None, "", "CVS Pharmacy"),
    ("node", "CVS Pharmacy", "pharmacy", "Squirrel Hill", "2028 Murray Avenue", 40.43080, -79.92330, 2000,
     "A CVS drugstore and pharmacy on Murray Avenue.", None, "", "CVS Pharmacy"),
    ("node", "CVS Pharmacy", "pharmacy", "Mount Lebanon", "1651 Washington Road", 40.36540, -80.05760, 2001,
     "A CVS drugstore and pharmacy with a drive-through.", None, "", "CVS Pharmacy"),
    ("node", "CVS Pharmacy", "pharmacy", "Monroeville", "4080 William Penn Highway", 40.42880, -79.76950, 2002,
     "A CVS drugstore and pharmacy near the Monroeville shops.", None, "", "CVS Pharmacy"),
    ("node", "Walgreens", "pharmacy", "East Liberty", "5956 Centre Avenue", 40.45905, -79.92830, 2011,
     "A Walgreens drugstore and pharmacy on Centre Avenue.", None, "", "Walgreens"),
    ("node", "Walgreens", "pharmacy", "Bethel Park", "5175 Library Road", 40.32690, -80.03610, 2007,
     "A Walgreens drugstore with a drive-through pharmacy.", None, "", "Walgreens"),
    ("node", "Walgreens", "pharmacy", "Cranberry Township", "20245 Route 19", 40.69060, -80.10640, 2008,
     "A Walgreens drugstore on Route 19.", None, "", "Walgreens"),
    ("node", "Walgreens", "pharmacy", "McKeesport", "2001 Lincoln Way", 40.33890, -79.85160, 2005,
     "A Walgreens drugstore and pharmacy.", None, "", "Walgreens"),
    ("node", "Schiller's Pharmacy", "pharmacy", "Shadyside", "811 South Aiken Avenue", 40.45100, -79.93715, 1952,
     "An independent neighbourhood pharmacy on South Aiken Avenue.", None, "", ""),
    # Shops
    ("way", "Target", "department_store", "East Liberty", "6231 Penn Avenue", 40.46155, -79.92380, 2011,
     "A two-storey Target department store on Penn Avenue.", None, "", "Target"),
    ("way", "Target", "department_store", "Monroeville", "3960 William Penn Highway", 40.42960, -79.76620, 1996,
     "A Target department store beside the William Penn Highway shops.", None, "", "Target"),
    ("way", "Target", "department_store", "Cranberry Township", "1717 Route 228", 40.68310, -80.09180, 2003,
     "A Target department store at the Cranberry Mall.", None, "", "Target"),
    ("way", "Costco", "wholesale", "Homestead", "501 West Waterfront Drive", 40.40720, -79.92480, 2000,
     "A Costco warehouse club at the Waterfront, by the Monongahela.", None, "", "Costco"),
    ("way", "Costco", "wholesale", "Cranberry Township", "20255 Route 19", 40.69540, -80.10310, 2006,
     "A Costco warehouse club on Route 19.", None, "", "Costco"),
    ("node", "Trader Joe's", "supermarket", "East Liberty", "6343 Penn Avenue", 40.45985, -79.91955, 2002,
     "A Trader Joe's grocery store on Penn Avenue.", None, "", "Trader Joe's"),
    ("node", "Trader Joe's", "supermarket", "Mount Lebanon", "1600 Washington Road", 40.36700, -80.05690, 2004,
     "A Trader Joe's grocery store on Washington Road.", None, "", "Trader Joe's"),
    ("node", "Whole Foods Market", "supermarket", "East Liberty", "5700 Penn Avenue", 40.46060, -79.92890, 2002,
     "A Whole Foods Market grocery store, owned by Amazon since 2017.", None, "", "Whole Foods Market"),
    ("node", "ALDI", "supermarket", "Moon Township", "9125 University Boulevard", 40.51540, -80.21290, 2012,
     "An ALDI discount grocery store.", None, "", "ALDI"),
    ("node", "Tokyo Japanese Food Store", "supermarket", "Shadyside", "5855 Ellsworth Avenue", 40.45720,
     -79.92935, 1982, "A small Japanese grocery store selling fresh fish and imported goods.", None, "", ""),
    ("node", "Apple Store", "electronics", "Shadyside", "5508 Walnut Street", 40.45130, -79.93320, 2011,
     "Apple's store on Walnut Street, in a former bank building.", None, "", "Apple"),
    ("node", "Apple Store", "electronics", "Boston", "815 Boylston Street", 42.34920, -71.08180, 2008,
     "Apple's glass-fronted store on Boylston Street.", None, "", "Apple"),
    ("node", "Apple Store", "electronics", "New York", "767 Fifth Avenue", 40.76370, -73.97290, 2006,
     "Apple's store under a glass cube on Fifth Avenue, open around the clock.", None, "Bohlin Cywinski Jackson",
     "Apple"),
    ("node", "REI", "outdoor", "South Side", "412 South 27th Street", 40.42715, -79.96560, 2002,
     "An outdoor equipment co-op store at SouthSide Works.", None, "", "REI"),
    ("node", "Five Guys", "fast_food", "Oakland", "117 South Bouquet Street", 40.44235, -79.95665, 2009,
     "A Five Guys burger and fries restaurant.", None, "", "Five Guys"),
    ("node", "Piada Italian Street Food", "restaurant", "Oakland", "3600 Forbes Avenue", 40.44085, -79.95925,
     2016, "A fast-casual Italian restaurant of wraps, pasta and salads.", None, "", "Piada"),
    ("node", "Peter's Pub", "bar", "Oakland", "116 Oakland Avenue", 40.44245, -79.95590, 1988,
     "A two-floor student pub off Forbes Avenue.", None, "", ""),
    ("node", "Fuel and Fuddle", "bar", "Oakland", "212 Oakland Avenue", 40.44175, -79.95615, 1998,
     "A bar and grill known for its late-night menu.", None, "", ""),
    ("way", "East Campus Garage", "parking", "Oakland", "5040 Forbes Avenue", 40.44400, -79.94080, 1990,
     "Carnegie Mellon's multi-storey car park beside the East Campus dormitories.", 1000, "",
     "Carnegie Mellon University"),
    ("way", "Soldiers and Sailors Garage", "parking", "Oakland", "4515 Bigelow Boulevard", 40.44600, -79.95700,
     1964, "A multi-storey car park of the University of Pittsburgh.", 700, "", "University of Pittsburgh"),
    # Universities' buildings, venues and hotels in Oakland
    ("way", "Gates and Hillman Centers", "university", "Oakland", "4902 Forbes Avenue", 40.44350, -79.94455,
     2009, "The home of Carnegie Mellon's School of Computer Science.", None, "Mack Scogin Merrill Elam Architects",
     "Carnegie Mellon University"),
    ("node", "Hunt Library", "library", "Oakland", "4909 Frew Street", 40.44110, -79.94370, 1961,
     "Carnegie Mellon's main library, in a building with an aluminium facade.", None, "", "Carnegie Mellon University"),
    ("node", "Sorrells Library", "library", "Oakland", "5000 Forbes Avenue", 40.44265, -79.94575, 1971,
     "Carnegie Mellon's engineering and science library, in Wean Hall.", None, "", "Carnegie Mellon University"),
    ("way", "Cohon University Center", "university", "Oakland", "5032 Forbes Avenue", 40.44365, -79.94195, 1996,
     "Carnegie Mellon's student centre, with dining halls, a pool and a chapel.", None, "",
     "Carnegie Mellon University"),
    ("way", "Posner Hall", "university", "Oakland", "5000 Forbes Avenue", 40.44125, -79.94180, 1988,
     "A building of Carnegie Mellon's Tepper School of Business.", None, "", "Carnegie Mellon University"),
    ("node", "Carnegie Music Hall", "theatre", "Oakland", "4400 Forbes Avenue", 40.44405, -79.95090, 1895,
     "A concert hall in the Carnegie Institute building, beside the museums and the library.", 1928,
     "Longfellow, Alden & Harlow", "Carnegie Museums of Pittsburgh"),
    ("way", "Gardner Steel Conference Center", "university", "Oakland", "130 Thackeray Avenue", 40.44455,
     -79.95765, 1939, "A University of Pittsburgh building used for conferences and classes.", None, "",
     "University of Pittsburgh"),
    ("node", "Wyndham Pittsburgh University Center", "hotel", "Oakland", "100 Lytton Avenue", 40.44620,
     -79.95530, 1968, "A hotel beside the University of Pittsburgh's campus.", 251, "", "Wyndham"),
    ("node", "The Oaklander Hotel", "hotel", "Oakland", "5130 Forbes Avenue", 40.44430, -79.95380, 2018,
     "A boutique hotel with a rooftop bar.", 168, "", "Marriott"),
    # Near the airport
    ("node", "Hyatt Regency Pittsburgh International Airport", "hotel", "Moon Township", "1111 Airport Boulevard",
     40.49600, -80.24450, 2003, "A hotel joined to the airport's landside terminal by a walkway.", 336, "",
     "Hyatt"),
    ("node", "DoubleTree by Hilton Hotel Pittsburgh Airport", "hotel", "Moon Township", "8402 University Boulevard",
     40.50720, -80.21850, 1986, "A Hilton hotel on University Boulevard.", 140, "", "Hilton"),
    ("node", "La Quinta Inn & Suites Pittsburgh Airport", "hotel", "Moon Township", "8507 University Boulevard",
     40.50980, -80.21550, 1998, "A La Quinta hotel on University Boulevard.", 120, "", "La Quinta"),
    # Further away
    ("way", "Wells Fargo Center", "stadium", "Philadelphia", "3601 South Broad Street", 39.90120, -75.17200, 1996,
     "An indoor arena of the South Philadelphia Sports Complex, home of the 76ers and the Flyers.", 20478,
     "Ellerbe Becket", "Comcast Spectacor"),
    ("way", "Yankee Stadium", "stadium", "New York", "1 East 161st Street", 40.82960, -73.92620, 2009,
     "The baseball stadium of the New York Yankees, in the Bronx.", 46537, "Populous", "New York Yankees"),
    ("way", "Madison Square Garden", "stadium", "New York", "4 Pennsylvania Plaza", 40.75050, -73.99340, 1968,
     "An indoor arena above Pennsylvania Station, home of the Knicks and the Rangers.", 19812, "Charles Luckman",
     "Madison Square Garden Entertainment"),
    ("node", "Carnegie Hall", "theatre", "New York", "881 7th Avenue", 40.76510, -73.97990, 1891,
     "A concert hall in Midtown Manhattan at West 57th Street.", 2804, "William Burnet Tuthill", ""),
    ("node", "Keens Steakhouse", "restaurant", "New York", "72 West 36th Street", 40.75070, -73.98620, 1885,
     "A steakhouse known for its mutton chop and its ceiling of clay pipes.", None, "", ""),
    ("node", "DoubleTree by Hilton New York Downtown", "hotel", "New York", "8 Stone Street", 40.70430,
     -74.01240, 2012, "A Hilton hotel in the Financial District.", 130, "", "Hilton"),
    ("way", "TD Garden", "stadium", "Boston", "100 Legends Way", 42.36620, -71.06210, 1995,
     "An indoor arena above North Station, home of the Celtics and the Bruins.", 19580, "Ellerbe Becket",
     "Delaware North"),
    ("way", "Boston Logan International Airport", "airport", "Boston", "1 Harborside Drive", 42.36560, -71.00960,
     1923, "New England's busiest airport, in East Boston.", 42500000, "", "Massachusetts Port Authority"),
)


def _build() -> tuple[world.Place, ...]:
    out, counts = [], {"node": 0, "way": 0}
    for osm_type, name, category, town, street, lat, lon, opened, text, capacity, architect, operator in _ROWS:
        counts[osm_type] += 1
        base = _NODE_BASE if osm_type == "node" else _WAY_BASE
        slug = world.slugify(f"{name} {street} {town}")
        postcode = _POSTCODES.get(name, world.postcode(town))
        out.append(world.Place(base + 7919 * counts[osm_type], osm_type, name, slug, category, town, street,
                               postcode, lat, lon, opened, text, capacity, architect, operator))
    return tuple(out)


PLACES: tuple[world.Place, ...] = _build()


@functools.lru_cache(maxsize=1)
def _by_id() -> dict[int, world.Place]:
    table = {p.id: p for p in world.PLACES}
    for p in PLACES:
        if p.id in table:
            raise ValueError(f"map entity {p.name!r} reuses place id {p.id}")
        table[p.id] = p
    return table


def all_places() -> tuple[world.Place, ...]:
    """The world's places, then these (the map's whole set of places)."""
    return world.PLACES + PLACES


def place_by_id(place_id: int) -> Optional[world.Place]:
    """The world's or this module's place with OSM-style id `place_id`, else None."""
    return _by_id().get(place_id)


def place_by_slug(slug: str) -> world.Place:
    """The world's or this module's place with `slug` ("starbucks-417-south-craig-street-oakland")."""
    for p in PLACES:
        if p.slug == slug:
            return p
    return world.place_by_slug(slug)


def branches(brand: str) -> list[world.Place]:
    """These places whose `operator` (brand) is `brand`, in `PLACES` order."""
    return [p for p in PLACES if p.operator == brand]
