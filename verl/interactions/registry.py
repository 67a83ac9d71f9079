"""Build interactions from verl's interaction config: a YAML whose top-level `interaction:` list holds
`{name, class_name (or _target_), config}` items (`actor_rollout_ref.rollout.multi_turn.interaction_config_path`).

The file and its items are typed (`verl.config.interaction`); an item's `config` is
typed by its class's `config_class` when it has one (our env-backed interactions do), else passed on
as verl passes it, a dict. Unknown keys fail with close matches. A missing `name` is derived from the
class (`WebshopInteraction` -> "webshop"); duplicate names and classes that cannot be imported or are
not `BaseInteraction`s are refused with the item named.
"""
from __future__ import annotations

import dataclasses
import importlib
import re
from typing import Any

from verl.config.interaction import InteractionItemConfig, InteractionsConfig
from verl.config.loader import as_section, from_dict
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
        ValueError: a malformed file, an unknown key (with close matches), an item without a class, an
            unimportable class, or a duplicate name.
    """
    if isinstance(config, str):
        from omegaconf import OmegaConf

        config = OmegaConf.to_container(OmegaConf.load(config), resolve=True)
    items = (config or {}).get("interaction") if isinstance(config, dict) else None
    if not isinstance(items, list):
        raise ValueError("the interaction config needs a top-level list `interaction:` of "
                         "{name, class_name, config} items")
    from_dict(InteractionsConfig, config)  # unknown top-level keys
    interactions: dict[str, BaseInteraction] = {}
    for i, raw in enumerate(items):
        where = f"interaction[{i}]"
        item = from_dict(InteractionItemConfig, raw, where) if isinstance(raw, dict) else None
        if item is None or not item.target:
            raise ValueError(f"{where}: needs class_name (or _target_), got {raw!r}")
        cls = _import_class(str(item.target), where)
        name = item.name or interaction_name(str(item.target))
        if name in interactions:
            raise ValueError(f"{where}: duplicate interaction name {name!r}; give each item its own `name`")
        interactions[name] = cls(_typed_config(cls, {**dict(item.config or {}), "name": name}, f"{where}.config"))
    return interactions


def _typed_config(cls: type, config: dict, where: str) -> Any:
    """`config` as `cls.config_class` when the class declares one (its `name` key only if it has that
    field), else the dict verl would pass."""
    config_class = getattr(cls, "config_class", None)
    if config_class is None:
        return config
    if "name" not in {f.name for f in dataclasses.fields(config_class)}:
        config = {k: v for k, v in config.items() if k != "name"}
    return as_section(config_class, config, where)
