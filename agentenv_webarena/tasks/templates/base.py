"""Building blocks for task templates: reference-action steps, eval dicts and the task dict itself.

Owns the shape a template function returns, so every template module (`shopping`, `admin`,
`forum`, `cross`) writes tasks the same way. A template is `(template_id, fn)` with
`fn(db: sqlite3.Connection, rng: random.Random) -> list[dict]`; each dict is a WebArena task
config without the fields `tasks.generate` fills in (`task_id`, `intent_template_id`,
`require_login`, `storage_state`, `geolocation`, `require_reset`), i.e. at least `sites`,
`start_url`, `intent_template`, `instantiation_dict`, `intent`, `eval` and
`reference_action_sequence` (see `task`).

Reference steps name elements by role and accessible name as Chromium's accessibility tree shows
them on our pages (`{"role": "link", "name": "Price"}`); the expert resolves them to ids at replay.
"""
from __future__ import annotations

import calendar
import random
import re
from typing import Any, Iterable, Optional, Sequence, TypeVar

__all__ = [
    "el", "click", "type_text", "clear_and_type", "press", "goto", "go_back", "tab_focus", "stop", "render", "task",
    "string_eval", "url_eval", "html_eval", "target", "pick", "DONE", "typeable", "month_label",
]

T = TypeVar("T")
DONE = "Done"  # the stop answer of tasks scored on page state (WebArena ignores it there)


def typeable(text: str) -> bool:
    """Text a reference `type` step can carry (WebArena's grammar treats brackets specially)."""
    return "[" not in text and "]" not in text


def month_label(ym: str) -> str:
    """"YYYY-MM" `ym` as the shop's "Month YYYY" label (e.g. "March 2023")."""
    return f"{calendar.month_name[int(ym[5:7])]} {ym[:4]}"


def el(role: str, name: Optional[str] = None, *, contains: Optional[str] = None, nth: int = 0) -> dict:
    """An element spec: the `nth` node of `role` whose name equals `name` (or contains `contains`)."""
    spec: dict[str, Any] = {"role": role}
    if name is not None:
        spec["name"] = name
    if contains is not None:
        spec["name_contains"] = contains
    if nth:
        spec["nth"] = nth
    return spec


def click(role: str, name: Optional[str] = None, *, contains: Optional[str] = None, nth: int = 0) -> dict:
    """`click [id]` on the element."""
    return {"action": "click", "element": el(role, name, contains=contains, nth=nth)}


def type_text(role: str, name: str, text: str, *, enter: bool = True, nth: int = 0) -> dict:
    """`type [id] [text] [1|0]` (WebArena clicks the element, then types; Enter when `enter`)."""
    return {"action": "type", "element": el(role, name, nth=nth), "text": text, "enter": enter}


def clear_and_type(role: str, name: str, text: str, *, enter: bool = False) -> list[dict]:
    """Replace a pre-filled field's value: click it, select all, delete, then type."""
    return [click(role, name), press("Control+a"), press("Backspace"), type_text(role, name, text, enter=enter)]


def press(key: str) -> dict:
    """`press [key]`."""
    return {"action": "press", "key": key}


def goto(url: str) -> dict:
    """`goto [url]` (use site placeholders such as `__SHOPPING__`)."""
    return {"action": "goto", "url": url}


def go_back() -> dict:
    """`go_back`: the previous page of the tab's history."""
    return {"action": "go_back"}


def tab_focus(page_number: int) -> dict:
    """`tab_focus [i]`."""
    return {"action": "tab_focus", "page_number": page_number}


def stop(answer: str) -> dict:
    """`stop [answer]`: always the last step."""
    return {"action": "stop", "answer": answer}


_SLOT = re.compile(r"\{\{(\w+)\}\}")


def render(template: str, values: dict[str, Any]) -> str:
    """Fill WebArena's `{{name}}` slots.

    Raises:
        KeyError: a slot has no value (names the slot).
    """
    def sub(match: re.Match) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"template {template!r} has slot {{{{{key}}}}} but no value for it in {sorted(values)}")
        return str(values[key])

    return _SLOT.sub(sub, template)


def string_eval(*, exact: Optional[str] = None, must_include: Optional[Sequence[str]] = None,
                fuzzy: Optional[Sequence[str] | str] = None, note: str = "", raw: str = "") -> dict:
    """A `string_match` eval with one kind of reference answer (fuzzy "N/A" = infeasible task)."""
    answers: dict[str, Any] = {}
    if exact is not None:
        answers["exact_match"] = exact
    if must_include is not None:
        answers["must_include"] = list(must_include)
    if fuzzy is not None:
        answers["fuzzy_match"] = fuzzy if fuzzy == "N/A" else list(fuzzy)
    if len(answers) != 1:
        raise ValueError(f"string_eval takes exactly one of exact / must_include / fuzzy, got {sorted(answers)}")
    return {"eval_types": ["string_match"], "reference_answers": answers, "reference_url": "", "program_html": [],
            "string_note": note, "reference_answer_raw_annotation": raw or _raw(answers)}


def _raw(answers: dict[str, Any]) -> str:
    value = next(iter(answers.values()))
    return value if isinstance(value, str) else "; ".join(value)


def url_eval(reference_url: str, *, answers: Optional[dict] = None) -> dict:
    """A `url_match` eval (WebArena's "GOLD in PRED" rule); `answers` adds a string_match."""
    ev = {"eval_types": ["url_match"], "reference_answers": None, "reference_url": reference_url,
          "program_html": [], "url_note": "GOLD in PRED", "string_note": "", "reference_answer_raw_annotation": ""}
    if answers:
        ev["eval_types"] = ["string_match", "url_match"]
        ev["reference_answers"] = answers
    return ev


def target(url: str, locator: str, *, exact: Optional[str] = None, must_include: Optional[Sequence[str]] = None,
           prep_actions: Optional[Sequence[str]] = None) -> dict:
    """One `program_html` target: open `url` ("last", "func:...", or a placeholder URL), read `locator`."""
    if (exact is None) == (must_include is None):
        raise ValueError("target takes exactly one of exact / must_include")
    required = {"exact_match": exact} if exact is not None else {"must_include": list(must_include)}
    out: dict[str, Any] = {"url": url, "locator": locator, "required_contents": required}
    if prep_actions:
        out["prep_actions"] = list(prep_actions)
    return out


def html_eval(targets: Iterable[dict], *, with_url: Optional[str] = None) -> dict:
    """A `program_html` eval over `targets`; `with_url` adds a url_match first."""
    ev = {"eval_types": ["program_html"], "reference_answers": None, "reference_url": "", "program_html": list(targets),
          "string_note": "", "reference_answer_raw_annotation": ""}
    if with_url:
        ev["eval_types"] = ["url_match", "program_html"]
        ev["reference_url"] = with_url
        ev["url_note"] = "GOLD in PRED"
    return ev


def task(*, sites: Sequence[str], start_url: str, intent_template: str, values: dict[str, Any], eval: dict,
         sequence: Sequence[dict]) -> dict:
    """A task dict as templates return it (`tasks.generate` adds the ids and fixed fields).

    Raises:
        ValueError: the sequence does not end with a stop step.
    """
    steps = [step for item in sequence for step in (item if isinstance(item, list) else [item])]
    if not steps or steps[-1].get("action") != "stop":
        raise ValueError(f"reference sequence for {intent_template!r} must end with a stop step")
    return {"sites": list(sites), "start_url": start_url, "intent_template": intent_template,
            "instantiation_dict": dict(values), "intent": render(intent_template, values), "eval": eval,
            "reference_action_sequence": steps}


def pick(rng: random.Random, items: Sequence[T], k: int) -> list[T]:
    """`k` distinct items (all of them when there are fewer), in a seeded random order."""
    items = list(items)
    return rng.sample(items, min(k, len(items)))
