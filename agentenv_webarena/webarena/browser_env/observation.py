"""WebArena's accessibility-tree observation text, as pure functions of CDP data.

Owns the text format of WebArena's `browser_env/processors.py`: one line per kept AX node,
``"\\t" * depth + "[nodeId] role 'name' prop: value ..."``; the pruning of nameless layout roles;
the StaticText de-duplication; viewport-only filtering; the tab header; the length cap; and
``nodes_info`` (id -> backend node id, bound, line, role, name) used to resolve element ids.

Inputs are plain CDP results, so everything here is unit-testable without a browser:

* ``nodes``: ``Accessibility.getFullAXTree()["nodes"]`` (the first node is the root);
* ``bounds``: ``backendNodeId -> [x, y, w, h]`` in viewport (CSS) pixels, as WebArena got from
  ``getBoundingClientRect`` per node; `bounds_from_snapshot` computes the whole map from ONE
  ``DOMSnapshot.captureSnapshot`` result instead of one call per node.

Faithfulness notes (where the output can differ from WebArena's):

* Ignored AX nodes (``ignored: true``, which current Chromium returns and which carry no name)
  are skipped with their children lifted, as WebArena's try/except effectively did.
* ``InlineTextBox`` nodes (current Chromium returns them under each StaticText; they repeat its
  text and have negative ids no action can address) are skipped.
* Viewport-only mode uses WebArena's ratio *with its quirk*: ``ratio = overlap_w * overlap_h / w * h``
  evaluated left to right, i.e. ``(overlap_w * overlap_h / w) * h``, kept when ``>= 0.6``. For a
  fully visible element that is ``h**2``, so in practice anything with a real overlap is kept and
  elements entirely outside the viewport are dropped. ``viewport_ratio_rule="area"`` gives the
  sane ``overlap_area / area >= 0.6`` instead.
* Current Chromium reports a ``url`` property on links and on the root, which the Chromium
  WebArena ran (2023) did not; it is shown by default (WebArena's ignore list is kept as is).
  Pass ``ignored_properties=IGNORED_PROPERTIES | {"url"}`` (``BrowserConfig.
  extra_ignored_properties=("url",)``) for lines like WebArena's, which also keeps the text short.
* Text-node bounds come from the layout snapshot (the text's layout box) rather than a DOM Range;
  they agree for single-line text and differ at most in the union of wrapped lines.
* Pseudo-elements (``::marker`` of list items, ``::before``/``::after``) get no bound: WebArena could
  not resolve them to a DOM object to measure, so viewport-only mode drops their ``ListMarker`` lines
  as WebArena's did. (The whole-page mode shows them, as WebArena's whole-page mode does.)
* The text inside a form field (typed, or a prefilled ``value``) lives in the field's user-agent
  shadow tree, which the DOM snapshot does not list. `unlisted_nodes` names the shown nodes the
  snapshot misses, and the browser measures just those as WebArena measured every node
  (``getBoundingClientRect``, a Range for text), so field text is kept exactly when WebArena kept it.

Does not own: talking to the browser (`browser`), the action grammar (`actions`).
"""
from __future__ import annotations

import logging
from typing import AbstractSet, Any, Mapping, Sequence

__all__ = [
    "IGNORED_PROPERTIES",
    "PRUNED_ROLES",
    "SKIPPED_ROLES",
    "VIEWPORT_RATIO_THRESHOLD",
    "ROOT_BOUND",
    "TRUNCATION_MARKER",
    "bounds_from_snapshot",
    "snapshot_node_ids",
    "unlisted_nodes",
    "in_viewport_ratio",
    "build_accessibility_tree",
    "clean_accessibility_tree",
    "format_tab_header",
    "truncate_text",
    "render_observation",
]

logger = logging.getLogger(__name__)

# AX properties WebArena leaves out of the line.
IGNORED_PROPERTIES = frozenset(
    {"focusable", "editable", "readonly", "level", "settable", "multiline", "invalid"}
)
# Roles whose nameless, property-less nodes are skipped (children kept at the same depth).
PRUNED_ROLES = frozenset(
    {"generic", "img", "list", "strong", "paragraph", "banner", "navigation", "Section",
     "LabelText", "Legend", "listitem"}
)
# Roles never shown (see the module docstring).
SKIPPED_ROLES = frozenset({"InlineTextBox"})
VIEWPORT_RATIO_THRESHOLD = 0.6
# WebArena gives the root (RootWebArea) this bound instead of measuring it.
ROOT_BOUND = (0.0, 0.0, 10.0, 10.0)
TRUNCATION_MARKER = "[... observation truncated: {shown} of {total} characters shown ...]"

Bound = Sequence[float]  # [x, y, w, h]


def bounds_from_snapshot(snapshot: Mapping[str, Any]) -> dict[int, list[float]]:
    """Map backendNodeId -> ``[x, y, w, h]`` relative to the viewport, from one DOM snapshot.

    Args:
        snapshot: the result of ``DOMSnapshot.captureSnapshot`` (any ``computedStyles``). Only the
            first document (the main frame) is read: ``Accessibility.getFullAXTree`` without a
            frame id only covers that frame.

    Returns:
        One entry per DOM node that has a layout object, pseudo-elements excepted (WebArena could not
        measure them; see the module docstring). Layout bounds are document coordinates, so the
        document's scroll offset is subtracted, giving what ``getBoundingClientRect`` would return.
        A node with several layout entries gets their union.
    """
    documents = snapshot.get("documents") or []
    if not documents:
        return {}
    doc = documents[0]
    backend_ids = doc.get("nodes", {}).get("backendNodeId", [])
    pseudo = set((doc.get("nodes", {}).get("pseudoType") or {}).get("index") or [])
    layout = doc.get("layout", {})
    node_index = layout.get("nodeIndex", [])
    rects = layout.get("bounds", [])
    scroll_x = float(doc.get("scrollOffsetX", 0) or 0)
    scroll_y = float(doc.get("scrollOffsetY", 0) or 0)
    out: dict[int, list[float]] = {}
    for idx, rect in zip(node_index, rects, strict=False):
        if idx >= len(backend_ids) or len(rect) < 4 or idx in pseudo:
            continue
        backend_id = backend_ids[idx]
        x, y, w, h = (float(v) for v in rect[:4])
        box = [x - scroll_x, y - scroll_y, w, h]
        prev = out.get(backend_id)
        out[backend_id] = box if prev is None else _union(prev, box)
    return out


def snapshot_node_ids(snapshot: Mapping[str, Any]) -> frozenset[int]:
    """Backend node ids of every node the snapshot's first document lists (laid out or not).

    User-agent shadow trees (the inner editor of an input or textarea, which holds its text) are not
    listed; see `unlisted_nodes`.
    """
    documents = snapshot.get("documents") or []
    if not documents:
        return frozenset()
    return frozenset(documents[0].get("nodes", {}).get("backendNodeId", []))


def unlisted_nodes(nodes: Sequence[Mapping[str, Any]], dom_nodes: AbstractSet[int],
                   ignored_properties: AbstractSet[str] = IGNORED_PROPERTIES) -> list[int]:
    """Backend ids of AX nodes that would be shown but that the DOM snapshot does not list.

    These are nodes of user-agent shadow trees: the text typed into or prefilled in an input or
    textarea, a select's popup. The snapshot gives them no bound, so viewport-only mode needs them
    measured one by one (few per page), as WebArena measured every node.

    Args:
        nodes: ``Accessibility.getFullAXTree`` nodes.
        dom_nodes: `snapshot_node_ids` of the snapshot taken with them.
        ignored_properties: as for `build_accessibility_tree` (decides which nodes are shown).
    """
    out: dict[int, None] = {}  # ordered, without repeats
    for node in nodes:
        backend_id = node.get("backendDOMNodeId")
        if backend_id is None or backend_id in dom_nodes or backend_id in out:
            continue
        if _node_line(node, ignored_properties) is not None:
            out[backend_id] = None
    return list(out)


def _union(a: Bound, b: Bound) -> list[float]:
    left, top = min(a[0], b[0]), min(a[1], b[1])
    right, bottom = max(a[0] + a[2], b[0] + b[2]), max(a[1] + a[3], b[1] + b[3])
    return [left, top, right - left, bottom - top]


def in_viewport_ratio(bound: Bound, viewport_width: float, viewport_height: float, *,
                      rule: str = "webarena") -> float:
    """How much of an element lies in the window ``(0, 0)-(viewport_width, viewport_height)``.

    Args:
        bound: ``[x, y, w, h]`` relative to the viewport, with ``w, h > 0``.
        rule: ``"webarena"``: WebArena's expression ``overlap_w * overlap_h / w * h`` evaluated
            left to right (its bug, kept for faithfulness: a fully visible element scores ``h**2``);
            ``"area"``: the visible fraction ``overlap_w * overlap_h / (w * h)``.

    Raises:
        ValueError: unknown ``rule``.
    """
    x, y, w, h = (float(v) for v in bound[:4])
    overlap_w = max(0.0, min(x + w, viewport_width) - max(x, 0.0))
    overlap_h = max(0.0, min(y + h, viewport_height) - max(y, 0.0))
    if rule == "webarena":
        return overlap_w * overlap_h / w * h
    if rule == "area":
        return overlap_w * overlap_h / (w * h)
    raise ValueError(f"viewport ratio rule {rule!r} is unknown; choose 'webarena' or 'area'")


def _visible(bound: Bound | None, viewport: tuple[float, float], rule: str) -> bool:
    if bound is None:
        return False
    w, h = float(bound[2]), float(bound[3])
    if w == 0 or h == 0:
        return False
    return in_viewport_ratio(bound, viewport[0], viewport[1], rule=rule) >= VIEWPORT_RATIO_THRESHOLD


def _format_properties(node: Mapping[str, Any], ignored: AbstractSet[str]) -> list[str]:
    """``name: value`` for each AX property WebArena shows (those with a plain ``value``)."""
    out = []
    for prop in node.get("properties") or []:
        name = prop.get("name")
        if name in ignored:
            continue
        value = prop.get("value") or {}
        if "value" not in value:  # e.g. idref lists (relatedNodes only): WebArena's KeyError path
            continue
        out.append(f"{name}: {value['value']}")
    return out


def build_accessibility_tree(
    nodes: Sequence[Mapping[str, Any]],
    bounds: Mapping[int, Bound] | None = None,
    *,
    current_viewport_only: bool = False,
    viewport: tuple[float, float] = (1280, 720),
    viewport_ratio_rule: str = "webarena",
    ignored_properties: AbstractSet[str] = IGNORED_PROPERTIES,
) -> tuple[str, dict[str, dict[str, Any]]]:
    """Serialise ``Accessibility.getFullAXTree`` nodes into WebArena's tree text.

    A depth-first walk from the first node. Each kept node gives one line
    ``"\\t" * depth + f"[{nodeId}] {role} {name!r}"`` plus `` name: value`` per shown property.
    A node is skipped, its children staying at its depth, when it is ignored, has no role/name,
    is an ``InlineTextBox``, is a nameless property-less node of a `PRUNED_ROLES` role, is a
    nameless ``listitem``, or (viewport-only) has no bound, a zero size, or an in-viewport ratio
    below 0.6. Repeated node ids are dropped; child ids missing from the list are ignored.
    The StaticText clean-up (`clean_accessibility_tree`) is applied to the result.

    Args:
        nodes: AX nodes as CDP returns them.
        bounds: backendNodeId -> ``[x, y, w, h]`` relative to the viewport (`bounds_from_snapshot`).
        current_viewport_only: drop what is not (sufficiently) inside the viewport.
        viewport: ``(width, height)`` of the window in CSS pixels.
        viewport_ratio_rule: see `in_viewport_ratio`.
        ignored_properties: AX properties left out of the lines (WebArena's `IGNORED_PROPERTIES`;
            add ``"url"`` to hide the link URLs current Chromium reports, see the module docstring).

    Returns:
        ``(tree_text, nodes_info)``; ``nodes_info[id]`` is ``{"backend_id", "union_bound",
        "text", "role", "name"}`` for every node written by the walk, including StaticText lines
        the clean-up later removed (WebArena keeps those addressable too).
    """
    bounds = bounds or {}
    by_id: dict[str, Mapping[str, Any]] = {}
    for node in nodes:
        by_id.setdefault(str(node.get("nodeId")), node)  # first occurrence wins
    if not nodes:
        return "", {}
    root_id = str(nodes[0].get("nodeId"))

    lines: list[str] = []
    nodes_info: dict[str, dict[str, Any]] = {}
    visited: set[str] = set()
    # Iterative DFS (pages can nest deeper than Python's recursion limit): (node id, depth).
    stack: list[tuple[str, int]] = [(root_id, 0)]
    while stack:
        node_id, depth = stack.pop()
        if node_id in visited:
            continue
        visited.add(node_id)
        node = by_id[node_id]
        backend_id = node.get("backendDOMNodeId")
        bound: list[float] | None
        if node_id == root_id:
            bound = list(ROOT_BOUND)
        else:
            raw_bound = bounds.get(backend_id) if backend_id is not None else None
            bound = list(raw_bound) if raw_bound is not None else None
        line = _node_line(node, ignored_properties)
        if line is not None and current_viewport_only and not _visible(bound, viewport, viewport_ratio_rule):
            line = None
        child_depth = depth
        if line is not None:
            role, name, text = line
            lines.append("\t" * depth + text)
            nodes_info[node_id] = {
                "backend_id": backend_id,
                "union_bound": bound,
                "text": text,
                "role": role,
                "name": name,
            }
            child_depth = depth + 1
        children = [str(c) for c in node.get("childIds") or [] if str(c) in by_id]
        for child in reversed(children):
            stack.append((child, child_depth))
    return clean_accessibility_tree("\n".join(lines)), nodes_info


def _node_line(node: Mapping[str, Any], ignored_properties: AbstractSet[str]) -> tuple[str, str, str] | None:
    """``(role, name, line-without-indent)`` for a node WebArena shows, else None."""
    if node.get("ignored"):
        return None
    role_obj, name_obj = node.get("role"), node.get("name")
    if not isinstance(role_obj, Mapping) or not isinstance(name_obj, Mapping):
        return None
    if "value" not in role_obj or "value" not in name_obj:
        return None
    role, name = str(role_obj["value"]), name_obj["value"]
    if not isinstance(name, str):
        name = str(name)
    if role in SKIPPED_ROLES:
        return None
    properties = _format_properties(node, ignored_properties)
    if not name.strip():
        if not properties and role in PRUNED_ROLES:
            return None
        if properties and role == "listitem":
            return None
    text = f"[{node.get('nodeId')}] {role} {name!r}"
    if properties:
        text += " " + " ".join(properties)
    return role, name, text


def clean_accessibility_tree(tree: str) -> str:
    """WebArena's clean-up: drop a StaticText line whose text is empty or already shown.

    A line ``[id] StaticText 'text'`` is dropped when its quoted text (as written, i.e. the
    ``repr`` form without the quotes) is empty or is a substring of any of the previous three
    kept lines. Other lines are kept unchanged. (WebArena tests ``"statictext" in line.lower()``
    and so also drops e.g. a link named 'StaticText'; here only StaticText nodes are tested.)
    """
    kept: list[str] = []
    for line in tree.split("\n"):
        static_text = _static_text(line)
        if static_text is None:
            kept.append(line)
            continue
        if static_text and all(static_text not in prev for prev in kept[-3:]):
            kept.append(line)
    return "\n".join(kept)


def _static_text(line: str) -> str | None:
    """The quoted text of a StaticText line (quotes removed), or None for other lines."""
    body = line.lstrip("\t")
    if not body.startswith("["):
        return None
    close = body.find("] ")
    if close < 0 or not body[close + 2:].startswith("StaticText "):
        return None
    return body[close + 2 + len("StaticText "):][1:-1]


def format_tab_header(titles: Sequence[str], current: int) -> str:
    """``"Tab 0 (current): <title> | Tab 1: <title>"`` (WebArena's header, without the blank line)."""
    parts = []
    for idx, title in enumerate(titles):
        parts.append(f"Tab {idx} (current): {title}" if idx == current else f"Tab {idx}: {title}")
    return " | ".join(parts)


def truncate_text(text: str, max_chars: int | None) -> str:
    """Cut ``text`` to ``max_chars`` characters and append a marker line saying so.

    The marker is extra: the result is ``max_chars`` characters of the text, a newline and the
    marker. ``None`` (or a text that fits) returns the text unchanged.

    Raises:
        ValueError: ``max_chars`` is not positive.
    """
    if max_chars is None or len(text) <= max_chars:
        return text
    if max_chars <= 0:
        raise ValueError(f"max_obs_chars must be a positive number of characters or None, got {max_chars}")
    return text[:max_chars] + "\n" + TRUNCATION_MARKER.format(shown=max_chars, total=len(text))


def render_observation(
    nodes: Sequence[Mapping[str, Any]],
    bounds: Mapping[int, Bound] | None,
    tab_titles: Sequence[str],
    current_tab: int,
    *,
    current_viewport_only: bool = False,
    viewport: tuple[float, float] = (1280, 720),
    max_chars: int | None = None,
    viewport_ratio_rule: str = "webarena",
    ignored_properties: AbstractSet[str] = IGNORED_PROPERTIES,
) -> tuple[str, dict[str, dict[str, Any]]]:
    """The full observation text: tab header, a blank line, the tree; then the length cap.

    Returns:
        ``(text, nodes_info)``; ``nodes_info`` is computed before the cap (see
        `build_accessibility_tree`).
    """
    tree, nodes_info = build_accessibility_tree(
        nodes, bounds, current_viewport_only=current_viewport_only, viewport=viewport,
        viewport_ratio_rule=viewport_ratio_rule, ignored_properties=ignored_properties,
    )
    text = f"{format_tab_header(tab_titles, current_tab)}\n\n{tree}"
    return truncate_text(text, max_chars), nodes_info
