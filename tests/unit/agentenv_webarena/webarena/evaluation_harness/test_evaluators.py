"""WebArena's evaluators against a real Chromium page and small loopback pages (see conftest.py).

Each rule is shown passing and failing; the LLM judge is a real loopback HTTP server speaking the
OpenAI chat-completions shape, and the shopping helpers talk to a fake Magento REST subset.
"""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from wa_eval_fixtures import html_reply, json_reply

from agentenv_webarena.webarena.evaluation_harness import (
    EvaluatorComb,
    HelperError,
    HTMLContentEvaluator,
    JudgeError,
    LLMJudge,
    NeedsJudge,
    StringEvaluator,
    URLEvaluator,
    call_helper,
    evaluator_router,
    word_tokenize,
)
from agentenv_webarena.webarena.evaluation_harness.helper_functions import PAGE_ARG, HelperContext, parse_helper_call

STOP = {"action_type": "stop"}


def stop(answer: str) -> list:
    return [{"action_type": "goto"}, {**STOP, "answer": answer}]


def task(eval_types, **eval_fields) -> dict:
    return {
        "task_id": 7,
        "sites": ["shopping"],
        "intent": "How many items are in the cart?",
        "start_url": "http://127.0.0.1/",
        "eval": {"eval_types": eval_types, "reference_answers": None, "reference_url": "", "program_html": [],
                 **eval_fields},
    }


# --- site routes ---------------------------------------------------------------------------------

MEMBERS_HTML = """<table>
<tr><td data-label="Account"><span class="gl-avatar-labeled-sublabel">@someone</span></td>
    <td class="col-max-role"><span>Developer</span></td></tr>
<tr><td data-label="Account"><span class="gl-avatar-labeled-sublabel">@byteblaze</span></td>
    <td class="col-max-role"><span>Maintainer</span></td></tr></table>"""

REVIEWS = {
    "MUG-1": [
        {"nickname": "Old Reviewer", "ratings": [{"rating_name": "Rating", "percent": 40, "value": 2}]},
        {"nickname": "Emma Lopez", "ratings": [{"rating_name": "Rating", "percent": 80, "value": 4}]},
    ],
    "EMPTY": [],
}


def judge_route(path, query, body, headers):
    """An OpenAI-compatible judge: the verdict depends on the student's answer / reported reason."""
    request = json.loads(body)
    prompt = request["messages"][-1]["content"]
    if "student answer:" in prompt:
        answer = prompt.split("student answer:", 1)[1]
        verdict = "The answer is correct." if "roughly twelve" in answer else "It is incorrect."
    else:
        reported = prompt.split("reason reported by the agent:", 1)[1]
        verdict = "same" if "no such product" in reported else "different"
    if "slow judge" in prompt:
        import time

        time.sleep(2)
    return json_reply({"choices": [{"message": {"role": "assistant", "content": verdict}}]})


def magento_token(path, query, body, headers):
    if json.loads(body or b"{}") != {"username": "admin", "password": "admin1234"}:
        return json_reply({"message": "The account sign-in was incorrect"}, 401)
    return json_reply("tok-123")


def authorized(fn):
    def route(path, query, body, headers):
        if headers.get("authorization") != "Bearer tok-123":
            return json_reply({"message": "unauthorized"}, 401)
        return fn(path, query, body, headers)

    return route


@authorized
def magento_orders(path, query, body, headers):
    assert query["searchCriteria[sortOrders][0][field]"] == ["created_at"]
    assert query["searchCriteria[sortOrders][0][direction]"] == ["DESC"]
    assert query["searchCriteria[pageSize]"] == ["1"]
    # the URL uses int(increment_id), as WebArena does
    return json_reply({"items": [{"entity_id": 5, "increment_id": "000000189"}], "total_count": 1})


@authorized
def magento_reviews(path, query, body, headers):
    sku = path.split("/")[4]
    return json_reply(REVIEWS.get(sku, []))


@pytest.fixture(scope="module", autouse=True)
def routes(site):
    pages = {
        "/page": "<html><head><title>Cart</title></head><body><h1 id='title'>Hello &amp; welcome</h1>"
        "<div id='count'>There are 3 items</div><ul><li>apple</li><li>pear</li></ul></body></html>",
        "/other": "<html><body><p id='status'>Order status: Pending</p></body></html>",
        "/js": "<html><body><button id='show' onclick=\"document.querySelector('#out').textContent='revealed 42'\">"
        "Show</button><div id='out'>hidden</div></body></html>",
        "/f/books/42/": "<html><body><h1>Post 42</h1><div class='body'>A great book list</div></body></html>",
        "/f/books/42/a-great-book-list/-/comment/7": "<html><body>a comment on post 42</body></html>",
        "/project/members": f"<html><body>{MEMBERS_HTML}</body></html>",
        "/sales/order/view/order_id/189/": "<html><body><h1>Order # 000000189</h1><span>Pending</span></body></html>",
    }
    for path, body in pages.items():
        site.routes[("GET", path)] = lambda p, q, b, h, body=body: html_reply(body)
    site.routes[("POST", "/v1/chat/completions")] = judge_route
    site.routes[("POST", "/rest/default/V1/integration/admin/token")] = magento_token
    site.routes[("GET", "/rest/V1/orders")] = magento_orders
    # a second "shop" under /empty that has no orders yet
    site.routes[("POST", "/empty/rest/default/V1/integration/admin/token")] = magento_token
    site.routes[("GET", "/empty/rest/V1/orders")] = authorized(
        lambda p, q, b, h: json_reply({"items": [], "total_count": 0})
    )
    for sku in ("MUG-1", "EMPTY"):
        site.routes[("GET", f"/rest/V1/products/{sku}/reviews")] = magento_reviews


@pytest.fixture(scope="module")
def judge(site):
    return LLMJudge(base_url=f"{site.url}/v1", api_key="sk-test", model="judge-model", timeout_s=10)


# --- StringEvaluator: pure rules -------------------------------------------------------------------


def test_clean_answer_strips_one_quote_pair_and_lowercases():
    assert StringEvaluator.clean_answer("  'Hello World' ") == "hello world"
    assert StringEvaluator.clean_answer('"Quoted"') == "quoted"
    assert StringEvaluator.clean_answer("''twice''") == "'twice'"
    assert StringEvaluator.clean_answer("'unbalanced") == "'unbalanced"


def test_exact_match_passes_on_cleaned_equality_and_fails_otherwise():
    assert StringEvaluator.exact_match(ref="Sarah Miller", pred=" 'sarah miller' ") == 1.0
    assert StringEvaluator.exact_match(ref="Sarah Miller", pred="Sarah Millers") == 0.0


def test_must_include_is_a_cleaned_substring_test():
    assert StringEvaluator.must_include(ref="Alex", pred="the buyer is ALEX Martin") == 1.0
    assert StringEvaluator.must_include(ref="Bob", pred="the buyer is Alex") == 0.0
    # without tokenize a one-character reference is a plain substring
    assert StringEvaluator.must_include(ref="6", pred="16 orders", tokenize=False) == 1.0


def test_must_include_single_character_with_tokenize_matches_whole_tokens_only():
    assert StringEvaluator.must_include(ref="6", pred="There are 6 reviews.", tokenize=True) == 1.0
    assert StringEvaluator.must_include(ref="6", pred="It costs $6.", tokenize=True) == 1.0
    assert StringEvaluator.must_include(ref="6", pred="There are 16 reviews", tokenize=True) == 0.0
    assert StringEvaluator.must_include(ref="6", pred="6.5 stars", tokenize=True) == 0.0
    # longer references stay substring tests even with tokenize
    assert StringEvaluator.must_include(ref="65", pred="item165", tokenize=True) == 1.0


def test_word_tokenize_splits_words_numbers_and_punctuation():
    assert word_tokenize("It costs $1,000.50, ok?") == ["It", "costs", "$", "1,000.50", ",", "ok", "?"]
    assert word_tokenize("well-known don't 6.") == ["well-known", "don't", "6", "."]


def run_string(evaluator, config, answer):
    import asyncio

    return asyncio.run(evaluator(stop(answer), config, None))


def test_string_evaluator_one_item_must_include_uses_the_token_rule():
    config = task(["string_match"], reference_answers={"must_include": ["6"]})
    assert run_string(StringEvaluator(), config, "I found 6 of them") == 1.0
    assert run_string(StringEvaluator(), config, "I found 16 of them") == 0.0


def test_string_evaluator_multiplies_every_must_include_item():
    config = task(["string_match"], reference_answers={"must_include": ["apple", "6"]})
    assert run_string(StringEvaluator(), config, "6 apples") == 1.0
    # two items: "6" is a substring test, so "16" passes; a missing item fails the whole answer
    assert run_string(StringEvaluator(), config, "16 apples") == 1.0
    assert run_string(StringEvaluator(), config, "16 pears") == 0.0


def test_string_must_include_does_not_split_or_alternatives():
    config = task(["string_match"], reference_answers={"must_include": ["65 |OR| 3"]})
    assert run_string(StringEvaluator(), config, "65") == 0.0
    assert run_string(StringEvaluator(), config, "3") == 0.0
    assert run_string(StringEvaluator(), config, "65 |OR| 3") == 1.0


def test_string_evaluator_exact_match():
    config = task(["string_match"], reference_answers={"exact_match": "Pending"})
    assert run_string(StringEvaluator(), config, '"pending"') == 1.0
    assert run_string(StringEvaluator(), config, "It is pending") == 0.0


def test_fuzzy_match_exact_agreement_needs_no_judge():
    config = task(["string_match"], reference_answers={"fuzzy_match": ["Twelve dollars"]})
    assert run_string(StringEvaluator(judge=None), config, "'twelve dollars'") == 1.0


def test_fuzzy_match_without_judge_raises_needs_judge():
    config = task(["string_match"], reference_answers={"fuzzy_match": ["Twelve dollars"]})
    with pytest.raises(NeedsJudge, match="WEBARENA_JUDGE_BASE_URL"):
        run_string(StringEvaluator(judge=None), config, "$12")


def test_na_task_exact_na_scores_one_without_judge_and_other_answers_need_one():
    config = task(["string_match"], reference_answers={"fuzzy_match": "N/A"}, string_note="no such product exists")
    assert run_string(StringEvaluator(judge=None), config, "N/A") == 1.0
    with pytest.raises(NeedsJudge):
        run_string(StringEvaluator(judge=None), config, "the product does not exist")


def test_fuzzy_match_asks_the_judge_correct_and_incorrect(site, judge):
    config = task(["string_match"], reference_answers={"fuzzy_match": ["$12"]})
    before = len(site.requests)
    assert run_string(StringEvaluator(judge=judge), config, "roughly twelve dollars") == 1.0
    assert run_string(StringEvaluator(judge=judge), config, "about five dollars") == 0.0
    sent = [json.loads(r[3]) for r in site.requests[before:] if r[1] == "/v1/chat/completions"]
    assert len(sent) == 2
    assert sent[0]["temperature"] == 0 and sent[0]["model"] == "judge-model"
    assert "How many items are in the cart?" in sent[0]["messages"][-1]["content"]
    auth = [r[4]["authorization"] for r in site.requests[before:] if r[1] == "/v1/chat/completions"]
    assert auth == ["Bearer sk-test"] * 2


def test_na_task_falls_back_to_ua_match_same_and_different(judge):
    config = task(["string_match"], reference_answers={"fuzzy_match": "N/A"}, string_note="there is no such product")
    assert run_string(StringEvaluator(judge=judge), config, "I cannot: no such product in the store") == 1.0
    assert run_string(StringEvaluator(judge=judge), config, "the site was down") == 0.0


def test_judge_http_error_and_timeout_raise_judge_error(site):
    import asyncio

    missing = LLMJudge(base_url=f"{site.url}/nowhere", timeout_s=5)
    with pytest.raises(JudgeError, match="HTTP 404"):
        asyncio.run(missing.fuzzy_match("a", "b", "q"))
    slow = LLMJudge(base_url=f"{site.url}/v1", timeout_s=0.3)
    with pytest.raises(JudgeError, match="did not answer within"):
        asyncio.run(slow.fuzzy_match("slow judge", "b", "q"))


def test_judge_from_env():
    assert LLMJudge.from_env({}) is None
    judge = LLMJudge.from_env({"WEBARENA_JUDGE_BASE_URL": "http://127.0.0.1:9/v1/", "OPENAI_API_KEY": "k"})
    assert (judge.base_url, judge.api_key, judge.model) == ("http://127.0.0.1:9/v1", "k", "gpt-4-1106-preview")
    judge = LLMJudge.from_env({"OPENAI_API_KEY": "k", "WEBARENA_JUDGE_MODEL": "m", "WEBARENA_JUDGE_TIMEOUT_S": "5"})
    assert (judge.base_url, judge.model, judge.timeout_s) == ("https://api.openai.com/v1", "m", 5.0)
    with pytest.raises(ValueError, match="WEBARENA_JUDGE_TIMEOUT_S"):
        LLMJudge.from_env({"OPENAI_API_KEY": "k", "WEBARENA_JUDGE_TIMEOUT_S": "soon"})


def test_trajectory_must_end_with_a_stop_action():
    import asyncio

    config = task(["string_match"], reference_answers={"exact_match": "yes"})
    assert asyncio.run(StringEvaluator()([SimpleNamespace(answer="Yes")], config, None)) == 1.0
    with pytest.raises(ValueError, match="stop action"):
        asyncio.run(StringEvaluator()([{"action_type": "click"}], config, None))
    with pytest.raises(ValueError, match="empty"):
        asyncio.run(StringEvaluator()([], config, None))


# --- URLEvaluator ---------------------------------------------------------------------------------


def test_url_match_gold_in_pred():
    ref = "http://shop.test/catalogsearch/result/?q=mug"
    assert URLEvaluator.match(ref, "http://shop.test/catalogsearch/result/?q=mug") == 1.0
    # netloc+path substring; query keys only the page has are ignored
    assert URLEvaluator.match(ref, "http://shop.test/catalogsearch/result/?q=mug&page=2&sort=price") == 1.0
    # the trailing "/" is stripped from the whole URL only (WebArena's rule), not before a query
    assert URLEvaluator.match("http://shop.test/sales/order/history/", "http://shop.test/sales/order/history") == 1.0
    assert URLEvaluator.match(ref, "http://shop.test/catalogsearch/result?q=mug") == 0.0
    assert URLEvaluator.match(ref, "http://shop.test/catalogsearch/result/?q=cup") == 0.0
    assert URLEvaluator.match(ref, "http://shop.test/catalogsearch/result/") == 0.0
    assert URLEvaluator.match(ref, "http://shop.test/customer/account/?q=mug") == 0.0


def test_url_match_pools_or_alternatives_and_their_query_values():
    ref = "http://f.test/search?q=cats |OR| http://f.test/f/pets?q=dogs"
    assert URLEvaluator.match(ref, "http://f.test/search?q=dogs") == 1.0  # value from the other alternative
    assert URLEvaluator.match(ref, "http://f.test/f/pets/hot?q=cats") == 1.0
    assert URLEvaluator.match(ref, "http://f.test/f/pets?q=birds") == 0.0
    # a key only one alternative has must still be matched
    ref2 = "http://f.test/a?x=1 |OR| http://f.test/b?y=2"
    assert URLEvaluator.match(ref2, "http://f.test/a?x=1") == 0.0
    assert URLEvaluator.match(ref2, "http://f.test/a?x=1&y=2") == 1.0


def test_url_evaluator_reads_the_page_url(browser, site):
    config = task(["url_match"], reference_url=f"{site.url}/page |OR| {site.url}/other")

    async def check(page):
        await page.goto(f"{site.url}/other/")
        ok = await URLEvaluator()(stop(""), config, page)
        await page.goto(f"{site.url}/js")
        return ok, await URLEvaluator()(stop(""), config, page)

    assert browser.with_page(check) == (1.0, 0.0)


# --- HTMLContentEvaluator -------------------------------------------------------------------------


def html_task(*targets, **kw) -> dict:
    return task(["program_html"], program_html=list(targets), **kw)


def evaluate_on(browser, url, config, *, site_urls=None, extra_http_headers=None, after=None):
    """Open `url` in the agent's page, evaluate, and return (score, agent URL after, open pages)."""

    async def body(page):
        await page.goto(url)
        score = await evaluator_router(config, site_urls=site_urls)(stop(""), config, page)
        return score, page.url, len(page.context.pages)

    return browser.with_page(body, extra_http_headers=extra_http_headers)


def test_program_html_last_page_content_with_unescape(browser, site):
    passing = html_task({"url": "last", "locator": "",
                         "required_contents": {"must_include": ["Hello & welcome", "3 items"]}})
    failing = html_task({"url": "last", "locator": "",
                         "required_contents": {"must_include": ["Hello & welcome", "4 items"]}})
    assert evaluate_on(browser, f"{site.url}/page", passing)[0] == 1.0
    assert evaluate_on(browser, f"{site.url}/page", failing)[0] == 0.0


def test_program_html_url_target_opens_a_new_tab_and_leaves_the_agent_page(browser, site):
    config = html_task(
        {"url": f"{site.url}/other", "locator": "document.querySelector('#status').outerText",
         "required_contents": {"exact_match": "Order status: Pending"}}
    )
    score, agent_url, pages = evaluate_on(browser, f"{site.url}/page", config)
    assert score == 1.0
    assert agent_url == f"{site.url}/page"
    assert pages == 1
    config["eval"]["program_html"][0]["required_contents"] = {"exact_match": "Pending"}
    assert evaluate_on(browser, f"{site.url}/page", config)[0] == 0.0


def test_program_html_js_locator_runs_prep_actions_first(browser, site):
    target = {"url": "last", "locator": "document.querySelector('#out').outerText",
              "required_contents": {"must_include": ["revealed 42"]}}
    assert evaluate_on(browser, f"{site.url}/js", html_task(dict(target)))[0] == 0.0
    with_prep = dict(target, prep_actions=["document.querySelector('#show').click()",
                                           "document.querySelector('#nope').click()"])
    assert evaluate_on(browser, f"{site.url}/js", html_task(with_prep))[0] == 1.0
    # as in WebArena, a failing prep action is ignored but skips the ones after it
    failing_first = dict(target, prep_actions=["document.querySelector('#nope').click()",
                                               "document.querySelector('#show').click()"])
    assert evaluate_on(browser, f"{site.url}/js", html_task(failing_first))[0] == 0.0


def test_program_html_js_values_are_read_like_python_str_and_errors_as_empty(browser, site):
    listing = {"url": "last", "locator": "[...document.querySelectorAll('li')].map(e => e.textContent)",
               "required_contents": {"exact_match": "['apple', 'pear']"}}
    assert evaluate_on(browser, f"{site.url}/page", html_task(listing))[0] == 1.0
    broken = {"url": "last", "locator": "document.querySelector('#missing').outerText",
              "required_contents": {"must_include": [""]}}
    assert evaluate_on(browser, f"{site.url}/page", html_task(broken))[0] == 1.0  # "" is in ""
    broken["required_contents"] = {"must_include": ["x"]}
    assert evaluate_on(browser, f"{site.url}/page", html_task(broken))[0] == 0.0


def test_program_html_required_contents_or_alternatives(browser, site):
    def config(item):
        return html_task({"url": "last", "locator": "document.querySelector('#count').outerText",
                          "required_contents": {"must_include": [item]}})

    assert evaluate_on(browser, f"{site.url}/page", config("4 items |OR| 3 items"))[0] == 1.0
    assert evaluate_on(browser, f"{site.url}/page", config("4 items |OR| 5 items"))[0] == 0.0


def test_program_html_reddit_post_url_of_last_url(browser, site):
    config = html_task(
        {"url": "func:reddit_get_post_url('__last_url__')", "locator": "document.querySelector('.body').outerText",
         "required_contents": {"must_include": ["great book list"]}}
    )
    score, agent_url, pages = evaluate_on(browser, f"{site.url}/f/books/42/a-great-book-list/-/comment/7", config)
    assert (score, pages) == (1.0, 1)
    assert agent_url.endswith("/comment/7")
    config["eval"]["program_html"][0]["required_contents"] = {"must_include": ["terrible"]}
    assert evaluate_on(browser, f"{site.url}/f/books/42/", config)[0] == 0.0


def test_program_html_shopping_helpers_via_magento_rest(browser, site):
    urls = {"shopping": site.url}
    order = html_task(
        {"url": "func:shopping_get_latest_order_url()", "locator": "",
         "required_contents": {"must_include": ["Order # 000000189", "Pending"]}},
        {"url": "last", "locator": "func:shopping_get_sku_latest_review_rating('MUG-1')",
         "required_contents": {"exact_match": "80"}},
        {"url": "last", "locator": "func:shopping_get_sku_latest_review_author('MUG-1')",
         "required_contents": {"must_include": ["Emma Lopez"]}},
    )
    before = len(site.requests)
    score, agent_url, _ = evaluate_on(browser, f"{site.url}/page", order, site_urls=urls,
                                      extra_http_headers={"X-Webarena-Instance": "env-3"})
    assert score == 1.0 and agent_url == f"{site.url}/page"
    rest = [r for r in site.requests[before:] if r[1].startswith("/rest/")]
    assert rest and all(r[4].get("x-webarena-instance") == "env-3" for r in rest)
    wrong = html_task({"url": "last", "locator": "func:shopping_get_sku_latest_review_author('EMPTY')",
                       "required_contents": {"must_include": ["Emma"]}})
    assert evaluate_on(browser, f"{site.url}/page", wrong, site_urls=urls)[0] == 0.0


def test_program_html_helper_without_an_order_scores_zero_and_rest_failures_raise(browser, site):
    config = html_task({"url": "func:shopping_get_latest_order_url()", "locator": "",
                        "required_contents": {"must_include": ["Order #"]}})
    score, agent_url, pages = evaluate_on(browser, f"{site.url}/page", config,
                                          site_urls={"shopping": f"{site.url}/empty"})
    assert (score, agent_url, pages) == (0.0, f"{site.url}/page", 1)
    with pytest.raises(HelperError, match="HTTP 404"):
        evaluate_on(browser, f"{site.url}/page", config, site_urls={"shopping": f"{site.url}/broken"})


def test_program_html_gitlab_member_role(browser, site):
    def config(role):
        return html_task({"url": f"{site.url}/project/members",
                          "locator": "func:gitlab_get_project_memeber_role(__page__, 'byteblaze')",
                          "required_contents": {"must_include": [role]}})

    assert evaluate_on(browser, f"{site.url}/page", config("Maintainer"))[0] == 1.0
    assert evaluate_on(browser, f"{site.url}/page", config("Owner"))[0] == 0.0


def test_evaluator_comb_is_the_product(browser, site, tmp_path):
    config = task(
        ["string_match", "url_match", "program_html"],
        reference_answers={"must_include": ["3"]},
        reference_url=f"{site.url}/page",
        program_html=[{"url": "last", "locator": "document.title", "required_contents": {"exact_match": "cart"}}],
    )
    path = tmp_path / "7.json"
    path.write_text(json.dumps(config))

    async def body(page, answer):
        await page.goto(f"{site.url}/page")
        evaluator = evaluator_router(str(path))
        assert isinstance(evaluator, EvaluatorComb)
        assert [type(e) for e in evaluator.evaluators] == [StringEvaluator, URLEvaluator, HTMLContentEvaluator]
        return await evaluator(stop(answer), str(path), page)

    assert browser.with_page(lambda page: body(page, "3 items")) == 1.0
    assert browser.with_page(lambda page: body(page, "4 items")) == 0.0


# --- helper whitelist -----------------------------------------------------------------------------


def test_helper_calls_are_parsed_never_evaluated():
    assert parse_helper_call("func:reddit_get_post_url('__last_url__')") == ("reddit_get_post_url", ["__last_url__"])
    assert parse_helper_call("gitlab_get_project_memeber_role(__page__, 'byteblaze')") == (
        "gitlab_get_project_memeber_role", [PAGE_ARG, "byteblaze"])
    with pytest.raises(ValueError, match="allowed helpers are .*reddit_get_post_url"):
        parse_helper_call("__import__('os')")
    with pytest.raises(ValueError, match="only literals"):
        parse_helper_call("reddit_get_post_url(open('/etc/passwd').read())")
    with pytest.raises(ValueError, match="one call"):
        parse_helper_call("os.system('true')")
    with pytest.raises(ValueError, match="not a valid call"):
        parse_helper_call("reddit_get_post_url('a'); 1")
    with pytest.raises(ValueError, match="keyword"):
        parse_helper_call("reddit_get_post_url(url='a')")


def test_reddit_get_post_url_and_missing_site_url():
    import asyncio

    ctx = HelperContext(page=None, site_urls={})
    assert asyncio.run(
        call_helper("reddit_get_post_url('__last_url__')", ctx, last_url="http://f.test/f/books/42/t/-/comment/7")
    ) == "http://f.test/f/books/42/"
    assert asyncio.run(call_helper("reddit_get_post_url('http://f.test/f/books')", ctx)) == "http://f.test/f/books"
    with pytest.raises(ValueError, match="SHOPPING environment variable"):
        asyncio.run(call_helper("shopping_get_latest_order_url()", ctx))
