"""setup.py lists what the packages import: every third-party import is covered by a requirement
(core or an extra), and every core requirement is imported (or is on the list of indirect uses)."""
from __future__ import annotations

import ast
import functools
import importlib.metadata
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("agentenv", "agentenv_webshop", "agentenv_webarena", "verl")
# Core requirements used without an import statement of their own, and why.
INDIRECT = {
    "pyarrow": "pandas' parquet engine",
    "httptools": "uvicorn's HTTP parser",
    "uvloop": "uvicorn's event loop",
    "safetensors": "transformers' checkpoint format",
    "tensorboard": "torch.utils.tensorboard",
    "pystemmer": "imported as Stemmer",
    "ray": "imported as ray (ray[default])",
}


def _requirements() -> tuple[set[str], set[str]]:
    source = open(os.path.join(ROOT, "setup.py")).read()
    tree = ast.parse(source)
    values = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)

    def names(reqs):
        return {re.split(r"[<>=!;\[ ]", r, maxsplit=1)[0].strip().lower().replace("_", "-") for r in reqs}

    return names(values["CORE"]), names(r for reqs in values["EXTRAS"].values() for r in reqs)


@functools.cache
def _imported_top_modules() -> frozenset[str]:
    found = set()
    for package in PACKAGES:
        for dirpath, _, files in os.walk(os.path.join(ROOT, package)):
            for name in files:
                if not name.endswith(".py"):
                    continue
                tree = ast.parse(open(os.path.join(dirpath, name), encoding="utf-8").read())
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        found.update(alias.name.split(".")[0] for alias in node.names)
                    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                        found.add(node.module.split(".")[0])
    return frozenset(m for m in found if m not in PACKAGES and m not in sys.stdlib_module_names)


@functools.cache
def _module_distributions() -> dict[str, list[str]]:
    """importlib's module -> distributions map (it reads every installed distribution: build it once)."""
    return importlib.metadata.packages_distributions()


def _distributions(module: str) -> set[str]:
    dists = _module_distributions().get(module, [])
    return {d.lower().replace("_", "-") for d in dists} or {module.lower().replace("_", "-")}


def test_every_third_party_import_is_a_requirement():
    core, extras = _requirements()
    declared = core | extras
    missing = {m: sorted(_distributions(m)) for m in _imported_top_modules()
               if not _distributions(m) & declared and m not in ("vllm", "flash_attn")}
    assert not missing, f"imported but not in setup.py (core or an extra): {missing}"


def test_every_core_requirement_is_used():
    core, _ = _requirements()
    imported = set()
    for module in _imported_top_modules():
        imported |= _distributions(module)
    unused = sorted(core - imported - set(INDIRECT))
    assert not unused, f"in setup.py's core requirements but imported nowhere: {unused}"
