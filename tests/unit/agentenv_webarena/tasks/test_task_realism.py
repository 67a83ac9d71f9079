"""The embedded tasks check what they ask (on the generated suite; replays: tests/e2e/test_webarena_half_done.py).

Every state-changing template names in its eval each field its intent asks to set; no template is
infeasible (N/A) in every instance; whole-page checks (`locator: ""`) exist as in WebArena; few tasks
are one action plus stop. The numbers come from `agentenv_webarena.tasks.stats`, which prints them.
"""
from __future__ import annotations

import pytest

from agentenv_webarena.sites.apps import pristine_database
from agentenv_webarena.tasks import generate, stats

# State-changing template -> the intent's slots whose values its checks must contain (verbatim, in a
# required content or a checked URL). [] = the intent names only the target, which the check opens by
# its URL (an order, a product, a review, a post).
TEMPLATE_FIELDS: dict[int, list[str]] = {
    1008: ["product", "quantity"], 1009: ["product"], 1010: ["product", "title", "text"],
    1011: ["street", "city", "state", "zip"], 1012: ["product"], 1013: [], 1019: ["product", "quantity"],
    1020: ["last_name"],
    2007: [], 2008: [], 2009: ["price"], 2010: [], 2011: ["quantity"], 2012: ["text"], 2013: [], 2014: [],
    2015: ["comment"], 2016: ["comment"],
    3009: ["forum", "title", "body"], 3010: ["comment"], 3011: ["reply"], 3012: [], 3013: [], 3014: ["body"],
    3015: ["new"], 3016: ["bio"], 3017: ["forum"], 3018: ["old", "new"], 3022: ["name", "title", "description"],
    3023: ["thing"], 3024: [], 3025: [],
    4000: ["forum"], 4001: ["forum"], 4002: [], 4003: [], 4004: [], 4005: ["forum"],
    5050: ["name"], 5051: ["name", "role"], 5052: ["user", "project", "role"], 5053: ["user", "project", "role"],
    5054: ["project", "title"], 5055: ["project", "title", "due"], 5056: ["comment", "project"],
    5057: ["comment", "project"], 5058: ["project"], 5059: ["project"], 5060: ["project"],
    5061: ["label", "project"], 5062: ["title", "project", "start", "due"], 5063: ["file", "project", "content"],
    5064: ["folder", "project", "url"], 5065: [], 5066: [], 5067: [], 5068: ["project"],
    5069: ["project", "description"], 5070: ["status"], 5071: ["url"], 5072: [], 5073: ["project", "text"],
    5074: ["project", "source", "target", "title"], 5075: ["project"], 5076: ["project"],
    5100: ["project", "forum"], 5101: ["project"], 5102: ["project"], 5103: [],
    6040: ["a", "b"], 6041: ["place"], 6042: ["place"], 6043: ["place"], 6044: [], 6045: ["text"], 6046: [],
    6047: [], 6048: ["phone"], 6049: ["hours"], 6050: ["url"], 6051: ["access"], 6052: [],
    7032: ["place"], 7033: [], 7034: ["language"], 7040: [], 7042: ["place"], 7043: [], 7044: [], 7052: ["origin"],
    7055: [], 7062: ["project"],
    8003: [], 8004: ["product"], 8005: ["product"], 8014: [], 8015: ["product"], 8021: [],
    8022: ["url", "forum", "title"], 8023: [], 8030: [], 8031: ["product", "forum"],
    9102: [], 9103: [], 9106: ["role"], 9107: ["name", "visibility"], 9108: ["field", "text"],
    9109: ["url", "forum", "title"], 9111: ["forum"], 9112: ["project"], 9113: ["name", "date", "scopes"], 9114: [],
}
TEMPLATE_FIELDS.update({  # shop_families
    9000: ["name", "color", "size", "category", "price", "qty"], 9001: ["name"], 9002: [], 9003: ["title"],
    9004: ["number"], 9008: ["reason"], 9011: ["product", "size"],
})
TEMPLATE_FIELDS.update({  # more_families (addresses and percentages are checked by their parts and results)
    9200: [], 9201: ["price"], 9202: [], 9203: [], 9207: ["query"], 9208: ["path"], 9209: [], 9210: [], 9211: [],
    9213: ["name"], 9214: ["name"], 9221: [],
})


@pytest.fixture(scope="module")
def tasks():
    return generate.generate_tasks(pristine_database())


def _evidence(task: dict) -> str:
    """Everything a task's eval compares against: required contents, reference URL, target URLs."""
    ev = task["eval"]
    parts = [ev.get("reference_url") or ""]
    for t in ev.get("program_html") or []:
        required = t["required_contents"]
        parts += [t["url"], t["locator"], required.get("exact_match", ""), *required.get("must_include", [])]
    return "\n".join(parts)


def test_every_state_changing_template_checks_the_fields_its_intent_names(tasks):
    changing = {t["intent_template_id"] for t in tasks if stats.is_state_changing(t)}
    assert changing <= set(TEMPLATE_FIELDS), f"declare the checked fields of {sorted(changing - set(TEMPLATE_FIELDS))}"
    for t in tasks:
        if not stats.is_state_changing(t):
            continue
        evidence = _evidence(t)
        for slot in TEMPLATE_FIELDS[t["intent_template_id"]]:
            value = str(t["instantiation_dict"][slot])
            assert value in evidence, (t["task_id"], t["intent_template_id"], slot, value)


def test_the_review_template_checks_rating_author_summary_and_text(tasks):
    reviews = [t for t in tasks if t["intent_template_id"] == 1010]
    assert len(reviews) >= 10
    for t in reviews:
        values = t["instantiation_dict"]
        exact = {tg["locator"]: tg["required_contents"].get("exact_match") for tg in t["eval"]["program_html"]}
        rating = next(v for k, v in exact.items() if "latest_review_rating" in k)
        author = next(v for k, v in exact.items() if "latest_review_author" in k)
        assert rating == str(values["stars"] * 20) and author == "Emma"
        assert {values["title"], values["text"], values["product"]} <= set(exact.values())


def test_no_template_is_infeasible_in_every_instance(tasks):
    assert stats.suite_stats(tasks)["all_na_templates"] == []
    na_templates = {t["intent_template_id"] for t in tasks if stats.is_na(t)}
    assert len(na_templates) >= 4  # infeasible instances remain, mixed into feasible templates


def test_whole_page_checks_and_few_one_action_tasks(tasks):
    s = stats.suite_stats(tasks)
    assert s["whole_page_checks"] >= 0.10 * s["state_changing"]  # WebArena: 105 `locator: ""` checks
    for t in tasks:
        for target in t["eval"].get("program_html") or []:
            if target["locator"] == "":  # the page as a whole: a plain text to find in it
                assert target["required_contents"].get("must_include"), t["task_id"]
    assert s["one_action"] <= 0.06 * s["tasks"]  # was 96 / 830 (11.6%) before the templates asked for more
