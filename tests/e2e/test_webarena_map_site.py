"""End to end: the embedded map through the WebArena server and a real Chromium.

The server runs the map's own task file (`generate_tasks(only=["map"])`); tests drive an env with
WebArena actions (elements resolved by role and name, as the expert does) and read the
accessibility-tree observation: search -> place page, directions numbers per mode, "X near Y",
per-env state, and reference replays (a handful by default, one task per template when `slow`).
"""
from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from helpers import embedded_sites_env, launched_server, require_chromium

require_chromium()

from agentenv.envs.webarena import WebarenaEnvClient  # noqa: E402
from agentenv_webarena.expert import play_task  # noqa: E402
from agentenv_webarena.sites import world  # noqa: E402
from agentenv_webarena.sites.map import directions_url, element_path  # noqa: E402
from agentenv_webarena.tasks.generate import generate_tasks  # noqa: E402
from agentenv_webarena.tasks.reference import reference_actions  # noqa: E402
from agentenv_webarena.tasks.templates.base import click, goto, type_text  # noqa: E402

CMU = world.place_by_slug("carnegie-mellon-university")
PNC = world.place_by_slug("pnc-park")


@pytest.fixture(scope="module")
def tasks() -> list[dict]:
    return generate_tasks(only=["map"])


@pytest.fixture(scope="module")
def server(tasks, tmp_path_factory):
    task_file = tmp_path_factory.mktemp("map") / "tasks.json"
    task_file.write_text(json.dumps(tasks), encoding="utf-8")
    with launched_server("agentenv_webarena.launch", "--task-file", str(task_file), env=embedded_sites_env(),
                         timeout_s=120) as (
            base, _proc):
        yield base


@pytest.fixture(scope="module")
def site_urls(server) -> dict[str, str]:
    return requests.get(server + "/tasks", timeout=10).json()["site_urls"]


@pytest.fixture()
def env(server, tasks, site_urls):
    """An env reset to a map-only task (its start page is the map's front page)."""
    idx = next(i for i, t in enumerate(tasks) if t["sites"] == ["map"] and t["start_url"] == "__MAP__")
    with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as client:
        client.reset(idx)
        yield client


def _act(client: WebarenaEnvClient, step: dict, site_urls: dict[str, str]) -> str:
    """Play one reference-format step; returns the next observation text."""
    text = reference_actions(step, client.observation_metadata()["obs_nodes_info"], site_urls)
    out = client.step(f"In summary, the next action I will perform is ```{text}```")
    assert not (out.info or {}).get("error"), out.info
    return out.observation


def _numbers(observation: str) -> tuple[str, str]:
    distance = re.search(r"Distance: ([\d.]+ km)", observation)
    time = re.search(r"Time: (\d+:\d\d)", observation)
    assert distance and time, observation[:2000]
    return distance.group(1), time.group(1)


def test_search_a_place_and_open_its_page(env, site_urls):
    obs = _act(env, type_text("searchbox", "Search", CMU.name, enter=True), site_urls)
    assert "University" in obs and CMU.name in obs
    obs = _act(env, click("link", CMU.name), site_urls)
    assert element_path(CMU) in obs  # the URL line
    assert "40.4433, -79.9436" in obs and "5000 Forbes Avenue" in obs


def test_directions_are_stable_and_differ_by_mode(env, site_urls):
    map_url = "__MAP__"
    car_1 = _numbers(_act(env, goto(map_url + directions_url(CMU, PNC, "fossgis_osrm_car")), site_urls))
    car_2 = _numbers(_act(env, goto(map_url + directions_url(CMU, PNC, "fossgis_osrm_car")), site_urls))
    assert car_1 == car_2
    foot = _numbers(_act(env, click("link", "Foot"), site_urls))
    bike = _numbers(_act(env, click("link", "Bicycle"), site_urls))
    minutes = [int(h) * 60 + int(m) for h, m in (t.split(":") for _, t in (car_1, bike, foot))]
    assert minutes[0] < minutes[1] < minutes[2]


def test_the_directions_form_fills_from_typed_names(env, site_urls):
    _act(env, click("link", "Directions"), site_urls)
    _act(env, type_text("textbox", "From", CMU.name, enter=False), site_urls)
    obs = _act(env, type_text("textbox", "To", PNC.name, enter=True), site_urls)
    assert "engine=fossgis_osrm_car" in obs and "route=40.4433%2C-79.9436%3B40.4469%2C-80.0057" in obs
    assert _numbers(obs)[0].endswith(" km")


def test_nearest_pharmacy_lists_the_closest_first(env, site_urls):
    obs = _act(env, type_text("searchbox", "Search", f"pharmacies near {CMU.name}", enter=True), site_urls)
    nearest = min(world.places_in(category="pharmacy"), key=lambda p: world.distance_km(CMU, p))
    assert "km away" in obs
    listed = [p.name for p in world.places_in(category="pharmacy") if p.name in obs]
    assert listed and obs.index(nearest.name) == min(obs.index(n) for n in listed)


def test_saved_places_are_per_env_and_reset(server, tasks, site_urls):
    idx = next(i for i, t in enumerate(tasks) if t["sites"] == ["map"] and t["start_url"] == "__MAP__")
    place = world.place_by_slug("schenley-park")
    with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as a, \
            WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as b:
        a.reset(idx)
        b.reset(idx)
        _act(a, goto("__MAP__" + element_path(place)), site_urls)
        assert place.name in _act(a, click("button", "Save to My places"), site_urls)
        assert place.name not in _act(b, goto("__MAP__/my_places"), site_urls)
        a.reset(idx)
        assert place.name not in _act(a, goto("__MAP__/my_places"), site_urls)


def _replay(server, tasks, site_urls, jobs: list[tuple[int, bool]]):
    def run(chunk):
        with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as client:
            return [(wrong, play_task(client, i, tasks[i], site_urls, wrong=wrong)) for i, wrong in chunk]

    with ThreadPoolExecutor(2) as pool:
        results = [r for part in pool.map(run, [jobs[0::2], jobs[1::2]]) for r in part]
    assert [(r.index, r.reward, r.error) for wrong, r in results if not wrong and r.reward != 1.0] == []
    assert [(r.index, r.reward) for wrong, r in results if wrong and r.reward != 0.0] == []


def test_reference_replay_of_a_few_kinds(server, tasks, site_urls):
    """One task of a few template kinds (string, URL, page state, map + shop admin) earns 1.0, and a wrong
    episode of two of them 0."""
    wanted = (6000, 6030, 6042, 6048, 6060)
    sample = [next(i for i, t in enumerate(tasks) if t["intent_template_id"] == tid) for tid in wanted]
    _replay(server, tasks, site_urls, [(i, False) for i in sample] + [(i, True) for i in sample[1:3]])


@pytest.mark.slow
def test_reference_replay_one_task_per_template(server, tasks, site_urls):
    first: dict[int, int] = {}
    for i, t in enumerate(tasks):
        first.setdefault(t["intent_template_id"], i)
    sample = sorted(first.values())
    _replay(server, tasks, site_urls, [(i, False) for i in sample] + [(i, True) for i in sample[::4]])
