"""Wording shared by the templates: the action list, the rules, the example pages and the prompt
layout. Our own text; it carries the information WebArena's prompts carry (objective, URL,
observation, previous action, the action grammar, the reply format, worked examples)."""
from __future__ import annotations

ANSWER_PHRASE = "In summary, the next action I will perform is"
ACTION_SPLITTER = "```"

# The current-step block: the env's prompt layout (OBSERVATION / URL / OBJECTIVE / PREVIOUS ACTION).
TEMPLATE = "OBSERVATION:\n{observation}\nURL: {url}\nOBJECTIVE: {objective}\nPREVIOUS ACTION: {previous_action}"
KEYWORDS = ["observation", "url", "objective", "previous_action"]

ROLE = (
    "You control a web browser to complete a task for a user. Each turn you are shown the page the "
    "browser is on and you answer with exactly one browser action; you keep going until the task is "
    "done.\n\n"
    "What you see each turn:\n"
    "- OBSERVATION: the current page as an accessibility tree. Every line is one element, written "
    "`[id] role 'name'`, indented under its parent. Use the number in brackets to refer to an element.\n"
    "- URL: the address of the current page.\n"
    "- OBJECTIVE: the task you must complete.\n"
    "- PREVIOUS ACTION: the action you sent last turn (None on the first turn), or a note that it "
    "could not be understood.\n"
)

ACTIONS = (
    "Actions you may send:\n"
    "On the page:\n"
    "`click [id]` clicks the element with that id.\n"
    "`type [id] [text] [press_enter_after]` types text into that field; Enter is pressed afterwards "
    "unless press_enter_after is 0 (it is 1 when left out).\n"
    "`hover [id]` moves the mouse over the element.\n"
    "`press [key_comb]` presses a key or a combination, e.g. `press [Enter]` or `press [Ctrl+a]`.\n"
    "`scroll [down]` or `scroll [up]` moves the page by one screen.\n"
    "With tabs:\n"
    "`new_tab` opens an empty tab.\n"
    "`tab_focus [tab_index]` switches to the tab with that index (0 is the first).\n"
    "`close_tab` closes the current tab.\n"
    "Navigation:\n"
    "`goto [url]` opens a URL.\n"
    "`go_back` returns to the previous page; `go_forward` undoes a go_back.\n"
    "Finishing:\n"
    "`stop [answer]` ends the task. When the objective asks for information, put the answer inside "
    "the brackets; otherwise the brackets may stay empty.\n"
)

NA_RULE = ("If the task cannot be done (the information does not exist, or it asks for something impossible), "
           "send `stop [N/A]`.\n")


def rules(cot: bool, with_na: bool) -> str:
    """The numbered rules; `cot` chooses the reply format, `with_na` adds the N/A rule."""
    reply = (f"Think it through step by step first, then end your reply with the sentence \"{ANSWER_PHRASE} "
             f"{ACTION_SPLITTER}action [arg]{ACTION_SPLITTER}\", the action between a pair of triple backticks."
             if cot else
             f"Reply with the action only, between a pair of triple backticks: {ACTION_SPLITTER}action [arg]"
             f"{ACTION_SPLITTER}.")
    items = [
        "Send one action per turn, and only an action that is possible on the current page.",
        "Write every argument inside square brackets, exactly as in the list above.",
        reply,
        "Stop as soon as the objective is reached; do not repeat an action that had no effect.",
    ]
    if with_na:
        items.append(NA_RULE.strip())
    return "Rules:\n" + "".join(f"{i}. {item}\n" for i, item in enumerate(items, 1))


def intro(cot: bool, with_na: bool) -> str:
    """The system text of a template."""
    return ROLE + "\n" + ACTIONS + "\n" + rules(cot, with_na)


# Two worked examples on made-up pages (not pages of the embedded task suite).
_SHOP_OBSERVATION = (
    "Tab 0 (current): One Stop Market\n\n"
    "[1204] RootWebArea 'One Stop Market' focused: True\n"
    "\t[1210] link 'My Account'\n"
    "\t[1216] searchbox 'Search' required: False\n"
    "\t[1240] heading 'Search results for: green tea'\n"
    "\t[1251] link 'Misty Ridge Jasmine Green Tea, 40 bags'\n"
    "\t[1253] StaticText '$7.49'\n"
    "\t[1256] button 'Add to Cart'\n"
    "\t[1262] link 'Harbor Leaf Sencha, 100 g'\n"
    "\t[1264] StaticText '$12.80'\n"
    "\t[1267] button 'Add to Cart'"
)
_FORUM_OBSERVATION = (
    "Tab 0 (current): Forums\n\n"
    "[3] RootWebArea 'Forums' focused: True\n"
    "\t[11] link 'Home'\n"
    "\t[13] link 'Forums'\n"
    "\t[19] searchbox 'Search query'\n"
    "\t[27] link 'Submit'\n"
    "\t[41] heading 'List of forums'\n"
    "\t[45] link 'birdwatching'\n"
    "\t[46] link 'woodworking'\n"
    "\t[47] link 'sourdough'"
)

EXAMPLE_STATES = [
    {"observation": _SHOP_OBSERVATION, "url": "http://onestopmarket.com/catalogsearch/result/?q=green+tea",
     "objective": "How much does the Harbor Leaf Sencha cost?", "previous_action": "type [1216] [green tea] [1]"},
    {"observation": _FORUM_OBSERVATION, "url": "http://reddit.com/forums",
     "objective": "Show me the posts in the woodworking forum.", "previous_action": "None"},
]
COT_RESPONSES = [
    "The search results list Harbor Leaf Sencha, 100 g, and the price shown under it is $12.80. That answers "
    f"the question, so I finish with it. {ANSWER_PHRASE} {ACTION_SPLITTER}stop [$12.80]{ACTION_SPLITTER}",
    "I am on the list of forums. The woodworking forum is the link with id [46]; opening it shows its posts. "
    f"{ANSWER_PHRASE} {ACTION_SPLITTER}click [46]{ACTION_SPLITTER}",
]
DIRECT_RESPONSES = [
    f"{ACTION_SPLITTER}stop [$12.80]{ACTION_SPLITTER}",
    f"{ACTION_SPLITTER}click [46]{ACTION_SPLITTER}",
]


def examples(responses: list[str]) -> list[list[str]]:
    """`[[example step block, response], ...]` for the example pages."""
    return [[TEMPLATE.format(**state), response] for state, response in zip(EXAMPLE_STATES, responses, strict=True)]


def meta_data(constructor: str, force_prefix: str = "") -> dict:
    """The template's `meta_data`: how the constructor renders it and reads the answer."""
    return {
        "observation": "accessibility_tree",
        "action_type": "id_accessibility_tree",
        "keywords": list(KEYWORDS),
        "prompt_constructor": constructor,
        "answer_phrase": ANSWER_PHRASE,
        "action_splitter": ACTION_SPLITTER,
        "force_prefix": force_prefix,
    }
