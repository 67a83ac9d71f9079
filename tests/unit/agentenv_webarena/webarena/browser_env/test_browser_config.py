"""Which Chromium binary the WebArena server drives, and launch-config validation."""
from __future__ import annotations

import pytest

import agentenv_webarena.webarena.browser_env.config as browser_mod
from agentenv_webarena.webarena.browser_env import BrowserConfig, default_chromium


@pytest.fixture
def installed(monkeypatch):
    """Pretend exactly the given binaries exist; WEBARENA_CHROMIUM unset."""
    monkeypatch.delenv("WEBARENA_CHROMIUM", raising=False)

    def set_installed(*paths: str) -> None:
        monkeypatch.setattr(browser_mod.os.path, "exists", lambda p: p in paths)

    return set_installed


def test_headless_prefers_the_headless_shell(installed):
    installed("/usr/bin/chromium-headless-shell", "/usr/bin/chromium")
    assert default_chromium() == "/usr/bin/chromium-headless-shell"
    assert BrowserConfig().executable_path == "/usr/bin/chromium-headless-shell"


def test_full_chromium_when_the_shell_is_missing_or_a_window_is_wanted(installed):
    installed("/usr/bin/chromium")
    assert default_chromium() == "/usr/bin/chromium"
    installed("/usr/bin/chromium-headless-shell", "/usr/bin/chromium")
    assert default_chromium(headless=False) == "/usr/bin/chromium"
    assert BrowserConfig(headless=False).executable_path == "/usr/bin/chromium"


def test_env_variable_wins(installed, monkeypatch):
    installed("/usr/bin/chromium-headless-shell")
    monkeypatch.setenv("WEBARENA_CHROMIUM", "/opt/chrome/chrome")
    assert default_chromium() == "/opt/chrome/chrome"


def test_headful_with_the_headless_shell_is_refused():
    with pytest.raises(ValueError, match="cannot show windows"):
        BrowserConfig(executable_path="/usr/bin/chromium-headless-shell", headless=False)
