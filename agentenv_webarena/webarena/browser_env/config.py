"""How the browser is launched and what it may load: `BrowserConfig`, the Chromium binary, the URL policy.

Owns the settings every part of `browser_env` reads (launch, viewport, timeouts, observation cap,
host allow-list), which Chromium binary is driven (`default_chromium`) with which flags
(`CHROMIUM_ARGS`), and the request policy (`url_allowed`: http(s) to ``allowed_hosts`` only;
``file:``, ``chrome:``, ``data:`` and other hosts are refused; ``about:blank`` needs no request).
Does not start anything: `host` runs Chromium, `session` drives a context.
"""
from __future__ import annotations

import dataclasses
import os
from urllib.parse import urlsplit

__all__ = ["CHROMIUM_ARGS", "CHROMIUM_CANDIDATES", "default_chromium", "BrowserConfig", "url_allowed"]

# Always passed to Chromium (build spec): no sandbox in containers, no background traffic.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)
# Debian's binaries, preferred first. The headless shell (package ``chromium-headless-shell``, what
# Playwright itself uses for headless runs) has no browser UI: a step costs ~2x less CPU than with
# the full browser, whose new-headless mode still runs the omnibox/WebUI renderers per window
# (bench/RESULTS.md, section W). The full ``chromium`` is needed only for a visible window.
CHROMIUM_CANDIDATES = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclasses.dataclass
class BrowserConfig:
    """How Chromium is launched and how sessions behave.

    Attributes:
        executable_path: Chromium binary; None = `default_chromium` (``WEBARENA_CHROMIUM``, else
            Debian's headless shell when headless and installed, else ``/usr/bin/chromium``).
        headless: run without a window.
        viewport_width: page width in CSS pixels (WebArena: 1280).
        viewport_height: page height in CSS pixels (WebArena: 720).
        current_viewport_only: observations list only what is inside the viewport, as WebArena's
            ``run.py`` runs its benchmark (it forces this on); False shows the whole page.
        max_obs_chars: cap on the observation text in characters (cut, then a marker line);
            None = no cap.
        action_timeout_ms: limit for every single Playwright/CDP call.
        settle_timeout_ms: cap on waiting for a navigation an action started to reach "load".
        allowed_hosts: ``"host:port"`` (or ``"host"`` = any port) the browser may reach over
            http(s); ``()`` = any http(s) host.
        extra_ignored_properties: AX properties hidden in addition to WebArena's list, e.g.
            ``("url",)`` for WebArena-like link lines (current Chromium adds ``url:``; see
            `observation`).
    """

    executable_path: str | None = None
    headless: bool = True
    viewport_width: int = 1280
    viewport_height: int = 720
    current_viewport_only: bool = True
    max_obs_chars: int | None = None
    action_timeout_ms: int = 5000
    settle_timeout_ms: int = 3000
    allowed_hosts: tuple[str, ...] = ()
    extra_ignored_properties: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.executable_path is None:
            self.executable_path = default_chromium(self.headless)
        elif not self.headless and os.path.basename(self.executable_path).startswith("chromium-headless-shell"):
            raise ValueError(f"{self.executable_path} cannot show windows; use the full Chromium "
                             "(e.g. /usr/bin/chromium) with headless=False")
        for key in ("viewport_width", "viewport_height", "action_timeout_ms", "settle_timeout_ms"):
            value = getattr(self, key)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"BrowserConfig.{key} must be a positive integer, got {value!r}")
        if self.max_obs_chars is not None and (not isinstance(self.max_obs_chars, int) or self.max_obs_chars <= 0):
            raise ValueError(f"BrowserConfig.max_obs_chars must be a positive integer or None, "
                             f"got {self.max_obs_chars!r}")
        if isinstance(self.allowed_hosts, str):
            raise ValueError("BrowserConfig.allowed_hosts must be a tuple of 'host:port' strings, "
                             f"got the single string {self.allowed_hosts!r}; write ({self.allowed_hosts!r},)")
        self.allowed_hosts = tuple(self.allowed_hosts)
        if isinstance(self.extra_ignored_properties, str):
            raise ValueError("BrowserConfig.extra_ignored_properties must be a tuple of property names, "
                             f"got the single string {self.extra_ignored_properties!r}")
        self.extra_ignored_properties = tuple(self.extra_ignored_properties)
        for entry in self.allowed_hosts:
            if not isinstance(entry, str) or not entry or "/" in entry:
                raise ValueError(f"BrowserConfig.allowed_hosts entries are 'host:port' or 'host' "
                                 f"without a scheme or path, got {entry!r}")


def default_chromium(headless: bool = True) -> str:
    """The Chromium binary to drive: ``$WEBARENA_CHROMIUM``, else the first installed of
    `CHROMIUM_CANDIDATES` (only the full browser when a window is wanted), else ``/usr/bin/chromium``."""
    chosen = os.environ.get("WEBARENA_CHROMIUM")
    if chosen:
        return chosen
    candidates = CHROMIUM_CANDIDATES if headless else CHROMIUM_CANDIDATES[1:]
    return next((path for path in candidates if os.path.exists(path)), CHROMIUM_CANDIDATES[-1])


def _host_port(netloc_or_entry: str, scheme: str | None) -> tuple[str, int | None]:
    parts = urlsplit("//" + netloc_or_entry)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None and scheme is not None:
        port = _DEFAULT_PORTS.get(scheme)
    return host, port


def url_allowed(url: str, allowed_hosts: tuple[str, ...]) -> bool:
    """Whether the browser may load ``url``: ``about:blank``, or http(s) to an allowed host.

    Args:
        url: absolute URL.
        allowed_hosts: ``"host:port"`` entries (a bare ``"host"`` allows every port of that host;
            the URL's default port counts, so ``"example.com:80"`` allows ``http://example.com/``);
            empty = every http(s) host.
    """
    if url == "about:blank":
        return True
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.netloc:
        return False
    if not allowed_hosts:
        return True
    host, port = _host_port(parts.netloc, scheme)
    for entry in allowed_hosts:
        allowed_host, allowed_port = _host_port(entry, None)
        if allowed_host == host and (allowed_port is None or allowed_port == port):
            return True
    return False
