"""Golden observations: the server's default (viewport-only) accessibility tree on embedded pages with filled
form fields and long lists, at load and after `scroll [down]`, driven over HTTP like an agent.

Each case's texts are in `tests/data/webarena_observations/<case>.txt` with element ids written `[ID]`
(ids are Chromium's and carry no meaning across runs). These pages are also in `bench/webarena_fidelity.py`,
where the same states match WebArena's own processor line for line (bench/RESULTS.md, W2). After a deliberate
change to the sites' pages or seed, rewrite the files with `WEBARENA_UPDATE_GOLDEN=1 pytest <this file>`
and review the diff.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import requests
from helpers import embedded_sites_env, launched_server, require_chromium

require_chromium()

from agentenv.envs.webarena import WebarenaEnvClient  # noqa: E402
from agentenv_webarena.tasks.reference import resolve_element  # noqa: E402

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "data" / "webarena_observations"
UPDATE = os.environ.get("WEBARENA_UPDATE_GOLDEN") == "1"

# case -> (task to reset to, steps). A step is ("goto", site, path), ("type", role, name, text),
# ("scroll",) or ("observe", state name).
CASES = {
    "admin_product_edit": (252, [("goto", "shopping_admin", "/catalog/product/edit/id/1/"), ("observe", "load"),
                                 ("type", "textbox", "Quantity", "5"), ("observe", "typed"),
                                 ("scroll",), ("observe", "scrolled")]),
    "forum_submit": (490, [("goto", "reddit", "/submit"),
                           ("type", "textbox", "Title", "A golden title"),
                           ("type", "textbox", "Body", "Typed into the body."), ("observe", "typed"),
                           ("scroll",), ("observe", "scrolled")]),
    "shop_search_typed": (0, [("type", "searchbox", "Search", "wireless headphones"), ("observe", "typed"),
                              ("scroll",), ("observe", "scrolled")]),
    "shop_account_edit": (0, [("goto", "shopping", "/customer/account/edit/"), ("observe", "load"),
                              ("scroll",), ("observe", "scrolled")]),
    "forum_front": (490, [("observe", "load"), ("scroll",), ("observe", "scrolled"),
                          ("scroll",), ("observe", "scrolled twice")]),
    "admin_order_grid": (252, [("goto", "shopping_admin", "/sales/order/"), ("observe", "load"),
                               ("scroll",), ("observe", "scrolled")]),
    "shop_product_two_tabs": (156, [("observe", "load"), ("scroll",), ("observe", "scrolled")]),
}

_ID = re.compile(r"^(\t*)\[-?\d+\] ", re.M)


@pytest.fixture(scope="module")
def server():
    env = embedded_sites_env()
    with launched_server("agentenv_webarena.launch", env=env, timeout_s=120) as (base, _proc):
        yield base


def _tree(observation: str) -> str:
    """The accessibility tree of a prompt-layout observation, element ids normalised."""
    tree = observation.split("OBSERVATION:\n", 1)[1].rsplit("\nURL: ", 1)[0]
    return _ID.sub(r"\1[ID] ", tree)


def _play(client: WebarenaEnvClient, task: int, steps: list, site_urls: dict) -> str:
    observation = client.reset(task).observation
    states = []
    for step in steps:
        if step[0] == "observe":
            states.append(f"=== {step[1]} ===\n{_tree(observation)}\n")
            continue
        if step[0] == "goto":
            action = f"goto [{site_urls[step[1]]}{step[2]}]"
        elif step[0] == "type":
            nodes = client.observation_metadata()["obs_nodes_info"]
            element = resolve_element(nodes, {"role": step[1], "name": step[2]})
            action = f"type [{element}] [{step[3]}] [0]"
        else:
            action = "scroll [down]"
        out = client.step(f"```{action}```")
        assert not (out.info or {}).get("error"), (action, out.info)
        observation = out.observation
    return "".join(states)


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_observation(server, case):
    site_urls = requests.get(server + "/tasks", timeout=10).json()["site_urls"]
    task, steps = CASES[case]
    with WebarenaEnvClient(server, data_len=10_000, timeout=120) as client:
        text = _play(client, task, steps, site_urls)
    path = GOLDEN_DIR / f"{case}.txt"
    if UPDATE:
        GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; write it with WEBARENA_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{case}: the observation differs from {path}"


def test_golden_files_show_field_text_and_no_list_markers():
    """What the goldens must contain whatever the seed: typed and prefilled text in the viewport-only tree,
    no ListMarker lines, and a long page whose scrolled state differs from its first screen."""
    texts = {case: (GOLDEN_DIR / f"{case}.txt").read_text() for case in CASES}
    assert "StaticText 'A golden title'" in texts["forum_submit"]
    assert "StaticText 'Typed into the body.'" in texts["forum_submit"]
    assert "StaticText 'wireless headphones'" in texts["shop_search_typed"]
    load = texts["admin_product_edit"].split("=== typed ===")[0]
    assert re.search(r"textbox 'SKU'.*\n\t+\[ID\] StaticText '\S+'", load)  # the prefilled SKU
    assert all("ListMarker" not in text for text in texts.values())
    first, scrolled = texts["forum_front"].split("=== scrolled ===")
    assert first.split("\n")[2:6] != scrolled.split("\n")[2:6]
