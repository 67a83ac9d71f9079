"""Later code host, forum, map and multi-site families (`tasks.templates.site_families`, ids 9100-9199)."""
from __future__ import annotations

import itertools
import re

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites import gitlab
from agentenv_webarena.sites import map as map_site
from agentenv_webarena.sites.apps import _control_routes, build_database
from agentenv_webarena.sites.map import directions_url
from agentenv_webarena.sites.map.search import lookup
from agentenv_webarena.sites.store import INSTANCE_HEADER, InstanceStore
from agentenv_webarena.tasks.generate import generate_tasks
from agentenv_webarena.tasks.templates import site_families as templates


@pytest.fixture(scope="module")
def tasks() -> list[dict]:
    return generate_tasks(only=["site_families"])


@pytest.fixture(scope="module")
def store() -> InstanceStore:
    return InstanceStore(build_database)


def _client(store: InstanceStore, site, instance: str) -> TestClient:
    app = Starlette(routes=[*_control_routes(store), Mount("/", app=site.create_app(store))])
    client = TestClient(app, headers={INSTANCE_HEADER: instance})
    client.post("/__control/reset", params={"instance": instance})
    return client


def test_ids_held_out_share_infeasible_share_and_one_site_starts(tasks):
    ids = [tid for tid, _ in templates.TEMPLATES]
    assert len(set(ids)) == len(ids) >= 12 and all(9100 <= i <= 9199 for i in ids)
    assert templates.TEST_ONLY_TEMPLATES <= set(ids) and len(templates.TEST_ONLY_TEMPLATES) * 5 >= len(ids)
    infeasible = [t for t in tasks if (t["eval"]["reference_answers"] or {}).get("fuzzy_match") == "N/A"]
    assert 0.03 <= len(infeasible) / len(tasks) <= 0.08
    # judge-scored answers other than N/A only in held-out templates
    assert all(t["intent_template_id"] in templates.TEST_ONLY_TEMPLATES for t in tasks
               if isinstance((t["eval"]["reference_answers"] or {}).get("fuzzy_match"), list))
    multi = [t for t in tasks if len(t["sites"]) > 1]
    assert len({t["intent_template_id"] for t in multi}) >= 2
    assert all(" |AND| " not in t["start_url"] for t in tasks)


def test_visiting_order_answers_follow_the_directions_pages(tasks, store):
    client = _client(store, map_site, "sitefam-order")
    minutes: dict[tuple[str, str], int] = {}

    def leg(a, b) -> int:
        if (a.name, b.name) not in minutes:
            page = client.get(directions_url(a, b)).text
            h, m = re.search(r'id="route_time">Time: (\d+):(\d\d)<', page).groups()
            minutes[(a.name, b.name)] = int(h) * 60 + int(m)
        return minutes[(a.name, b.name)]

    order_tasks = [t for t in tasks if t["intent_template_id"] == 9110]
    assert len(order_tasks) >= 4
    for t in order_tasks:
        v = t["instantiation_dict"]
        start, stops = lookup(v["start"]), [lookup(v[k]) for k in "abc"]
        best = min(itertools.permutations(stops),
                   key=lambda o: sum(leg(a, b) for a, b in zip((start, *o), o, strict=False)))
        assert t["eval"]["reference_answers"]["exact_match"] == ", ".join(p.name for p in best)


def test_todo_counts_follow_the_todo_page(tasks, store):
    client = _client(store, gitlab, "sitefam-todos")
    r = client.post("/users/sign_in", data={"user[login]": "byteblaze", "user[password]": "hello1234"})
    assert r.status_code == 200
    pending = client.get("/dashboard/todos").text
    total = int(re.search(r">To Do (\d+)<", pending).group(1))
    asked = next(t for t in tasks if t["intent_template_id"] == 9100 and t["instantiation_dict"]["kind"] == "to-dos")
    assert asked["eval"]["reference_answers"]["exact_match"] == str(total) == str(pending.count('class="todo todo-'))
