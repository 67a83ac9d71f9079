"""Start the WebShop server: `python -m agentenv_webshop.launch --host 127.0.0.1 --port 36001 [--data-dir D]`.

Without --data-dir the embedded catalog shipped in agentenv_webshop/data is served.
"""
from __future__ import annotations

import os
from typing import Optional, Sequence

from agentenv.server import build_arg_parser, hide_accelerators, parse, serve, settings_from_args

__all__ = ["main"]


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Parse flags, build the app and serve it until interrupted (CPU-only: see `hide_accelerators`)."""
    hide_accelerators()
    parser = build_arg_parser("AgentGym-compatible WebShop environment server", default_port=36001)
    parser.add_argument("--data-dir", default=None,
                        help="folder with WebShop's items_shuffle*.json / items_ins_v2*.json / items_human_ins.json "
                             "(default: the embedded catalog)")
    parser.add_argument("--num-products", type=int, default=None, help="use only the first N products")
    parser.add_argument("--human-goals", action="store_true", help="use human-written instructions as goals")
    parser.add_argument("--cache-dir", default=None, help="where the search index is cached on disk")
    args = parse(parser, argv)
    if args.data_dir is not None and not os.path.isdir(args.data_dir):
        parser.error(f"--data-dir {args.data_dir!r} is not a directory; point it at WebShop's data folder "
                     "or leave it out to serve the embedded catalog")
    if args.num_products is not None and args.num_products < 1:
        parser.error(f"--num-products must be >= 1, got {args.num_products}")
    settings = settings_from_args(args)

    from agentenv_webshop.server import create_app

    app = create_app(settings, data_dir=args.data_dir, num_products=args.num_products,
                     human_goals=args.human_goals, cache_dir=args.cache_dir)
    serve(app, settings)


if __name__ == "__main__":
    main()
