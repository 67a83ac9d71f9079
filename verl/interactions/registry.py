"""Build interactions from verl's interaction config: a YAML whose top-level `interaction:` list holds
`{name, class_name (or _target_), config}` items (`actor_rollout_ref.rollout.multi_turn.interaction_config_path`).

A missing `name` is derived from the class (`WebshopInteraction` -> "webshop"); duplicate names and
classes that cannot be imported or are not `BaseInteraction`s are refused with the item named.
"""
from __future__ import annotations

import importlib
import re
from typing import Any

from verl.interactions.base import BaseInteraction

__all__ = ["initialize_interactions_from_config", "interaction_name"]


def interaction_name(class_name: str) -> str:
    """verl's default name: the class name without its `Interaction` suffix, lower-cased."""
    short = class_name.rsplit(".", 1)[-1]
    return re.sub(r"Interaction$", "", short).lower() or short.lower()


def _import_class(target: str, where: str) -> type:
    module_name, _, attr = target.rpartition(".")
    if not module_name:
        raise ValueError(f"{where}: class_name {target!r} must be a dotted path such as "
                         "verl.interactions.webshop_interaction.WebshopInteraction")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{where}: cannot import interaction class {target!r} ({exc})") from exc
    if not (isinstance(cls, type) and issubclass(cls, BaseInteraction)):
        raise ValueError(f"{where}: {target!r} is not a verl.interactions.BaseInteraction subclass")
    return cls


def initialize_interactions_from_config(config: Any) -> dict[str, BaseInteraction]:
    """{name: interaction instance} from the interaction YAML (a path) or its already-loaded content.

    Raises:
        ValueError: a malformed file, an item without a class, an unimportable class, or a duplicate name.
    """
    if isinstance(config, str):
        from omegaconf import OmegaConf

        config = OmegaConf.to_container(OmegaConf.load(config), resolve=True)
    items = (config or {}).get("interaction") if isinstance(config, dict) else None
    if not isinstance(items, list):
        raise ValueError("the interaction config needs a top-level list `interaction:` of "
                         "{name, class_name, config} items")
    interactions: dict[str, BaseInteraction] = {}
    for i, item in enumerate(items):
        where = f"interaction[{i}]"
        target = item.get("class_name") or item.get("_target_") if isinstance(item, dict) else None
        if not target:
            raise ValueError(f"{where}: needs class_name (or _target_), got {item!r}")
        cls = _import_class(str(target), where)
        name = item.get("name") or interaction_name(str(target))
        if name in interactions:
            raise ValueError(f"{where}: duplicate interaction name {name!r}; give each item its own `name`")
        interactions[name] = cls({**dict(item.get("config") or {}), "name": name})
    return interactions
