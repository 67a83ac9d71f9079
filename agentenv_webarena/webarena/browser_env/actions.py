"""WebArena's id-based action grammar: parsing an LLM response into an `Action`, and back to text.

Owns the action vocabulary of WebArena's `browser_env/actions.py`: `ActionTypes`, the frozen
`Action` record, `extract_action` (the first triple-backtick block, WebArena's non-greedy rule),
`create_id_based_action` (WebArena's keyword dispatch and regexes, quirks included),
`is_equivalent` (WebArena's repeated-action test) and the key-name mapping used by ``press``.

Differences from WebArena, all deliberate:

* typed text may hold any Unicode character (WebArena maps text through a fixed charset and raises
  ``KeyError`` on e.g. ``™``);
* ``Action.text`` never holds the trailing newline: ``press_enter`` says whether Enter follows;
* `SPECIAL_KEY_MAPPINGS` also canonicalises modifier names (``ctrl`` -> ``Control``, ...), which
  WebArena passed to Playwright unmapped (and Playwright rejected);
* errors say what was wrong and show the accepted form.

Does not own: executing actions (`browser`), mapping "real" site names in ``goto`` URLs back to
local ones (the environment's job).
"""
from __future__ import annotations

import dataclasses
import enum
import logging
import re
import sys

__all__ = [
    "ActionParsingError",
    "ActionTypes",
    "Action",
    "SPECIAL_KEY_MAPPINGS",
    "ACTION_FORMS",
    "extract_action",
    "create_id_based_action",
    "parse_action",
    "is_equivalent",
    "create_stop_action",
    "create_none_action",
    "map_key_comb",
    "playwright_key_comb",
]

logger = logging.getLogger(__name__)


class ActionParsingError(ValueError):
    """The text is not a WebArena action; the message says why and shows the accepted form."""


class ActionTypes(str, enum.Enum):
    """The id-based action set (WebArena's ``action_set_tag = id_accessibility_tree``)."""

    NONE = "none"
    CLICK = "click"
    TYPE = "type"
    HOVER = "hover"
    PRESS = "press"
    SCROLL = "scroll"
    NEW_TAB = "new_tab"
    TAB_FOCUS = "tab_focus"
    CLOSE_TAB = "close_tab"
    GOTO = "goto"
    GO_BACK = "go_back"
    GO_FORWARD = "go_forward"
    STOP = "stop"


# The accepted form of every keyword, quoted in error messages.
ACTION_FORMS: dict[str, str] = {
    "click": "click [id]",
    "type": "type [id] [content] [press_enter_after=0|1]",
    "hover": "hover [id]",
    "press": "press [key_comb]",
    "scroll": "scroll [down|up]",
    "new_tab": "new_tab",
    "tab_focus": "tab_focus [tab_index]",
    "close_tab": "close_tab",
    "goto": "goto [url]",
    "go_back": "go_back",
    "go_forward": "go_forward",
    "stop": "stop [answer]",
}

# WebArena's regexes (re.search, not anchored; no DOTALL, so `.+` stops at a newline).
_CLICK_RE = re.compile(r"click ?\[(\d+)\]")
_HOVER_RE = re.compile(r"hover ?\[(\d+)\]")
_TYPE_RE = re.compile(r"type ?\[(\d+)\] ?\[(.+)\] ?\[(\d+)\]")
_PRESS_RE = re.compile(r"press ?\[(.+)\]")
_SCROLL_RE = re.compile(r"scroll ?\[?(up|down)\]?")
_GOTO_RE = re.compile(r"goto ?\[(.+)\]")
_TAB_FOCUS_RE = re.compile(r"tab_focus ?\[(\d+)\]")
_STOP_RE = re.compile(r"stop ?\[(.+)\]")
# WebArena's `_extract_action`: the first ```...``` block, non-greedy, across lines.
_FENCE_RE = re.compile(r"```((.|\n)*?)```")

# Lower-case key name -> Playwright key name. WebArena's SPECIAL_KEY_MAPPINGS idea (each `+`-part
# looked up case-insensitively, unknown parts kept as written), extended with modifiers and a few
# aliases so that e.g. `press [ctrl+a]` reaches Playwright as `Control+a`.
SPECIAL_KEY_MAPPINGS: dict[str, str] = {
    "backquote": "Backquote",
    "minus": "Minus",
    "equal": "Equal",
    "backslash": "Backslash",
    "backspace": "Backspace",
    "tab": "Tab",
    "delete": "Delete",
    "escape": "Escape",
    "esc": "Escape",
    "enter": "Enter",
    "return": "Enter",
    "space": "Space",
    "arrowdown": "ArrowDown",
    "arrowup": "ArrowUp",
    "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight",
    "down": "ArrowDown",
    "up": "ArrowUp",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "home": "Home",
    "end": "End",
    "insert": "Insert",
    "pagedown": "PageDown",
    "pageup": "PageUp",
    "meta": "Meta",
    "cmd": "Meta",
    "command": "Meta",
    "control": "Control",
    "ctrl": "Control",
    "shift": "Shift",
    "alt": "Alt",
    "option": "Alt",
    **{f"f{i}": f"F{i}" for i in range(1, 13)},
}


@dataclasses.dataclass(frozen=True)
class Action:
    """One parsed action. Only the fields of its `action_type` are set; the rest keep defaults.

    Attributes:
        action_type: which action.
        element_id: AX node id as shown in the observation (click/hover/type), e.g. ``"164"``.
        text: content to type, without the trailing newline (type).
        press_enter: whether Enter is pressed after typing (type; WebArena's default ``[1]``).
        key_comb: key combination after `SPECIAL_KEY_MAPPINGS` (press), e.g. ``"Control+a"``.
        direction: ``"up"`` or ``"down"`` (scroll).
        url: the URL as the agent wrote it (goto).
        page_number: tab index (tab_focus).
        answer: the final answer, ``""`` when missing (stop).
        raw: the action text that was parsed (not compared by ``==``).
    """

    action_type: ActionTypes
    element_id: str = ""
    text: str = ""
    press_enter: bool = False
    key_comb: str = ""
    direction: str = ""
    url: str = ""
    page_number: int = 0
    answer: str = ""
    raw: str = dataclasses.field(default="", compare=False)

    def __str__(self) -> str:
        """The canonical WebArena text, e.g. ``click [12]``, ``type [5] [hi] [1]``, ``stop [N/A]``.

        Parsing the result gives back an equal `Action`.
        """
        t = self.action_type
        if t in (ActionTypes.CLICK, ActionTypes.HOVER):
            return f"{t.value} [{self.element_id}]"
        if t is ActionTypes.TYPE:
            return f"type [{self.element_id}] [{self.text}] [{int(self.press_enter)}]"
        if t is ActionTypes.PRESS:
            return f"press [{self.key_comb}]"
        if t is ActionTypes.SCROLL:
            return f"scroll [{self.direction}]"
        if t is ActionTypes.TAB_FOCUS:
            return f"tab_focus [{self.page_number}]"
        if t is ActionTypes.GOTO:
            return f"goto [{self.url}]"
        if t is ActionTypes.STOP:
            return f"stop [{self.answer}]"
        return t.value  # none, new_tab, close_tab, go_back, go_forward


def _form_hint(keyword: str) -> str:
    return f"the accepted form is `{ACTION_FORMS[keyword]}`"


def extract_action(response: str) -> str:
    """Return the first triple-backtick block of an LLM response, stripped (WebArena's rule).

    Args:
        response: the model's full reply, e.g. ``"... the next action I will perform is ```click [12]```"``.

    Returns:
        The text between the first pair of ```` ``` ````, stripped.

    Raises:
        ActionParsingError: the response holds no complete ```` ``` ```` pair.
    """
    match = _FENCE_RE.search(response)
    if match is None:
        raise ActionParsingError(
            f"no action found in the response {_clip(response)!r}: wrap the action in a pair of "
            "triple backticks and put its arguments in [], e.g. ```click [12]```"
        )
    return match.group(1).strip()


def create_id_based_action(action_str: str) -> Action:
    """Parse one WebArena action string with WebArena's exact grammar.

    The keyword is the text before the first ``[`` (stripped), or else the first whitespace token;
    each keyword's regex is searched (not anchored) in the stripped string. ``type`` without a
    final ``[0]``/``[1]`` gets `` [1]`` appended first; its text is greedy. ``scroll`` brackets are
    optional. ``stop`` without ``[answer]`` gives the answer ``""``.

    Args:
        action_str: e.g. ``"type [164] [blue mug] [1]"``.

    Returns:
        The parsed `Action` (``raw`` = the stripped input).

    Raises:
        ActionParsingError: unknown keyword or a keyword whose arguments do not match its form.
    """
    text = action_str.strip()
    if not text:
        raise ActionParsingError(
            f"the action is empty; write one of: {', '.join(f'`{f}`' for f in ACTION_FORMS.values())}"
        )
    keyword = text.split("[")[0].strip() if "[" in text else text.split()[0].strip()

    if keyword in ("click", "hover"):
        match = (_CLICK_RE if keyword == "click" else _HOVER_RE).search(text)
        if match is None:
            raise _bad_args(keyword, text, "it needs a numeric element id in brackets, e.g. "
                            f"`{keyword} [12]`")
        return Action(ActionTypes(keyword), element_id=match.group(1), raw=text)
    if keyword == "type":
        padded = text if text.endswith(("[0]", "[1]")) else text + " [1]"
        match = _TYPE_RE.search(padded)
        if match is None:
            raise _bad_args(keyword, text, "it needs a numeric element id and the text to type, "
                            "each in brackets, e.g. `type [5] [blue mug] [1]`")
        element_id, content, enter_flag = match.groups()
        return Action(ActionTypes.TYPE, element_id=element_id, text=content,
                      press_enter=enter_flag == "1", raw=text)
    if keyword == "press":
        match = _PRESS_RE.search(text)
        if match is None:
            raise _bad_args(keyword, text, "it needs a key combination in brackets, e.g. "
                            "`press [Control+a]` or `press [Enter]`")
        return Action(ActionTypes.PRESS, key_comb=map_key_comb(match.group(1)), raw=text)
    if keyword == "scroll":
        match = _SCROLL_RE.search(text)
        if match is None:
            raise _bad_args(keyword, text, "the direction must be up or down, e.g. `scroll [down]`")
        return Action(ActionTypes.SCROLL, direction=match.group(1), raw=text)
    if keyword == "goto":
        match = _GOTO_RE.search(text)
        if match is None:
            raise _bad_args(keyword, text, "it needs a URL in brackets, e.g. "
                            "`goto [http://example.com/page]`")
        return Action(ActionTypes.GOTO, url=match.group(1), raw=text)
    if keyword == "tab_focus":
        match = _TAB_FOCUS_RE.search(text)
        if match is None:
            raise _bad_args(keyword, text, "it needs a numeric tab index in brackets, e.g. "
                            "`tab_focus [0]`")
        return Action(ActionTypes.TAB_FOCUS, page_number=int(match.group(1)), raw=text)
    if keyword == "stop":
        match = _STOP_RE.search(text)
        return Action(ActionTypes.STOP, answer=match.group(1) if match else "", raw=text)
    if keyword in ("new_tab", "close_tab", "go_back", "go_forward"):
        return Action(ActionTypes(keyword), raw=text)
    raise ActionParsingError(
        f"unknown action {keyword!r} in {_clip(text)!r}; the accepted actions are: "
        + ", ".join(f"`{form}`" for form in ACTION_FORMS.values())
    )


def parse_action(response: str) -> Action:
    """`extract_action` then `create_id_based_action`: an LLM reply to an `Action`.

    Raises:
        ActionParsingError: no fenced block, or its content is not a valid action.
    """
    return create_id_based_action(extract_action(response))


def is_equivalent(a: Action, b: Action) -> bool:
    """WebArena's ``is_equivalent``: are two actions the same move (used for early stopping)?

    Same type, and: click/hover/type compare ``element_id`` (both must be non-empty; the typed
    text is NOT compared, as in WebArena); scroll compares the direction; press the key
    combination; tab_focus the tab index; goto the URL; stop the answer. none, new_tab, close_tab,
    go_back and go_forward are always equivalent to themselves.
    """
    if a.action_type != b.action_type:
        return False
    t = a.action_type
    if t in (ActionTypes.CLICK, ActionTypes.HOVER, ActionTypes.TYPE):
        return bool(a.element_id) and bool(b.element_id) and a.element_id == b.element_id
    if t is ActionTypes.SCROLL:
        return ("up" if "up" in a.direction else "down") == ("up" if "up" in b.direction else "down")
    if t is ActionTypes.PRESS:
        return a.key_comb == b.key_comb
    if t is ActionTypes.TAB_FOCUS:
        return a.page_number == b.page_number
    if t is ActionTypes.GOTO:
        return a.url == b.url
    if t is ActionTypes.STOP:
        return a.answer == b.answer
    return True


def create_stop_action(answer: str) -> Action:
    """A ``stop [answer]`` action (e.g. WebArena's early stop ``stop ["Early stop: ..."]``)."""
    return Action(ActionTypes.STOP, answer=answer, raw=f"stop [{answer}]")


def create_none_action() -> Action:
    """The no-op WebArena's agent emits after a parse failure."""
    return Action(ActionTypes.NONE, raw="none")


def map_key_comb(key_comb: str) -> str:
    """Map each ``+``-part of a key combination through `SPECIAL_KEY_MAPPINGS` (case-insensitive).

    Unknown parts are kept as written, so ``"a"`` stays ``"a"`` and ``"ctrl+A"`` becomes
    ``"Control+A"``. A lone ``+`` (or a trailing one, as in ``Control++``) is kept as the key ``+``.
    """
    parts = _split_key_comb(key_comb)
    return "+".join(SPECIAL_KEY_MAPPINGS.get(part.lower(), part) for part in parts)


def playwright_key_comb(key_comb: str, *, is_mac: bool | None = None) -> str:
    """The combination handed to ``keyboard.press``: `Meta` becomes `Control` when not on a Mac.

    Args:
        key_comb: an already mapped combination (`Action.key_comb`).
        is_mac: whether the browser runs on macOS; default: this process's platform (the browser
            runs on the same machine).
    """
    if is_mac is None:
        is_mac = sys.platform == "darwin"
    if is_mac:
        return key_comb
    return "+".join("Control" if part == "Meta" else part for part in _split_key_comb(key_comb))


def _split_key_comb(key_comb: str) -> list[str]:
    """Split on ``+`` but keep ``+`` itself as a key (``"Shift++"`` -> ``["Shift", "+"]``)."""
    if key_comb in ("", "+"):
        return [key_comb]
    parts = key_comb.split("+")
    out: list[str] = []
    i = 0
    while i < len(parts):
        if parts[i] == "" and i + 1 < len(parts) and parts[i + 1] == "":
            out.append("+")  # "a++" splits as ["a", "", ""]: the key is "+"
            i += 2
            continue
        out.append(parts[i])
        i += 1
    return out


def _bad_args(keyword: str, text: str, why: str) -> ActionParsingError:
    return ActionParsingError(f"invalid {keyword} action {_clip(text)!r}: {why}; {_form_hint(keyword)}")


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
