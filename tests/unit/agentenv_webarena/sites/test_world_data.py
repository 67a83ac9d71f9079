"""`sites.world`: the shared towns and places are deterministic, unique, plausible and looked up by name."""
from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from agentenv_webarena.sites import world


def test_world_is_the_same_in_a_fresh_interpreter():
    """Nothing depends on hash order or the clock: processes with other hash seeds build identical data."""
    # world.py imports only the standard library: load the file alone (fast, no package imports)
    code = ("import hashlib, importlib.util, sys; "
            f"spec = importlib.util.spec_from_file_location('world', {world.__file__!r}); "
            "world = sys.modules['world'] = importlib.util.module_from_spec(spec); spec.loader.exec_module(world); "
            "print(hashlib.sha256(repr((world.TOWNS, world.PLACES)).encode()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout for seed in ("1", "2")}
    assert len(digests) == 1
    here = hashlib.sha256(repr((world.TOWNS, world.PLACES)).encode()).hexdigest()
    assert digests == {here + "\n"}


def test_sizes_ids_and_slugs():
    assert 150 <= len(world.PLACES) <= 250
    assert len({p.id for p in world.PLACES}) == len(world.PLACES)
    assert len({p.slug for p in world.PLACES}) == len(world.PLACES)
    assert len({p.name for p in world.PLACES}) == len(world.PLACES)
    assert all(p.category in world.CATEGORIES for p in world.PLACES)
    assert {p.osm_type for p in world.PLACES} == {"node", "way"}
    # every category of the list has at least one place, so "nearest X" works for all of them
    assert {p.category for p in world.PLACES} == set(world.CATEGORIES)


def test_coordinates_are_in_the_region_and_near_their_town():
    for p in world.PLACES:
        town = world.town_by_name(p.town)
        assert 39.0 < p.lat < 43.0 and -84.0 < p.lon < -70.0, p.name
        assert world.distance_km(p, town) < 25, (p.name, p.town)


def test_lookups_and_their_errors():
    cmu = world.place_by_slug("carnegie-mellon-university")
    assert cmu.town == "Oakland" and cmu.city == "Pittsburgh" and cmu.state == "Pennsylvania"
    assert cmu.address == "5000 Forbes Avenue, Oakland, Pittsburgh, PA 15213"
    assert world.place_by_id(cmu.id) is cmu
    assert world.town_by_slug("mount-lebanon").county == "Allegheny County"
    with pytest.raises(KeyError, match="no-such-place"):
        world.place_by_slug("no-such-place")
    with pytest.raises(KeyError, match="Atlantis"):
        world.town_by_name("Atlantis")


def test_places_in_a_city_include_its_neighbourhoods():
    oakland_cafes = world.places_in("Oakland", "cafe")
    assert oakland_cafes and all(p.town == "Oakland" for p in oakland_cafes)
    assert set(oakland_cafes) <= set(world.places_in("Pittsburgh", "cafe"))
    assert world.places_in("Boston", "pharmacy") == []


def test_distance_km_matches_a_known_value():
    # Pittsburgh -> Philadelphia city centres: about 410 km in a straight line
    km = world.distance_km(world.town_by_name("Pittsburgh"), world.town_by_name("Philadelphia"))
    assert 400 < km < 420
    assert world.slugify("St. Mary's Church (Shadyside)") == "st-mary-s-church-shadyside"
