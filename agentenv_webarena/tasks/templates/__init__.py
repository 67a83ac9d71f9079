"""Task templates of the embedded suite, one module per site family.

| module     | template ids | owner  | site(s)                                                       |
|------------|--------------|--------|---------------------------------------------------------------|
| `shopping` | 1000-1099    | SITES  | storefront (`__SHOPPING__`)                                   |
| `admin`    | 2000-2099    | SITES  | shop admin (`__SHOPPING_ADMIN__`)                             |
| `forum`    | 3000-3099    | FORUM  | forum (`__REDDIT__`)                                          |
| `cross`    | 4000-4099    | FORUM  | several sites in one task                                     |
| `gitlab`   | 5000-5199    | GITLAB | code host (`__GITLAB__`), and its multi-site tasks            |
| `map`      | 6000-6199    | MAP    | map (`__MAP__`), and its multi-site tasks                     |
| `wiki`     | 7000-7199    | WIKI   | wiki (`__WIKIPEDIA__`), homepage, and their multi-site tasks  |
| `classic`  | 8000-8099    | SITES  | later templates of the first three site kinds                 |
| `shop_families` | 9000-9099 | SITES  | storefront and admin families added later |
| `site_families` | 9100-9199 | SITES  | code host, forum, map and multi-site families added later |
| `more_families` | 9200-9299 | SITES  | admin special prices, addresses, search terms, newsletter, themes; code |
|                 |           |        | host project templates; map state borders (`more_families`' docstring) |
| `judged`        | 9300-9399 | SITES  | judge-scored free-text questions and vaguer intents on the shop, admin, |
|                 |           |        | forum, code host and wiki; all held out for test (`judged`' docstring)  |

Modules run in this order and task ids follow it (task_id == index), so a new module goes last and
the ids of earlier tasks never move (item-id lists saved by users keep their meaning).

Each module exposes `TEMPLATES: list[tuple[int, fn]]` with `fn(db, rng) -> list[dict]` (see
`templates.base` for the dict) and may expose `TEST_ONLY_TEMPLATES: set[int]`, held-out templates whose
instances all go to the test split and none to training (`tasks.generate`); together they are at least
a fifth of the templates, with information-seeking and state-changing ones of every site kind. A module
that does not exist yet is skipped. Helpers that several modules use live in `templates.common`; the
modules import it and `templates.base`, never one another.
"""
from __future__ import annotations

import importlib
import logging
from typing import Callable, Sequence

__all__ = ["MODULES", "Template", "load_templates", "test_only_templates"]

logger = logging.getLogger(__name__)

MODULES = ("shopping", "admin", "forum", "cross", "gitlab", "map", "wiki", "classic", "shop_families", "site_families",
           "more_families", "judged")
Template = tuple[int, Callable]


def _modules(only: Sequence[str] | None = None) -> list:
    unknown = sorted(set(only or ()) - set(MODULES))
    if unknown:
        raise ValueError(f"unknown template modules {unknown}; choose from {list(MODULES)}")
    found = []
    for name in (m for m in MODULES if only is None or m in only):
        full = f"{__name__}.{name}"
        try:
            found.append(importlib.import_module(full))
        except ModuleNotFoundError as e:
            if e.name != full:  # the module exists but one of its imports is missing: a real error
                raise
            logger.warning("task template module %s does not exist yet; skipping it", full)
    return found


def load_templates(only: Sequence[str] | None = None) -> list[Template]:
    """Every template of every present module (of `only`, when given), in module order then list order.

    Raises:
        ValueError: two templates share an id.
    """
    templates: list[Template] = []
    owner: dict[int, str] = {}
    for module in _modules(only):
        for template_id, fn in module.TEMPLATES:
            if template_id in owner:
                raise ValueError(f"template id {template_id} is defined in both {owner[template_id]} and "
                                 f"{module.__name__}; ids must be unique")
            owner[template_id] = module.__name__
            templates.append((template_id, fn))
    return templates


def test_only_templates() -> set[int]:
    """Template ids whose instances are all held out for the test split."""
    return {tid for module in _modules() for tid in getattr(module, "TEST_ONLY_TEMPLATES", ())}
