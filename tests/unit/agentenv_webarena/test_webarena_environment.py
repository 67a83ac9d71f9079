"""`agentenv_webarena.environment` episode logic with the browser isolated by a fake session:
prompt layout, parse-failure hints, early stops, scoring at stop, URL mapping, errors."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from agentenv_webarena import environment as envmod
from agentenv_webarena.webarena.browser_env import ActionExecutionError, Observation


class FakeBrowser:
    """Stands in for BrowserSession: a page with a url, one link [7], and a log of actions."""

    def __init__(self, host):
        self.executed = []
        self.page = SimpleNamespace(url="")
        self.opened = None
        self.fail_open = False

    async def open(self, start_urls, **kwargs):
        if self.fail_open:
            raise RuntimeError("net::ERR_CONNECTION_REFUSED")
        self.opened = (start_urls, kwargs)
        self.page.url = start_urls[0]

    async def observe(self):
        return Observation(text="Tab 0 (current): Home\n\n[1] RootWebArea 'Home'\n\t[7] link 'Next'",
                           nodes_info={"1": {"text": "[1] RootWebArea 'Home'", "role": "RootWebArea", "name": "Home"},
                                       "7": {"text": "[7] link 'Next'", "role": "link", "name": "Next"}},
                           url=self.page.url, tabs=["Home"])

    async def execute(self, action):
        if action.element_id == "999":
            raise ActionExecutionError("element [999] is not in the current observation")
        self.executed.append(action)
        if action.action_type.value == "goto":
            self.page.url = action.url

    async def close(self):
        pass


class FakeHost:
    def run(self, coro, timeout_s=None):
        return asyncio.run(coro)


TASKS = [
    {"sites": ["shopping"], "task_id": 0, "require_login": False, "start_url": "__SHOPPING__/a", "intent": "Say hi",
     "intent_template_id": 1, "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "hi"},
                                       "reference_url": "", "program_html": []}},
    {"sites": ["shopping"], "task_id": 1, "require_login": False, "start_url": "__SHOPPING__/a", "intent": "Go to b",
     "intent_template_id": 2, "eval": {"eval_types": ["url_match"], "reference_answers": None,
                                       "reference_url": "__SHOPPING__/b", "program_html": []}},
    {"sites": ["shopping"], "task_id": 2, "require_login": False, "start_url": "__SHOPPING__/a", "intent": "Why?",
     "intent_template_id": 3, "eval": {"eval_types": ["string_match"],
                                       "reference_answers": {"fuzzy_match": ["because"]},
                                       "reference_url": "", "program_html": []}},
]


@pytest.fixture
def session(monkeypatch):
    monkeypatch.setattr(envmod, "BrowserSession", FakeBrowser)
    config = envmod.EnvConfig(site_urls={"shopping": "http://127.0.0.1:9"}, embedded=False, max_steps=5)
    world = envmod.WebarenaWorld(config, TASKS, FakeHost())
    return envmod.WebarenaSession(world)


def test_reset_returns_agentgym_fields_and_the_prompt_layout(session):
    out = session.reset(0)
    assert out.observation == session.observe() and out.info["sites"] == ["shopping"]
    assert out.info["object"] == "Say hi"
    assert session.browser.opened[0] == ["http://127.0.0.1:9/a"]
    assert session.observe() == ("OBSERVATION:\nTab 0 (current): Home\n\n[1] RootWebArea 'Home'\n\t[7] link 'Next'"
                                          "\nURL: http://onestopmarket.com/a\nOBJECTIVE: Say hi\nPREVIOUS ACTION: None")


def test_stop_is_scored_without_touching_the_browser(session):
    session.reset(0)
    out = session.step("The answer is clear. ```stop [Hi]```")
    assert out.reward == 1.0 and out.terminated and not out.truncated
    assert out.info["eval_status"] == "scored" and session.browser.executed == []
    again = session.step("```stop [hi]```")
    assert again.reward == 0.0 and again.terminated and "reset" in again.info["error"]
    session.reset(0)
    assert session.step("```stop [bye]```").reward == 0.0


def test_previous_action_describes_the_element_and_goto_maps_public_urls(session):
    session.reset(1)
    out = session.step("```click [7]```")
    assert out.observation.endswith("PREVIOUS ACTION: click [7] where [7] is [7] link 'Next'")
    out = session.step("```goto [http://onestopmarket.com/b]```")
    assert session.browser.executed[-1].url == "http://127.0.0.1:9/b"
    assert out.info["url"] == "http://onestopmarket.com/b"
    assert session.step("```stop []```").reward == 1.0


def test_unknown_element_is_an_observation_not_an_exception(session):
    session.reset(1)
    out = session.step("```click [999]```")
    assert out.reward == 0.0 and not out.terminated
    assert "ActionExecutionError" in out.info["error"] and "[999]" in out.observation


def test_parse_failures_hint_then_truncate(session):
    session.reset(0)
    first = session.step("click the link")
    assert "format was incorrect" in first.observation and "```action [arg] ...```" in first.observation
    assert not first.terminated and not first.truncated
    session.step("```jump [3]```")
    third = session.step("nothing")
    assert third.truncated and not third.terminated
    assert third.info["early_stop"] == "Failed to parse actions for 3 times" and third.reward == 0.0


def test_a_parsed_action_resets_the_parse_failure_count(session):
    session.reset(1)
    session.step("x")
    session.step("y")
    session.step("```scroll [down]```")
    assert not session.step("z").truncated


def test_repeated_actions_and_max_steps_truncate(session):
    session.reset(1)
    outs = [session.step("```click [7]```") for _ in range(3)]
    assert [o.truncated for o in outs] == [False, False, True]
    assert outs[-1].info["early_stop"] == "Same action for 3 times"
    session.reset(1)
    outs = [session.step(f"```scroll [{'up' if i % 2 else 'down'}]```") for i in range(5)]
    assert outs[-1].truncated and outs[-1].info["early_stop"] == "Reach max steps 5"
    assert not any(o.truncated for o in outs[:-1])


def test_typing_the_same_text_three_times_anywhere_truncates(session):
    session.reset(1)
    session.step("```type [7] [shoes] [1]```")
    session.step("```scroll [down]```")
    session.step("```type [7] [shoes] [1]```")
    out = session.step("```type [7] [shoes] [1]```")
    assert out.truncated and out.info["early_stop"] == "Same typing action for 3 times"


def test_judge_tasks_report_needs_judge_unless_the_answer_is_exact(session):
    session.reset(2)
    assert session.step("```stop [Because]```").reward == 1.0
    session.reset(2)
    out = session.step("```stop [no reason]```")
    assert out.reward == 0.0 and out.info["eval_status"] == "needs_judge"


def test_errors_name_the_problem(session):
    with pytest.raises(envmod.EpisodeStateError, match="reset"):
        session.step("```stop []```")
    with pytest.raises(envmod.TaskIndexError, match="3 tasks"):
        session.reset(3)
    session.browser.fail_open = True
    with pytest.raises(envmod.StartPageError, match="ERR_CONNECTION_REFUSED"):
        session.reset(0)
    with pytest.raises(envmod.EpisodeStateError):  # a failed reset leaves no half-started episode
        session.observe()


def test_unconfigured_site_is_a_value_error_naming_the_variable(monkeypatch):
    monkeypatch.setattr(envmod, "BrowserSession", FakeBrowser)
    world = envmod.WebarenaWorld(envmod.EnvConfig(site_urls={"reddit": "http://x"}, embedded=False), TASKS, FakeHost())
    with pytest.raises(ValueError, match="SHOPPING"):
        envmod.WebarenaSession(world).reset(0)


class FakeContext:
    async def storage_state(self):
        return {"cookies": [{"name": "PHPSESSID", "value": "new", "expires": 4e9}], "origins": []}


def _state_file(path, expires):
    import json

    path.write_text(json.dumps({"cookies": [{"name": "PHPSESSID", "value": "old", "expires": expires}], "origins": []}))
    return str(path)


def _login_task(state_path):
    return dict(TASKS[0], require_login=True, storage_state=state_path)


def test_real_sites_use_a_fresh_storage_state_and_renew_a_stale_one(session, tmp_path, monkeypatch):
    import json
    import time

    from agentenv_webarena.tasks import auth

    logins = []

    async def fake_login(context, site, base, embedded):
        logins.append((site, base, embedded))

    monkeypatch.setattr(auth, "login", fake_login)
    fresh = _state_file(tmp_path / "shopping_state.json", time.time() + 10 * 3600)
    session.world.tasks = [_login_task(fresh)]
    session.reset(0)
    kwargs = session.browser.opened[1]
    assert kwargs["storage_state"] == fresh
    asyncio.run(kwargs["before_goto"](FakeContext()))
    assert logins == []  # the cookie file is fresh: no login

    stale = _state_file(tmp_path / "stale_state.json", time.time() + 600)  # expires within auth_renew_before_s
    session.world.tasks = [_login_task(stale)]
    session.reset(0)
    kwargs = session.browser.opened[1]
    assert kwargs["storage_state"] is None
    asyncio.run(kwargs["before_goto"](FakeContext()))
    assert logins == [("shopping", "http://127.0.0.1:9", False)]
    assert json.loads(open(stale).read())["cookies"][0]["value"] == "new"  # renewed for the next reset


def test_storage_state_fresh(tmp_path):
    from agentenv_webarena.tasks.auth import storage_state_fresh

    path = _state_file(tmp_path / "s.json", 1000.0)
    assert storage_state_fresh(path, 100, now=0) and not storage_state_fresh(path, 100, now=950)
    session_only = _state_file(tmp_path / "session.json", -1)
    assert storage_state_fresh(session_only, 1e9, now=0)
    (tmp_path / "empty.json").write_text('{"cookies": []}')
    assert not storage_state_fresh(tmp_path / "empty.json", 0) and not storage_state_fresh(tmp_path / "nope.json", 0)
