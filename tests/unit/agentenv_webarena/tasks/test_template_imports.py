"""Template modules share helpers through `templates.common` and `templates.base`, never through one another."""
from __future__ import annotations

import ast
import importlib
import importlib.util

import pytest

from agentenv_webarena.tasks.templates import MODULES

PACKAGE = "agentenv_webarena.tasks.templates"


@pytest.mark.parametrize("name", MODULES)
def test_a_template_module_imports_no_sibling(name):
    if importlib.util.find_spec(f"{PACKAGE}.{name}") is None:
        pytest.skip(f"{name} does not exist yet (the loader skips it too)")
    module = importlib.import_module(f"{PACKAGE}.{name}")
    with open(module.__file__, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE + "."):
            imported.add(node.module.rsplit(".", 1)[1])
        elif isinstance(node, ast.Import):
            imported |= {a.name.rsplit(".", 1)[1] for a in node.names if a.name.startswith(PACKAGE + ".")}
    assert imported & set(MODULES) == set(), f"{name} imports sibling template modules"
