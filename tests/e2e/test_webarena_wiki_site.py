"""End to end: the embedded wiki and WebArena's homepage in real Chromium, and a replay of one wiki task of
every template through the env server (`python -m agentenv_webarena.launch`).

The browser checks read the accessibility tree Chromium builds (what an agent sees): an article's infobox
rows, its links to the place's town and to the map's page of the place, the search results, and the
homepage's site cards. The replay plays each sampled task's reference sequence to 1.0 (and, marked slow,
a wrong episode to 0).
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import pytest
from helpers import embedded_sites_env, launched_server, require_chromium

CHROMIUM = require_chromium()

from agentenv.envs.webarena import WebarenaEnvClient  # noqa: E402
from agentenv_webarena.expert import play_task  # noqa: E402
from agentenv_webarena.sites import EmbeddedSites, world  # noqa: E402
from agentenv_webarena.sites.homepage import CARDS  # noqa: E402
from agentenv_webarena.sites.wiki import corpus  # noqa: E402
from agentenv_webarena.webarena.browser_env import (  # noqa: E402
    BrowserConfig,
    BrowserHost,
    BrowserSession,
    create_id_based_action,
)

PLACE = world.place_by_slug("carnegie-museum-of-art")


@pytest.fixture(scope="module")
def urls():
    with EmbeddedSites() as sites:
        yield dict(sites.urls)


@pytest.fixture(scope="module")
def host(urls):
    hosts = tuple(sorted({urlparse(u).netloc for u in urls.values()}))
    browser_host = BrowserHost(BrowserConfig(executable_path=CHROMIUM, allowed_hosts=hosts,
                                             current_viewport_only=False))
    try:
        browser_host.start()
        yield browser_host
    finally:
        browser_host.close()


@pytest.fixture
def session(host):
    browser_session = BrowserSession(host)
    try:
        yield browser_session
    finally:
        host.run(browser_session.close(), timeout_s=30)


def _open(host, session, url: str) -> dict:
    host.run(session.open([url]), timeout_s=60)
    return host.run(session.observe(), timeout_s=30).nodes_info


def _act(host, session, text: str) -> dict:
    host.run(session.execute(create_id_based_action(text)), timeout_s=30)
    return host.run(session.observe(), timeout_s=30).nodes_info


def _find(nodes: dict, role: str, name: str) -> str:
    hits = [nid for nid, n in nodes.items() if n["role"] == role and n["name"] == name]
    assert hits, f"no {role} named {name!r}; {role}s: {[n['name'] for n in nodes.values() if n['role'] == role][:20]}"
    return hits[0]


def _names(nodes: dict, role: str) -> list[str]:
    return [n["name"] for n in nodes.values() if n["role"] == role]


def test_article_renders_with_its_infobox(host, session, urls):
    nodes = _open(host, session, urls["wikipedia"] + corpus.article_path(PLACE.name))
    assert PLACE.name in _names(nodes, "heading")
    assert {"Type", "Location", "Coordinates", "Founded", "Architect"} <= set(_names(nodes, "rowheader"))
    assert str(PLACE.founded) in _names(nodes, "cell")
    assert "History" in _names(nodes, "heading")


def test_article_links_to_its_town_and_to_the_maps_page_of_the_place(host, session, urls):
    article = urls["wikipedia"] + corpus.article_path(PLACE.name)
    nodes = _open(host, session, article)
    _act(host, session, f"click [{_find(nodes, 'link', PLACE.town)}]")
    assert session.page.url.endswith(corpus.article_path(corpus.town_title(world.town_by_name(PLACE.town))))
    nodes = _open(host, session, article)
    _act(host, session, f"click [{_find(nodes, 'link', corpus.coordinates_text(PLACE.lat, PLACE.lon))}]")
    assert session.page.url == f"{urls['map']}/{PLACE.osm_type}/{PLACE.id}"
    heading = host.run(session.page.evaluate("() => document.querySelector('h2.place-name').textContent"))
    assert heading.strip() == PLACE.name


def test_search_finds_an_article(host, session, urls):
    nodes = _open(host, session, urls["wikipedia"] + "/")
    assert session.page.url.endswith(corpus.article_path(corpus.LANDING_TITLE))
    nodes = _act(host, session, f"type [{_find(nodes, 'searchbox', 'Search')}] [Rust] [1]")
    assert "/search?" in session.page.url and "pattern=Rust" in session.page.url
    _act(host, session, f"click [{_find(nodes, 'link', 'Rust (programming language)')}]")
    assert session.page.url.endswith(corpus.article_path("Rust (programming language)"))


def test_homepage_lists_every_site_and_its_cards_lead_there(host, session, urls):
    nodes = _open(host, session, urls["homepage"] + "/")
    titles = [title for _key, title, _blurb, _path in CARDS]
    assert set(titles) <= set(_names(nodes, "link"))
    hrefs = host.run(session.page.evaluate("() => Object.fromEntries([...document.querySelectorAll('.card a')]"
                                           ".map(a => [a.textContent, a.href]))"))
    for key, title, _blurb, _path in CARDS:
        base = urls["homepage"] if key in ("calculator", "scratchpad") else urls[key]
        assert hrefs[title].startswith(base), (title, hrefs[title])
        status = host.run(session.page.request.get(hrefs[title]), timeout_s=30).status
        assert status == 200, (title, hrefs[title], status)
    _act(host, session, f"click [{_find(nodes, 'link', 'Wikipedia')}]")
    assert session.page.url == urls["wikipedia"] + corpus.article_path(corpus.LANDING_TITLE)


@pytest.fixture(scope="module")
def wiki_tasks():
    from agentenv_webarena.tasks.generate import generate_tasks

    return generate_tasks(only=["wiki"])


@pytest.fixture(scope="module")
def sample_file(wiki_tasks, tmp_path_factory):
    """One task of every wiki template (its shortest reference, to keep the replay fast), renumbered so
    task_id == index."""
    by_template: dict[int, list[dict]] = {}
    for t in wiki_tasks:
        by_template.setdefault(t["intent_template_id"], []).append(t)
    sample = [dict(min(tasks, key=lambda t: len(t["reference_action_sequence"])), task_id=i)
              for i, (_, tasks) in enumerate(sorted(by_template.items()))]
    path = tmp_path_factory.mktemp("wiki_tasks") / "sample.json"
    path.write_text(json.dumps(sample))
    return str(path), sample


def test_wiki_suite_meets_its_targets(wiki_tasks):
    """The wiki's targets: size, multi-site shares, state-changing share, held-out templates, one truth per task."""
    from agentenv_webarena.tasks.templates.wiki import TEST_ONLY_TEMPLATES

    templates: dict[tuple, set] = {}
    for t in wiki_tasks:
        templates.setdefault(tuple(sorted(t["sites"])), set()).add(t["intent_template_id"])
    all_templates = {t["intent_template_id"] for t in wiki_tasks}
    assert len(all_templates) >= 28 and len(wiki_tasks) >= 170
    assert all(7000 <= tid < 7200 for tid in all_templates)
    pair = {k: sum(tuple(sorted(t["sites"])) == k for t in wiki_tasks) for k in templates}
    assert len(templates[("map", "wikipedia")]) >= 4 and pair[("map", "wikipedia")] >= 24
    assert len(templates[("gitlab", "wikipedia")]) >= 2 and pair[("gitlab", "wikipedia")] >= 10
    homepage = {t["intent_template_id"] for t in wiki_tasks if t["start_url"].startswith("__HOMEPAGE__")}
    assert len(homepage) >= 2
    state = [t for t in wiki_tasks if "program_html" in t["eval"]["eval_types"]]
    assert len(state) >= 0.2 * len(wiki_tasks)
    kinds = {tuple(t["eval"]["eval_types"]) for t in wiki_tasks}
    assert {("string_match",), ("url_match",), ("program_html",)} <= kinds
    assert len(TEST_ONLY_TEMPLATES) * 5 >= len(all_templates) and TEST_ONLY_TEMPLATES <= all_templates
    held_out = [t for t in wiki_tasks if t["intent_template_id"] in TEST_ONLY_TEMPLATES]
    assert any("program_html" in t["eval"]["eval_types"] for t in held_out)
    assert any("string_match" in t["eval"]["eval_types"] for t in held_out)
    for tid in all_templates:
        answers = [(t["eval"].get("reference_answers") or {}).get("fuzzy_match") for t in wiki_tasks
                   if t["intent_template_id"] == tid]
        assert any(a != "N/A" for a in answers), f"template {tid} is N/A in every instance"
    assert max(len(t["reference_action_sequence"]) for t in wiki_tasks) <= 29


@pytest.fixture(scope="module")
def server(sample_file):
    with launched_server("agentenv_webarena.launch", "--task-file", sample_file[0], env=embedded_sites_env(),
                         timeout_s=120) as (base, _):
        yield base


def _replay(server: str, tasks: list[dict], wrong: bool) -> list:
    import requests

    site_urls = requests.get(server + "/tasks", timeout=10).json()["site_urls"]

    def run(chunk: list[int]) -> list:
        with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as client:
            return [play_task(client, i, tasks[i], site_urls, wrong=wrong) for i in chunk]

    ids = list(range(len(tasks)))
    with ThreadPoolExecutor(2) as pool:
        return [r for part in pool.map(run, [ids[0::2], ids[1::2]]) for r in part]


@pytest.mark.slow  # the default run's tests/e2e/test_webarena_api.py replays one task of every template
def test_one_task_per_template_replays_to_one(server, sample_file):
    tasks = sample_file[1]
    assert len(tasks) >= 28
    results = _replay(server, tasks, wrong=False)
    failed = [(r.index, tasks[r.index]["intent_template_id"], r.reward, r.error) for r in results if r.reward != 1.0]
    assert failed == []


@pytest.mark.slow
def test_one_task_per_template_scores_zero_when_played_wrong(server, sample_file):
    tasks = sample_file[1]
    results = _replay(server, tasks, wrong=True)
    assert [(r.index, tasks[r.index]["intent_template_id"], r.reward) for r in results if r.reward != 0.0] == []
