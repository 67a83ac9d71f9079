"""Command-line launch helpers shared by env servers: common flags and running uvicorn."""
from __future__ import annotations

import argparse
import logging
import os
from typing import Optional, Sequence

from agentenv.server.app import ServerSettings

__all__ = [
    "CPU_ONLY_ENV",
    "hide_accelerators",
    "stop_process",
    "build_arg_parser",
    "parse",
    "settings_from_args",
    "serve",
]

# An env server needs no GPU. Without these, `import bm25s` imports JAX when it is installed and JAX
# preallocates 75% of every visible GPU (61 GB measured on an H100 node), and torch may create a CUDA
# context; both happen in the server process before any request.
CPU_ONLY_ENV = {
    "CUDA_VISIBLE_DEVICES": "",
    "HIP_VISIBLE_DEVICES": "",
    "JAX_PLATFORMS": "cpu",
    "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
}


def hide_accelerators() -> None:
    """Make this process CPU-only (`CPU_ONLY_ENV`); call before importing an env's engine."""
    os.environ.update(CPU_ONLY_ENV)

_LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


def stop_process(proc, timeout_s: float = 10.0) -> None:
    """Terminate a child process (a `subprocess.Popen`), killing it if it has not exited after
    `timeout_s`; nothing happens when it already exited."""
    import subprocess

    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def build_arg_parser(description: str, default_port: int, default_max_sessions: Optional[int] = 100_000,
                     default_ttl_s: float = 3600.0, default_worker_threads: int = 8) -> argparse.ArgumentParser:
    """Parser with the flags every env server has: --host, --port, --log-level, --max-sessions,
    --session-ttl, --max-action-chars, --worker-threads. Servers add their own flags to it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1; 0.0.0.0 exposes it)")
    parser.add_argument("--port", type=int, default=default_port, help=f"TCP port (default {default_port})")
    parser.add_argument("--log-level", default="info", choices=_LOG_LEVELS, type=str.lower,
                        help="logging level (debug also logs every request)")
    parser.add_argument("--max-sessions", type=int, default=default_max_sessions,
                        help=f"live-session limit; /create answers 503 when full "
                             f"(default {default_max_sessions}; 0 = unlimited)")
    parser.add_argument("--session-ttl", type=float, default=default_ttl_s,
                        help=f"evict sessions idle for this many seconds (default {default_ttl_s:g}; 0 = never)")
    parser.add_argument("--max-action-chars", type=int, default=4096,
                        help="refuse longer actions with 422 action_too_long (default 4096)")
    parser.add_argument("--worker-threads", type=int, default=default_worker_threads,
                        help=f"threads running blocking handlers (default {default_worker_threads})")
    return parser


def settings_from_args(args: argparse.Namespace) -> ServerSettings:
    """`ServerSettings` from parsed common flags (0 means unlimited / never)."""
    return ServerSettings(
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        max_sessions=args.max_sessions or None,
        session_ttl_s=args.session_ttl or None,
        max_action_chars=args.max_action_chars,
        worker_threads=args.worker_threads,
    )


def serve(app, settings: ServerSettings) -> None:
    """Configure logging and run `app` with uvicorn (single process; httptools/uvloop when installed)."""
    level = getattr(logging, settings.log_level.upper())
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    import uvicorn

    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        access_log=settings.log_level == "debug",
        loop="auto",
        http="auto",
        timeout_keep_alive=int(settings.keep_alive_s),
    )


def parse(parser: argparse.ArgumentParser, argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """Parse argv and validate the common flags (errors exit with a message naming the flag)."""
    args = parser.parse_args(argv)
    if args.max_sessions is not None and args.max_sessions < 0:
        parser.error(f"--max-sessions must be >= 0, got {args.max_sessions}")
    if args.session_ttl is not None and args.session_ttl < 0:
        parser.error(f"--session-ttl must be >= 0, got {args.session_ttl}")
    if args.max_action_chars < 1:
        parser.error(f"--max-action-chars must be >= 1, got {args.max_action_chars}")
    if args.worker_threads < 1:
        parser.error(f"--worker-threads must be >= 1, got {args.worker_threads}")
    return args
