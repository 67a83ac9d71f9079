"""What a benchmark run records and how it is written: per-step and per-task records,
`results.json` (success rate with a Wilson 95% interval) and one self-contained HTML page per task.

`render_<task_id>.html` shows, for every step, the URL, the observation, the model's full reply
(and the replies retried before it), the parsed action, the env's error if any and, with
`--save_screenshots`, the page as an inline PNG; then the final score. No file outside the page is
referenced, so a report can be mailed or attached as is.
"""
from __future__ import annotations

import base64
import html
import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import Optional

from agentenv.controller.types import is_success

__all__ = ["StepRecord", "EpisodeRecord", "wilson_interval", "summarize", "render_html", "write_task_report",
           "write_results", "record_dict"]


@dataclass
class StepRecord:
    """One step: what the agent saw and what it did."""

    observation: str
    url: str
    previous_action: str
    response: str
    action: str
    attempts: list[str] = field(default_factory=list)
    parse_error: str = ""
    env_error: str = ""
    screenshot_png: Optional[bytes] = None


@dataclass
class EpisodeRecord:
    """One task's episode and its outcome.

    Attributes:
        task_id: the config's `task_id`.
        index: the task's index in the task list the env serves.
        intent: the objective.
        score: the env's score (0.0 until the episode ends).
        error: why the episode did not run normally ("" when it did).
        eval_status: the env's `eval_status` ("scored", "needs_judge", "error").
        early_stop: the env's early-stop reason ("" when the agent stopped).
        eval_error: why the env could not score the episode (its `eval_error`; "" when it could).
    """

    task_id: int
    index: int
    intent: str
    steps: list[StepRecord] = field(default_factory=list)
    score: float = 0.0
    error: str = ""
    eval_status: str = ""
    early_stop: str = ""
    seconds: float = 0.0
    eval_error: str = ""

    def summary(self) -> dict:
        """The task's row in `results.json`."""
        return {"task_id": self.task_id, "score": self.score, "steps": len(self.steps), "error": self.error,
                "eval_status": self.eval_status, "early_stop": self.early_stop, "seconds": round(self.seconds, 2)}


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% for the default z).

    center = (p + z²/2n) / (1 + z²/n),  half = z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n)
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, center - half), min(1.0, center + half))


def summarize(records: list[EpisodeRecord], extra: Optional[dict] = None) -> dict:
    """`results.json`: `{"tasks", "scored", "needs_judge", "success", "success_rate", "ci95", "errors",
    "per_task": [...], ...extra}`.

    A task whose score needed the LLM judge and got no verdict (`eval_status == "needs_judge"`) is not
    a failure: it is counted in `needs_judge` and left out of `scored`, the denominator of
    `success_rate` and of its Wilson interval.
    """
    scored = [r for r in records if r.eval_status != "needs_judge"]
    success = sum(is_success(r.score) for r in scored)
    lo, hi = wilson_interval(success, len(scored))
    out = {"tasks": len(records), "scored": len(scored), "needs_judge": len(records) - len(scored),
           "success": success, "success_rate": round(success / len(scored), 4) if scored else 0.0,
           "ci95": [round(lo, 4), round(hi, 4)], "errors": sum(bool(r.error) for r in records),
           "per_task": [r.summary() for r in records]}
    out.update(extra or {})
    return out


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 1200px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin: 0 0 .4em 0; } h3 { font-size: 1em; margin: .8em 0 .2em 0; }
table.summary td, table.summary th { padding: .2em .8em; text-align: left; border-bottom: 1px solid #ddd; }
section.step { border: 1px solid #ccc; border-radius: 6px; padding: 1em; margin: 1em 0; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f6f6; padding: .6em; margin: 0; }
pre.action { background: #e8f0fe; font-weight: bold; } .error { color: #b00020; }
.pass { color: #137333; font-weight: bold; } .fail { color: #b00020; font-weight: bold; }
img.screenshot { max-width: 100%; border: 1px solid #ccc; }
"""


def _pre(text: str, cls: str) -> str:
    return f'<pre class="{cls}">{html.escape(text)}</pre>'


def _step_html(i: int, step: StepRecord) -> str:
    parts = [f'<section class="step" id="step-{i}">', f"<h2>Step {i}</h2>",
             f'<div class="url">URL: {html.escape(step.url)}</div>',
             f'<div class="previous">Previous action: {html.escape(step.previous_action)}</div>']
    if step.screenshot_png:
        data = base64.b64encode(step.screenshot_png).decode()
        parts.append(f'<img class="screenshot" alt="page at step {i}" src="data:image/png;base64,{data}">')
    parts.append(f'<details class="observation"><summary>Observation ({len(step.observation)} characters)'
                 f"</summary>{_pre(step.observation, 'observation')}</details>")
    if len(step.attempts) > 1:
        retried = "".join(_pre(a, "attempt") for a in step.attempts[:-1])
        parts.append(f"<h3>Replies retried ({len(step.attempts) - 1})</h3>{retried}")
    parts.append(f"<h3>Model response</h3>{_pre(step.response, 'response')}")
    parts.append(f"<h3>Parsed action</h3>{_pre(step.action or '(none: the reply held no valid action)', 'action')}")
    for label, text in (("Parse error", step.parse_error), ("Env error", step.env_error)):
        if text:
            parts.append(f'<p class="error">{label}: {html.escape(text)}</p>')
    parts.append("</section>")
    return "\n".join(parts)


def render_html(record: EpisodeRecord) -> str:
    """The task's self-contained report page."""
    verdict = ("NEEDS JUDGE" if record.eval_status == "needs_judge"
               else "PASS" if is_success(record.score) else "FAIL")
    css = verdict.lower().replace(" ", "-")
    rows = [("Task", str(record.task_id)), ("Objective", record.intent), ("Steps", str(len(record.steps))),
            ("Eval status", record.eval_status), ("Eval error", record.eval_error), ("Early stop", record.early_stop),
            ("Error", record.error)]
    table = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows if v)
    steps = "\n".join(_step_html(i, s) for i, s in enumerate(record.steps, 1))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Task {record.task_id}: '
            f"{html.escape(record.intent)}</title><style>{_CSS}</style></head><body>\n"
            f"<h1>Task {record.task_id}</h1>\n<table class=\"summary\">{table}</table>\n{steps}\n"
            f'<section class="final" id="final"><h2>Final score: <span class="score {css}">'
            f"{record.score:g} ({verdict})</span></h2></section>\n</body></html>\n")


def write_task_report(result_dir: str, record: EpisodeRecord) -> str:
    """Write `render_<task_id>.html`; returns its path."""
    path = os.path.join(result_dir, f"render_{record.task_id}.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_html(record))
    return path


def write_results(result_dir: str, records: list[EpisodeRecord], extra: Optional[dict] = None) -> dict:
    """Write `results.json` (atomically); returns what was written."""
    results = summarize(records, extra)
    path = os.path.join(result_dir, "results.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return results


def record_dict(record: EpisodeRecord) -> dict:
    """A JSON-able copy of a record (screenshots left out)."""
    data = asdict(record)
    for step in data["steps"]:
        step.pop("screenshot_png", None)
    return data
