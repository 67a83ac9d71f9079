"""Task configs in WebArena's exact `config_files/test.raw.json` format, generated for tests.

`raw_tasks()` writes as many configs as WebArena's file holds (812), with its key order, its placeholders and
its mix: the site combinations, eval types, reference-answer kinds, program_html URL and locator forms
(`last`, `func:` helpers, `document.querySelector(...)`, `prep_actions`), multi-tab `|AND|` starts, 190
templates (counts from docs in shared/reference: webarena.md B1 and webarena_anchors.md). The answers are
made up: the configs test loading and validation, not scoring. `generate_test_data()` does what WebArena's
`scripts/generate_test_data.py` does: a plain string replace of the placeholders, one `{task_id}.json` each.
"""
from __future__ import annotations

import json
import os
from typing import Mapping

__all__ = ["SITE_MIX", "EVAL_MIX", "raw_tasks", "generate_test_data"]

# (sites, tasks) as in test.raw.json
SITE_MIX = [(["shopping"], 187), (["shopping_admin"], 182), (["gitlab"], 180), (["map"], 109), (["reddit"], 106),
            (["gitlab", "reddit"], 18), (["map", "wikipedia"], 17), (["gitlab", "wikipedia"], 6),
            (["reddit", "shopping"], 5), (["map", "shopping_admin"], 2)]
# (eval_types, tasks) as in test.raw.json
EVAL_MIX = [(["string_match"], 325), (["program_html"], 282), (["url_match", "program_html"], 129),
            (["url_match"], 66), (["string_match", "url_match"], 10)]
_TEMPLATES = 190
_MULTI_TAB = 5  # tasks whose start_url opens two tabs (" |AND| ")
_PLACEHOLDER = {"shopping": "__SHOPPING__", "shopping_admin": "__SHOPPING_ADMIN__", "reddit": "__REDDIT__",
                "gitlab": "__GITLAB__", "map": "__MAP__", "wikipedia": "__WIKIPEDIA__"}
_START_PATH = {"shopping": "", "shopping_admin": "", "reddit": "/forums", "gitlab": "/byteblaze/dotfiles",
               "map": "", "wikipedia": "/wikipedia_en_all_maxi_2022-05/A/User:The_other_Kiwix_guy/Landing"}
_LOGIN_SITES = ("shopping", "shopping_admin", "reddit", "gitlab")  # map and wikipedia need no account
# program_html targets (url, locator, required_contents, prep_actions or None), drawn in turn
_TARGETS = [
    ("last", "", {"must_include": ["Hello |OR| hello"]}, None),
    ("func:reddit_get_post_url('__last_url__')", "document.querySelector('.submission__inner').outerText",
     {"must_include": ["a new post"]}, None),
    ("__GITLAB__/byteblaze/dotfiles/-/project_members", "func:gitlab_get_project_memeber_role(__page__, 'yjlou')",
     {"exact_match": "Developer"}, None),
    ("func:shopping_get_latest_order_url()", "document.querySelector('.order-details-items.ordered').outerText",
     {"must_include": ["Sprite Stasis Ball"]}, None),
    ("last", "func:shopping_get_sku_latest_review_rating('B07HJ4C5HD')", {"exact_match": "80"}, None),
    ("last", "document.querySelector('[name=\"product[price]\"]').value", {"exact_match": "27.00"},
     ["document.querySelector('#product-form').scrollIntoView()"]),
]


def _spread(mix: list[tuple[list[str], int]]) -> list[list[str]]:
    """One entry per task, the kinds interleaved (not in blocks), in a fixed order."""
    left = [[kind, n] for kind, n in mix]
    out = []
    while any(n for _, n in left):
        for entry in left:
            if entry[1]:
                out.append(list(entry[0]))
                entry[1] -= 1
    return out


def _answers(i: int) -> tuple[dict, str]:
    """reference_answers and string_note of the i-th string-matched task: must_include 176, fuzzy_match 118
    (36 of them "N/A"), exact_match 45 keys over 335 tasks, as in test.raw.json (4 tasks have two keys)."""
    if i < 4:
        return {"must_include": ["2022"], "fuzzy_match": ["in 2022"]}, ""
    if i < 176:
        return {"must_include": [f"item {i}", "$1" if i % 2 else "N"]}, ""
    if i < 290 - 36:
        return {"fuzzy_match": [f"the answer to question {i}"]}, ""
    if i < 290:
        return {"fuzzy_match": "N/A"}, "There is no such record on the site"
    return {"exact_match": str(i)}, ""


def raw_tasks(n: int = 812) -> list[dict]:
    """`n` task configs (at most 812) in test.raw.json's format, with `__SITE__` placeholders."""
    sites_of, evals_of = _spread(SITE_MIX), _spread(EVAL_MIX)
    tasks, string_tasks, targets, multi_tab = [], 0, 0, 0
    for task_id in range(min(n, len(sites_of))):
        sites, eval_types = sites_of[task_id], evals_of[task_id]
        starts = [_PLACEHOLDER[s] + _START_PATH[s] for s in sites]
        if len(sites) > 1 and multi_tab < _MULTI_TAB:
            multi_tab += 1
            start_url = " |AND| ".join(starts)
        else:
            start_url = starts[0]
        logins = [s for s in sites if s in _LOGIN_SITES]
        template = task_id * _TEMPLATES // 812
        answers, note = _answers(string_tasks) if "string_match" in eval_types else (None, "")
        string_tasks += "string_match" in eval_types
        program = []
        if "program_html" in eval_types:
            url, locator, required, prep = _TARGETS[targets % len(_TARGETS)]
            targets += 1
            program.append({"url": url, "locator": locator, "required_contents": required,
                            **({"prep_actions": prep} if prep else {})})
        ev = {"eval_types": eval_types, "reference_answers": answers,
              "reference_url": (f"{starts[-1]}/search?q=item+{task_id} |OR| {starts[-1]}/item/{task_id}"
                                if "url_match" in eval_types else ""),
              "program_html": program}
        if "url_match" in eval_types:
            ev["url_note"] = "GOLD in PRED"
        if note:
            ev["string_note"] = note
        if answers is not None:
            ev["reference_answer_raw_annotation"] = json.dumps(answers)
        tasks.append({
            "sites": sites,
            "task_id": task_id,
            "require_login": True,
            "storage_state": f"./.auth/{'.'.join(logins)}_state.json" if logins else None,
            "start_url": start_url,
            "geolocation": None,
            "intent_template": "Task {{n}} of template " + str(template),
            "instantiation_dict": {"n": task_id},
            "intent": f"Task {task_id} of template {template}",
            "require_reset": False,
            "eval": ev,
            "intent_template_id": template,
        })
    return tasks


def generate_test_data(raw_file: str, site_urls: Mapping[str, str], out_dir: str) -> list[str]:
    """WebArena's `generate_test_data.py`: replace each placeholder in the raw JSON text by its site's URL and
    write `out_dir/{task_id}.json`; returns the paths written."""
    with open(raw_file, encoding="utf-8") as f:
        text = f.read()
    for site, placeholder in sorted(_PLACEHOLDER.items(), key=lambda kv: -len(kv[1])):
        text = text.replace(placeholder, site_urls[site])
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for config in json.loads(text):
        path = os.path.join(out_dir, f"{config['task_id']}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)
        paths.append(path)
    return paths
