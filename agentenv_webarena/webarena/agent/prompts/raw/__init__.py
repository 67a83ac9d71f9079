"""Prompt templates as Python dicts (one module per template, each defines `PROMPT`).

`python -m agentenv_webarena.webarena.agent.prompts.to_json` writes each one to `../jsons/<name>.json`, the
files `--instruction_path` points at. Shared wording lives in `_parts`; a template picks the style
(chain of thought or direct), whether the N/A rule is stated, and its examples.
"""
