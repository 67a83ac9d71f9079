"""Task configs: loading (list file, directory of {i}.json), validation, URL substitution.

(Named test_task_config.py because tests/unit/verl/config/test_config.py already takes
the basename and the suite runs without __init__.py files.)
"""
from __future__ import annotations

import copy
import json
import os
import re

import pytest

from agentenv_webarena.tasks import (
    EMBEDDED_TASK_FILE,
    SITE_ENV_VARS,
    load_task_config,
    load_tasks,
    site_urls_from_env,
    start_urls,
    substitute_urls,
    validate_task,
)

# Three configs in the shape of WebArena's config_files/test.raw.json.
RAW_TASKS = [
    {
        "sites": ["shopping_admin"],
        "task_id": 0,
        "require_login": True,
        "storage_state": "./.auth/shopping_admin_state.json",
        "start_url": "__SHOPPING_ADMIN__",
        "geolocation": None,
        "intent_template": "Which customer placed the most orders in {{month}} {{year}}?",
        "instantiation_dict": {"month": "March", "year": 2023},
        "intent": "Which customer placed the most orders in March 2023?",
        "require_reset": False,
        "eval": {
            "eval_types": ["string_match"],
            "reference_answers": {"must_include": ["Jane Doe"]},
            "reference_url": "",
            "program_html": [],
            "string_note": "",
            "reference_answer_raw_annotation": "Jane Doe, 4 orders",
        },
        "intent_template_id": 901,
    },
    {
        "sites": ["reddit"],
        "task_id": 1,
        "require_login": True,
        "storage_state": "./.auth/reddit_state.json",
        "start_url": "__REDDIT__/f/books",
        "geolocation": None,
        "intent_template": "Reply to the top post in {{forum}} with \"{{text}}\"",
        "instantiation_dict": {"forum": "books", "text": "great list"},
        "intent": "Reply to the top post in books with \"great list\"",
        "require_reset": False,
        "eval": {
            "eval_types": ["program_html"],
            "reference_answers": None,
            "reference_url": "",
            "program_html": [
                {
                    "url": "func:reddit_get_post_url('__last_url__')",
                    "locator": "document.querySelector('.comment__body').outerText",
                    "required_contents": {"exact_match": "great list"},
                },
                {
                    "url": "__REDDIT__/user/MarvelsGrantMan136",
                    "locator": "",
                    "required_contents": {"must_include": ["great list |OR| Great list"]},
                },
            ],
        },
        "intent_template_id": 902,
    },
    {
        "sites": ["gitlab", "reddit"],
        "task_id": 2,
        "require_login": True,
        "storage_state": "./.auth/gitlab.reddit_state.json",
        "start_url": "__GITLAB__/byteblaze/dotfiles |AND| __REDDIT__/f/technology",
        "geolocation": None,
        "intent_template": "Share the {{repo}} repository in the technology forum",
        "instantiation_dict": {"repo": "dotfiles"},
        "intent": "Share the dotfiles repository in the technology forum",
        "require_reset": False,
        "eval": {
            "eval_types": ["url_match", "program_html"],
            "reference_answers": None,
            "reference_url": "__REDDIT__/f/technology |OR| __REDDIT__/f/linux",
            "program_html": [
                {
                    "url": "last",
                    "locator": "document.querySelector('.submission__inner').outerText",
                    "required_contents": {"must_include": ["dotfiles", "__GITLAB__/byteblaze/dotfiles"]},
                    "prep_actions": ["document.querySelector('.submission__body-toggle').click()"],
                }
            ],
            "url_note": "GOLD in PRED",
        },
        "intent_template_id": 903,
    },
]

ENV = {
    "SHOPPING": "http://127.0.0.1:7770",
    "SHOPPING_ADMIN": "http://127.0.0.1:7780/admin/",
    "REDDIT": "http://127.0.0.1:9999",
    "GITLAB": "http://127.0.0.1:8023",
    "MAP": "",
}


def test_site_urls_from_env_reads_webarena_variables():
    urls = site_urls_from_env(ENV)
    assert urls == {
        "shopping": "http://127.0.0.1:7770",
        "shopping_admin": "http://127.0.0.1:7780/admin",
        "reddit": "http://127.0.0.1:9999",
        "gitlab": "http://127.0.0.1:8023",
    }
    assert set(SITE_ENV_VARS.values()) == {
        "SHOPPING", "SHOPPING_ADMIN", "REDDIT", "GITLAB", "MAP", "WIKIPEDIA", "HOMEPAGE",
    }


def test_load_tasks_from_a_list_file(tmp_path):
    path = tmp_path / "test.raw.json"
    path.write_text(json.dumps(RAW_TASKS))
    tasks = load_tasks(str(path))
    assert [t["task_id"] for t in tasks] == [0, 1, 2]
    assert tasks[2]["eval"]["program_html"][0]["prep_actions"]


def test_load_tasks_from_a_directory_of_numbered_files_in_numeric_order(tmp_path):
    configs = [dict(RAW_TASKS[0], task_id=i) for i in (0, 2, 10)]
    for config in configs:
        (tmp_path / f"{config['task_id']}.json").write_text(json.dumps(config))
    (tmp_path / "notes.json").write_text("{}")  # not a task file: ignored
    tasks = load_tasks(tmp_path)
    assert [t["task_id"] for t in tasks] == [0, 2, 10]
    assert load_task_config(str(tmp_path / "10.json"))["task_id"] == 10


def test_load_tasks_errors_name_the_file(tmp_path):
    bad = copy.deepcopy(RAW_TASKS[:1])
    del bad[0]["eval"]["eval_types"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"bad\.json\[0\].*eval_types"):
        load_tasks(str(path))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_tasks(str(tmp_path / "missing.json"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"\{i\}\.json"):
        load_tasks(empty)


def test_substitute_urls_replaces_placeholders_everywhere():
    urls = site_urls_from_env(ENV)
    original = copy.deepcopy(RAW_TASKS)
    out = [substitute_urls(t, urls) for t in RAW_TASKS]
    assert RAW_TASKS == original  # the input is not modified
    assert out[0]["start_url"] == "http://127.0.0.1:7780/admin"
    reddit_target = out[1]["eval"]["program_html"][1]
    assert reddit_target["url"] == "http://127.0.0.1:9999/user/MarvelsGrantMan136"
    assert out[1]["eval"]["program_html"][0]["url"] == "func:reddit_get_post_url('__last_url__')"
    assert out[2]["eval"]["reference_url"] == "http://127.0.0.1:9999/f/technology |OR| http://127.0.0.1:9999/f/linux"
    assert out[2]["eval"]["program_html"][0]["required_contents"]["must_include"][1] == "http://127.0.0.1:8023/byteblaze/dotfiles"
    assert not re.search(r"__[A-Z_]+__", json.dumps(out))


def test_start_urls_split_and_for_multi_tab_tasks():
    urls = site_urls_from_env(ENV)
    config = substitute_urls(RAW_TASKS[2], urls)
    assert start_urls(config) == ["http://127.0.0.1:8023/byteblaze/dotfiles", "http://127.0.0.1:9999/f/technology"]
    assert start_urls(substitute_urls(RAW_TASKS[0], urls)) == ["http://127.0.0.1:7780/admin"]


def test_substitute_urls_in_reference_action_sequence():
    config = dict(
        RAW_TASKS[0],
        start_url="__SHOPPING__",
        reference_action_sequence=[
            {"action": "goto", "url": "__SHOPPING__/checkout/cart/"},
            {"action": "click", "element": {"role": "link", "name": "My Account"}},
            {"action": "stop", "answer": "Jane Doe"},
        ],
    )
    out = substitute_urls(config, {"shopping": "http://shop.local:8/", "shopping_admin": "http://a.local/admin"})
    assert out["start_url"] == "http://shop.local:8"
    assert out["reference_action_sequence"][0]["url"] == "http://shop.local:8/checkout/cart/"
    assert out["reference_action_sequence"][1] == config["reference_action_sequence"][1]


def test_missing_site_url_names_the_env_var_to_set():
    urls = site_urls_from_env({"REDDIT": "http://127.0.0.1:9999"})
    with pytest.raises(ValueError, match="task 2: __GITLAB__ .*GITLAB environment variable"):
        substitute_urls(RAW_TASKS[2], urls)


def test_unknown_placeholder_is_an_error():
    config = dict(RAW_TASKS[0], start_url="__SHOPING__/sales")
    with pytest.raises(ValueError, match="unknown placeholder '__SHOPING__'"):
        substitute_urls(config, site_urls_from_env(ENV))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda t: t.pop("intent"), "missing required key 'intent'"),
        (lambda t: t.update(start_url=""), "start_url"),
        (lambda t: t["eval"].update(eval_types=["string_match", "vibes"]), "'vibes'"),
        (lambda t: t["eval"].update(reference_answers=["Jane Doe"]), "reference_answers must be an object"),
        (lambda t: t["eval"].update(reference_answers={"must_include": "Jane"}), "must_include must be a list"),
        (lambda t: t["eval"].update(reference_answers={"fuzzy": ["x"]}), "'fuzzy'"),
    ],
)
def test_validate_task_errors_name_the_key_and_value(mutate, message):
    config = copy.deepcopy(RAW_TASKS[0])
    mutate(config)
    with pytest.raises(ValueError, match=message):
        validate_task(config)


def test_validate_task_checks_url_and_program_html_fields():
    config = copy.deepcopy(RAW_TASKS[2])
    assert validate_task(config) is config
    config["eval"]["program_html"][0].pop("required_contents")
    with pytest.raises(ValueError, match=r"program_html\[0\] is missing 'required_contents'"):
        validate_task(config)
    config = copy.deepcopy(RAW_TASKS[2])
    config["eval"]["url_note"] = "PRED in GOLD"
    with pytest.raises(ValueError, match="GOLD in PRED"):
        validate_task(config)


def test_embedded_task_file_lives_in_the_package():
    assert EMBEDDED_TASK_FILE.endswith(os.path.join("agentenv_webarena", "tasks", "embedded.raw.json"))
