"""Start the WebArena server: `python -m agentenv_webarena.launch --port 36005 [--task-file F] [...]`.

Site URLs come from WebArena's environment variables (SHOPPING, SHOPPING_ADMIN, REDDIT, GITLAB, MAP,
WIKIPEDIA, HOMEPAGE). When none is set the server starts the embedded sites itself and serves the
embedded task suite (`agentenv_webarena/tasks/embedded.raw.json`). To drive a real WebArena
deployment, export its URLs and pass `--task-file path/to/test.raw.json` (or a directory of `{i}.json`).
A real deployment is not reset between episodes, so its state-changing tasks run one at a time per site
(a parallel one gets 409 `site_busy`, or waits `--site-lock-wait-s`) unless `--real-resets` declares that
the deployment is reset between episodes (docs/webarena.md).
The LLM judge for fuzzy_match / N/A tasks is any OpenAI-compatible endpoint (`--judge-base-url`,
`--judge-model`, `--judge-api-key`, `--judge-timeout-s`, or WEBARENA_JUDGE_BASE_URL / OPENAI_BASE_URL,
WEBARENA_JUDGE_MODEL, WEBARENA_JUDGE_API_KEY / OPENAI_API_KEY); without one, or when it times out or
fails, such tasks report `info.eval_status == "needs_judge"`, which the trainer leaves out of the update.
Before serving it checks that Playwright and the Chromium binary are installed: a missing one ends the
launch with one line naming the command that installs it (`--check-browser` runs only that check).
"""
from __future__ import annotations

import importlib.util
import os
import sys
from typing import Optional, Sequence

from agentenv.server import build_arg_parser, hide_accelerators, parse, serve, settings_from_args

__all__ = ["main", "install_problem"]

INSTALL_CMD = "bash scripts/install.sh"
INSTALL_CHROMIUM_CMD = "bash scripts/install_chromium.sh"


def _missing_package() -> Optional[str]:
    for module in ("playwright", "httpx"):
        if importlib.util.find_spec(module) is None:
            return (f"error: the Python package {module} is not installed (the WebArena server needs it); "
                    f"install the project with: {INSTALL_CMD}")
    return None


def install_problem(executable_path: Optional[str] = None, headless: bool = True) -> Optional[str]:
    """One line saying what the server needs and does not find, with the command that installs it;
    None when Playwright, httpx and the Chromium binary are all there.

    Args:
        executable_path: the Chromium binary (`--chromium`); None: `default_chromium` (WEBARENA_CHROMIUM,
            else Debian's).
        headless: whether the binary must only run headless (as `default_chromium` takes it).
    """
    missing = _missing_package()
    if missing:
        return missing
    from agentenv_webarena.webarena.browser_env.config import default_chromium

    path = executable_path or default_chromium(headless)
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return None
    source = ("--chromium" if executable_path else "WEBARENA_CHROMIUM" if os.environ.get("WEBARENA_CHROMIUM")
              else "default")
    command = INSTALL_CHROMIUM_CMD if headless else f"CHROMIUM=/usr/bin/chromium {INSTALL_CHROMIUM_CMD}"
    return (f"error: no Chromium at {path} ({source}); install it with: {command} "
            "(or point WEBARENA_CHROMIUM at an installed binary)")


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Parse flags, build the app and serve it until interrupted (CPU-only: see `hide_accelerators`)."""
    hide_accelerators()
    missing = _missing_package()
    if missing:  # before anything imports Playwright: one line, no traceback
        sys.exit(missing)
    from agentenv_webarena.environment import EnvConfig

    parser = build_arg_parser("AgentGym-compatible WebArena environment server (Playwright + Chromium)",
                              default_port=36005, default_max_sessions=64, default_ttl_s=1800.0,
                              default_worker_threads=32)
    parser.add_argument("--task-file", default=None,
                        help="WebArena task JSON (test.raw.json style list) or a directory of {i}.json files "
                             "(default: the embedded suite)")
    parser.add_argument("--chromium", default=None,
                        help="Chromium executable (default $WEBARENA_CHROMIUM, else /usr/bin/chromium-headless-shell "
                             "when installed, else /usr/bin/chromium)")
    parser.add_argument("--check-browser", action="store_true",
                        help="only check that Playwright and Chromium are installed (exit 0) or say how to install "
                             "them (exit 1)")
    parser.add_argument("--headful", action="store_true", help="show the browser windows (needs a display)")
    parser.add_argument("--viewport-width", type=int, default=1280)
    parser.add_argument("--viewport-height", type=int, default=720)
    from agentenv_webarena.webarena.browser_env import BrowserConfig

    view = parser.add_mutually_exclusive_group()
    view.add_argument("--current-viewport-only", dest="current_viewport_only", action="store_true",
                      default=BrowserConfig.current_viewport_only,
                      help="observe only the elements inside the viewport: WebArena's observation (its run.py "
                           "forces it on); the default")
    view.add_argument("--whole-page", "--no-current-viewport-only", dest="current_viewport_only",
                      action="store_false",
                      help="observe the whole page, below the fold too (not WebArena's observation: scrolling "
                           "then changes nothing the agent sees)")
    parser.add_argument("--max-obs-chars", type=int, default=0,
                        help="safety limit on the accessibility tree in characters (0 = none, the default); the "
                             "policy's cap is in tokens, WebArena's 1,920 (agentgym.max_obs_tokens, run.py "
                             "--max_obs_length)")
    parser.add_argument("--max-steps", type=int, default=30, help="actions per episode before truncation (30)")
    parser.add_argument("--parsing-failure-th", type=int, default=3,
                        help="consecutive unparseable actions that end the episode (3)")
    parser.add_argument("--repeating-action-failure-th", type=int, default=3,
                        help="identical consecutive actions that end the episode (3)")
    parser.add_argument("--show-link-urls", action="store_true",
                        help="keep the `url:` property current Chromium adds to links (WebArena's Chromium had none; "
                             "it lengthens observations a lot)")
    parser.add_argument("--no-url-mapping", action="store_true",
                        help="show the sites' real URLs instead of WebArena's public names (onestopmarket.com ...)")
    parser.add_argument("--action-timeout-ms", type=int, default=5000, help="timeout of each browser call")
    parser.add_argument("--auth-renew-before-s", type=float, default=EnvConfig.auth_renew_before_s,
                        help="real sites: log a context in at reset (and rewrite the task's .auth file) when a "
                             "cookie of that file expires within this many seconds (default: %(default)s)")
    parser.add_argument("--real-resets", action="store_true",
                        help="real sites: declare that your deployment is reset between episodes, so state-changing "
                             "tasks may run in parallel on one site (default: one at a time per site)")
    parser.add_argument("--site-lock-wait-s", type=float, default=EnvConfig.site_lock_wait_s,
                        help="real sites without --real-resets: how long a state-changing reset waits for a site "
                             "another env's state-changing episode holds before the 409 site_busy refusal "
                             "(default: %(default)s, refuse at once)")
    parser.add_argument("--judge-base-url", default=None,
                        help="OpenAI-compatible base URL of the LLM judge, e.g. http://127.0.0.1:8000/v1 (default "
                             "$WEBARENA_JUDGE_BASE_URL; none: judged tasks report eval_status needs_judge)")
    parser.add_argument("--judge-model", default=None,
                        help="judge model name (default $WEBARENA_JUDGE_MODEL, else gpt-4-1106-preview)")
    parser.add_argument("--judge-api-key", default=None,
                        help="judge bearer token (default $WEBARENA_JUDGE_API_KEY, else $OPENAI_API_KEY)")
    parser.add_argument("--judge-timeout-s", type=float, default=None,
                        help="bound on one judge request; past it the episode needs_judge (default "
                             "$WEBARENA_JUDGE_TIMEOUT_S, else 60)")
    args = parse(parser, argv)
    if args.task_file is not None and not os.path.exists(args.task_file):
        parser.error(f"--task-file {args.task_file!r} does not exist; give a WebArena task JSON or a directory "
                     "of {i}.json files, or leave it out for the embedded suite")
    for flag in ("max_steps", "parsing_failure_th", "repeating_action_failure_th", "viewport_width",
                 "viewport_height", "action_timeout_ms"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.max_obs_chars < 0:
        parser.error(f"--max-obs-chars must be >= 0, got {args.max_obs_chars}")
    if args.site_lock_wait_s < 0:
        parser.error(f"--site-lock-wait-s must be >= 0, got {args.site_lock_wait_s}")
    from agentenv_webarena.webarena.evaluation_harness.judge import judge_from_settings

    try:
        judge = judge_from_settings(args.judge_base_url, args.judge_model, args.judge_api_key, args.judge_timeout_s)
    except ValueError as exc:
        parser.error(str(exc))
    settings = settings_from_args(args)
    settings.max_action_chars = max(settings.max_action_chars, 8192)  # raw LLM text, reasoning included

    from agentenv_webarena.server import create_app

    browser = BrowserConfig(
        headless=not args.headful,
        viewport_width=args.viewport_width,
        viewport_height=args.viewport_height,
        current_viewport_only=args.current_viewport_only,
        max_obs_chars=args.max_obs_chars or None,
        action_timeout_ms=args.action_timeout_ms,
        extra_ignored_properties=() if args.show_link_urls else ("url",),
    )
    if args.chromium:
        browser.executable_path = args.chromium
    missing = install_problem(args.chromium, headless=browser.headless)
    if missing:
        sys.exit(missing)
    if args.check_browser:
        print(f"chromium: {browser.executable_path}", flush=True)
        return
    env_config = EnvConfig(
        task_file=args.task_file or "",
        max_steps=args.max_steps,
        parsing_failure_th=args.parsing_failure_th,
        repeating_action_failure_th=args.repeating_action_failure_th,
        map_urls=not args.no_url_mapping,
        auth_renew_before_s=args.auth_renew_before_s,
        real_resets=args.real_resets,
        site_lock_wait_s=args.site_lock_wait_s,
        browser=browser,
    )
    app = create_app(settings, env_config=env_config, judge=judge)
    serve(app, settings)


if __name__ == "__main__":
    main()
