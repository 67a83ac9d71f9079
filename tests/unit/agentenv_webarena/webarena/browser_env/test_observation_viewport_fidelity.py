"""Viewport-only observation as WebArena's: form-field text measured, pseudo-elements (ListMarker) dropped."""
from __future__ import annotations

from agentenv_webarena.webarena.browser_env.observation import (
    IGNORED_PROPERTIES,
    bounds_from_snapshot,
    build_accessibility_tree,
    snapshot_node_ids,
    unlisted_nodes,
)


def ax(node_id, role, name="", children=(), props=None, ignored=False):
    """One CDP AX node; its backend DOM node id equals its node id (as current Chromium reports them)."""
    node = {"nodeId": str(node_id), "ignored": ignored, "role": {"type": "role", "value": role},
            "childIds": [str(c) for c in children], "backendDOMNodeId": node_id}
    if not ignored:
        node["name"] = {"type": "computedString", "value": name}
        node["properties"] = [{"name": k, "value": {"type": "booleanOrUndefined", "value": v}}
                              for k, v in (props or {}).items()]
    return node


def snapshot(backend_ids, layout, pseudo=(), scroll_y=0):
    """A one-document ``DOMSnapshot.captureSnapshot`` result: ``layout`` maps backend id -> bound."""
    index = {b: i for i, b in enumerate(backend_ids)}
    return {"documents": [{
        "nodes": {"backendNodeId": list(backend_ids),
                  "pseudoType": {"index": [index[b] for b in pseudo], "value": [0] * len(pseudo)}},
        "layout": {"nodeIndex": [index[b] for b in layout], "bounds": list(layout.values())},
        "scrollOffsetX": 0, "scrollOffsetY": scroll_y}]}


# A page with a search field holding "coffee" (its text in the field's user-agent shadow tree: nodes 4-6,
# which the snapshot does not list) and an ordered list whose markers are ::marker pseudo-elements (9, 12).
NODES = [
    ax(1, "RootWebArea", "Shop", [2, 7]),
    ax(2, "generic", "", [3]),
    ax(3, "searchbox", "Search", [4], props={"focused": True}),
    ax(4, "none", ignored=True, children=[5]),
    ax(5, "generic", "", [6]),
    ax(6, "StaticText", "coffee"),
    ax(7, "list", "", [8, 11]),
    ax(8, "listitem", "", [9, 10], props={"level": 1}),
    ax(9, "ListMarker", "1. "),
    ax(10, "StaticText", "Open the box"),
    ax(11, "listitem", "", [12, 13], props={"level": 1}),
    ax(12, "ListMarker", "2. "),
    ax(13, "StaticText", "Fill the cup"),
]
SNAPSHOT = snapshot([1, 2, 3, 7, 8, 9, 10, 11, 12, 13], {
    1: [0, 0, 1280, 2000], 2: [10, 10, 300, 30], 3: [10, 10, 300, 30], 7: [10, 100, 600, 60],
    8: [40, 100, 570, 20], 9: [20, 100, 18, 17], 10: [40, 100, 100, 17],
    11: [40, 130, 570, 20], 12: [20, 130, 18, 17], 13: [40, 130, 100, 17]}, pseudo=[9, 12])


def lines(text):
    return text.split("\n")


def test_snapshot_bounds_leave_out_pseudo_elements():
    bounds = bounds_from_snapshot(SNAPSHOT)
    assert 9 not in bounds and 12 not in bounds  # ::marker: WebArena could not measure them
    assert bounds[10] == [40, 100, 100, 17]
    assert snapshot_node_ids(SNAPSHOT) == frozenset({1, 2, 3, 7, 8, 9, 10, 11, 12, 13})
    assert snapshot_node_ids({"documents": []}) == frozenset()


def test_unlisted_nodes_are_the_shown_nodes_the_snapshot_misses():
    # 4 (ignored) and 5 (nameless generic) are not shown, so only the field's text needs measuring
    assert unlisted_nodes(NODES, snapshot_node_ids(SNAPSHOT)) == [6]
    assert unlisted_nodes(NODES + [NODES[5]], snapshot_node_ids(SNAPSHOT)) == [6]  # a repeated node: once
    assert unlisted_nodes(NODES, frozenset(range(1, 14))) == []


def test_viewport_only_shows_measured_field_text_and_drops_list_markers():
    bounds = bounds_from_snapshot(SNAPSHOT)
    bounds[6] = [14, 16, 48, 17]  # what the browser measured for the text inside the field
    text, info = build_accessibility_tree(NODES, bounds, current_viewport_only=True,
                                          ignored_properties=IGNORED_PROPERTIES)
    assert lines(text) == [
        "[1] RootWebArea 'Shop'",
        "\t[3] searchbox 'Search' focused: True",
        "\t\t[6] StaticText 'coffee'",
        "\t[10] StaticText 'Open the box'",
        "\t[13] StaticText 'Fill the cup'",
    ]
    assert info["6"]["union_bound"] == [14, 16, 48, 17]
    assert "9" not in info and "12" not in info


def test_field_text_follows_its_measured_bound():
    bounds = bounds_from_snapshot(SNAPSHOT)
    unmeasured = build_accessibility_tree(NODES, bounds, current_viewport_only=True)[0]
    assert "coffee" not in unmeasured  # no bound, as WebArena when a node cannot be measured
    bounds[6] = [14, 3016, 48, 17]  # the field scrolled far out of the window
    assert "coffee" not in build_accessibility_tree(NODES, bounds, current_viewport_only=True)[0]


def test_whole_page_keeps_list_markers_and_field_text():
    text = build_accessibility_tree(NODES, bounds_from_snapshot(SNAPSHOT), current_viewport_only=False)[0]
    assert "\t\t[6] StaticText 'coffee'" in lines(text)
    assert "\t[9] ListMarker '1. '" in lines(text) and "\t[12] ListMarker '2. '" in lines(text)
