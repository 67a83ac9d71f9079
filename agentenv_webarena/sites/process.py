"""Start, watch and stop the embedded sites process, and reset instances over its control API.

Owns the life of `python -m agentenv_webarena.sites` when another process (the env server, a test,
a bench) needs the sites: it picks free ports, waits until the URL line is written, and stops the
child on `close()`. On Linux the child also dies with its parent (PR_SET_PDEATHSIG), so a killed
env server never leaves a sites process behind.
"""
from __future__ import annotations

import ctypes
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Optional

import httpx

from agentenv.server.launch import stop_process

__all__ = ["EmbeddedSites", "reset_instance", "drop_instance", "control_url", "is_embedded_site"]

logger = logging.getLogger(__name__)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class EmbeddedSites:
    """The embedded sites running in a child process.

    Args:
        host: interface the sites bind (127.0.0.1).
        start_timeout_s: how long to wait for the sites to listen.
        log_level: the child's log level.

    Attributes:
        urls: site key (every key of `sites.apps.SITES`) -> base URL, set by `start()`.
    """

    def __init__(self, host: str = "127.0.0.1", start_timeout_s: float = 60.0, log_level: str = "warning"):
        self.host = host
        self.start_timeout_s = start_timeout_s
        self.log_level = log_level
        self.urls: dict[str, str] = {}
        self._proc: Optional[subprocess.Popen] = None
        self._dir: Optional[tempfile.TemporaryDirectory] = None

    def start(self) -> dict[str, str]:
        """Start the child and return the site URLs; raises RuntimeError if it fails to come up."""
        self._dir = tempfile.TemporaryDirectory(prefix="webarena_sites_")
        urls_file = os.path.join(self._dir.name, "urls.json")
        cmd = [sys.executable, "-m", "agentenv_webarena.sites", "--host", self.host, "--urls-file", urls_file,
               "--log-level", self.log_level]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                      preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"embedded sites exited with code {self._proc.returncode} during start-up; "
                                   f"run `{' '.join(cmd[1:3])}` by hand to see why")
            if os.path.exists(urls_file):
                with open(urls_file) as f:
                    self.urls = json.loads(f.read())
                logger.info("embedded sites (pid %d): %s", self._proc.pid, self.urls)
                return self.urls
            time.sleep(0.05)
        self.close()
        raise RuntimeError(f"embedded sites did not start within {self.start_timeout_s:.0f} s")

    def alive(self) -> bool:
        """True while the child runs."""
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        """Stop the child (idempotent)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            stop_process(proc)
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> "EmbeddedSites":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def control_url(base_url: str, route: str) -> str:
    """URL of control route `route` (reset, drop, health) for a site at `base_url`: the control routes
    live at the site root, also for the admin URL (".../admin")."""
    root = httpx.URL(base_url).copy_with(path="/", query=None)
    return str(root).rstrip("/") + f"/__control/{route}"


def is_embedded_site(base_url: str, timeout_s: float = 5.0) -> bool:
    """True when `base_url` is one of our embedded sites (it answers the control health route)."""
    try:
        return httpx.get(control_url(base_url, "health"), timeout=timeout_s).status_code == 200
    except httpx.HTTPError:
        return False


def _control(base_url: str, verb: str, instance: str, client: Optional[httpx.Client], timeout_s: float) -> dict:
    url = control_url(base_url, verb)
    resp = (client or httpx).post(url, params={"instance": instance}, timeout=timeout_s)
    if resp.status_code != 200:
        raise RuntimeError(f"{verb} of site instance {instance!r} at {url} failed: "
                           f"HTTP {resp.status_code} {resp.text[:200]}")
    return resp.json()


def reset_instance(base_url: str, instance: str, client: Optional[httpx.Client] = None,
                   timeout_s: float = 10.0) -> dict:
    """Restore `instance`'s data on the embedded sites at `base_url` to the seed (one call resets all sites)."""
    return _control(base_url, "reset", instance, client, timeout_s)


def drop_instance(base_url: str, instance: str, client: Optional[httpx.Client] = None, timeout_s: float = 10.0) -> dict:
    """Free `instance` on the embedded sites at `base_url`."""
    return _control(base_url, "drop", instance, client, timeout_s)
