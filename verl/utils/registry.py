"""One registry type for every extension point in verl (estimators, losses, engines, reward managers,
reward scores, env clients, tracking backends).

A `Registry` is a plain `dict` (name -> object), so module-level names such as
`ADV_ESTIMATOR_REGISTRY` or `ENGINES` stay dicts for code that iterates or patches them. It adds the
house rules on top: `register(*names)` is a decorator that refuses a second, different object under
a taken name, and `get(name)` raises a `ValueError` that names the config key, the value and the
choices. A value may also be a lazy ``"module:attr"`` string: `get` imports the module on first use
and stores the object in its place, so optional dependencies (vLLM, WebArena) load only when asked
for. Registering the real object over its own lazy string is not a conflict.

This module owns the lookup rules, not what is registered.
"""
from __future__ import annotations

import importlib
from enum import Enum
from typing import Any, Callable, Mapping

__all__ = ["Registry"]

_MISSING = object()


def _key(name: Any) -> str:
    """Enum members register and look up under their value (``AdvantageEstimator.GRPO`` -> "grpo")."""
    return name.value if isinstance(name, Enum) else name


def _target(obj: Any) -> str | None:
    """The ``"module:qualname"`` string that names `obj`, if it has one."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}:{qualname}" if module and qualname else None


def _as_target(obj: Any) -> str | None:
    return obj if isinstance(obj, str) else _target(obj)


def _describe(obj: Any) -> str:
    return _target(obj) or repr(obj)


class Registry(dict):
    """A name -> object mapping for one config key, with checked registration and lookup.

    Args:
        kind: what it holds, for messages ("advantage estimator").
        config_key: the config key whose value is looked up ("algorithm.adv_estimator").
        items: initial entries; values may be objects or lazy ``"module:attr"`` strings.
        hint: extra advice appended to the lookup error (e.g. another key to set).
    """

    def __init__(self, kind: str, config_key: str, items: Mapping[str, Any] | None = None, hint: str = ""):
        super().__init__()
        self.kind = kind
        self.config_key = config_key
        self.hint = hint
        for name, obj in (items or {}).items():
            self._add(name, obj)

    def _add(self, name: Any, obj: Any) -> Any:
        key = _key(name)
        if key in self:
            old = dict.__getitem__(self, key)
            if old is obj:
                return obj
            if not (isinstance(old, str) or isinstance(obj, str)) or _as_target(old) != _as_target(obj):
                raise ValueError(f"{self.kind} {key!r} is already registered to {_describe(old)}; "
                                 f"pick another name for {_describe(obj)}")
            if isinstance(obj, str):  # a lazy target never replaces the object it names
                return obj
        self[key] = obj
        return obj

    def register(self, *names: Any) -> Callable[[Any], Any]:
        """Decorator registering the decorated object under each of `names` (str or Enum).

        Registering the same object again is a no-op.

        Raises:
            ValueError: if a name is already taken by a different object (naming both).
        """

        def deco(obj: Any) -> Any:
            for name in names:
                self._add(name, obj)
            return obj

        return deco

    def get(self, name: Any, default: Any = _MISSING) -> Any:
        """The object registered as `name` (str or Enum), importing a lazy ``"module:attr"`` target.

        With `default`, behaves like `dict.get` for a missing name.

        Raises:
            ValueError: "<config_key>=<name!r> is not registered; choose one of [...]".
            ImportError: naming the module when a lazy target cannot be imported.
        """
        key = _key(name)
        if key not in self:
            if default is not _MISSING:
                return default
            message = f"{self.config_key}={key!r} is not registered; choose one of {sorted(self)}"
            raise ValueError(f"{message} {self.hint}" if self.hint else message)
        obj = dict.__getitem__(self, key)
        if isinstance(obj, str):
            obj = self._resolve(key, obj)
        return obj

    def _resolve(self, key: str, target: str) -> Any:
        module_name, _, attr = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ImportError(f"{self.config_key}={key!r} needs {module_name} ({exc}); "
                              f"install the package that provides it") from exc
        obj = getattr(module, attr)
        self[key] = obj  # importing may already have registered it; either way the object replaces the string
        return obj

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.config_key!r}, {dict.__repr__(self)})"
