"""The later families of `tasks.templates.more_families` (ids 9200-9299): ids and split shape, and answers that
agree with the pages the agent reads (search terms grid, newsletter grid, state pages)."""
from __future__ import annotations

import re

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites import map as map_site
from agentenv_webarena.sites.apps import _control_routes, build_database
from agentenv_webarena.sites.shop import admin
from agentenv_webarena.sites.store import INSTANCE_HEADER, InstanceStore
from agentenv_webarena.tasks import auth
from agentenv_webarena.tasks.generate import generate_tasks
from agentenv_webarena.tasks.templates import MODULES
from agentenv_webarena.tasks.templates import more_families as templates


@pytest.fixture(scope="module")
def tasks() -> list[dict]:
    return generate_tasks(only=["more_families"])


@pytest.fixture(scope="module")
def store() -> InstanceStore:
    return InstanceStore(build_database)


def _admin(store: InstanceStore, instance: str) -> TestClient:
    app = Starlette(routes=[*_control_routes(store), Mount("/admin", app=admin.create_app(store))])
    client = TestClient(app, headers={INSTANCE_HEADER: instance})
    client.post("/__control/reset", params={"instance": instance})
    account = auth.ACCOUNTS["shopping_admin"]
    client.post("/admin/login", data={"login[username]": account["username"],
                                      "login[password]": account["password"]})
    return client


def _of(tasks: list[dict], template_id: int) -> list[dict]:
    found = [t for t in tasks if t["intent_template_id"] == template_id]
    assert found, template_id
    return found


def test_ids_split_infeasible_share_and_one_site_starts(tasks):
    ids = [tid for tid, _ in templates.TEMPLATES]
    # runs after the ten modules before it (no earlier task id moves); later modules follow it
    assert MODULES.index("more_families") == 10
    assert len(set(ids)) == len(ids) >= 15 and all(9200 <= i <= 9299 for i in ids)
    assert templates.TEST_ONLY_TEMPLATES <= set(ids) and len(templates.TEST_ONLY_TEMPLATES) * 5 >= len(ids)
    infeasible = [t for t in tasks if (t["eval"]["reference_answers"] or {}).get("fuzzy_match") == "N/A"]
    assert 0.03 <= len(infeasible) / len(tasks) <= 0.06
    assert not any(isinstance((t["eval"]["reference_answers"] or {}).get("fuzzy_match"), list)
                   and t["intent_template_id"] not in templates.TEST_ONLY_TEMPLATES for t in tasks)
    multi = [t for t in tasks if len(t["sites"]) > 1]
    assert multi and all(t["start_url"] == "__SHOPPING__" and " |AND| " not in t["start_url"] for t in multi)
    families = {"9200": "special price", "9202": "shipping address", "9204": "searched", "9209": "newsletter",
                "9213": "template", "9216": "border", "9219": "theme"}
    for tid, word in families.items():
        assert all(word in t["intent"] for t in _of(tasks, int(tid)))


def test_search_term_answers_follow_the_grid(tasks, store):
    client = _admin(store, "morefam-terms")
    grid = client.get("/admin/search/term/index/").text
    uses = dict(re.findall(r'<td class="col-query">([^<]*)</td>.*?<td class="col-uses">(\d+)</td>', grid))
    assert uses
    for t in _of(tasks, 9204):
        q = t["instantiation_dict"]["query"]
        page = client.get("/admin/search/term/index/", params={"q": q}).text
        shown = dict(re.findall(r'<td class="col-query">([^<]*)</td>.*?<td class="col-uses">(\d+)</td>', page))
        assert t["eval"]["reference_answers"]["exact_match"] == shown[q]
    top3 = next(t for t in _of(tasks, 9205) if t["instantiation_dict"]["n"] == 3)
    assert top3["eval"]["reference_answers"]["must_include"] == list(uses)[:3]


def test_newsletter_answers_follow_the_subscribers_grid(tasks, store):
    client = _admin(store, "morefam-news")
    for t in _of(tasks, 9212):
        name = t["instantiation_dict"]["customer"]
        page = client.get("/admin/newsletter/subscriber/", params={"q": name}).text
        status = re.findall(r'<td class="col-status">(\w+)</td>', page)
        assert t["eval"]["reference_answers"]["exact_match"] == ("yes" if status == ["Subscribed"] else "no")


def test_state_border_answers_follow_the_state_pages(tasks, store):
    app = Starlette(routes=[*_control_routes(store), Mount("/", app=map_site.create_app(store))])
    client = TestClient(app, headers={INSTANCE_HEADER: "morefam-map"})
    client.post("/__control/reset", params={"instance": "morefam-map"})
    for t in _of(tasks, 9216):
        results = client.get("/search", params={"query": t["instantiation_dict"]["state"]}).text
        first = re.search(r'<a class="set_position" href="([^"]+)">', results).group(1)
        listed = re.findall(r'<li data-state="([^"]+)">', client.get(first).text)
        assert t["eval"]["reference_answers"]["must_include"] == listed


def test_state_changing_tasks_fail_on_the_pristine_pages(tasks):
    for t in tasks:
        if "program_html" in t["eval"]["eval_types"]:
            assert t["eval"]["program_html"] and all(p["required_contents"] for p in t["eval"]["program_html"])
    # a special price always differs from the regular one, which the edit page keeps
    for t in _of(tasks, 9200) + _of(tasks, 9221):
        checks = {p["locator"]: p["required_contents"]["exact_match"] for p in t["eval"]["program_html"]}
        special = checks["document.querySelector(\"#product-special-price\").value"]
        assert special and special != checks["document.querySelector(\"#product-price\").value"]
