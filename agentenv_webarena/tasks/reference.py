"""A task's `reference_action_sequence`: each step rendered as WebArena action text.

Owns the step format the embedded suite's configs carry (`{"action": "click", "element": {"role",
"name" | "name_contains", "nth"}}`, `type`, `goto`, ..., `stop`) and how a step's element is found
in an observation's `nodes_info`. Used by the reference replay (`agentenv_webarena.expert`) and
by WebArena's `TeacherForcingAgent`; it does not talk to a server or a browser.
"""
from __future__ import annotations

__all__ = ["ReplayError", "PAUSE", "seek_actions", "pause_action", "resolve_element", "reference_actions"]

# Scrolling to an element the viewport-only observation does not show yet. WebArena ends an episode
# after 3 identical actions in a row, so every third move is a PAUSE: a hover over text already in
# view, which changes nothing (a PageDown key would, but Chromium animates it, and a click that lands
# while the page still moves hits the wrong element).
PAUSE = "pause"


class ReplayError(RuntimeError):
    """A reference step could not be replayed (its element is missing, ...)."""


def resolve_element(nodes_info: dict[str, dict], spec: dict) -> str:
    """The id of the `nth` node whose role equals spec["role"] and whose name equals spec["name"]
    (or contains spec["name_contains"]).

    Raises:
        ReplayError: no such node; the message lists the nodes of that role.
    """
    role = spec.get("role")
    name = spec.get("name")
    contains = spec.get("name_contains")
    nth = int(spec.get("nth", 0))
    matches = [nid for nid, node in nodes_info.items()
               if (role is None or node.get("role") == role)
               and (name is None or node.get("name") == name)
               and (contains is None or contains in str(node.get("name", "")))]
    if len(matches) <= nth:
        same_role = [str(n.get("name", ""))[:60] for n in nodes_info.values() if n.get("role") == role][:15]
        raise ReplayError(f"no element #{nth} with role={role!r} name={name!r} name_contains={contains!r}; "
                          f"{role} elements on the page: {same_role}")
    return matches[nth]


def seek_actions(down: int, up: int) -> list[str]:
    """The moves a replay tries, in order, while a step's element is not in the observation: `down`
    scrolls towards the end of the page, then `up` back towards its top, a `PAUSE` after every two
    scrolls (so no 3 identical actions follow each other)."""
    moves: list[str] = []
    for direction, count in (("down", down), ("up", up)):
        for i in range(count):
            if i and i % 2 == 0:
                moves.append(PAUSE)
            moves.append(f"scroll [{direction}]")
    return moves


def pause_action(nodes_info: dict[str, dict], viewport: tuple[int, int] = (1280, 720)) -> str:
    """`hover [id]` over the first text of the observation wholly inside the viewport (inert, and
    the hover does not scroll: only a text partly out of view would be scrolled into it).

    Raises:
        ReplayError: the observation lists no such text.
    """
    for nid, node in nodes_info.items():
        bound = node.get("union_bound")
        if node.get("role") != "StaticText" or node.get("backend_id") is None or not bound:
            continue
        x, y, w, h = bound
        if w > 0 and h > 0 and x >= 0 and y >= 0 and x + w <= viewport[0] and y + h <= viewport[1]:
            return f"hover [{nid}]"
    raise ReplayError("no text wholly in view to pause on")


def _substitute(value: str, site_urls: dict[str, str]) -> str:
    for site, base in site_urls.items():
        value = value.replace(f"__{site.upper()}__", base)
    return value


def reference_actions(step: dict, nodes_info: dict[str, dict], site_urls: dict[str, str]) -> str:
    """Render one reference step as WebArena action text (ids resolved now)."""
    kind = step["action"]
    element = step.get("element")
    eid = resolve_element(nodes_info, element) if element else None
    if kind in ("click", "hover"):
        return f"{kind} [{eid}]"
    if kind == "type":
        return f"type [{eid}] [{_substitute(step['text'], site_urls)}] [{1 if step.get('enter', True) else 0}]"
    if kind == "press":
        return f"press [{step['key']}]"
    if kind == "scroll":
        return f"scroll [{step.get('direction', 'down')}]"
    if kind == "goto":
        return f"goto [{_substitute(step['url'], site_urls)}]"
    if kind == "tab_focus":
        return f"tab_focus [{step['page_number']}]"
    if kind in ("new_tab", "close_tab", "go_back", "go_forward"):
        return kind
    if kind == "stop":
        return f"stop [{step.get('answer', '')}]"
    raise ReplayError(f"unknown reference step action {kind!r}")
