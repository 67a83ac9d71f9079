"""Is an environment server up? The one health probe and wait loop every caller uses.

Every server built on the kit answers `GET /` with 200 "ok" once its resources are loaded. The
trainer (waiting for its servers, probing a suspect one), the launch scripts (`python -m
agentenv.health URL --wait 180`), the benchmarks and the tests all ask through this module.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from typing import Optional, Sequence

import requests

__all__ = ["EnvServerUnavailable", "server_answers", "wait_until_healthy"]


class EnvServerUnavailable(RuntimeError):
    """No environment server answers: never at start-up, or every server is out of rotation."""


def server_answers(base_url: str, timeout_s: float = 2.0) -> bool:
    """True when `GET base_url/` answers 200 within `timeout_s` seconds."""
    try:
        return requests.get(base_url.rstrip("/") + "/", timeout=timeout_s).status_code == 200
    except requests.RequestException:
        return False


def wait_until_healthy(base_url: str, timeout_s: Optional[float] = 60.0, *, proc: Optional[subprocess.Popen] = None,
                       interval_s: float = 0.2, max_interval_s: float = 5.0, max_attempts: Optional[int] = None,
                       request_timeout_s: float = 10.0, what: str = "env server", hint: str = "") -> None:
    """Poll `GET base_url/` until it answers 200.

    Args:
        base_url: the server's base URL (a trailing "/" is fine).
        timeout_s: give up after this many seconds in all (None: only `max_attempts` counts).
        proc: the server's process, when the caller started it: its early exit fails at once.
        interval_s: first pause between attempts; it doubles up to `max_interval_s`.
        max_attempts: give up after this many attempts as well (None: only the time limit counts).
        request_timeout_s: the most one attempt waits for an answer.
        what: names the server in the error ("webshop env server").
        hint: appended to the error (how to start the server, which key to fix).

    Raises:
        EnvServerUnavailable: naming the address, the attempts, the time waited and the last error.
    """
    if timeout_s is None and max_attempts is None:
        raise ValueError("wait_until_healthy needs a limit: timeout_s or max_attempts")
    url = base_url.rstrip("/") + "/"
    start = time.monotonic()
    deadline = start + timeout_s if timeout_s is not None else float("inf")
    delay, attempts, last = interval_s, 0, "no attempt"
    while True:
        if proc is not None and proc.poll() is not None:
            raise EnvServerUnavailable(f"{what} process exited with code {proc.returncode} before {url} answered")
        attempts += 1
        try:
            response = requests.get(url, timeout=max(0.1, min(request_timeout_s, deadline - time.monotonic())))
            if response.status_code == 200:
                return
            last = f"HTTP {response.status_code}"
        except requests.RequestException as exc:
            last = f"{type(exc).__name__}: {exc}"
        out_of_attempts = max_attempts is not None and attempts >= max_attempts
        if out_of_attempts or time.monotonic() + delay > deadline:
            break
        time.sleep(delay)
        delay = min(delay * 2, max_interval_s)
    message = (f"{what} at {base_url} did not answer after {attempts} attempts in {time.monotonic() - start:.1f} s "
               f"(last error: {last})")
    raise EnvServerUnavailable(f"{message}. {hint}" if hint else message)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`python -m agentenv.health URL [--wait S]`: exit 0 when the server answers (within S seconds)."""
    parser = argparse.ArgumentParser(description="exit 0 when an env server answers GET / with 200")
    parser.add_argument("url", help="the server's base URL, e.g. http://127.0.0.1:36001")
    parser.add_argument("--wait", type=float, default=0.0, help="seconds to keep trying (default: one try)")
    args = parser.parse_args(argv)
    if args.wait <= 0:
        return 0 if server_answers(args.url) else 1
    try:
        wait_until_healthy(args.url, timeout_s=args.wait)
    except EnvServerUnavailable as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
