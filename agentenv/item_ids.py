"""Item ids: how the trainer names an environment's data items (`"webshop_6"`, `"webarena_12"`).

Owns the contract between the item-id files (`AgentItemId/<task>_train.json`,
`[{"item_id": "webarena_12"}, ...]`) and the environments: an id is `<task>_<index>`, and the index
is what the environment's `reset(idx)` takes. It also says where a relative data path is found
(`resolve_data_path`: the working directory, else the shipped `AgentItemId/` beside the installed
packages). It does not read datasets of other shapes (parquet rows: `verl.utils.dataset`) and imports
nothing of the trainer.
"""
from __future__ import annotations

import json
import logging
import os

__all__ = ["PACKAGES_ROOT", "parse_item_id", "load_item_id_file", "item_indices", "resolve_data_path"]

logger = logging.getLogger(__name__)

# The folder that holds the project's packages: the checkout in a source tree, site-packages in an install
# (the wheel ships `AgentItemId/*.json` there, beside `agentenv/`, as a checkout keeps them).
PACKAGES_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def resolve_data_path(path: str) -> str:
    """The file or folder `path` names: `path` itself (`~` expanded) when it exists, absolute or relative to the
    working directory; else, for a relative path, the same path under `PACKAGES_ROOT` when it exists there
    (`AgentItemId/webshop_test.json` from any directory, and from an installed wheel); else `path` expanded,
    for the caller to report missing."""
    path = os.path.expanduser(path)
    if os.path.exists(path) or os.path.isabs(path):
        return path
    shipped = os.path.join(PACKAGES_ROOT, path)
    if os.path.exists(shipped):
        logger.info("data path %s: not under the working directory %s; using the shipped %s", path, os.getcwd(),
                    shipped)
        return shipped
    return path


def parse_item_id(item_id: str) -> tuple[str, int]:
    """Split `"webshop_6"` into `("webshop", 6)`: task = text before the first `_`, index = after the last.

    Raises:
        ValueError: when the id has no `_` or no integer after the last `_`.
    """
    item_id = str(item_id)
    if "_" not in item_id:
        raise ValueError(f"item id {item_id!r} has no '_'; expected '<task>_<index>' such as 'webshop_6'")
    task, _, tail = item_id.rpartition("_")
    try:
        index = int(tail)
    except ValueError as exc:
        raise ValueError(f"item id {item_id!r} does not end in an integer index ('<task>_<index>')") from exc
    return item_id.split("_", 1)[0], index


def load_item_id_file(path: str, prompt_key: str = "item_id") -> list[dict]:
    """Read an AgentGym-RL item-id JSON list (`[{"item_id": ...}, ...]`; bare strings accepted too); a relative
    `path` is found as `resolve_data_path` says.

    Returns:
        One `{"item_id", "task_name", "index"}` row per entry, in file order.

    Raises:
        ValueError: the file is not a list, an entry lacks `prompt_key`, or an id is malformed.
    """
    path = resolve_data_path(path)
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of {{{prompt_key!r}: '<task>_<index>'}} objects, "
                         f"got {type(data).__name__}")
    rows = []
    for i, entry in enumerate(data):
        if isinstance(entry, str):
            item_id = entry
        elif isinstance(entry, dict) and prompt_key in entry:
            item_id = entry[prompt_key]
        else:
            raise ValueError(f"{path}[{i}]: expected an object with key {prompt_key!r} (data.prompt_key), "
                             f"got {entry!r}")
        task, index = parse_item_id(item_id)
        rows.append({"item_id": str(item_id), "task_name": task, "index": index})
    return rows


def item_indices(path: str) -> list[int]:
    """The task indices an item-id file names (`webarena_12` -> 12), in file order."""
    return [row["index"] for row in load_item_id_file(path)]
