import pytest

from agentenv.controller import ActionFormat, ActionParseError, ReActAdapter, get_adapter

MARKERS = ("search[", "click[")


@pytest.fixture
def adapter():
    return ReActAdapter(fallback_markers=MARKERS)


def test_action_is_text_after_last_marker(adapter):
    text = "Thought:\nI think Action: is tricky\n\nAction:\nsearch[red shoes]  \n"
    parsed = adapter.parse(text)
    assert parsed.action == "search[red shoes]"
    assert parsed.thought == "I think Action: is tricky"


def test_last_action_wins_when_several(adapter):
    assert adapter.parse("Action: click[a]\nThought: no\nAction: click[b]").action == "click[b]"


@pytest.mark.parametrize("text,expected", [
    ("  click[Buy Now]\n", "click[Buy Now]"),
    ("I will search[wool socks] now", "I will search[wool socks] now"),
])
def test_fallback_uses_whole_stripped_text(adapter, text, expected):
    assert adapter.parse(text).action == expected


@pytest.mark.parametrize("text", ["I am not sure what to do", "", "Thought: hmm\nAction:   \n"])
def test_unparseable_text_raises(adapter, text):
    with pytest.raises(ActionParseError):
        adapter.parse(text)


def test_no_fallback_without_markers():
    with pytest.raises(ActionParseError):
        ReActAdapter().parse("click[x]")


def test_registry_lookup_and_unknown_format_lists_choices():
    assert isinstance(get_adapter(ActionFormat.REACT), ReActAdapter)
    assert isinstance(get_adapter("react", fallback_markers=MARKERS), ReActAdapter)
    with pytest.raises(ValueError, match="react"):
        get_adapter("telepathy")


TOOLS = {"search": ("keywords", "search[{}]"), "click": ("item", "click[{}]")}


@pytest.mark.parametrize("text,expected", [
    ('{"thought": "x", "function_name": "click", "arguments": {"item": " b0abc "}}', "click[b0abc]"),
    ('Here:\n```json\n{"function_name": "search", "arguments": {"keywords": "tea"}}\n```', "search[tea]"),
])
def test_function_calling_adapter(text, expected):
    assert get_adapter("function_calling", tools=TOOLS).parse(text).action == expected


@pytest.mark.parametrize("text", [
    "not json", '{"function_name": "buy", "arguments": {}}', '{"function_name": "search", "arguments": {"q": "x"}}',
    '{"function_name": "search", "arguments": {"keywords": "  "}}', "[1, 2]",
])
def test_function_calling_adapter_rejects(text):
    with pytest.raises(ActionParseError):
        get_adapter("function_calling", tools=TOOLS).parse(text)


@pytest.mark.parametrize("text,expected", [
    ('```python\nsearch("a b")\nclick(item=\'x\')\n```', "click[x]"),
    ("search('it\\'s')", "search[it\\'s]"),
    ('I think so. click("Buy Now")', "click[Buy Now]"),
])
def test_code_as_action_adapter(text, expected):
    assert get_adapter("code_as_action", tools=TOOLS).parse(text).action == expected


@pytest.mark.parametrize("text", ["buy()", 'research("x")', 'search("")', "search(query)"])
def test_code_as_action_adapter_rejects(text):
    with pytest.raises(ActionParseError):
        get_adapter("code_as_action", tools=TOOLS).parse(text)
