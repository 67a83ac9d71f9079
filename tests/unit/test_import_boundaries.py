"""Import boundaries: the environments never load the trainer, and the embedded sites load nothing of the env.

Each runtime check imports modules in a fresh interpreter (`python -c`) and reads `sys.modules`, so
an import made at module level anywhere down the chain is seen; the static checks read the source,
which also catches imports made lazily inside functions.
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WEBARENA_DIR = os.path.join(ROOT, "agentenv_webarena")

TRAINER = ("torch", "verl")
SITE_MODULES = (
    "agentenv_webarena.sites",
    "agentenv_webarena.sites.__main__",
    "agentenv_webarena.sites.apps",
    "agentenv_webarena.sites.shop",
    "agentenv_webarena.sites.shop.admin",
    "agentenv_webarena.sites.forum",
    "agentenv_webarena.sites.gitlab",
    "agentenv_webarena.sites.map",
    "agentenv_webarena.sites.wiki",
    "agentenv_webarena.sites.homepage",
    "agentenv_webarena.sites.world",
)
ENV_MODULES = (
    "agentenv_webarena.environment",
    "agentenv_webarena.server",
    "agentenv_webarena.launch",
    "agentenv_webarena.expert",
    "agentenv_webarena.tasks",
    "agentenv_webarena.tasks.reference",
    *SITE_MODULES,
    "agentenv.item_ids",
    "agentenv.registry",
    "agentenv.health",
    "agentenv.server",
    "agentenv_webshop.server",
)
# What the embedded sites must not load: the env, the browser, our WebArena code, the task layer, the trainer.
NOT_FOR_SITES = (
    "agentenv_webarena.webarena",
    "agentenv_webarena.environment",
    "agentenv_webarena.server",
    "agentenv_webarena.launch",
    "agentenv_webarena.expert",
    "agentenv_webarena.tasks",
    "playwright",
    *TRAINER,
)
# The one place allowed to import the trainer: the local-model provider, inside its methods.
TRAINER_IMPORTS_ALLOWED = (os.path.join("webarena", "agent", "llm.py"), "LocalLLM.")


def _matches(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _loaded(modules: tuple[str, ...], prefixes: tuple[str, ...], inject: str = "") -> list[str]:
    """Modules matching `prefixes` that a fresh interpreter holds after importing `modules` (and `inject`)."""
    code = (f"import importlib, json, sys\n{inject}\n"
            f"for name in {list(modules)!r}:\n    importlib.import_module(name)\n"
            "print(json.dumps(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, f"importing {modules} failed:\n{proc.stderr[-3000:]}"
    return [m for m in json.loads(proc.stdout.strip().splitlines()[-1]) if _matches(m, prefixes)]


def _imports(path: str) -> list[tuple[str, str]]:
    """(imported module, enclosing `Class.function` qualname or "") of every import statement in `path`."""
    tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    found: list[tuple[str, str]] = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{scope}{child.name}.")
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, scope) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.append((child.module, scope))
            visit(child, scope)

    visit(tree, "")
    return found


def _python_files(top: str) -> list[str]:
    return [os.path.join(d, f) for d, _, files in os.walk(top) for f in files if f.endswith(".py")]


def test_env_modules_do_not_load_the_trainer():
    assert _loaded(ENV_MODULES, TRAINER) == []


def test_sites_load_nothing_of_the_env_the_browser_or_the_trainer():
    assert _loaded(SITE_MODULES, NOT_FOR_SITES) == []


@pytest.mark.parametrize("inject, prefixes", [("import verl", TRAINER), ("import playwright.async_api", NOT_FOR_SITES)])
def test_the_runtime_check_sees_an_injected_import(inject, prefixes):
    """The check is not vacuous: a module loaded alongside the imports shows up."""
    assert _loaded(("agentenv_webarena.sites",), prefixes, inject=inject)


def test_only_the_local_model_provider_imports_the_trainer_and_only_lazily():
    allowed_file, allowed_scope = TRAINER_IMPORTS_ALLOWED
    offending = []
    for path in _python_files(WEBARENA_DIR):
        rel = os.path.relpath(path, WEBARENA_DIR)
        for module, scope in _imports(path):
            if _matches(module, TRAINER) and not (rel == allowed_file and scope.startswith(allowed_scope)):
                offending.append(f"{rel}: {module} (in {scope or 'module scope'})")
    assert offending == []


def test_sites_source_imports_nothing_of_the_env_the_browser_or_the_trainer():
    offending = []
    for path in _python_files(os.path.join(WEBARENA_DIR, "sites")):
        rel = os.path.relpath(path, WEBARENA_DIR)
        offending += [f"{rel}: {module}" for module, _ in _imports(path) if _matches(module, NOT_FOR_SITES)]
    assert offending == []
