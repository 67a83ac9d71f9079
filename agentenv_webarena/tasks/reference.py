"""A task's `reference_action_sequence`: each step rendered as WebArena action text.

Owns the step format the embedded suite's configs carry (`{"action": "click", "element": {"role",
"name" | "name_contains", "nth"}}`, `type`, `goto`, ..., `stop`) and how a step's element is found
in an observation's `nodes_info`. Used by the reference replay (`agentenv_webarena.expert`) and
by WebArena's `TeacherForcingAgent`; it does not talk to a server or a browser.
"""
from __future__ import annotations

__all__ = ["ReplayError", "resolve_element", "reference_actions"]


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
        return f"type [{eid}] [{step['text']}] [{1 if step.get('enter', True) else 0}]"
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
