"""Start the WebArena server: `python -m agentenv_webarena.launch --port 36005 [--task-file F] [...]`.

Site URLs come from WebArena's environment variables (SHOPPING, SHOPPING_ADMIN, REDDIT, GITLAB, MAP,
WIKIPEDIA, HOMEPAGE). When none is set the server starts the embedded sites itself and serves the
embedded task suite (`agentenv_webarena/tasks/embedded.raw.json`). To drive a real WebArena
deployment, export its URLs and pass `--task-file path/to/test.raw.json` (or a directory of `{i}.json`).
The LLM judge for fuzzy_match / N/A tasks is any OpenAI-compatible endpoint (`--judge-base-url`,
`--judge-model`, or WEBARENA_JUDGE_BASE_URL / OPENAI_BASE_URL, WEBARENA_JUDGE_MODEL, OPENAI_API_KEY);
without one, such tasks report `info.eval_status == "needs_judge"`.
"""
from __future__ import annotations

import os
from typing import Optional, Sequence

from agentenv.server import build_arg_parser, hide_accelerators, parse, serve, settings_from_args

__all__ = ["main"]


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Parse flags, build the app and serve it until interrupted (CPU-only: see `hide_accelerators`)."""
    hide_accelerators()
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
    parser.add_argument("--headful", action="store_true", help="show the browser windows (needs a display)")
    parser.add_argument("--viewport-width", type=int, default=1280)
    parser.add_argument("--viewport-height", type=int, default=720)
    parser.add_argument("--current-viewport-only", action="store_true",
                        help="observe only the elements inside the viewport (WebArena run.py's setting)")
    parser.add_argument("--max-obs-chars", type=int, default=0,
                        help="cap the accessibility tree at this many characters (0 = no cap)")
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
    parser.add_argument("--judge-base-url", default=None, help="OpenAI-compatible base URL of the LLM judge")
    parser.add_argument("--judge-model", default=None, help="judge model name (default gpt-4-1106-preview)")
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
    settings = settings_from_args(args)
    settings.max_action_chars = max(settings.max_action_chars, 8192)  # raw LLM text, reasoning included

    from agentenv_webarena.server import create_app
    from agentenv_webarena.webarena.browser_env import BrowserConfig
    from agentenv_webarena.webarena.evaluation_harness.judge import LLMJudge

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
    env_config = EnvConfig(
        task_file=args.task_file or "",
        max_steps=args.max_steps,
        parsing_failure_th=args.parsing_failure_th,
        repeating_action_failure_th=args.repeating_action_failure_th,
        map_urls=not args.no_url_mapping,
        auth_renew_before_s=args.auth_renew_before_s,
        browser=browser,
    )
    judge = LLMJudge.from_env()
    if args.judge_base_url:
        judge = LLMJudge(base_url=args.judge_base_url, api_key=os.environ.get("WEBARENA_JUDGE_API_KEY")
                         or os.environ.get("OPENAI_API_KEY", ""),
                         model=args.judge_model or os.environ.get("WEBARENA_JUDGE_MODEL", "gpt-4-1106-preview"))
    elif judge is not None and args.judge_model:
        judge.model = args.judge_model
    app = create_app(settings, env_config=env_config, judge=judge)
    serve(app, settings)


if __name__ == "__main__":
    main()
