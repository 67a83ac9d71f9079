"""Common launch flags of every env server."""
import pytest

from agentenv.server import build_arg_parser, parse, settings_from_args


def test_defaults_are_private_and_bounded():
    settings = settings_from_args(parse(build_arg_parser("x", default_port=36001), []))
    assert settings.host == "127.0.0.1" and settings.port == 36001 and settings.log_level == "info"
    assert settings.max_sessions == 100_000 and settings.session_ttl_s == 3600.0
    assert settings.max_action_chars == 4096 and settings.worker_threads == 8


def test_flags_and_zero_means_unlimited():
    args = parse(build_arg_parser("x", default_port=1), [
        "--host", "0.0.0.0", "--port", "9", "--log-level", "DEBUG", "--max-sessions", "0",
        "--session-ttl", "0", "--max-action-chars", "100", "--worker-threads", "2"])
    s = settings_from_args(args)
    assert (s.host, s.port, s.log_level, s.max_sessions, s.session_ttl_s, s.max_action_chars, s.worker_threads) == \
        ("0.0.0.0", 9, "debug", None, None, 100, 2)


@pytest.mark.parametrize("argv,flag", [
    (["--max-sessions", "-1"], "--max-sessions"),
    (["--session-ttl", "-5"], "--session-ttl"),
    (["--worker-threads", "0"], "--worker-threads"),
    (["--log-level", "loud"], "--log-level"),
])
def test_bad_flags_exit_naming_the_flag(argv, flag, capsys):
    with pytest.raises(SystemExit):
        parse(build_arg_parser("x", default_port=1), argv)
    assert flag in capsys.readouterr().err
