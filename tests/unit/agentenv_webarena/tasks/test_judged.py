"""Judge-scored free-text questions (`tasks.templates.judged`, ids 9300-9399): ids and held-out split, the
judge-scored share of the generated test list, scoring without a judge, and answers that follow the pages."""
from __future__ import annotations

import asyncio
import html
import json
import re
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from agentenv_webarena.sites import forum, gitlab, wiki
from agentenv_webarena.sites.apps import _control_routes, build_database
from agentenv_webarena.sites.shop import admin
from agentenv_webarena.sites.shop import app as storefront
from agentenv_webarena.sites.store import INSTANCE_HEADER, InstanceStore
from agentenv_webarena.tasks import auth, stats
from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks
from agentenv_webarena.tasks.generate import generate_tasks
from agentenv_webarena.tasks.templates import MODULES
from agentenv_webarena.tasks.templates import judged as templates
from agentenv_webarena.webarena.evaluation_harness import NeedsJudge, StringEvaluator

IDS_DIR = Path(__file__).resolve().parents[4] / "AgentItemId"


@pytest.fixture(scope="module")
def tasks() -> list[dict]:
    return generate_tasks(only=["judged"])


@pytest.fixture(scope="module")
def store() -> InstanceStore:
    return InstanceStore(build_database)


def _client(store: InstanceStore, app, instance: str, prefix: str = "/") -> TestClient:
    client = TestClient(Starlette(routes=[*_control_routes(store), Mount(prefix, app=app)]),
                        headers={INSTANCE_HEADER: instance})
    client.post("/__control/reset", params={"instance": instance})
    return client


def _of(tasks: list[dict], template_id: int) -> list[dict]:
    found = [t for t in tasks if t["intent_template_id"] == template_id]
    assert len(found) >= 5, template_id
    return found


def _answer(task: dict) -> str:
    (answer,) = task["eval"]["reference_answers"]["fuzzy_match"]
    return answer


def _feasible(tasks: list[dict]) -> list[dict]:
    return [t for t in tasks if not stats.is_na(t)]


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_ids_held_out_last_module_and_sites(tasks):
    ids = [tid for tid, _ in templates.TEMPLATES]
    assert MODULES[-1] == "judged"  # runs after every other module: no earlier task id moves
    assert len(set(ids)) == len(ids) >= 6 and all(9300 <= i <= 9399 for i in ids)
    assert templates.TEST_ONLY_TEMPLATES == set(ids)
    assert all(stats.needs_judge(t) or stats.is_na(t) for t in tasks)
    na = [t for t in tasks if stats.is_na(t)]
    assert 0.02 <= len(na) / len(tasks) <= 0.08 and len({t["intent_template_id"] for t in na}) == len(na)
    assert {stats.site_kind(t) for t in tasks} >= {"shopping", "shopping_admin", "reddit", "gitlab", "wikipedia"}
    assert stats.suite_stats(tasks)["all_na_templates"] == []


def test_generation_is_deterministic(tasks):
    assert json.dumps(generate_tasks(only=["judged"])) == json.dumps(tasks)


def test_generated_split_files_hold_every_judged_task_in_test_and_reach_a_tenth_judge_scored():
    suite = load_tasks(EMBEDDED_TASK_FILE)
    split = {name: {int(r["item_id"].rsplit("_", 1)[1]) for r in json.loads((IDS_DIR / f"webarena_{name}.json")
                                                                           .read_text(encoding="utf-8"))}
             for name in ("train", "test", "test_iid", "judge")}
    judged = {t["task_id"] for t in suite if t["intent_template_id"] in templates.TEST_ONLY_TEMPLATES}
    assert len(judged) >= 30 and judged <= split["test"]
    assert not judged & (split["train"] | split["test_iid"] | split["judge"])
    assert not any(stats.needs_judge(suite[i]) for i in split["train"])
    share = sum(stats.needs_judge(suite[i]) for i in split["test"]) / len(split["test"])
    assert share >= 0.10, share


def test_the_reference_answer_scores_one_and_another_answer_needs_the_judge(tasks):
    def score(task: dict, answer: str) -> float:
        trajectory = [{"action_type": "stop", "answer": answer}]
        return asyncio.run(StringEvaluator()(trajectory, task, None))

    for t in tasks:
        reference = t["reference_action_sequence"][-1]["answer"]
        assert score(t, reference) == 1.0
        assert score(t, reference.upper()) == 1.0  # WebArena's cleaning lower-cases both sides
        with pytest.raises(NeedsJudge):  # the env reports needs_judge with reward 0
            score(t, "It is nothing of the kind.")


def test_liked_reasons_follow_the_admin_review_pages(tasks, store):
    client = _client(store, admin.create_app(store), "judged-admin", "/admin")
    account = auth.ACCOUNTS["shopping_admin"]
    client.post("/admin/login", data={"login[username]": account["username"], "login[password]": account["password"]})
    for t in _of(tasks, 9300):
        grid = client.get("/admin/review/product/", params={"q": t["instantiation_dict"]["product"]}).text
        liked = re.findall(r'<td>([45]) stars</td>.*?href="/admin/review/product/edit/id/(\d+)/"', grid)
        assert liked
        texts = []
        for _, review_id in reversed(liked):  # oldest first, as the summary orders its reasons
            page = client.get(f"/admin/review/product/edit/id/{review_id}/").text
            texts.append(html.unescape(re.search(r'<textarea id="detail"[^>]*>([^<]*)</textarea>', page).group(1)))
        assert _answer(t) == f"Reviewers like that {'; '.join(templates._clauses(texts, templates._PRAISE))}."


def test_criticisms_follow_the_product_page_of_the_described_product(tasks, store):
    client = _client(store, storefront.create_app(store), "judged-store")
    for t in _of(tasks, 9301):
        v = t["instantiation_dict"]
        results = client.get("/catalogsearch/result/", params={"q": f"{v['brand']} {v['noun']}"}).text
        links = [(path, html.unescape(n)) for path, n in
                 re.findall(r'class="product-item-link" href="([^"]+)">([^<]+)<', results)]
        named = [(path, n) for path, n in links
                 if n.startswith(v["brand"] + " ") and n.lower().endswith(v["noun"].lower())]
        if stats.is_na(t):
            assert named == []
            continue
        ((path, name),) = named
        assert t["reference_action_sequence"][1]["element"]["name"] == name
        page = client.get(path).text
        reviews = re.findall(r'Rating: (\d) out of 5 stars[^<]*</p><p class="review-content">([^<]*)</p>', page)
        critical = [html.unescape(text) for stars, text in reviews if int(stars) <= 4]
        criticisms = templates._clauses(critical, templates._CRITICISM)
        assert _answer(t) == f"Reviewers criticise that {'; '.join(criticisms)}."


def test_thread_gists_follow_the_post_bodies(tasks, store):
    client = _client(store, forum.create_app(store), "judged-forum")
    for t in _of(tasks, 9302):
        v = t["instantiation_dict"]
        results = client.get("/search", params={"q": v["topic"]}).text
        title = t["reference_action_sequence"][1]["element"]["name"]
        path = re.search(rf'href="(/f/{v["forum"]}/\d+/[^"]+)">{re.escape(html.escape(title))}<',
                         results).group(1)
        post = client.get(path).text
        assert f'href="/user/{v["user"]}"' in post
        body = _text(re.search(r'<div class="submission__body">(.*?)</div>', post, re.S).group(1))
        said = sorted((s for s in templates._POSTER_SAYS if s in body), key=body.index)
        assert len(said) >= 2
        assert _answer(t) == f"The poster says {templates._join([templates._POSTER_SAYS[s] for s in said])}."


def test_issue_discussions_follow_the_issue_pages(tasks, store):
    client = _client(store, gitlab.create_app(store), "judged-gitlab")
    account = auth.ACCOUNTS["gitlab"]
    client.post("/users/sign_in", data={"user[login]": account["username"], "user[password]": account["password"]})
    for t in _of(tasks, 9303):
        listing = client.get(t["reference_action_sequence"][0]["url"].replace("__GITLAB__", "")).text
        title = t["reference_action_sequence"][1]["element"]["name"]
        assert templates._ISSUES[title] == t["instantiation_dict"]["issue"]
        path = re.search(rf'<a href="([^"]+)" class="issue-title-text">{re.escape(html.escape(title))}</a>',
                         listing).group(1)
        page = client.get(path).text
        notes = [_text(n).strip() for n in re.findall(r'<div class="note-text">(.*?)</div>', page, re.S)]
        state = re.search(r'data-testid="issue-state">([^<]+)<', page).group(1)
        status = "it is still open" if state.strip().lower() == "open" else "it is closed"
        said = templates._join(templates._clauses(notes, templates._COMMENTERS))
        assert _answer(t) == f"Commenters {said}; {status}."


def test_readme_summaries_follow_the_project_pages(tasks, store):
    client = _client(store, gitlab.create_app(store), "judged-readme")
    account = auth.ACCOUNTS["gitlab"]
    client.post("/users/sign_in", data={"user[login]": account["username"], "user[password]": account["password"]})
    for t in _of(tasks, 9304):
        owner_page = client.get(t["reference_action_sequence"][0]["url"].replace("__GITLAB__", "")).text
        link = t["reference_action_sequence"][1]["element"]["name"]
        namespace = link.split(" / ")[0]
        listed = dict((html.unescape(n), path) for path, n in re.findall(
            rf'<a href="([^"]+)"[^>]*>({re.escape(namespace)} / [^<]+)</a>', owner_page))
        language = t["instantiation_dict"]["project"].split()[1]  # "my Go project", "the Go project of ..."
        pages = {n: client.get(path).text for n, path in listed.items()}
        in_language = [n for n, page in pages.items()
                       if f'<span class="repository-language">{html.escape(language)}</span>' in page]
        assert in_language == [link]  # the description names one project of the owner
        page = pages[link]
        readme = " ".join(_text(re.search(r'<article class="readme" id="readme">(.*?)</article>', page, re.S)
                                .group(1)).split())
        about, start, rest = re.fullmatch(r"(.+?) To get started, clone the repository and read (\S+)\. (.+)",
                                          _answer(t)).groups()
        license_, maintainer = re.fullmatch(r"It is released under the (.+) and maintained by (.+)\.", rest).groups()
        assert about in readme and f"read {start} to get started" in readme
        assert f"{license_}, see LICENSE" in readme and f"Maintained by {maintainer}." in readme


def test_described_places_follow_the_wiki_lists_and_articles(tasks, store):
    client = TestClient(wiki.create_app(store))

    def cell(text: str) -> str:
        return " ".join(_text(text).split()).replace(" ,", ",")

    for t in _of(tasks, 9305):
        v = t["instantiation_dict"]
        listing = client.get(wiki.article_path(t["reference_action_sequence"][0]["element"]["name"])).text
        table = [[cell(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
                 for row in re.findall(r"<tr>(.*?)</tr>", listing, re.S)]
        there = [row for row in table if row and row[1] == v["town"]]
        if stats.is_na(t):
            assert there == [] and len(table) > 3
            continue
        name = t["reference_action_sequence"][1]["element"]["name"]
        assert there == [[name, v["town"], v["when"].rsplit(" ", 1)[1]]]  # the only one of its kind there
        article = " ".join(_text(client.get(wiki.article_path(name)).text).split())
        description = _answer(t).removeprefix(f"It is {name}. ")
        assert description != _answer(t) and description in article
