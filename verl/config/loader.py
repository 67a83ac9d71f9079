"""The generic config loader: a nested mapping (Hydra `DictConfig`, dict or command line) -> frozen dataclasses.

Owns the rules every config root shares: unknown keys fail naming the key path and its closest valid
spellings (`from_dict`, `check_override_keys`), values are type-checked and lightly coerced (an int
where a float is declared), compatibility-only keys warn once when set (`warn_compat_keys`), and the
small checks `__post_init__` methods use (`check_choice`, `check_positive`). It knows no section:
the dataclasses live in the section modules (`schema.py` and its neighbours) and each entry point's
root is passed in (`PPOConfig`, `SFTConfig`, ...). Imports nothing of verl.
"""
from __future__ import annotations

import dataclasses
import difflib
import logging
import os
import sys
import types
import typing
from typing import Any, Callable, Optional, Union

__all__ = [
    "check_choice", "check_positive", "from_dict", "as_section", "to_dict", "compat_only_keys", "warn_compat_keys",
    "load_dataclass_config", "shipped_config_path", "console_entry", "check_override_keys",
]

logger = logging.getLogger(__name__)


def check_choice(path: str, value: Any, choices: tuple) -> None:
    """Raise a `ValueError` naming `path` and the choices when `value` is not one of them."""
    if value not in choices:
        raise ValueError(f"{path}={value!r} is not valid; choose one of {list(choices)}")


def check_positive(path: str, value: Any, allow_zero: bool = False) -> None:
    """Raise a `ValueError` naming `path` when `value` is negative (or zero); None passes."""
    if value is None:
        return
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{path} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")


# ---------------------------------------------------------------------------------------- building
def _type_ok(value: Any, annotation: Any) -> tuple[bool, Any]:
    """Check (and lightly coerce) `value` against a field annotation. Returns (ok, value)."""
    if annotation is Any:
        return True, value
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in typing.get_args(annotation):
            return True, None
        for arg in typing.get_args(annotation):
            if arg is type(None):
                continue
            ok, coerced = _type_ok(value, arg)
            if ok:
                return True, coerced
        return False, value
    if annotation is bool:
        return isinstance(value, bool), value
    if annotation is int:
        if isinstance(value, bool):
            return False, value
        if isinstance(value, float) and value.is_integer():
            return True, int(value)
        return isinstance(value, int), value
    if annotation is float:
        if isinstance(value, bool):
            return False, value
        return isinstance(value, (int, float)), float(value) if isinstance(value, (int, float)) else value
    if annotation is str:
        return isinstance(value, str), value
    if annotation in (list, dict):
        return isinstance(value, annotation), value
    return True, value


def _type_name(annotation: Any) -> str:
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(annotation))
    return "null" if annotation is type(None) else getattr(annotation, "__name__", str(annotation))


def _field_types(cls: type) -> dict[str, Any]:
    """{field name: resolved annotation} of dataclass `cls` (class variables left out)."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _unknown_key(key: str, names: list[str], path: str) -> str:
    """'did you mean ...?' with the close matches of `key` among `names`, else the valid keys."""
    close = difflib.get_close_matches(str(key), names, n=3, cutoff=0.5)
    where = f"{path}." if path else ""
    if close:
        return f"did you mean {', '.join(where + c for c in close)}?"
    return f"valid keys under {path or 'the root'}: {sorted(names)}"


def from_dict(cls: type, data: dict | None, path: str = "") -> Any:
    """Build dataclass `cls` from a nested dict, rejecting unknown keys and wrong types.

    Raises:
        ValueError: naming the full key path, the bad value and the fix (close matches for typos).
    """
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ValueError(f"{path or '<root>'} must be a mapping of keys, got {data!r}")
    types_ = _field_types(cls)
    names = list(types_)
    unknown = [k for k in data if k not in types_]
    if unknown:
        key = unknown[0]
        full = f"{path}.{key}" if path else key
        raise ValueError(f"unknown config key {full!r}; {_unknown_key(key, names, path)}")
    kwargs = {}
    for name, annotation in types_.items():
        if name not in data:
            continue
        value, full = data[name], f"{path}.{name}" if path else name
        if dataclasses.is_dataclass(annotation):
            kwargs[name] = from_dict(annotation, value, full)
            continue
        ok, coerced = _type_ok(value, annotation)
        if not ok:
            raise ValueError(f"{full}={value!r} has the wrong type; expected {_type_name(annotation)}")
        kwargs[name] = coerced
    return cls(**kwargs)


def as_section(cls: type, value: Any, path: str) -> Any:
    """`value` as the typed config section `cls`: the instance itself, `cls()` for None, or a mapping
    (dict or OmegaConf `DictConfig`) loaded with `from_dict` (unknown keys fail naming `path`).

    The one conversion consumers apply at their boundary, so they read attributes (with the
    dataclass's defaults) and never re-read a mapping with a second default.
    """
    if isinstance(value, cls):
        return value
    if value is None:
        return cls()
    if dataclasses.is_dataclass(value):
        value = dataclasses.asdict(value)
    elif not isinstance(value, dict):
        try:
            from omegaconf import DictConfig, OmegaConf
        except ImportError:  # pragma: no cover - omegaconf ships with hydra
            DictConfig = ()
        if DictConfig and isinstance(value, DictConfig):
            value = OmegaConf.to_container(value, resolve=True)
    return from_dict(cls, dict(value), path)


def to_dict(cfg: Any) -> dict:
    """A plain nested dict of a config dataclass (for logging and checkpoints)."""
    return dataclasses.asdict(cfg)


# ------------------------------------------------------------------------------- compatibility keys
# A section lists the keys it accepts only so verl / AgentGym-RL configs load unchanged in a class
# variable `compat_keys = {field: what happens instead}`; setting one to a non-default value warns.
_WARNED_COMPAT: set[str] = set()


def compat_only_keys(root: type) -> dict[tuple[str, str], str]:
    """{(section class name, field): note} for every `compat_keys` entry in the dataclass tree of `root`."""
    found: dict[tuple[str, str], str] = {}
    for name, note in getattr(root, "compat_keys", {}).items():
        found[(root.__name__, name)] = note
    for annotation in _field_types(root).values():
        if dataclasses.is_dataclass(annotation):
            found.update(compat_only_keys(annotation))
    return found


def warn_compat_keys(cfg: Any, defaults: Any = None, path: str = "") -> list[str]:
    """Warn once per key path for each `compat_keys` entry set to a non-default value in `cfg`.

    Args:
        cfg: a config dataclass (the root or a section).
        defaults: the same section with default values (default: `type(cfg)()`).
        path: key path of `cfg` (for the message).

    Returns:
        The key paths warned about by this call.
    """
    defaults = type(cfg)() if defaults is None else defaults
    notes = getattr(type(cfg), "compat_keys", {})
    warned = []
    for f in dataclasses.fields(cfg):
        value, default, full = getattr(cfg, f.name), getattr(defaults, f.name), f"{path}.{f.name}" if path else f.name
        if dataclasses.is_dataclass(value):
            warned += warn_compat_keys(value, default, full)
            continue
        note = notes.get(f.name)
        if note is not None and value != default and full not in _WARNED_COMPAT:
            _WARNED_COMPAT.add(full)
            warned.append(full)
            logger.warning("%s=%r is accepted for compatibility and not used (%s); default %r",
                           full, value, note, default)
    return warned


# ------------------------------------------------------------------------------------ entry points
def load_dataclass_config(root: type, cfg: Any, yaml_name: str, resolve: Optional[Callable[[Any], Any]] = None) -> Any:
    """Convert a Hydra `DictConfig` (or dict, or None for the shipped `yaml_name`) into the dataclass `root`.

    Interpolations such as `${trainer.project_name}` are resolved first; `resolve` (e.g. replacing
    `auto` device/engine/dtype values for this machine) is applied last.

    Raises:
        ValueError: unknown key (with close matches), wrong type, or an invalid value.
    """
    from omegaconf import DictConfig, OmegaConf

    if cfg is None:
        cfg = OmegaConf.load(shipped_config_path(yaml_name))
    if isinstance(cfg, DictConfig):
        cfg = OmegaConf.to_container(cfg, resolve=True)
    config = from_dict(root, cfg)
    warn_compat_keys(config)
    return resolve(config) if resolve is not None else config


def shipped_config_path(yaml_name: str) -> str:
    """Path of a shipped YAML (`ppo_trainer.yaml`, `sft_trainer.yaml`, ...): they live with the entry points that
    Hydra runs, in `verl/agent_trainer/config/`."""
    verl_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(verl_dir, "agent_trainer", "config", yaml_name)


def console_entry(root: type, hydra_main: Callable[[], None]) -> Callable[[], None]:
    """A console entry point: check the command-line keys against `root` (unknown keys fail with
    close matches, before Hydra's own less helpful message), then run `hydra_main`."""

    def main() -> None:
        try:
            check_override_keys(sys.argv[1:], root=root)
        except ValueError as exc:
            sys.exit(f"error: {exc}")
        hydra_main()

    return main


def check_override_keys(overrides: list[str], root: type) -> None:
    """Fail early, with close matches, on `key=value` command-line overrides naming no key of `root`.

    Hydra's own message for a typo ("Key 'x' is not in struct") lists no alternatives; this one does.
    Overrides starting with `+`, `~` or `hydra.` and non-`key=value` arguments are left to Hydra.
    """
    for arg in overrides:
        if "=" not in arg or arg.startswith(("+", "~", "hydra.", "-")):
            continue
        key = arg.split("=", 1)[0].lstrip("+")
        cls: Any = root
        parts = key.split(".")
        for i, part in enumerate(parts):
            if not dataclasses.is_dataclass(cls):
                break  # inside a free-form field (dict/list); Hydra checks the rest
            types_ = _field_types(cls)
            if part not in types_:
                prefix = ".".join(parts[:i])
                raise ValueError(f"unknown config key {key!r} in override {arg!r}; "
                                 f"{_unknown_key(part, list(types_), prefix)}")
            cls = types_[part]
