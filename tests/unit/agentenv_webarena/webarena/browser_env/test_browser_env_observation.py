"""The pure accessibility-tree builder on hand-made CDP node lists (no browser)."""
from __future__ import annotations

import pytest

from agentenv_webarena.webarena.browser_env.observation import (
    ROOT_BOUND,
    bounds_from_snapshot,
    build_accessibility_tree,
    clean_accessibility_tree,
    format_tab_header,
    in_viewport_ratio,
    render_observation,
    truncate_text,
)


def ax(node_id, role, name="", children=(), props=None, backend=None, ignored=False, role_type="role"):
    """One CDP AX node as `Accessibility.getFullAXTree` returns it."""
    node = {"nodeId": str(node_id), "ignored": ignored, "role": {"type": role_type, "value": role},
            "childIds": [str(c) for c in children]}
    if not ignored:
        node["name"] = {"type": "computedString", "value": name}
        node["properties"] = [
            {"name": k, "value": v if isinstance(v, dict) else {"type": "booleanOrUndefined", "value": v}}
            for k, v in (props or {}).items()
        ]
    if backend is not None:
        node["backendDOMNodeId"] = backend
    return node


def tree(nodes, **kwargs):
    return build_accessibility_tree(nodes, **kwargs)[0]


def test_line_format_depth_and_properties():
    nodes = [
        ax(1, "RootWebArea", "Shop", [2, 3], props={"focused": True}),
        ax(2, "link", "Home", [4], props={"url": {"type": "string", "value": "http://x/"}}),
        ax(3, "textbox", "Search", [], props={"focusable": True, "editable": {"type": "token", "value": "plaintext"},
                                             "settable": True, "focused": True, "required": False,
                                             "readonly": False, "multiline": False,
                                             "invalid": {"type": "token", "value": "false"}}),
        ax(4, "StaticText", "Home page", [], role_type="internalRole"),
    ]
    assert tree(nodes).split("\n") == [
        "[1] RootWebArea 'Shop' focused: True",
        "\t[2] link 'Home' url: http://x/",
        "\t\t[4] StaticText 'Home page'",
        "\t[3] textbox 'Search' focused: True required: False",
    ]


def test_properties_without_a_plain_value_are_left_out():
    nodes = [ax(1, "RootWebArea", "R", [2]),
             ax(2, "button", "Menu", [], props={
                 "hasPopup": {"type": "token", "value": "menu"}, "expanded": False,
                 "describedby": {"type": "idrefList", "relatedNodes": [{"backendDOMNodeId": 9}]},
                 "level": {"type": "integer", "value": 2}})]
    assert tree(nodes).split("\n")[1] == "\t[2] button 'Menu' hasPopup: menu expanded: False"


@pytest.mark.parametrize(
    "name, shown",
    [("plain", "'plain'"), ("it's", '"it\'s"'), ("both ' and \"", "'both \\' and \"'"),
     ("tab\there", "'tab\\there'"), ("™ 東京", "'™ 東京'")],
)
def test_names_are_written_with_python_repr(name, shown):
    nodes = [ax(1, "RootWebArea", "R", [2]), ax(2, "button", name)]
    assert tree(nodes).split("\n")[1] == f"\t[2] button {shown}"


@pytest.mark.parametrize("role", ["generic", "img", "list", "strong", "paragraph", "banner", "navigation",
                                  "Section", "LabelText", "Legend", "listitem"])
def test_nameless_layout_roles_are_pruned_and_children_keep_the_depth(role):
    nodes = [ax(1, "RootWebArea", "R", [2]), ax(2, role, "", [3]), ax(3, "button", "OK")]
    assert tree(nodes).split("\n") == ["[1] RootWebArea 'R'", "\t[3] button 'OK'"]


def test_pruning_needs_blank_name_and_no_properties():
    nodes = [ax(1, "RootWebArea", "R", [2, 3, 4, 5, 6]),
             ax(2, "generic", "  ", [], props={"live": {"type": "token", "value": "polite"}}),  # has a property
             ax(3, "img", "logo"),  # has a name
             ax(4, "main", ""),  # not a pruned role
             ax(5, "listitem", "", [7], props={"level": {"type": "integer", "value": 1},
                                               "setsize": {"type": "integer", "value": 3}}),
             ax(6, "generic", "", [], props={"focusable": True}),  # only ignored properties: pruned
             ax(7, "link", "Inside item")]
    assert tree(nodes).split("\n") == [
        "[1] RootWebArea 'R'",
        "\t[2] generic '  ' live: polite",
        "\t[3] img 'logo'",
        "\t[4] main ''",
        "\t[7] link 'Inside item'",  # a nameless listitem goes even with properties
    ]


def test_ignored_nodes_and_inline_text_boxes_are_skipped_with_children_lifted():
    nodes = [ax(1, "RootWebArea", "R", [2]),
             ax(2, "none", ignored=True, children=[3]),
             ax(3, "StaticText", "hello", ["-5"], role_type="internalRole"),
             ax("-5", "InlineTextBox", "hello", role_type="internalRole")]
    assert tree(nodes).split("\n") == ["[1] RootWebArea 'R'", "\t[3] StaticText 'hello'"]


def test_nodes_without_role_or_name_are_skipped():
    nodes = [ax(1, "RootWebArea", "R", [2]), {"nodeId": "2", "role": {"type": "role", "value": "button"},
                                              "childIds": ["3"]}, ax(3, "link", "x")]
    assert tree(nodes).split("\n") == ["[1] RootWebArea 'R'", "\t[3] link 'x'"]


def test_duplicate_and_missing_child_ids():
    nodes = [ax(1, "RootWebArea", "R", [2, 99, 3]), ax(2, "button", "first"), ax(3, "link", "L"),
             ax(2, "button", "second copy")]
    text, info = build_accessibility_tree(nodes)
    assert text.split("\n") == ["[1] RootWebArea 'R'", "\t[2] button 'first'", "\t[3] link 'L'"]
    assert info["2"]["name"] == "first"


def test_static_text_dedupe_against_previous_three_kept_lines():
    nodes = [ax(1, "RootWebArea", "R", [2, 4, 5, 6, 7, 8, 9, 10]),
             ax(2, "link", "About us", [3]),
             ax(3, "StaticText", "About us", role_type="internalRole"),  # inside its link: dropped
             ax(4, "StaticText", "", role_type="internalRole"),  # empty: dropped
             ax(5, "StaticText", "About", role_type="internalRole"),  # substring of the link line
             ax(6, "button", "one"), ax(7, "button", "two"), ax(8, "button", "three"),
             ax(9, "StaticText", "About us", role_type="internalRole"),  # link is 4 lines back now: kept
             ax(10, "StaticText", "About us", role_type="internalRole")]  # repeats line 9: dropped
    assert tree(nodes).split("\n") == [
        "[1] RootWebArea 'R'", "\t[2] link 'About us'", "\t[6] button 'one'", "\t[7] button 'two'",
        "\t[8] button 'three'", "\t[9] StaticText 'About us'",
    ]


def test_static_text_dedupe_compares_the_written_form():
    # WebArena compares the quoted text of the line (repr form) with previous lines
    lines = "[1] RootWebArea 'R'\n\t[2] link \"it's\"\n\t[3] StaticText \"it's\"\n\t[4] StaticText 'new'"
    assert clean_accessibility_tree(lines).split("\n") == [
        "[1] RootWebArea 'R'", "\t[2] link \"it's\"", "\t[4] StaticText 'new'"]
    # a non-StaticText line mentioning StaticText is kept (WebArena would drop it)
    assert clean_accessibility_tree("[1] link 'StaticText help'") == "[1] link 'StaticText help'"


def test_nodes_info_has_every_written_node():
    nodes = [ax(1, "RootWebArea", "R", [2, 4], backend=10),
             ax(2, "link", "Go", [3], backend=11),
             ax(3, "StaticText", "Go", backend=12, role_type="internalRole"),
             ax(4, "generic", "", [], backend=13)]
    text, info = build_accessibility_tree(nodes, {11: [5, 6, 30, 10], 12: [5, 6, 20, 10]})
    assert set(info) == {"1", "2", "3"}  # the deduped StaticText stays addressable; pruned 4 is not
    assert info["1"] == {"backend_id": 10, "union_bound": list(ROOT_BOUND),
                         "text": "[1] RootWebArea 'R'", "role": "RootWebArea", "name": "R"}
    assert info["2"]["union_bound"] == [5, 6, 30, 10]
    assert info["2"]["text"] == "[2] link 'Go'"
    assert "[3]" not in text


def test_viewport_only_drops_unbounded_empty_and_offscreen_nodes():
    nodes = [ax(1, "RootWebArea", "R", [2, 3, 4, 5, 6], backend=1),
             ax(2, "button", "visible", backend=2),
             ax(3, "button", "no bound", backend=3),
             ax(4, "button", "zero size", backend=4),
             ax(5, "region", "far below", [7], backend=5),
             ax(6, "button", "no backend id"),
             ax(7, "button", "child on screen", backend=7)]
    bounds = {2: [10, 10, 50, 20], 4: [10, 40, 0, 20], 5: [0, 5000, 100, 100], 7: [10, 100, 50, 20]}
    text, info = build_accessibility_tree(nodes, bounds, current_viewport_only=True, viewport=(1280, 720))
    assert text.split("\n") == ["[1] RootWebArea 'R'", "\t[2] button 'visible'", "\t[7] button 'child on screen'"]
    assert set(info) == {"1", "2", "7"}
    full = tree(nodes, bounds=bounds)
    assert "far below" in full and "no bound" in full and "no backend id" in full


def test_webarena_ratio_quirk_and_the_area_rule():
    # fully visible 50x20: WebArena's (ow*oh/w)*h = 20*20 = 400; the area rule gives 1.0
    assert in_viewport_ratio([10, 10, 50, 20], 1280, 720) == pytest.approx(400)
    assert in_viewport_ratio([10, 10, 50, 20], 1280, 720, rule="area") == pytest.approx(1.0)
    # 10% visible (bottom edge): quirk keeps it (ratio 20*2/... large), the area rule drops it
    bound = [0, 700, 100, 200]
    assert in_viewport_ratio(bound, 1280, 720) >= 0.6
    assert in_viewport_ratio(bound, 1280, 720, rule="area") == pytest.approx(0.1)
    nodes = [ax(1, "RootWebArea", "R", [2], backend=1), ax(2, "button", "edge", backend=2)]
    assert "edge" in tree(nodes, bounds={2: bound}, current_viewport_only=True)
    assert "edge" not in tree(nodes, bounds={2: bound}, current_viewport_only=True, viewport_ratio_rule="area")
    with pytest.raises(ValueError, match="webarena"):
        in_viewport_ratio(bound, 1280, 720, rule="nope")


def test_deep_trees_do_not_recurse():
    depth = 3000
    nodes = [ax(i, "group", f"g{i}", [i + 1] if i < depth else []) for i in range(1, depth + 1)]
    text = tree(nodes)
    assert text.split("\n")[-1] == "\t" * (depth - 1) + f"[{depth}] group 'g{depth}'"


def test_empty_node_list():
    assert build_accessibility_tree([]) == ("", {})


def test_tab_header_and_render():
    assert format_tab_header(["Shop", "Forum"], 1) == "Tab 0: Shop | Tab 1 (current): Forum"
    assert format_tab_header(["Only"], 0) == "Tab 0 (current): Only"
    nodes = [ax(1, "RootWebArea", "Shop", [2]), ax(2, "button", "Buy")]
    text, info = render_observation(nodes, {}, ["Shop"], 0)
    assert text == "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop'\n\t[2] button 'Buy'"
    assert set(info) == {"1", "2"}


def test_truncation_marker_and_nodes_info_before_the_cap():
    nodes = [ax(1, "RootWebArea", "Shop", [2]), ax(2, "button", "x" * 200)]
    text, info = render_observation(nodes, {}, ["Shop"], 0, max_chars=50)
    head, marker = text.rsplit("\n", 1)
    assert len(head) == 50 and "truncated" in marker and "50" in marker
    assert "2" in info
    assert truncate_text("short", 50) == "short"
    assert truncate_text("short", None) == "short"
    with pytest.raises(ValueError, match="max_obs_chars"):
        truncate_text("long text", 0)


def test_bounds_from_snapshot_subtracts_scroll_and_unions():
    snapshot = {"documents": [{
        "nodes": {"backendNodeId": [1, 5, 6, 7]},
        "layout": {"nodeIndex": [0, 1, 2, 2], "bounds": [[0, 0, 1280, 3000], [8, 1000, 100, 20],
                                                         [8, 1200, 50, 10], [8, 1210, 80, 10]]},
        "scrollOffsetX": 0, "scrollOffsetY": 900}, {"nodes": {"backendNodeId": [99]},
                                                     "layout": {"nodeIndex": [0], "bounds": [[0, 0, 1, 1]]}}]}
    bounds = bounds_from_snapshot(snapshot)
    assert bounds[5] == [8, 100, 100, 20]
    assert bounds[6] == [8, 300, 80, 20]  # union of two layout boxes
    assert 7 not in bounds and 99 not in bounds  # no layout / other document
    assert bounds_from_snapshot({"documents": []}) == {}


def test_url_property_can_be_hidden():
    from agentenv_webarena.webarena.browser_env.observation import IGNORED_PROPERTIES

    nodes = [ax(1, "RootWebArea", "R", [2]),
             ax(2, "link", "Home", props={"url": {"type": "string", "value": "http://x/"}})]
    assert tree(nodes).split("\n")[1] == "\t[2] link 'Home' url: http://x/"
    hidden = tree(nodes, ignored_properties=IGNORED_PROPERTIES | {"url"})
    assert hidden.split("\n")[1] == "\t[2] link 'Home'"
