"""Step 3: `python -m toy_env.launch --host 127.0.0.1 --port 36010`."""
from agentenv.server import build_arg_parser, parse, serve, settings_from_args


def main(argv=None) -> None:
    args = parse(build_arg_parser("toy echo environment server", default_port=36010), argv)
    from toy_env.server import create_app

    settings = settings_from_args(args)
    serve(create_app(settings), settings)


if __name__ == "__main__":
    main()
