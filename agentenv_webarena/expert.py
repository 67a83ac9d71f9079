"""The reference (oracle) policy: replay each task's `reference_action_sequence` through the HTTP API.

`python -m agentenv_webarena.expert --env-addr http://127.0.0.1:36005 [--ids AgentItemId/webarena_test.json]
[--task-file F] [--num-workers 4] [--wrong]` plays every listed task as a client would: reset, then
for each reference step resolve its element (by role and name) against the current observation's
metadata (scrolling to it when the viewport-only observation does not list it yet), send the action
in WebArena's fenced form, and finally `stop [answer]`. It prints one
line per failed task and, last, one JSON line `{"tasks": N, "success": S, "success_rate": ...}`.

`--wrong` plays a deliberately wrong episode instead (a wrong answer at once for tasks scored by the
answer alone; the reference steps then a wrong answer for string-matched tasks that also check the page
or URL; an immediate stop for URL / page-state tasks), which must score 0: the suite's check that every
task's evaluator can fail.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from agentenv.controller.types import is_success
from agentenv.item_ids import item_indices
from agentenv_webarena.tasks.reference import PAUSE, ReplayError, pause_action, reference_actions, seek_actions

__all__ = ["play_task", "TaskResult", "main"]

logger = logging.getLogger(__name__)

WRONG_ANSWER = "I am not sure (wrong answer on purpose)"
# With the viewport-only observation (WebArena's) an element below the fold is not listed: the replay
# scrolls down (then up) until it is, at most this many times per step.
MAX_SEEK_DOWN = 8
MAX_SEEK_UP = 8


def _wrong_sequence(config: dict, sequence: list[dict]) -> list[dict]:
    """The wrong play of a task: a wrong answer at once where only the answer is scored (string_match alone:
    no page can matter), the reference steps then a wrong answer where the page or URL is scored too, and an
    immediate stop with the reference answer for URL / page-state tasks (the state was never reached)."""
    eval_types = set((config.get("eval") or {}).get("eval_types", []))
    if eval_types == {"string_match"}:
        return [{"action": "stop", "answer": WRONG_ANSWER}]
    if "string_match" in eval_types:
        return sequence[:-1] + [{"action": "stop", "answer": WRONG_ANSWER}]
    return [{"action": "stop", "answer": sequence[-1].get("answer", "")}]


@dataclass
class TaskResult:
    """The outcome of one replayed task."""

    index: int
    reward: float = 0.0
    steps: int = 0
    error: str = ""
    eval_status: str = ""
    seconds: float = 0.0
    info: dict = field(default_factory=dict)
    answer_page: str = ""  # the observation shown when the stop action was sent: the page the answer is read from


def play_task(client: Any, index: int, config: dict, site_urls: dict[str, str], wrong: bool = False) -> TaskResult:
    """Replay task `index` on `client` (a `WebarenaEnvClient`, or an in-process `WebarenaSession`); returns its
    reward, any error and the page the answer was read from."""
    start = time.perf_counter()
    result = TaskResult(index=index)
    sequence = list(config.get("reference_action_sequence") or [])
    if not sequence or sequence[-1].get("action") != "stop":
        result.error = "task has no reference_action_sequence ending in stop"
        return result
    if wrong:
        sequence = _wrong_sequence(config, sequence)
    try:
        page = client.reset(index).observation
        out = None
        for step in sequence:
            seeks = seek_actions(MAX_SEEK_DOWN, MAX_SEEK_UP)
            while True:
                meta = client.observation_metadata()
                try:
                    text = reference_actions(step, meta["obs_nodes_info"], site_urls)
                    break
                except ReplayError as missing:
                    if not seeks:
                        raise
                    move = seeks.pop(0)
                    try:
                        move = pause_action(meta["obs_nodes_info"]) if move == PAUSE else move
                    except ReplayError:
                        raise missing from None
                    out = client.step(f"In summary, the next action I will perform is ```{move}```")
                    page = out.observation
                    result.steps += 1
                    if out.done:
                        raise
            if step["action"] == "stop":
                result.answer_page = page
            out = client.step(f"In summary, the next action I will perform is ```{text}```")
            page = out.observation
            result.steps += 1
            info = out.info or {}
            if info.get("error") and step["action"] != "stop":
                raise ReplayError(f"step {result.steps} ({text}) failed: {info['error']}")
            if out.done:
                break
        if out is not None:
            result.reward = float(out.reward)
            result.info = out.info or {}
            result.eval_status = result.info.get("eval_status", "")
            if not out.done:
                result.error = "the episode did not end after the stop action"
    except Exception as exc:  # one broken task must not stop the run
        result.error = f"{type(exc).__name__}: {exc}"
    result.seconds = time.perf_counter() - start
    return result


def _load_ids(path: Optional[str], num_tasks: int) -> list[int]:
    if path is None:
        return list(range(num_tasks))
    return item_indices(path)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Replay tasks through a running server; print failures and a final JSON summary line."""
    parser = argparse.ArgumentParser(description="Replay WebArena reference action sequences through the env server")
    parser.add_argument("--env-addr", default="http://127.0.0.1:36005", help="WebArena env server base URL")
    parser.add_argument("--ids", default=None, help="AgentItemId JSON (webarena_<index>); default: every task")
    parser.add_argument("--task-file", default=None, help="task JSON the server serves (default: the embedded suite)")
    parser.add_argument("--limit", type=int, default=0, help="replay only the first N ids (0 = all)")
    parser.add_argument("--num-workers", type=int, default=2, help="tasks replayed at once (one env each)")
    parser.add_argument("--wrong", action="store_true", help="play wrong episodes (each must score 0)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per HTTP call")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    import httpx

    from agentenv.envs.webarena import WebarenaEnvClient
    from agentenv_webarena.tasks.config import EMBEDDED_TASK_FILE, load_tasks

    tasks = load_tasks(args.task_file or EMBEDDED_TASK_FILE)
    served = httpx.get(args.env_addr.rstrip("/") + "/tasks", timeout=args.timeout).json()
    if served["num_tasks"] != len(tasks):
        parser.error(f"the server has {served['num_tasks']} tasks but {args.task_file or EMBEDDED_TASK_FILE} has "
                     f"{len(tasks)}; pass the server's --task-file")
    site_urls = served["site_urls"]
    ids = _load_ids(args.ids, len(tasks))
    if args.limit:
        ids = ids[: args.limit]
    start = time.perf_counter()

    def worker(chunk: list[int]) -> list[TaskResult]:
        out = []
        with WebarenaEnvClient(args.env_addr, data_len=len(tasks), timeout=args.timeout) as client:
            for index in chunk:
                res = play_task(client, index, tasks[index], site_urls, wrong=args.wrong)
                out.append(res)
                expected_ok = res.reward == 0.0 if args.wrong else is_success(res.reward)
                if res.error or not expected_ok:
                    print(f"task {index} (template {tasks[index].get('intent_template_id')}): reward {res.reward} "
                          f"eval_status={res.eval_status!r} {res.error} {res.info.get('eval_error', '')}",
                          file=sys.stderr, flush=True)
        return out

    n = max(1, min(args.num_workers, len(ids)))
    chunks = [ids[i::n] for i in range(n)]
    with ThreadPoolExecutor(n) as pool:
        results = [r for part in pool.map(worker, chunks) for r in part]
    success = sum(is_success(r.reward) for r in results)
    zero = sum(r.reward == 0.0 for r in results)
    summary = {
        "tasks": len(results),
        "success": success,
        "success_rate": round(success / max(1, len(results)), 4),
        "zero_reward": zero,
        "errors": sum(bool(r.error) for r in results),
        "needs_judge": sum(r.eval_status == "needs_judge" for r in results),
        "mean_steps": round(sum(r.steps for r in results) / max(1, len(results)), 2),
        "mean_task_s": round(sum(r.seconds for r in results) / max(1, len(results)), 3),
        "wall_s": round(time.perf_counter() - start, 2),
        "mode": "wrong" if args.wrong else "reference",
    }
    print(json.dumps(summary), flush=True)
    ok = (zero == len(results)) if args.wrong else (success == len(results))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
