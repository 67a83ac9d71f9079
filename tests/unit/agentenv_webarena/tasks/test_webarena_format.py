"""A WebArena-size task file in WebArena's exact format loads and validates; a malformed config is refused
with an error naming the file, the task and the field; which tasks change site state."""
from __future__ import annotations

import collections
import json

import pytest
from webarena_format import EVAL_MIX, SITE_MIX, generate_test_data, raw_tasks

from agentenv_webarena.tasks import changes_state, load_tasks

SITE_URLS = {"shopping": "http://wa.example:7770", "shopping_admin": "http://wa.example:7780/admin",
             "reddit": "http://wa.example:9999", "gitlab": "http://wa.example:8023", "map": "http://wa.example:3000",
             "wikipedia": "http://wa.example:8888"}


@pytest.fixture(scope="module")
def raw_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("config_files") / "test.raw.json"
    path.write_text(json.dumps(raw_tasks(), indent=2))
    return path


def test_a_webarena_size_raw_file_loads_and_validates(raw_file):
    tasks = load_tasks(raw_file)
    assert len(tasks) == 812
    assert [t["task_id"] for t in tasks] == list(range(812))
    sites = collections.Counter("+".join(t["sites"]) for t in tasks)
    assert sites == {"+".join(s): n for s, n in SITE_MIX}
    evals = collections.Counter("+".join(t["eval"]["eval_types"]) for t in tasks)
    assert evals == {"+".join(e): n for e, n in EVAL_MIX}
    answers = collections.Counter(k for t in tasks for k in (t["eval"]["reference_answers"] or {}))
    assert answers == {"must_include": 176, "fuzzy_match": 118, "exact_match": 45}
    assert sum(t["eval"]["reference_answers"] == {"fuzzy_match": "N/A"} for t in tasks) == 36
    assert len({t["intent_template_id"] for t in tasks}) == 190
    assert sum(" |AND| " in t["start_url"] for t in tasks) == 5
    assert list(tasks[0]) == ["sites", "task_id", "require_login", "storage_state", "start_url", "geolocation",
                              "intent_template", "instantiation_dict", "intent", "require_reset", "eval",
                              "intent_template_id"]
    assert sum(map(changes_state, tasks)) == 411  # WebArena's program_html tasks


def test_generated_test_data_directory_loads_in_task_order(raw_file, tmp_path):
    paths = generate_test_data(str(raw_file), SITE_URLS, str(tmp_path / "config_files"))
    assert len(paths) == 812
    tasks = load_tasks(tmp_path / "config_files")
    assert [t["task_id"] for t in tasks] == list(range(812))
    text = json.dumps(tasks)
    assert "__SHOPPING" not in text and "__REDDIT__" not in text and "http://wa.example:7780/admin" in text


@pytest.mark.parametrize("field, mutate", [
    ("sites", lambda t: t.update(sites=["shop"])),
    ("sites", lambda t: t.update(sites=[])),
    ("require_reset", lambda t: t.update(require_reset="no")),
    ("require_login", lambda t: t.update(require_login=1)),
    ("storage_state", lambda t: t.update(storage_state=["./.auth/a.json"])),
    ("geolocation", lambda t: t.update(geolocation="Pittsburgh")),
    ("intent_template", lambda t: t.update(intent_template=None)),
    ("instantiation_dict", lambda t: t.update(instantiation_dict=[1, 2])),
    ("intent_template_id", lambda t: t.update(intent_template_id="279")),
    ("eval.eval_types", lambda t: t["eval"].update(eval_types=[])),
    ("eval.reference_answers", lambda t: t["eval"].update(eval_types=["string_match"], reference_answers=None)),
    ("eval.reference_url", lambda t: t["eval"].update(eval_types=["url_match"], reference_url="")),
    ("eval.program_html", lambda t: t["eval"].update(eval_types=["program_html"], program_html=[])),
    ("start_url", lambda t: t.pop("start_url")),
])
def test_a_malformed_config_is_refused_naming_the_file_task_and_field(tmp_path, field, mutate):
    tasks = raw_tasks()
    mutate(tasks[417])
    path = tmp_path / "test.raw.json"
    path.write_text(json.dumps(tasks))
    with pytest.raises(ValueError) as err:
        load_tasks(path)
    message = str(err.value)
    assert str(path) in message and "[417]" in message and "task 417" in message
    assert field.split(".")[-1] in message


def test_the_same_refusal_names_the_numbered_file(raw_file, tmp_path):
    paths = generate_test_data(str(raw_file), SITE_URLS, str(tmp_path / "config_files"))
    with open(paths[5]) as f:
        config = json.load(f)
    config["eval"]["program_html"] = [{"url": "last", "required_contents": {"exact_match": "x"}}]
    config["eval"]["eval_types"] = ["program_html"]
    with open(paths[5], "w") as f:
        json.dump(config, f)
    with pytest.raises(ValueError, match=r"5\.json: task 5: eval\.program_html\[0\] is missing 'locator'"):
        load_tasks(tmp_path / "config_files")


@pytest.mark.parametrize("eval_types, require_reset, changes", [
    (["program_html"], False, True),
    (["url_match", "program_html"], False, True),
    (["string_match"], False, False),
    (["url_match"], False, False),
    (["string_match", "url_match"], False, False),
    (["string_match"], True, True),
])
def test_changes_state_is_program_html_or_require_reset(eval_types, require_reset, changes):
    assert changes_state({"require_reset": require_reset, "eval": {"eval_types": eval_types}}) is changes
