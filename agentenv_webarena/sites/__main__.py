"""Serve the embedded sites: `python -m agentenv_webarena.sites [--shopping-port 0 ...] [--urls-file F]`.

One process serves every site of `sites.apps.SITES`, each on its own port (0 picks a free port): the
shopping storefront, its admin side (under `/admin`, as WebArena's SHOPPING_ADMIN URL), the forum,
the code host, the map, the wiki and the homepage. It prints one JSON line
`{"shopping": URL, "shopping_admin": URL, "reddit": URL, "gitlab": URL, "map": URL, "wikipedia": URL,
"homepage": URL}` (and writes it to --urls-file) once every port listens. Export those URLs as
SHOPPING, SHOPPING_ADMIN, REDDIT, GITLAB, MAP, WIKIPEDIA and HOMEPAGE to point an env server (or
WebArena's own tools) at them. `--as-deployment` leaves out the per-env control routes, so an env server
takes the sites for a real WebArena deployment: one shared state that no reset restores.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import socket
from typing import Optional, Sequence

from agentenv_webarena.sites.apps import SITES, build_apps

logger = logging.getLogger("agentenv_webarena.sites")


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(512)
    sock.set_inheritable(True)
    return sock


async def _serve(host: str, ports: dict[str, int], urls_file: Optional[str], log_level: str,
                 control: bool = True) -> None:
    import uvicorn

    urls: dict[str, str] = {}
    store, apps = build_apps(site_urls=urls, control=control)  # the homepage links to `urls`, filled in below
    servers = []
    for site, app in apps.items():
        sock = _bind(host, ports.get(site, 0))
        port = sock.getsockname()[1]
        urls[site] = f"http://{host}:{port}" + SITES[site][1].rstrip("/")
        config = uvicorn.Config(app, log_level=log_level, access_log=log_level == "debug", lifespan="off",
                                timeout_keep_alive=300)
        server = uvicorn.Server(config)
        servers.append((server, sock))
    tasks = [asyncio.create_task(server.serve(sockets=[sock])) for server, sock in servers]
    while not all(server.started for server, _ in servers):
        if any(t.done() for t in tasks):
            for t in tasks:
                if t.done() and t.exception():
                    raise t.exception()
            raise SystemExit("an embedded site server stopped during start-up")
        await asyncio.sleep(0.02)
    line = json.dumps(urls)
    if urls_file:
        tmp = urls_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(line + "\n")
        os.replace(tmp, urls_file)
    print(line, flush=True)
    logger.info("embedded sites ready: %s", line)
    await asyncio.gather(*tasks)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Parse flags and serve until interrupted."""
    parser = argparse.ArgumentParser(
        description="WebArena-style embedded sites (shop, shop admin, forum, code host, map, wiki, homepage)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--shopping-port", type=int, default=0, help="storefront port (0 = any free port)")
    parser.add_argument("--admin-port", type=int, default=0, help="shop admin port (0 = any free port)")
    parser.add_argument("--forum-port", type=int, default=0, help="forum port (0 = any free port)")
    parser.add_argument("--gitlab-port", type=int, default=0, help="code host port (0 = any free port)")
    parser.add_argument("--map-port", type=int, default=0, help="map port (0 = any free port)")
    parser.add_argument("--wiki-port", type=int, default=0, help="wiki port (0 = any free port)")
    parser.add_argument("--homepage-port", type=int, default=0, help="homepage port (0 = any free port)")
    parser.add_argument("--urls-file", default=None, help="also write the URL JSON line to this file")
    parser.add_argument("--as-deployment", action="store_true",
                        help="serve without the /__control routes (per-env reset and drop): env servers then treat "
                             "the sites as a real WebArena deployment, whose state every env shares and no reset "
                             "restores")
    parser.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"))
    args = parser.parse_args(argv)
    flags = {"shopping": "shopping_port", "shopping_admin": "admin_port", "reddit": "forum_port",
             "gitlab": "gitlab_port", "map": "map_port", "wikipedia": "wiki_port", "homepage": "homepage_port"}
    for flag in flags.values():
        if not 0 <= getattr(args, flag) <= 65535:
            parser.error(f"--{flag.replace('_', '-')} must be in 0..65535, got {getattr(args, flag)}")
    logging.basicConfig(level=getattr(logging, args.log_level.upper()),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    ports = {site: getattr(args, flag) for site, flag in flags.items()}
    try:
        asyncio.run(_serve(args.host, ports, args.urls_file, args.log_level, control=not args.as_deployment))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
