"""A pool of scorer processes with a per-task timeout: what the prime reward manager runs scorers in.

Owns the processes and the clock: each worker process (forkserver, or spawn where forkserver is
missing; never fork, the trainer holds threads) receives one task at a time over a pipe; a task
that runs past `timeout_s` has its process SIGKILLed and replaced, and a process that dies
(segfault, `os._exit`) is replaced too. Either way the task gets an `Outcome` with status
"timeout" or "error" and the batch goes on. A task's clock starts when it is handed to a ready
worker, so process start-up never counts against it. It does not know what a score is.

It lives in `verl.utils` (whose package imports nothing) so a worker process starts by importing
this module and the scorer only, not torch.
"""
from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import pickle
import time
import weakref
from collections import deque
from multiprocessing.connection import wait
from typing import Any, Callable, Sequence

__all__ = ["Outcome", "ScorerPool"]

logger = logging.getLogger(__name__)

_START_TIMEOUT_S = 300.0   # a worker that is not ready by then (importing on a loaded host) is a failure
_READY = "ready"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One task's result: status "ok" (value set), "error" (message set) or "timeout"."""

    status: str
    value: Any = None
    message: str = ""


def _worker_main(conn, fn: Callable) -> None:
    conn.send(_READY)
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        index, args = task
        try:
            conn.send((index, "ok", fn(*args), ""))
        except BaseException as exc:  # the scorer's failure is the task's outcome, never the worker's end
            conn.send((index, "error", None, f"{type(exc).__name__}: {exc}"))


class _Worker:
    def __init__(self, ctx, fn: Callable):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, fn), daemon=True)
        self.proc.start()
        child.close()
        self.started = time.monotonic()
        self.task: tuple[int, float] | None = None   # (task index, start time) while busy
        self.ready = False

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=10)
        self.conn.close()


def _shutdown(workers: list) -> None:
    for w in workers:
        try:
            w.conn.send(None)
        except (OSError, ValueError):
            pass
    for w in workers:
        w.proc.join(timeout=2)
        w.kill()
    workers.clear()


class ScorerPool:
    """Run `fn(*args)` for many argument tuples in `num_processes` worker processes.

    Args:
        fn: a picklable callable (module-level function, `functools.partial` of one, or an object
            that pickles by reference such as `verl.utils.reward_score.FileScoreFn`).
        num_processes: how many workers run at once (started on first use, kept between calls).

    Raises:
        TypeError: `fn` cannot be pickled (checked up front, not in a worker).
    """

    def __init__(self, fn: Callable, num_processes: int):
        try:
            pickle.dumps(fn)
        except Exception as exc:
            raise TypeError(f"the scorer {fn!r} must be picklable to run in worker processes "
                            "(a module-level function, or custom_reward_function.path)") from exc
        methods = multiprocessing.get_all_start_methods()
        self._ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        self.fn, self.num_processes = fn, int(num_processes)
        self._workers: list[_Worker] = []
        self._finalizer = weakref.finalize(self, _shutdown, self._workers)

    def _start(self) -> _Worker:
        worker = _Worker(self._ctx, self.fn)
        self._workers.append(worker)
        return worker

    def _retire(self, worker: _Worker) -> None:
        worker.kill()
        self._workers.remove(worker)

    def map(self, tasks: Sequence[tuple], timeout_s: float) -> list[Outcome]:
        """One `Outcome` per task, in order; a task running longer than `timeout_s` is killed.

        Raises:
            RuntimeError: worker processes keep dying before they are ready (the scorer cannot be
                loaded in a fresh process).
        """
        outcomes: list[Outcome | None] = [None] * len(tasks)
        pending = deque(enumerate(tasks))
        while len(self._workers) < min(self.num_processes, len(tasks)):
            self._start()
        start_failures = 0
        while pending or any(w.task for w in self._workers):
            for w in self._workers:
                if w.ready and w.task is None and pending:
                    index, args = pending.popleft()
                    w.conn.send((index, args))
                    w.task = (index, time.monotonic())
            now = time.monotonic()
            deadlines = [w.task[1] + timeout_s for w in self._workers if w.task] + \
                        [w.started + _START_TIMEOUT_S for w in self._workers if not w.ready]
            ready = wait([w.conn for w in self._workers], timeout=max(0.0, min(deadlines) - now) if deadlines else None)
            for w in [w for w in self._workers if w.conn in ready]:
                try:
                    message = w.conn.recv()
                except (EOFError, OSError):
                    message = None
                if message == _READY:
                    w.ready = True
                    start_failures = 0
                    continue
                if message is None:  # the process died
                    code = w.proc.exitcode if not w.proc.is_alive() else None
                    if w.task is None:
                        start_failures += 1
                        if start_failures > self.num_processes:
                            raise RuntimeError(f"scorer worker processes die before they are ready (exit code {code})")
                    else:
                        outcomes[w.task[0]] = Outcome("error", message=f"scorer process died (exit code {code})")
                    self._retire(w)
                    self._start()
                    continue
                index, status, value, text = message
                outcomes[index] = Outcome(status, value, text)
                w.task = None
            now = time.monotonic()
            for w in list(self._workers):
                if w.task and now - w.task[1] >= timeout_s:
                    outcomes[w.task[0]] = Outcome("timeout", message=f"killed after {timeout_s:g} s")
                    self._retire(w)
                    self._start()
                elif not w.ready and now - w.started >= _START_TIMEOUT_S:
                    raise RuntimeError(f"a scorer worker process was not ready after {_START_TIMEOUT_S:g} s")
        return outcomes  # type: ignore[return-value]

    def close(self) -> None:
        """Stop every worker (safe to call twice)."""
        self._finalizer()
