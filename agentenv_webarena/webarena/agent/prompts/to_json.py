"""Turn the Python templates in `raw/` into the JSON files in `jsons/` (what `--instruction_path` reads).

`python -m agentenv_webarena.webarena.agent.prompts.to_json [--out DIR]` writes `<name>.json` for every
`raw/p_*.py` module; the JSON holds the module's `PROMPT` dict unchanged.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
from typing import Optional, Sequence

from agentenv_webarena.webarena.agent.prompts import JSON_DIR, raw

__all__ = ["JSON_DIR", "template_names", "load_raw", "write_json", "main"]


def template_names() -> list[str]:
    """Names of the templates in `raw/` (modules named `p_*`), sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(raw.__path__) if m.name.startswith("p_"))


def load_raw(name: str) -> dict:
    """The `PROMPT` dict of template `name`.

    Raises:
        ValueError: no such template, or the module defines no `PROMPT` dict.
    """
    if name not in template_names():
        raise ValueError(f"no prompt template {name!r}; choose from {template_names()}")
    prompt = getattr(importlib.import_module(f"{raw.__name__}.{name}"), "PROMPT", None)
    if not isinstance(prompt, dict):
        raise ValueError(f"{raw.__name__}.{name} must define a PROMPT dict")
    return prompt


def write_json(name: str, out_dir: str = JSON_DIR) -> str:
    """Write template `name` to `<out_dir>/<name>.json`; returns the path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(load_raw(name), f, indent=2, ensure_ascii=False)
        f.write("\n")
    return path


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Write every template's JSON file."""
    parser = argparse.ArgumentParser(description="Write the prompt templates in raw/ as JSON")
    parser.add_argument("--out", default=JSON_DIR, help="output directory (default: %(default)s)")
    args = parser.parse_args(argv)
    for name in template_names():
        print(write_json(name, args.out))


if __name__ == "__main__":
    main()
