"""The shared world: towns and places of a Pittsburgh-centred region that several sites show.

Owns the facts more than one embedded site needs (the map locates them, the wiki describes them), so
a multi-site task has one truth. Pure data and small lookups, deterministic from `SEED` (no clock,
no I/O); it imports nothing of any site.

API (stable; other sites build on it):

- `Town`: frozen dataclass: `name`, `slug`, `kind` ("city", "borough", "township" or
  "neighbourhood"), `county`, `state`, `population`, `founded` (year), `lat`, `lon`, `parent`
  (the city a neighbourhood belongs to, else "").
- `Place`: frozen dataclass: `id` (OSM-style element id, unique), `osm_type` ("node" or "way":
  areas such as parks, campuses, stadiums, airports and hospitals are ways), `name`, `slug`
  (unique), `category` (one of `CATEGORIES`), `town` (a `Town.name`: the neighbourhood for places in
  Pittsburgh, else the municipality), `street` ("5000 Forbes Avenue"), `postcode`, `lat`, `lon`,
  `founded` (year opened / founded), `description` (one or two sentences), and optional
  `capacity` (seats, beds, rooms or yearly passengers, see `CAPACITY_UNITS`), `architect`, `operator`.
  Properties: `city` (the municipality: `parent` of a neighbourhood), `state`, `address` (one line).
- `TOWNS` (tuple, stable order), `PLACES` (tuple, ordered by id), `CATEGORIES` (tuple).
- `town_by_name(name)`, `town_by_slug(slug)`, `place_by_slug(slug)`, `place_by_id(id)`:
  lookups raising `KeyError` with a message naming the value.
- `places_in(town=None, category=None)`: places filtered by town (neighbourhood or municipality
  name) and/or category, in id order.
- `distance_km(a, b)`: great-circle distance between two objects with `lat`/`lon` (haversine).
- `slugify(text)`: the slug rule used for towns and places.
- `postcode(town)`: the postcode of a town's places.
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Iterable, Optional, Protocol

__all__ = ["SEED", "Town", "Place", "TOWNS", "PLACES", "CATEGORIES", "CAPACITY_UNITS", "town_by_name",
           "town_by_slug", "place_by_slug", "place_by_id", "places_in", "distance_km", "slugify", "postcode"]

SEED = 2828

CATEGORIES = ("university", "museum", "park", "hospital", "library", "stadium", "airport", "hotel", "restaurant",
              "cafe", "train_station", "bank", "supermarket", "pharmacy", "school", "church", "theatre",
              "city_hall", "bus_station", "fire_station", "police", "post_office", "landmark", "zoo")
# What `Place.capacity` counts, per category that has one.
CAPACITY_UNITS = {"stadium": "seats", "theatre": "seats", "hospital": "beds", "hotel": "rooms",
                  "airport": "passengers a year", "university": "students", "school": "students"}
_AREA_CATEGORIES = {"university", "park", "hospital", "stadium", "airport", "zoo"}


@dataclass(frozen=True)
class Town:
    """A municipality or (inside Pittsburgh) a neighbourhood."""

    name: str
    slug: str
    kind: str
    county: str
    state: str
    population: int
    founded: int
    lat: float
    lon: float
    parent: str = ""


@dataclass(frozen=True)
class Place:
    """A point of interest with its encyclopedic facts."""

    id: int
    osm_type: str
    name: str
    slug: str
    category: str
    town: str
    street: str
    postcode: str
    lat: float
    lon: float
    founded: int
    description: str
    capacity: Optional[int] = None
    architect: str = ""
    operator: str = ""

    @property
    def city(self) -> str:
        """The municipality (a neighbourhood's parent city, else the town itself)."""
        return town_by_name(self.town).parent or self.town

    @property
    def state(self) -> str:
        """The US state the place is in."""
        return town_by_name(self.town).state

    @property
    def address(self) -> str:
        """One-line postal address: "5000 Forbes Avenue, Oakland, Pittsburgh, PA 15213"."""
        parts = [self.street, self.town] if self.city == self.town else [self.street, self.town, self.city]
        return f"{', '.join(parts)}, {_STATE_CODES[self.state]} {self.postcode}"


class _Located(Protocol):
    lat: float
    lon: float


def slugify(text: str) -> str:
    """Lower-case words joined by '-' ("St. Paul's Cathedral" -> "st-paul-s-cathedral")."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def distance_km(a: _Located, b: _Located) -> float:
    """Great-circle (haversine) distance in km between two objects with `lat` and `lon`."""
    p1, p2 = math.radians(a.lat), math.radians(b.lat)
    dp, dl = p2 - p1, math.radians(b.lon - a.lon)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


_STATE_CODES = {"Pennsylvania": "PA", "New York": "NY", "Massachusetts": "MA", "Ohio": "OH", "West Virginia": "WV"}

# name, kind, county, state, population, founded, lat, lon, parent
_TOWN_ROWS = (
    ("Pittsburgh", "city", "Allegheny County", "Pennsylvania", 302971, 1758, 40.4406, -79.9959, ""),
    ("Downtown", "neighbourhood", "Allegheny County", "Pennsylvania", 4060, 1758, 40.4416, -79.9978, "Pittsburgh"),
    ("Oakland", "neighbourhood", "Allegheny County", "Pennsylvania", 19820, 1840, 40.4418, -79.9561, "Pittsburgh"),
    ("Shadyside", "neighbourhood", "Allegheny County", "Pennsylvania", 13915, 1852, 40.4550, -79.9330,
     "Pittsburgh"),
    ("Squirrel Hill", "neighbourhood", "Allegheny County", "Pennsylvania", 26731, 1868, 40.4337, -79.9233,
     "Pittsburgh"),
    ("Strip District", "neighbourhood", "Allegheny County", "Pennsylvania", 747, 1814, 40.4515, -79.9800,
     "Pittsburgh"),
    ("Lawrenceville", "neighbourhood", "Allegheny County", "Pennsylvania", 10143, 1814, 40.4670, -79.9600,
     "Pittsburgh"),
    ("South Side", "neighbourhood", "Allegheny County", "Pennsylvania", 6229, 1872, 40.4285, -79.9750,
     "Pittsburgh"),
    ("North Side", "neighbourhood", "Allegheny County", "Pennsylvania", 11486, 1788, 40.4530, -80.0080,
     "Pittsburgh"),
    ("Bloomfield", "neighbourhood", "Allegheny County", "Pennsylvania", 8442, 1868, 40.4610, -79.9490,
     "Pittsburgh"),
    ("East Liberty", "neighbourhood", "Allegheny County", "Pennsylvania", 5869, 1816, 40.4610, -79.9250,
     "Pittsburgh"),
    ("Mount Lebanon", "township", "Allegheny County", "Pennsylvania", 34075, 1912, 40.3755, -80.0495, ""),
    ("Monroeville", "borough", "Allegheny County", "Pennsylvania", 28640, 1951, 40.4212, -79.7881, ""),
    ("Sewickley", "borough", "Allegheny County", "Pennsylvania", 3827, 1853, 40.5367, -80.1840, ""),
    ("Cranberry Township", "township", "Butler County", "Pennsylvania", 33096, 1804, 40.6848, -80.1070, ""),
    ("McKeesport", "city", "Allegheny County", "Pennsylvania", 17727, 1795, 40.3479, -79.8645, ""),
    ("Wilkinsburg", "borough", "Allegheny County", "Pennsylvania", 14349, 1887, 40.4417, -79.8820, ""),
    ("Homestead", "borough", "Allegheny County", "Pennsylvania", 3160, 1880, 40.4056, -79.9114, ""),
    ("Moon Township", "township", "Allegheny County", "Pennsylvania", 26121, 1788, 40.5190, -80.2230, ""),
    ("Bethel Park", "municipality", "Allegheny County", "Pennsylvania", 33577, 1949, 40.3276, -80.0395, ""),
    ("Erie", "city", "Erie County", "Pennsylvania", 94831, 1795, 42.1292, -80.0851, ""),
    ("State College", "borough", "Centre County", "Pennsylvania", 40501, 1896, 40.7934, -77.8600, ""),
    ("Harrisburg", "city", "Dauphin County", "Pennsylvania", 50099, 1791, 40.2732, -76.8867, ""),
    ("Philadelphia", "city", "Philadelphia County", "Pennsylvania", 1603797, 1682, 39.9526, -75.1652, ""),
    ("New York", "city", "New York County", "New York", 8804190, 1624, 40.7128, -74.0060, ""),
    ("Buffalo", "city", "Erie County", "New York", 278349, 1801, 42.8864, -78.8784, ""),
    ("Boston", "city", "Suffolk County", "Massachusetts", 675647, 1630, 42.3601, -71.0589, ""),
    ("Cleveland", "city", "Cuyahoga County", "Ohio", 372624, 1796, 41.4993, -81.6944, ""),
    ("Columbus", "city", "Franklin County", "Ohio", 905748, 1812, 39.9612, -82.9988, ""),
    ("Morgantown", "city", "Monongalia County", "West Virginia", 30347, 1785, 39.6295, -79.9559, ""),
)

TOWNS: tuple[Town, ...] = tuple(Town(name, slugify(name), kind, county, state, pop, founded, lat, lon, parent)
                                for name, kind, county, state, pop, founded, lat, lon, parent in _TOWN_ROWS)
_TOWNS_BY_NAME = {t.name: t for t in TOWNS}
_TOWNS_BY_SLUG = {t.slug: t for t in TOWNS}

_POSTCODES = {
    "Downtown": "15222", "Oakland": "15213", "Shadyside": "15232", "Squirrel Hill": "15217",
    "Strip District": "15222", "Lawrenceville": "15201", "South Side": "15203", "North Side": "15212",
    "Bloomfield": "15224", "East Liberty": "15206", "Mount Lebanon": "15228", "Monroeville": "15146",
    "Sewickley": "15143", "Cranberry Township": "16066", "McKeesport": "15132", "Wilkinsburg": "15221",
    "Homestead": "15120", "Moon Township": "15108", "Bethel Park": "15102", "Erie": "16501",
    "State College": "16801", "Harrisburg": "17101", "Philadelphia": "19107", "New York": "10007",
    "Buffalo": "14202", "Boston": "02108", "Cleveland": "44113", "Columbus": "43215", "Morgantown": "26505",
}

# Landmarks, by hand: name, category, town, street, lat, lon, founded, description, capacity, architect, operator.
_LANDMARKS = (
    ("Carnegie Mellon University", "university", "Oakland", "5000 Forbes Avenue", 40.4433, -79.9436, 1900,
     "A private research university founded by Andrew Carnegie as the Carnegie Technical Schools.", 15818,
     "Henry Hornbostel", ""),
    ("University of Pittsburgh", "university", "Oakland", "4200 Fifth Avenue", 40.4444, -79.9608, 1787,
     "A public research university whose campus is centred on the Cathedral of Learning.", 33767, "", ""),
    ("Cathedral of Learning", "landmark", "Oakland", "4200 Fifth Avenue", 40.4443, -79.9532, 1937,
     "A 42-storey Late Gothic Revival tower, the second-tallest educational building in the world.", None,
     "Charles Klauder", "University of Pittsburgh"),
    ("Carnegie Museum of Natural History", "museum", "Oakland", "4400 Forbes Avenue", 40.4432, -79.9497, 1896,
     "A natural history museum known for its dinosaur hall and its gem and mineral collection.", None,
     "Longfellow, Alden & Harlow", "Carnegie Museums of Pittsburgh"),
    ("Carnegie Museum of Art", "museum", "Oakland", "4400 Forbes Avenue", 40.4437, -79.9490, 1895,
     "An art museum showing contemporary art from its Carnegie International exhibition.", None,
     "Longfellow, Alden & Harlow", "Carnegie Museums of Pittsburgh"),
    ("Carnegie Library of Pittsburgh Main Branch", "library", "Oakland", "4400 Forbes Avenue", 40.4428,
     -79.9502, 1895, "The main branch of the city's public library system, in the Carnegie Institute building.",
     None, "Longfellow, Alden & Harlow", "Carnegie Library of Pittsburgh"),
    ("Phipps Conservatory and Botanical Gardens", "museum", "Oakland", "1 Schenley Drive", 40.4390, -79.9474,
     1893, "A Victorian glasshouse with fourteen rooms of plants and a living building for its education centre.",
     None, "Lord & Burnham", "Phipps Conservatory"),
    ("Schenley Park", "park", "Oakland", "Schenley Drive", 40.4347, -79.9428, 1889,
     "A 456-acre municipal park with trails, a golf course, an ice rink and Flagstaff Hill.", None,
     "William Falconer", "City of Pittsburgh"),
    ("UPMC Presbyterian", "hospital", "Oakland", "200 Lothrop Street", 40.4420, -79.9610, 1893,
     "A teaching hospital of the University of Pittsburgh and a Level I trauma centre.", 757, "", "UPMC"),
    ("Soldiers and Sailors Memorial Hall", "museum", "Oakland", "4141 Fifth Avenue", 40.4452, -79.9555, 1910,
     "A memorial and museum honouring members of the armed forces.", None, "Henry Hornbostel", ""),
    ("Hillman Library", "library", "Oakland", "3960 Forbes Avenue", 40.4425, -79.9540, 1968,
     "The main library of the University of Pittsburgh.", None, "Celli-Flynn", "University of Pittsburgh"),
    ("Point State Park", "park", "Downtown", "601 Commonwealth Place", 40.4417, -80.0087, 1974,
     "A state park at the confluence of the Allegheny and Monongahela rivers, known for its fountain.", None,
     "Ralph Griswold", "Pennsylvania DCNR"),
    ("Fort Pitt Museum", "museum", "Downtown", "601 Commonwealth Place", 40.4410, -80.0075, 1969,
     "A history museum in a reconstructed bastion of Fort Pitt.", None, "", "Heinz History Center"),
    ("PPG Place", "landmark", "Downtown", "1 PPG Place", 40.4395, -80.0030, 1984,
     "A glass office complex of six Neo-Gothic buildings around a public plaza.", None, "Philip Johnson", ""),
    ("City-County Building", "city_hall", "Downtown", "414 Grant Street", 40.4384, -79.9967, 1917,
     "The seat of the city government and the Allegheny County courts.", None, "Henry Hornbostel",
     "City of Pittsburgh"),
    ("Allegheny County Courthouse", "landmark", "Downtown", "436 Grant Street", 40.4388, -79.9960, 1888,
     "A Richardsonian Romanesque courthouse with a Bridge of Sighs to the former jail.", None,
     "Henry Hobson Richardson", "Allegheny County"),
    ("Benedum Center", "theatre", "Downtown", "237 7th Street", 40.4432, -80.0007, 1928,
     "A restored movie palace, home of the Pittsburgh Opera and the Pittsburgh Ballet Theatre.", 2800,
     "Hoffman-Henon", "Pittsburgh Cultural Trust"),
    ("Heinz Hall", "theatre", "Downtown", "600 Penn Avenue", 40.4425, -80.0000, 1927,
     "A concert hall, home of the Pittsburgh Symphony Orchestra.", 2676, "C. W. Rapp and George Rapp",
     "Pittsburgh Symphony"),
    ("PPG Paints Arena", "stadium", "Downtown", "1001 Fifth Avenue", 40.4396, -79.9892, 2010,
     "An indoor arena, home of the Pittsburgh Penguins.", 18387, "Populous", "Pittsburgh Penguins"),
    ("Pittsburgh Union Station", "train_station", "Downtown", "1100 Liberty Avenue", 40.4452, -79.9925, 1903,
     "The city's passenger railway station, served by the Pennsylvanian and the Capitol Limited.", None,
     "Daniel Burnham", "Amtrak"),
    ("Greyhound Pittsburgh Bus Station", "bus_station", "Downtown", "55 11th Street", 40.4460, -79.9930, 2008,
     "The intercity bus terminal beside Union Station.", None, "", "Greyhound Lines"),
    ("Omni William Penn Hotel", "hotel", "Downtown", "530 William Penn Place", 40.4409, -79.9970, 1916,
     "A historic grand hotel on Mellon Square.", 597, "Janssen & Abbott", "Omni Hotels"),
    ("Fairmont Pittsburgh", "hotel", "Downtown", "510 Market Street", 40.4410, -80.0040, 2010,
     "A luxury hotel in the Three PNC Plaza tower.", 185, "", "Fairmont Hotels"),
    ("Market Square", "landmark", "Downtown", "Market Square", 40.4407, -80.0025, 1784,
     "A public square lined with restaurants, the city's first market place.", None, "", "City of Pittsburgh"),
    ("Mellon Square", "park", "Downtown", "Smithfield Street", 40.4413, -79.9985, 1955,
     "A modernist rooftop park above a parking garage.", None, "Mitchell & Ritchey", "City of Pittsburgh"),
    ("Senator John Heinz History Center", "museum", "Strip District", "1212 Smallman Street", 40.4468,
     -79.9920, 1996, "The largest history museum in Pennsylvania, in a former ice company warehouse.", None, "",
     "Heinz History Center"),
    ("Pittsburgh Public Market", "landmark", "Strip District", "2401 Penn Avenue", 40.4535, -79.9835, 2010,
     "An indoor market of local food vendors.", None, "", ""),
    ("PNC Park", "stadium", "North Side", "115 Federal Street", 40.4469, -80.0057, 2001,
     "A baseball park on the Allegheny River, home of the Pittsburgh Pirates.", 38747, "HOK Sport",
     "Pittsburgh Pirates"),
    ("Acrisure Stadium", "stadium", "North Side", "100 Art Rooney Avenue", 40.4468, -80.0158, 2001,
     "A football stadium, home of the Pittsburgh Steelers and the Pitt Panthers.", 68400, "HOK Sport",
     "Pittsburgh Steelers"),
    ("The Andy Warhol Museum", "museum", "North Side", "117 Sandusky Street", 40.4482, -80.0025, 1994,
     "The largest museum in North America dedicated to a single artist.", None, "Richard Gluckman",
     "Carnegie Museums of Pittsburgh"),
    ("Carnegie Science Center", "museum", "North Side", "1 Allegheny Avenue", 40.4453, -80.0182, 1991,
     "A science museum with a planetarium and the submarine USS Requin.", None, "Tasso Katselas",
     "Carnegie Museums of Pittsburgh"),
    ("Children's Museum of Pittsburgh", "museum", "North Side", "10 Children's Way", 40.4529, -80.0063, 1983,
     "A hands-on museum for children in the former Allegheny post office.", None, "Koning Eizenberg", ""),
    ("National Aviary", "zoo", "North Side", "700 Arch Street", 40.4532, -80.0085, 1952,
     "America's largest independent indoor nonprofit aviary.", None, "", "National Aviary"),
    ("Allegheny General Hospital", "hospital", "North Side", "320 East North Avenue", 40.4570, -80.0030, 1885,
     "A tertiary care hospital and Level I trauma centre.", 576, "", "Allegheny Health Network"),
    ("Randyland", "landmark", "North Side", "1501 Arch Street", 40.4566, -80.0088, 1995,
     "A brightly painted courtyard and folk art landmark.", None, "Randy Gilson", ""),
    ("Station Square", "landmark", "South Side", "125 West Station Square Drive", 40.4343, -80.0045, 1976,
     "A shopping and entertainment complex in former railway buildings.", None, "", ""),
    ("Duquesne Incline", "landmark", "South Side", "1197 West Carson Street", 40.4391, -80.0179, 1877,
     "A cable-hauled funicular climbing Mount Washington.", None, "Samuel Diescher", ""),
    ("Monongahela Incline", "landmark", "South Side", "5 Grandview Avenue", 40.4312, -80.0066, 1870,
     "The oldest continuously operating funicular in the United States.", None, "John Endres",
     "Port Authority"),
    ("South Side Works", "landmark", "South Side", "2700 East Carson Street", 40.4270, -79.9650, 2002,
     "A riverside district of shops and offices on the site of a steel mill.", None, "", ""),
    ("UPMC Mercy", "hospital", "South Side", "1400 Locust Street", 40.4362, -79.9850, 1847,
     "The oldest hospital in Pittsburgh, founded by the Sisters of Mercy.", 495, "", "UPMC"),
    ("Duquesne University", "university", "South Side", "600 Forbes Avenue", 40.4364, -79.9907, 1878,
     "A private Catholic university on a bluff above the Monongahela.", 8954, "", ""),
    ("Mattress Factory", "museum", "North Side", "500 Sampsonia Way", 40.4571, -80.0121, 1977,
     "A museum of room-sized installation art.", None, "", ""),
    ("Frick Park", "park", "Squirrel Hill", "6750 Forbes Avenue", 40.4349, -79.9052, 1927,
     "The largest of the city's parks, with wooded valleys and lawn bowling.", None, "", "City of Pittsburgh"),
    ("The Frick Pittsburgh", "museum", "Squirrel Hill", "7227 Reynolds Street", 40.4470, -79.9010, 1990,
     "The estate of Henry Clay Frick with its art museum, car and carriage museum and greenhouse.", None, "",
     ""),
    ("Chatham University", "university", "Shadyside", "1 Woodland Road", 40.4486, -79.9237, 1869,
     "A private university on a wooded campus beside Shadyside.", 2123, "", ""),
    ("UPMC Shadyside", "hospital", "Shadyside", "5230 Centre Avenue", 40.4550, -79.9400, 1866,
     "A teaching hospital known for its cancer centre.", 520, "", "UPMC"),
    ("West Penn Hospital", "hospital", "Bloomfield", "4800 Friendship Avenue", 40.4630, -79.9480, 1848,
     "A teaching hospital of the Allegheny Health Network.", 317, "", "Allegheny Health Network"),
    ("Allegheny Cemetery", "park", "Lawrenceville", "4734 Butler Street", 40.4710, -79.9560, 1844,
     "A 300-acre rural cemetery, one of the oldest in the United States.", None, "John Chislett", ""),
    ("Children's Hospital of Pittsburgh", "hospital", "Lawrenceville", "4401 Penn Avenue", 40.4667, -79.9534,
     1890, "A children's hospital of UPMC.", 313, "", "UPMC"),
    ("Pittsburgh Zoo and Aquarium", "zoo", "East Liberty", "7370 Baker Street", 40.4846, -79.9181, 1898,
     "A zoo and aquarium in Highland Park.", None, "", "Zoological Society of Pittsburgh"),
    ("Highland Park", "park", "East Liberty", "151 Lake Drive", 40.4810, -79.9170, 1889,
     "A park around the city's reservoir with a swimming pool and the zoo.", None, "", "City of Pittsburgh"),
    ("East Liberty Presbyterian Church", "church", "East Liberty", "116 South Highland Avenue", 40.4606,
     -79.9275, 1935, "A Gothic Revival church known as the Cathedral of Hope.", None, "Ralph Adams Cram", ""),
    ("Waterfront Homestead", "landmark", "Homestead", "149 West Bridge Street", 40.4090, -79.9160, 1999,
     "A shopping centre on the site of the Homestead Steel Works.", None, "", ""),
    ("Carrie Furnaces", "landmark", "Homestead", "801 Carrie Furnace Boulevard", 40.4113, -79.8925, 1907,
     "Two blast furnaces preserved as a National Historic Landmark.", None, "", "Rivers of Steel"),
    ("Pittsburgh International Airport", "airport", "Moon Township", "1000 Airport Boulevard", 40.4915,
     -80.2329, 1952, "The region's main airport, west of the city.", 9600000, "", "Allegheny County Airport Authority"),
    ("Robert Morris University", "university", "Moon Township", "6001 University Boulevard", 40.5110, -80.1870,
     1921, "A private university on a hilltop campus in Moon Township.", 4700, "", ""),
    ("Allegheny County Airport", "airport", "Homestead", "12 Allegheny County Airport", 40.3545, -79.9302, 1931,
     "A general aviation airport with an Art Deco terminal.", 82000, "Henry Hornbostel",
     "Allegheny County Airport Authority"),
    ("Monroeville Mall", "landmark", "Monroeville", "200 Mall Circle Drive", 40.4301, -79.7929, 1969,
     "A regional shopping mall, famous as a filming location.", None, "", ""),
    ("Mount Lebanon Public Library", "library", "Mount Lebanon", "16 Castle Shannon Boulevard", 40.3770,
     -80.0470, 1932, "The public library of Mount Lebanon.", None, "", "Mount Lebanon"),
    ("Mount Lebanon Municipal Building", "city_hall", "Mount Lebanon", "710 Washington Road", 40.3746, -80.0505,
     1930, "The seat of the township government.", None, "", "Mount Lebanon"),
    ("South Park", "park", "Bethel Park", "Brownsville Road", 40.3040, -80.0000, 1927,
     "A large county park with a wave pool, golf course and fairgrounds.", None, "", "Allegheny County"),
    ("Sewickley Heights History Center", "museum", "Sewickley", "1901 Glen Mitchell Road", 40.5450, -80.1730,
     2000, "A local history museum of the Sewickley valley.", None, "", ""),
    ("Sewickley Public Library", "library", "Sewickley", "500 Thorn Street", 40.5375, -80.1815, 1873,
     "The public library of Sewickley.", None, "", "Sewickley"),
    ("UPMC Passavant", "hospital", "Cranberry Township", "1 St Francis Way", 40.6880, -80.0960, 2004,
     "A community hospital in Cranberry Township.", 70, "", "UPMC"),
    ("Cranberry Township Municipal Center", "city_hall", "Cranberry Township", "2525 Rochester Road",
     40.7090, -80.1030, 1990, "The seat of the township government.", None, "", "Cranberry Township"),
    ("Renziehausen Park", "park", "McKeesport", "1 Arboretum Drive", 40.3400, -79.8400, 1927,
     "A park with a rose garden and arboretum.", None, "", "City of McKeesport"),
    ("McKeesport Hospital", "hospital", "McKeesport", "1500 Fifth Avenue", 40.3500, -79.8550, 1894,
     "A community hospital of UPMC.", 212, "", "UPMC"),
    ("Wilkinsburg Train Station", "train_station", "Wilkinsburg", "1000 Ross Avenue", 40.4420, -79.8830, 1916,
     "A restored Pennsylvania Railroad station.", None, "", ""),
    ("Presque Isle State Park", "park", "Erie", "301 Peninsula Drive", 42.1550, -80.1000, 1921,
     "A sandy peninsula on Lake Erie with beaches and trails.", None, "", "Pennsylvania DCNR"),
    ("Erie Maritime Museum", "museum", "Erie", "150 East Front Street", 42.1370, -80.0830, 1998,
     "A museum of the Great Lakes and home of the brig Niagara.", None, "", ""),
    ("Beaver Stadium", "stadium", "State College", "1 Beaver Stadium", 40.8122, -77.8561, 1960,
     "The football stadium of Penn State, one of the largest in the world.", 106572, "", "Penn State"),
    ("Pennsylvania State University", "university", "State College", "201 Old Main", 40.7982, -77.8599, 1855,
     "The flagship campus of Penn State.", 48535, "", ""),
    ("Pennsylvania State Capitol", "landmark", "Harrisburg", "501 North 3rd Street", 40.2644, -76.8835, 1906,
     "The seat of the state government, with a dome modelled on St. Peter's Basilica.", None,
     "Joseph Huston", "Commonwealth of Pennsylvania"),
    ("Harrisburg Transportation Center", "train_station", "Harrisburg", "411 Market Street", 40.2617,
     -76.8775, 1887, "The city's railway station on the Keystone Corridor.", None, "", "Amtrak"),
    ("Philadelphia Museum of Art", "museum", "Philadelphia", "2600 Benjamin Franklin Parkway", 39.9656,
     -75.1810, 1876, "An art museum whose steps appear in the film Rocky.", None, "Horace Trumbauer", ""),
    ("Independence Hall", "landmark", "Philadelphia", "520 Chestnut Street", 39.9489, -75.1500, 1753,
     "Where the Declaration of Independence and the Constitution were signed.", None, "Edmund Woolley", ""),
    ("30th Street Station", "train_station", "Philadelphia", "2955 Market Street", 39.9557, -75.1820, 1933,
     "Philadelphia's main railway station.", None, "Graham, Anderson, Probst & White", "Amtrak"),
    ("Philadelphia City Hall", "city_hall", "Philadelphia", "1400 John F Kennedy Boulevard", 39.9524,
     -75.1636, 1901, "A masonry city hall topped by a statue of William Penn.", None, "John McArthur Jr.",
     "City of Philadelphia"),
    ("Pennsylvania Station", "train_station", "New York", "8th Avenue and 31st Street", 40.7506, -73.9935, 1910,
     "The busiest railway station in North America.", None, "", "Amtrak"),
    ("Metropolitan Museum of Art", "museum", "New York", "1000 5th Avenue", 40.7794, -73.9632, 1870,
     "The largest art museum in the Americas.", None, "Richard Morris Hunt", ""),
    ("Central Park", "park", "New York", "Central Park West", 40.7829, -73.9654, 1858,
     "An urban park in Manhattan.", None, "Frederick Law Olmsted", "NYC Parks"),
    ("New York City Hall", "city_hall", "New York", "City Hall Park", 40.7127, -74.0059, 1812,
     "The oldest city hall in the United States still used for its original purpose.", None,
     "Joseph-Francois Mangin", "City of New York"),
    ("Buffalo City Hall", "city_hall", "Buffalo", "65 Niagara Square", 42.8866, -78.8787, 1931,
     "An Art Deco skyscraper, the seat of the city government.", None, "John Wade", "City of Buffalo"),
    ("Buffalo AKG Art Museum", "museum", "Buffalo", "1285 Elmwood Avenue", 42.9324, -78.8760, 1862,
     "A modern and contemporary art museum in Delaware Park.", None, "Edward B. Green", ""),
    ("Boston Public Library", "library", "Boston", "700 Boylston Street", 42.3493, -71.0782, 1848,
     "The first large free municipal library in the United States.", None, "McKim, Mead & White", ""),
    ("Boston South Station", "train_station", "Boston", "700 Atlantic Avenue", 42.3523, -71.0552, 1899,
     "Boston's largest railway and bus station.", None, "Shepley, Rutan and Coolidge", "MBTA"),
    ("Boston Common", "park", "Boston", "139 Tremont Street", 42.3550, -71.0656, 1634,
     "The oldest public park in the United States.", None, "", "City of Boston"),
    ("Cleveland Museum of Art", "museum", "Cleveland", "11150 East Boulevard", 41.5089, -81.6116, 1913,
     "An art museum in University Circle, free to visit.", None, "Hubbell and Benes", ""),
    ("Rock and Roll Hall of Fame", "museum", "Cleveland", "1100 East 9th Street", 41.5085, -81.6954, 1995,
     "A museum of the history of rock music on the shore of Lake Erie.", None, "I. M. Pei", ""),
    ("Ohio State University", "university", "Columbus", "281 West Lane Avenue", 40.0067, -83.0305, 1870,
     "A public research university, among the largest in the United States.", 61369, "", ""),
    ("Ohio Statehouse", "landmark", "Columbus", "1 Capitol Square", 39.9612, -82.9988, 1861,
     "The Greek Revival seat of the Ohio government.", None, "Henry Walter", "State of Ohio"),
    ("West Virginia University", "university", "Morgantown", "1500 University Avenue", 39.6350, -79.9545, 1867,
     "A public research university with a personal rapid transit system.", 26269, "", ""),
)

# Everyday amenities are generated: one name pattern pool per category ("{t}" is the town's name).
_AMENITY_NAMES = {
    "restaurant": ("{t} Diner", "{t} Grill", "Three Rivers Kitchen", "Iron City Tavern", "Golden Triangle Bistro",
                   "Mon Valley Smokehouse", "Allegheny Noodle House", "Incline Pizzeria", "Steel Town Burgers",
                   "{t} Trattoria", "Riverside Taqueria", "Bridge City Ramen", "Ohio Valley Steakhouse",
                   "Pierogi Palace", "{t} Thai Kitchen", "Funicular Fish Fry", "Blue Slide Cafe and Grill",
                   "{t} Curry House"),
    "cafe": ("{t} Coffee Roasters", "Bean and Barrel", "Yinz Espresso", "Morning Incline Coffee",
             "{t} Bakehouse", "Steeltown Grind", "The Daily Pour", "Confluence Cafe", "{t} Tea Room"),
    "pharmacy": ("{t} Pharmacy", "{t} Family Drugstore", "Allegheny Apothecary"),
    "bank": ("{t} Savings Bank", "Keystone Community Bank ({t})", "Three Rivers Credit Union ({t})"),
    "supermarket": ("{t} Market", "Giant Eagle ({t})", "Fresh Thyme Grocery ({t})"),
    "library": ("Carnegie Library of Pittsburgh {t}", "{t} Public Library"),
    "school": ("{t} High School", "{t} Elementary School"),
    "post_office": ("{t} Post Office",),
    "fire_station": ("{t} Fire Station",),
    "police": ("{t} Police Station",),
    "hotel": ("{t} Inn", "Hotel {t}", "{t} Suites"),
    "church": ("St. Mary's Church ({t})", "{t} Methodist Church"),
}
# Per town: how many amenities of each category (the rest of the region gets none).
_AMENITY_COUNTS = {
    "Downtown": {"restaurant": 4, "cafe": 2, "pharmacy": 1, "bank": 2, "supermarket": 1, "post_office": 1,
                 "fire_station": 1, "police": 1},
    "Oakland": {"restaurant": 4, "cafe": 3, "pharmacy": 2, "bank": 1, "supermarket": 1, "post_office": 1,
                "hotel": 1, "school": 1},
    "Shadyside": {"restaurant": 3, "cafe": 2, "pharmacy": 1, "bank": 1, "supermarket": 1, "hotel": 1,
                  "church": 1},
    "Squirrel Hill": {"restaurant": 3, "cafe": 2, "pharmacy": 1, "bank": 1, "supermarket": 1, "library": 1,
                      "school": 1, "fire_station": 1},
    "Strip District": {"restaurant": 3, "cafe": 2, "supermarket": 1, "bank": 1},
    "Lawrenceville": {"restaurant": 3, "cafe": 2, "pharmacy": 1, "library": 1, "police": 1},
    "South Side": {"restaurant": 3, "cafe": 2, "pharmacy": 1, "bank": 1, "supermarket": 1, "library": 1,
                   "fire_station": 1},
    "North Side": {"restaurant": 2, "cafe": 1, "pharmacy": 1, "bank": 1, "hotel": 1, "school": 1},
    "Bloomfield": {"restaurant": 2, "cafe": 1, "pharmacy": 1, "post_office": 1},
    "East Liberty": {"restaurant": 2, "cafe": 1, "supermarket": 1, "bank": 1, "library": 1, "police": 1},
    "Mount Lebanon": {"restaurant": 2, "cafe": 1, "pharmacy": 1, "supermarket": 1, "school": 1},
    "Monroeville": {"restaurant": 2, "pharmacy": 1, "supermarket": 1, "hotel": 1},
    "Sewickley": {"restaurant": 1, "cafe": 1, "pharmacy": 1},
    "Cranberry Township": {"restaurant": 2, "pharmacy": 1, "supermarket": 1, "hotel": 1},
    "McKeesport": {"restaurant": 1, "pharmacy": 1, "bank": 1},
    "Wilkinsburg": {"restaurant": 1, "pharmacy": 1, "post_office": 1},
    "Homestead": {"restaurant": 1, "cafe": 1, "supermarket": 1},
    "Moon Township": {"hotel": 2, "restaurant": 1, "pharmacy": 1},
    "Bethel Park": {"restaurant": 1, "pharmacy": 1, "supermarket": 1},
}
_STREETS = {
    "Downtown": ("Liberty Avenue", "Penn Avenue", "Smithfield Street", "Wood Street", "Grant Street",
                 "Forbes Avenue", "Fifth Avenue"),
    "Oakland": ("Forbes Avenue", "Fifth Avenue", "Craig Street", "Atwood Street", "Meyran Avenue",
                "Bouquet Street"),
    "Shadyside": ("Walnut Street", "Ellsworth Avenue", "Aiken Avenue", "South Highland Avenue"),
    "Squirrel Hill": ("Murray Avenue", "Forbes Avenue", "Forward Avenue", "Shady Avenue"),
    "Strip District": ("Penn Avenue", "Smallman Street", "Liberty Avenue", "21st Street"),
    "Lawrenceville": ("Butler Street", "Penn Avenue", "44th Street", "Main Street"),
    "South Side": ("East Carson Street", "South 18th Street", "Sarah Street", "Josephine Street"),
    "North Side": ("East Ohio Street", "Federal Street", "Western Avenue", "North Avenue"),
    "Bloomfield": ("Liberty Avenue", "Ella Street", "Cedarville Street"),
    "East Liberty": ("Penn Avenue", "Centre Avenue", "Highland Avenue", "Baum Boulevard"),
    "Mount Lebanon": ("Washington Road", "Beverly Road", "Castle Shannon Boulevard"),
    "Monroeville": ("William Penn Highway", "Northern Pike", "Monroeville Boulevard"),
    "Sewickley": ("Beaver Street", "Broad Street", "Walnut Street"),
    "Cranberry Township": ("Route 19", "Freedom Road", "Rochester Road"),
    "McKeesport": ("Fifth Avenue", "Lysle Boulevard", "Walnut Street"),
    "Wilkinsburg": ("Penn Avenue", "Wood Street", "Ross Avenue"),
    "Homestead": ("East 8th Avenue", "West 8th Avenue", "Amity Street"),
    "Moon Township": ("Beaver Grade Road", "Thorn Run Road", "University Boulevard"),
    "Bethel Park": ("Library Road", "Brightwood Road", "South Park Road"),
}
_AMENITY_DESCRIPTIONS = {
    "restaurant": ("A neighbourhood restaurant serving {x}.", ("pierogies and local comfort food",
                   "wood-fired pizza", "regional American dishes", "noodles and dumplings", "grilled steaks",
                   "tacos and burritos", "seafood and fish sandwiches", "curries and flatbreads")),
    "cafe": ("A cafe known for its {x}.", ("single-origin pour-overs", "cinnamon rolls", "espresso drinks",
             "loose-leaf teas", "breakfast sandwiches")),
    "pharmacy": ("A community pharmacy {x}.", ("with a walk-in vaccination clinic", "open late on weekdays",
                 "with a drive-through window")),
    "bank": ("A bank branch {x}.", ("with a 24-hour ATM", "offering safe deposit boxes", "with a notary on site")),
    "supermarket": ("A grocery store {x}.", ("with a pharmacy counter", "with a large produce section",
                    "with a hot food bar")),
    "library": ("A branch library {x}.", ("with a children's reading room", "with public computers",
                "in a Carnegie-funded building")),
    "school": ("A public school {x}.", ("of the local school district", "with a renovated science wing")),
    "post_office": ("A United States Postal Service office {x}.", ("with PO boxes", "open on Saturdays")),
    "fire_station": ("A fire station {x}.", ("of the city's bureau of fire", "with an engine and a ladder company")),
    "police": ("A police station {x}.", ("of the zone's police bureau", "open around the clock")),
    "hotel": ("A hotel {x}.", ("with a rooftop bar", "with free parking", "near the main roads")),
    "church": ("A church {x}.", ("with stained-glass windows", "built in the Gothic Revival style")),
}


def _osm_id(index: int, area: bool) -> int:
    """Deterministic OSM-style ids: nodes and ways in separate, plausible-looking ranges."""
    return (42_000_000 if area else 3_500_000_000) + 7919 * index


def _build_places() -> tuple[Place, ...]:
    rng = random.Random(SEED)
    rows: list[Place] = []
    used: set[str] = set()

    def add(name: str, category: str, town: str, street: str, lat: float, lon: float, founded: int,
            description: str, capacity: Optional[int] = None, architect: str = "", operator: str = "") -> None:
        assert name not in used and town in _TOWNS_BY_NAME and category in CATEGORIES, (name, town, category)
        used.add(name)
        area = category in _AREA_CATEGORIES
        rows.append(Place(_osm_id(len(rows) + 1, area), "way" if area else "node", name, slugify(name), category,
                          town, street, _POSTCODES[town], round(lat, 5), round(lon, 5), founded, description,
                          capacity, architect, operator))

    for row in _LANDMARKS:
        name, category, town, street, lat, lon, founded, description, capacity, architect, operator = row
        add(name, category, town, street, lat, lon, founded, description, capacity, architect, operator)
    for town, counts in _AMENITY_COUNTS.items():
        centre = _TOWNS_BY_NAME[town]
        for category, count in counts.items():
            patterns = list(_AMENITY_NAMES[category])
            rng.shuffle(patterns)
            names = [p.format(t=town) for p in patterns if p.format(t=town) not in used][:count]
            text, fills = _AMENITY_DESCRIPTIONS[category]
            for name in names:
                street = f"{rng.randrange(10, 60) * 10 + rng.randrange(10)} {rng.choice(_STREETS[town])}"
                lat = centre.lat + rng.uniform(-0.009, 0.009)
                lon = centre.lon + rng.uniform(-0.012, 0.012)
                capacity = rng.randrange(40, 260) if category == "hotel" else (
                    rng.randrange(300, 1800) if category == "school" else None)
                add(name, category, town, street, lat, lon, rng.randrange(1905, 2021),
                    text.format(x=rng.choice(fills)), capacity)
    return tuple(sorted(rows, key=lambda p: p.id))


PLACES: tuple[Place, ...] = _build_places()
_PLACES_BY_SLUG = {p.slug: p for p in PLACES}
_PLACES_BY_ID = {p.id: p for p in PLACES}
assert len(_PLACES_BY_SLUG) == len(PLACES) == len(_PLACES_BY_ID), "place slugs and ids must be unique"


def _lookup(table: dict, key: object, what: str) -> object:
    try:
        return table[key]
    except KeyError:
        raise KeyError(f"no {what} {key!r} in the world (see sites/world.py)") from None


def town_by_name(name: str) -> Town:
    """The town named `name` ("Oakland"); KeyError if none."""
    return _lookup(_TOWNS_BY_NAME, name, "town named")


def town_by_slug(slug: str) -> Town:
    """The town with slug `slug` ("mount-lebanon"); KeyError if none."""
    return _lookup(_TOWNS_BY_SLUG, slug, "town with slug")


def postcode(town: str) -> str:
    """The postcode the world's places in `town` carry ("Oakland" -> "15213"); KeyError if none."""
    return _lookup(_POSTCODES, town, "postcode for town")


def place_by_slug(slug: str) -> Place:
    """The place with slug `slug` ("carnegie-mellon-university"); KeyError if none."""
    return _lookup(_PLACES_BY_SLUG, slug, "place with slug")


def place_by_id(place_id: int) -> Place:
    """The place with OSM-style id `place_id`; KeyError if none."""
    return _lookup(_PLACES_BY_ID, place_id, "place with id")


def places_in(town: Optional[str] = None, category: Optional[str] = None) -> list[Place]:
    """Places in `town` (a neighbourhood or municipality name; None: anywhere) of `category` (None: any)."""
    def in_town(p: Place) -> bool:
        return town is None or p.town == town or _TOWNS_BY_NAME[p.town].parent == town
    return [p for p in PLACES if in_town(p) and (category is None or p.category == category)]


def _check(items: Iterable[Place]) -> None:
    for p in items:
        assert 39.0 < p.lat < 43.0 and -84.0 < p.lon < -70.0, p


_check(PLACES)
