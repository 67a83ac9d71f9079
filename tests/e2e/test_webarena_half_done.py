"""End to end: each strengthened template's check fails on a plausible half-done play.

Against the WebArena server (`python -m agentenv_webarena.launch`, its embedded sites, real Chromium)
with its default observation, the first task of a template plays its reference sequence (1.0), then
the same sequence changed the way a careless agent would play it (a review typed halfway, two units
bought instead of one, an address half edited, ...), which must score 0. The whole suite's reference
and wrong plays: tests/e2e/test_webarena_suite.py (slow).
"""
from __future__ import annotations

import copy
from typing import Callable

import pytest
import requests
from helpers import embedded_sites_env, launched_server, require_chromium

require_chromium()

from agentenv.envs.webarena import WebarenaEnvClient  # noqa: E402
from agentenv_webarena.expert import play_task  # noqa: E402
from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks  # noqa: E402
from agentenv_webarena.tasks.templates.base import clear_and_type, click, goto, tab_focus  # noqa: E402


@pytest.fixture(scope="module")
def server():
    env = embedded_sites_env()
    with launched_server("agentenv_webarena.launch", env=env, timeout_s=120) as (base, _proc):
        yield base


@pytest.fixture(scope="module")
def tasks():
    return load_tasks(EMBEDDED_TASK_FILE)


def _named(step: dict, name: str) -> bool:
    return (step.get("element") or {}).get("name") == name


def _retype(name: str, text: Callable[[str], str]) -> Callable[[list[dict]], list[dict]]:
    """Type something else into the field `name`."""
    def change(steps: list[dict]) -> list[dict]:
        for step in steps:
            if step["action"] == "type" and _named(step, name):
                step["text"] = text(step["text"])
        return steps
    return change


def _drop(name: str, action: str = "click") -> Callable[[list[dict]], list[dict]]:
    """Leave out the step doing `action` on the element `name`."""
    return lambda steps: [s for s in steps if not (s["action"] == action and _named(s, name))]


def _buy_two(steps: list[dict]) -> list[dict]:
    i = next(i for i, s in enumerate(steps) if _named(s, "Add to Cart"))
    return steps[:i] + clear_and_type("spinbutton", "Qty", "2") + steps[i:]


def _street_only(steps: list[dict]) -> list[dict]:
    # 3 navigation steps, then a 4-step clear-and-type per field (street, city, state, zip), Save, stop
    return steps[:7] + steps[-2:]


def _both_tabs(steps: list[dict]) -> list[dict]:
    return [click("button", "Add to Cart"), tab_focus(1), click("button", "Add to Cart"), steps[-1]]


def _no_clearing(steps: list[dict]) -> list[dict]:
    """Type into a pre-filled field without selecting and deleting its text first (appends to it)."""
    return [s for s in steps if s["action"] != "press"]


def _mark_all_done(steps: list[dict]) -> list[dict]:
    return [goto("__GITLAB__/dashboard/todos"), click("button", "Mark all as done"), steps[-1]]


def _rename(old: str, new: Callable[[str], str]) -> Callable[[list[dict]], list[dict]]:
    """Act on another element than `old` (a name starting with it): the wrong role, token, ..."""
    def change(steps: list[dict]) -> list[dict]:
        for step in steps:
            name = (step.get("element") or {}).get("name", "")
            if name.startswith(old):
                step["element"]["name"] = new(name)
        return steps
    return change


def _drop_last_checkbox(steps: list[dict]) -> list[dict]:
    i = max(i for i, s in enumerate(steps) if (s.get("element") or {}).get("role") == "checkbox")
    return steps[:i] + steps[i + 1:]


def _skip_field(name: str) -> Callable[[list[dict]], list[dict]]:
    """Leave a pre-filled field as it was: drop the click on it, the key presses after it and the typing."""
    def change(steps: list[dict]) -> list[dict]:
        out, skipping = [], False
        for step in steps:
            if _named(step, name) and step["action"] in ("click", "type"):
                skipping = step["action"] == "click"
                continue
            if skipping and step["action"] == "press":
                continue
            skipping = False
            out.append(step)
        return out
    return change


def _regular_price_instead(steps: list[dict]) -> list[dict]:
    """Type the special price into the regular Price field instead of Advanced Pricing's."""
    i = next(i for i, s in enumerate(steps) if _named(s, "Special Price"))
    rest = [s for s in steps[i + 1:] if not (s.get("element") or {}).get("name", "").startswith("Special Price")]
    opened = [s for s in steps[:i] if not _named(s, "Advanced Pricing")]
    return opened + clear_and_type("textbox", "Price", steps[i]["text"]) + rest


def _other_visibility(steps: list[dict]) -> list[dict]:
    for step in steps:
        if (step.get("element") or {}).get("role") == "radio":
            step["element"]["name"] = "Public" if step["element"]["name"] != "Public" else "Private"
    return steps


# (template, what the careless play does, how the reference sequence changes)
HALF_DONE = [
    (1010, "review text typed halfway", _retype("Review", lambda t: t[: len(t) // 2])),
    (1010, "summary typed halfway", _retype("Summary", lambda t: t[: len(t) // 2])),
    (1009, "two units bought instead of one", _buy_two),
    (1011, "only the street changed", _street_only),
    (1013, "both products added", _both_tabs),
    (1020, "last name typed after the old one", _no_clearing),
    (2015, "comment typed, never submitted", _drop("Submit Comment")),
    (3009, "post created without its text", _drop("Body", action="type")),
    (4005, "order number left out of the post", _retype("Title", lambda t: t.rsplit(" ", 1)[0])),
    (9000, "product saved without its color", _drop("Color", action="type")),
    (9001, "rule saved with another amount", _retype("Discount Amount", lambda t: str(int(t) + 5))),
    (9003, "page title typed after the old one", _no_clearing),
    (9004, "tracking number typed halfway", _retype("Number", lambda t: t[: len(t) // 2])),
    (9008, "refund reason left out", _retype("What’s on your mind?", lambda t: t.split(" because ")[0] + ".")),
    (9011, "only the new size kept", _retype("Sizes", lambda t: t.rsplit(",", 1)[1])),
    (9102, "every to-do marked done", _mark_all_done),
    (9107, "members added as Reporters", _rename("Developer", lambda _: "Reporter")),
    (9108, "new text typed after the old one", _no_clearing),
    (9113, "one scope left out", _drop_last_checkbox),
    (9114, "another token revoked", _rename("Revoke ", lambda n: "Revoke ide-plugin" if "ide-plugin" not in n
                                            else "Revoke ci-pipeline")),
    (9200, "the regular price cut instead of a special price", _regular_price_instead),
    (9201, "special price saved without its dates", lambda steps: _drop("Special Price To", action="type")(
        _drop("Special Price From", action="type")(steps))),
    (9202, "the ZIP code left as it was", _skip_field("Zip/Postal Code")),
    (9203, "the shipping address changed instead of the billing one",
     _rename("Edit Billing Address", lambda _: "Edit Shipping Address")),
    (9207, "search term opened, never deleted", _drop("Delete Search")),
    (9208, "redirect typed, never saved", _drop("Save Search")),
    (9209, "box ticked, never saved", _drop("Save")),
    (9210, "box unticked, customer not saved", _drop("Save Customer")),
    (9213, "project made with another visibility", _other_visibility),
    (9221, "special price a dollar off the asked one", _retype("Special Price", lambda t: f"{float(t) - 1:.2f}")),
]


def _first_feasible(tasks: list[dict], template_id: int) -> int:
    return next(i for i, t in enumerate(tasks) if t["intent_template_id"] == template_id
                and "program_html" in t["eval"]["eval_types"])


@pytest.mark.parametrize("template_id,what,change", HALF_DONE, ids=[f"{t}-{w}" for t, w, _ in HALF_DONE])
def test_a_half_done_play_scores_zero(server, tasks, template_id, what, change):
    site_urls = requests.get(server + "/tasks", timeout=10).json()["site_urls"]
    index = _first_feasible(tasks, template_id)
    task = tasks[index]
    half = {**task, "reference_action_sequence": change(copy.deepcopy(task["reference_action_sequence"]))}
    assert half["reference_action_sequence"] != task["reference_action_sequence"]
    with WebarenaEnvClient(server, data_len=len(tasks), timeout=120) as client:
        done = play_task(client, index, task, site_urls)
        assert (done.reward, done.error) == (1.0, ""), f"reference of task {index}: {done.info}"
        careless = play_task(client, index, half, site_urls)
        assert careless.error == "", f"task {index} ({what}): {careless.error}"
        assert careless.reward == 0.0, f"task {index} ({what}) scored {careless.reward}"
