"""WebArena task configs: loading, checking, and site-URL substitution.

Owns the task-config format as WebArena's `config_files/test.raw.json` defines it (a JSON list
of task dicts with `__SHOPPING__`-style placeholders) and as `scripts/generate_test_data.py`
writes it (a directory of `{task_id}.json` files with the placeholders replaced), plus our one
addition for embedded tasks, `reference_action_sequence`. Site base URLs come from WebArena's
environment variables (`SHOPPING`, `SHOPPING_ADMIN`, `REDDIT`, `GITLAB`, `MAP`, `WIKIPEDIA`,
`HOMEPAGE`) or from a mapping the caller passes (the env passes the embedded sites' URLs).

It does not score tasks (`evaluation_harness`), log in (`tasks.auth`) or generate the embedded
tasks (`tasks.generate`).
"""
from __future__ import annotations

import copy
import json
import logging
import os
import re
from typing import Any, Mapping

__all__ = [
    "EMBEDDED_TASK_FILE",
    "EVAL_TYPES",
    "PLACEHOLDERS",
    "SITE_ENV_VARS",
    "changes_state",
    "load_task_config",
    "load_tasks",
    "site_urls_from_env",
    "start_urls",
    "substitute_urls",
    "validate_task",
]

logger = logging.getLogger(__name__)

EMBEDDED_TASK_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "embedded.raw.json")

SITE_ENV_VARS: dict[str, str] = {
    "shopping": "SHOPPING",
    "shopping_admin": "SHOPPING_ADMIN",
    "reddit": "REDDIT",
    "gitlab": "GITLAB",
    "map": "MAP",
    "wikipedia": "WIKIPEDIA",
    "homepage": "HOMEPAGE",
}

# "__SHOPPING__" -> "shopping", ... The placeholder is the env var name between double underscores.
PLACEHOLDERS: dict[str, str] = {f"__{var}__": site for site, var in SITE_ENV_VARS.items()}

# Longest names first so "__SHOPPING_ADMIN__" is never read as "__SHOPPING" + "_ADMIN__".
_KNOWN = re.compile("|".join(re.escape(p) for p in sorted(PLACEHOLDERS, key=len, reverse=True)))
# Anything else shaped like a site placeholder is a typo or a site we do not know.
_UNKNOWN = re.compile(r"__[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*__")

START_URL_SEPARATOR = " |AND| "
EVAL_TYPES = ("string_match", "url_match", "program_html")
_REFERENCE_ANSWER_KEYS = ("exact_match", "must_include", "fuzzy_match")
# The other keys of WebArena's format, checked when present: (key, accepted types, the accepted form).
_OPTIONAL_FIELDS = (
    ("require_login", bool, "true or false"),
    ("require_reset", bool, "true or false"),
    ("storage_state", (str, type(None)), "null or a path like './.auth/shopping_state.json'"),
    ("geolocation", (dict, type(None)), "null or an object {latitude, longitude}"),
    ("intent_template", str, "a string"),
    ("instantiation_dict", dict, "an object (template variable -> value)"),
    ("intent_template_id", int, "an int"),
)


def site_urls_from_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Site key -> base URL (no trailing "/") for every site whose env var is set and non-empty.

    Args:
        environ: the variables to read; `os.environ` when None.
    """
    env = os.environ if environ is None else environ
    urls = {}
    for site, var in SITE_ENV_VARS.items():
        value = (env.get(var) or "").strip()
        if value:
            urls[site] = value.rstrip("/")
    return urls


def substitute_urls(config: dict, site_urls: Mapping[str, str]) -> dict:
    """A deep copy of `config` with every site placeholder replaced by that site's base URL.

    Every string value is rewritten, at any depth: `start_url`, `eval.reference_url`,
    `eval.program_html[*].url` and `.locator`, `reference_action_sequence[*].url`, intents, notes.
    This is what WebArena's `generate_test_data.py` does on the raw JSON text.

    Args:
        config: one task config (not modified).
        site_urls: site key (`"shopping"`, ...) -> base URL; a trailing "/" is dropped.

    Raises:
        ValueError: a placeholder's site has no URL in `site_urls` (the message names the env var
            to set), or a string holds an unknown `__NAME__` placeholder.
    """
    urls = {site: url.rstrip("/") for site, url in site_urls.items() if url}
    task = config.get("task_id", "?") if isinstance(config, dict) else "?"

    def replace(match: re.Match) -> str:
        placeholder = match.group(0)
        site = PLACEHOLDERS[placeholder]
        if site not in urls:
            raise ValueError(
                f"task {task}: {placeholder} needs the {site!r} site URL, which is not configured; "
                f"set the {SITE_ENV_VARS[site]} environment variable (e.g. "
                f"{SITE_ENV_VARS[site]}=http://127.0.0.1:7770) or pass it in site_urls"
            )
        return urls[site]

    def walk(value: Any, path: str) -> Any:
        if isinstance(value, str):
            out = _KNOWN.sub(replace, value)
            unknown = _UNKNOWN.search(out)
            if unknown:
                raise ValueError(
                    f"task {task}: {path} holds the unknown placeholder {unknown.group(0)!r}; "
                    f"known placeholders are {sorted(PLACEHOLDERS)}"
                )
            return out
        if isinstance(value, dict):
            return {k: walk(v, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, f"{path}[{i}]") for i, v in enumerate(value)]
        return copy.deepcopy(value)

    return walk(config, "")


def changes_state(config: dict) -> bool:
    """Whether task `config` changes site state: `require_reset` is true, or it is scored by `program_html`.

    WebArena marks no task with `require_reset` (false in all 812 of test.raw.json), so the flag alone finds
    none; `program_html` is how WebArena scores the state a task leaves behind (a post made, an order
    cancelled, a member's role set: 411 of its tasks). `string_match` reads the answer and `url_match` the
    page the agent ended on, so tasks scored only by those are read-only. An agent can still change state on
    any task (RL policies click what they were not asked to); this rule only knows what the task asks.
    """
    eval_types = (config.get("eval") or {}).get("eval_types") or []
    return bool(config.get("require_reset")) or "program_html" in eval_types


def start_urls(config: dict) -> list[str]:
    """The task's start URLs, one per tab: `start_url` split on " |AND| " (WebArena's rule).

    Raises:
        ValueError: `start_url` is missing or empty.
    """
    raw = config.get("start_url")
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError(f"task {config.get('task_id', '?')}: start_url must be a non-empty string, got {raw!r}")
    return [url.strip() for url in raw.split(START_URL_SEPARATOR) if url.strip()]


def validate_task(config: dict, where: str = "") -> dict:
    """Check that `config` is a WebArena task config this package can run and score.

    Checks the keys the env and the evaluators read: `task_id`, `intent`, `start_url`, `sites`,
    `eval.eval_types`, and for each eval type its fields (`reference_answers` with
    exact_match/must_include/fuzzy_match, `reference_url`, `program_html` targets with `url`,
    `locator` and `required_contents`).

    Args:
        config: one task config.
        where: prefix for error messages, e.g. the file it came from.

    Returns:
        `config`, unchanged.

    Raises:
        ValueError: naming the task, the key path, the bad value and the accepted form.
    """
    task = config.get("task_id", "?") if isinstance(config, dict) else "?"
    prefix = f"{where}task {task}: " if where else f"task {task}: "

    def fail(msg: str) -> None:
        raise ValueError(prefix + msg)

    if not isinstance(config, dict):
        fail(f"a task config must be a JSON object, got {type(config).__name__}")
    for key in ("task_id", "intent", "start_url", "sites", "eval"):
        if key not in config:
            fail(f"missing required key {key!r} (WebArena's test.raw.json format)")
    if not isinstance(config["task_id"], int):
        fail(f"task_id must be an int, got {config['task_id']!r}")
    if not isinstance(config["intent"], str) or not config["intent"].strip():
        fail(f"intent must be a non-empty string, got {config['intent']!r}")
    if not isinstance(config["sites"], list) or not config["sites"]:
        fail(f"sites must be a non-empty list of site keys, got {config['sites']!r}")
    for site in config["sites"]:
        if site not in SITE_ENV_VARS:
            fail(f"sites has {site!r}; choose from {list(SITE_ENV_VARS)}")
    for key, kinds, accepted in _OPTIONAL_FIELDS:
        if key in config and not isinstance(config[key], kinds):
            fail(f"{key} must be {accepted}, got {config[key]!r}")
    start_urls(config)
    ev = config["eval"]
    if not isinstance(ev, dict):
        fail(f"eval must be an object, got {ev!r}")
    eval_types = ev.get("eval_types")
    if not isinstance(eval_types, list) or not eval_types:
        fail(f"eval.eval_types must be a non-empty list drawn from {list(EVAL_TYPES)}, got {eval_types!r}")
    for eval_type in eval_types:
        if eval_type not in EVAL_TYPES:
            fail(f"eval.eval_types has {eval_type!r}; choose from {list(EVAL_TYPES)}")
    if "string_match" in eval_types:
        answers = ev.get("reference_answers")
        if not isinstance(answers, dict) or not answers:
            fail(
                "eval.reference_answers must be an object with exact_match / must_include / "
                f"fuzzy_match for string_match, got {answers!r} (the old examples/ format uses a list)"
            )
        for key, value in answers.items():
            if key not in _REFERENCE_ANSWER_KEYS:
                fail(f"eval.reference_answers has {key!r}; choose from {list(_REFERENCE_ANSWER_KEYS)}")
            if key == "exact_match" and not isinstance(value, str):
                fail(f"eval.reference_answers.exact_match must be a string, got {value!r}")
            if key == "must_include" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                fail(f"eval.reference_answers.must_include must be a list of strings, got {value!r}")
            if key == "fuzzy_match" and value != "N/A" and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ):
                fail(f"eval.reference_answers.fuzzy_match must be \"N/A\" or a list of strings, got {value!r}")
    if "url_match" in eval_types:
        ref = ev.get("reference_url")
        if not isinstance(ref, str) or not ref.strip():
            fail("eval.reference_url must be a non-empty URL (alternatives joined by ' |OR| ') for url_match, "
                 f"got {ref!r}")
        note = ev.get("url_note", "GOLD in PRED")
        if note not in ("GOLD in PRED", "", None):
            fail(f"eval.url_note {note!r} is not supported; the only rule is 'GOLD in PRED'")
    if "program_html" in eval_types:
        targets = ev.get("program_html")
        if not isinstance(targets, list) or not targets:
            fail(f"eval.program_html must be a non-empty list of targets for program_html, got {targets!r}")
        for i, target in enumerate(targets):
            path = f"eval.program_html[{i}]"
            if not isinstance(target, dict):
                fail(f"{path} must be an object, got {target!r}")
            for key in ("url", "locator", "required_contents"):
                if key not in target:
                    fail(f"{path} is missing {key!r}")
            if not isinstance(target["url"], str) or not target["url"]:
                fail(f"{path}.url must be 'last', 'func:...' or a URL, got {target['url']!r}")
            if not isinstance(target["locator"], str):
                fail(f"{path}.locator must be a string ('' for the page HTML), got {target['locator']!r}")
            required = target["required_contents"]
            if not isinstance(required, dict) or not ({"exact_match", "must_include"} & set(required)):
                fail(f"{path}.required_contents must hold exact_match (str) or must_include (list), got {required!r}")
            if "must_include" in required and not isinstance(required["must_include"], list):
                fail(f"{path}.required_contents.must_include must be a list, got {required['must_include']!r}")
            prep = target.get("prep_actions", [])
            if not isinstance(prep, list) or not all(isinstance(p, str) for p in prep):
                fail(f"{path}.prep_actions must be a list of JavaScript strings, got {prep!r}")
    sequence = config.get("reference_action_sequence")
    if sequence is not None and not (isinstance(sequence, list) and all(isinstance(s, dict) for s in sequence)):
        fail(f"reference_action_sequence must be a list of action objects, got {type(sequence).__name__}")
    return config


def load_task_config(config_file: str | os.PathLike | dict) -> dict:
    """One task config from a `{i}.json` path, or the dict itself when a dict is given.

    Raises:
        FileNotFoundError: the path does not exist.
        ValueError: the file is not a JSON object.
    """
    if isinstance(config_file, dict):
        return config_file
    path = os.fspath(config_file)
    with open(path, encoding="utf-8") as f:
        try:
            config = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path} is not valid JSON: {e}") from e
    if not isinstance(config, dict):
        raise ValueError(f"{path} must hold one task config (a JSON object), got {type(config).__name__}")
    return config


def load_tasks(path: str | os.PathLike, *, validate: bool = True) -> list[dict]:
    """Read task configs from a JSON list file or from a directory of `{i}.json` files.

    A file is WebArena's `test.raw.json` (or our `embedded.raw.json`): a JSON list of configs;
    a file holding a single config object gives a one-element list. A directory is what
    `generate_test_data.py` writes: files named `<int>.json`, returned in numeric order (other
    files are ignored).

    Args:
        path: the file or directory.
        validate: run `validate_task` on every config.

    Raises:
        FileNotFoundError: `path` does not exist, or the directory holds no `<int>.json` file.
        ValueError: invalid JSON, or (with `validate`) an invalid config; the message names the file.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        numbered = []
        for name in os.listdir(path):
            stem, ext = os.path.splitext(name)
            if ext == ".json" and stem.isdigit():
                numbered.append((int(stem), os.path.join(path, name)))
        if not numbered:
            raise FileNotFoundError(f"{path} holds no {{i}}.json task files (e.g. 0.json, 1.json)")
        configs = []
        for _, file in sorted(numbered):
            config = load_task_config(file)
            if validate:
                validate_task(config, where=f"{file}: ")
            configs.append(config)
        logger.info("loaded %d task configs from directory %s", len(configs), path)
        return configs
    if not os.path.exists(path):
        raise FileNotFoundError(f"task file {path} does not exist; "
                                "pass a JSON list file or a directory of {i}.json files")
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path} is not valid JSON: {e}") from e
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ValueError(f"{path} must hold a JSON list of task configs, got {type(data).__name__}")
    if validate:
        for i, config in enumerate(data):
            validate_task(config, where=f"{path}[{i}]: ")
    logger.info("loaded %d task configs from %s", len(data), path)
    return data
