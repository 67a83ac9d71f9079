"""WebArena's id-based action grammar: every action, its malformed forms, fences, equivalence."""
from __future__ import annotations

import dataclasses

import pytest

from agentenv_webarena.webarena.browser_env.actions import (
    Action,
    ActionParsingError,
    ActionTypes,
    create_id_based_action,
    create_none_action,
    create_stop_action,
    extract_action,
    is_equivalent,
    map_key_comb,
    parse_action,
    playwright_key_comb,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("click [12]", Action(ActionTypes.CLICK, element_id="12")),
        ("click[12]", Action(ActionTypes.CLICK, element_id="12")),
        ("  click [7] please ", Action(ActionTypes.CLICK, element_id="7")),  # re.search, not anchored
        ("hover [3]", Action(ActionTypes.HOVER, element_id="3")),
        ("type [5] [blue mug] [0]", Action(ActionTypes.TYPE, element_id="5", text="blue mug")),
        ("type [5] [blue mug] [1]", Action(ActionTypes.TYPE, element_id="5", text="blue mug", press_enter=True)),
        ("type [5] [blue mug]", Action(ActionTypes.TYPE, element_id="5", text="blue mug", press_enter=True)),
        # greedy text: everything up to the last "] [flag]"
        ("type [5] [a [b] c] [0]", Action(ActionTypes.TYPE, element_id="5", text="a [b] c")),
        # a final [2] is not a flag: " [1]" is appended and the text swallows "[2"
        ("type [5] [x] [2]", Action(ActionTypes.TYPE, element_id="5", text="x] [2", press_enter=True)),
        ("type [5] [Größe ™ 東京 🙂] [1]",
         Action(ActionTypes.TYPE, element_id="5", text="Größe ™ 東京 🙂", press_enter=True)),
        ("press [enter]", Action(ActionTypes.PRESS, key_comb="Enter")),
        ("press [Ctrl+a]", Action(ActionTypes.PRESS, key_comb="Control+a")),
        ("press [meta+ARROWDOWN]", Action(ActionTypes.PRESS, key_comb="Meta+ArrowDown")),
        ("press [pageup]", Action(ActionTypes.PRESS, key_comb="PageUp")),
        ("scroll [down]", Action(ActionTypes.SCROLL, direction="down")),
        ("scroll [up]", Action(ActionTypes.SCROLL, direction="up")),
        ("scroll down", Action(ActionTypes.SCROLL, direction="down")),  # brackets optional
        ("new_tab", Action(ActionTypes.NEW_TAB)),
        ("tab_focus [2]", Action(ActionTypes.TAB_FOCUS, page_number=2)),
        ("close_tab", Action(ActionTypes.CLOSE_TAB)),
        ("goto [http://127.0.0.1:7770/a?b=[c]]", Action(ActionTypes.GOTO, url="http://127.0.0.1:7770/a?b=[c]")),
        ("go_back", Action(ActionTypes.GO_BACK)),
        ("go_forward", Action(ActionTypes.GO_FORWARD)),
        ("stop [N/A]", Action(ActionTypes.STOP, answer="N/A")),
        ("stop [$12.00]", Action(ActionTypes.STOP, answer="$12.00")),
        ("stop", Action(ActionTypes.STOP, answer="")),  # missing answer: ""
        ("stop []", Action(ActionTypes.STOP, answer="")),
    ],
)
def test_parses_every_action(text, expected):
    action = create_id_based_action(text)
    assert action == expected
    assert action.raw == text.strip()


@pytest.mark.parametrize(
    "text, names",
    [
        ("click [abc]", ["click", "click [id]"]),
        ("click", ["click", "click [id]"]),
        ("hover []", ["hover", "hover [id]"]),
        ("type [3]", ["type", "type [id] [content]"]),
        ("type [x] [hi] [1]", ["type", "type [id]"]),
        ("type [3] [line one\nline two] [1]", ["type"]),  # WebArena's `.+` does not cross newlines
        ("tab_focus [x]", ["tab_focus", "tab_focus [tab_index]"]),
        ("scroll [left]", ["scroll", "scroll [down|up]"]),
        ("press []", ["press", "press [key_comb]"]),
        ("goto []", ["goto", "goto [url]"]),
        ("jump [3]", ["jump", "click [id]"]),  # unknown keyword lists the accepted forms
        ("Click [3]", ["Click"]),  # keywords are case-sensitive, as in WebArena
        ("", ["empty"]),
        ("   ", ["empty"]),
    ],
)
def test_malformed_actions_raise_with_the_accepted_form(text, names):
    with pytest.raises(ActionParsingError) as err:
        create_id_based_action(text)
    for name in names:
        assert name in str(err.value)


def test_action_parsing_error_is_a_value_error():
    assert issubclass(ActionParsingError, ValueError)


@pytest.mark.parametrize(
    "response, expected",
    [
        ("Let's think. In summary, the next action I will perform is ```click [1234]```", "click [1234]"),
        ("```\ntype [5] [hi] [0]\n```", "type [5] [hi] [0]"),
        ("first ```scroll [down]``` then ```click [1]```", "scroll [down]"),  # the first block
        ("```stop [a\nb]``` tail", "stop [a\nb]"),
    ],
)
def test_extract_action_takes_the_first_fenced_block(response, expected):
    assert extract_action(response) == expected


@pytest.mark.parametrize("response", ["click [12]", "``` click [12]", "``click [12]``", ""])
def test_extract_action_without_a_fence_raises(response):
    with pytest.raises(ActionParsingError, match="triple backticks"):
        extract_action(response)


def test_parse_action_extracts_then_parses():
    assert parse_action("I will click.\n```click [42]```") == Action(ActionTypes.CLICK, element_id="42")
    with pytest.raises(ActionParsingError, match="unknown action"):
        parse_action("```text\nclick [1]```")  # a language tag becomes part of the keyword, as in WebArena


@pytest.mark.parametrize(
    "text",
    ["click [12]", "hover [3]", "type [5] [blue mug] [1]", "type [5] [a] b] [0]", "type [5] [™] [0]",
     "press [Control+a]", "scroll [down]", "scroll [up]", "new_tab", "tab_focus [1]", "close_tab",
     "goto [http://x.test/a]", "go_back", "go_forward", "stop [N/A]", "stop []"],
)
def test_str_is_canonical_and_round_trips(text):
    action = create_id_based_action(text)
    assert str(action) == text
    assert create_id_based_action(str(action)) == action


def test_str_canonicalises_sloppy_forms():
    assert str(create_id_based_action("click[12]")) == "click [12]"
    assert str(create_id_based_action("type [5] [hi]")) == "type [5] [hi] [1]"
    assert str(create_id_based_action("scroll down")) == "scroll [down]"
    assert str(create_id_based_action("press [ctrl+a]")) == "press [Control+a]"
    assert str(create_id_based_action("stop")) == "stop []"
    assert str(create_none_action()) == "none"
    assert str(create_stop_action("N/A")) == "stop [N/A]"


def test_is_equivalent_follows_webarena():
    p = create_id_based_action
    assert is_equivalent(p("click [1]"), p("click[1]"))
    assert not is_equivalent(p("click [1]"), p("click [2]"))
    assert not is_equivalent(p("click [1]"), p("hover [1]"))
    # type compares the element only, not the text (WebArena)
    assert is_equivalent(p("type [5] [a] [1]"), p("type [5] [b] [0]"))
    assert not is_equivalent(p("type [5] [a]"), p("type [6] [a]"))
    # empty element ids are never equivalent
    assert not is_equivalent(Action(ActionTypes.CLICK), Action(ActionTypes.CLICK))
    assert is_equivalent(p("scroll [down]"), p("scroll down"))
    assert not is_equivalent(p("scroll [down]"), p("scroll [up]"))
    assert is_equivalent(p("press [enter]"), p("press [Enter]"))
    assert not is_equivalent(p("press [Enter]"), p("press [Tab]"))
    assert is_equivalent(p("tab_focus [1]"), p("tab_focus [1]"))
    assert not is_equivalent(p("tab_focus [1]"), p("tab_focus [0]"))
    assert is_equivalent(p("goto [http://a]"), p("goto [http://a]"))
    assert not is_equivalent(p("goto [http://a]"), p("goto [http://b]"))
    assert is_equivalent(p("stop [x]"), p("stop [x]"))
    assert not is_equivalent(p("stop [x]"), p("stop [y]"))
    for bare in ("new_tab", "close_tab", "go_back", "go_forward"):
        assert is_equivalent(p(bare), p(bare))
    assert is_equivalent(create_none_action(), create_none_action())


def test_raw_is_not_compared():
    assert create_id_based_action("click[1]") == create_id_based_action("click [1]")


def test_action_is_frozen():
    action = create_id_based_action("click [1]")
    with pytest.raises(dataclasses.FrozenInstanceError):
        action.element_id = "2"  # type: ignore[misc]


@pytest.mark.parametrize(
    "key, mapped",
    [("enter", "Enter"), ("ENTER", "Enter"), ("backspace", "Backspace"), ("f5", "F5"),
     ("Shift+tab", "Shift+Tab"), ("a", "a"), ("Control++", "Control++"), ("+", "+"),
     ("escape", "Escape"), ("delete", "Delete"), ("home", "Home"), ("end", "End")],
)
def test_key_mapping(key, mapped):
    assert map_key_comb(key) == mapped


def test_meta_becomes_control_off_mac():
    assert playwright_key_comb("Meta+a", is_mac=False) == "Control+a"
    assert playwright_key_comb("Meta+a", is_mac=True) == "Meta+a"
    assert playwright_key_comb("Enter", is_mac=False) == "Enter"
