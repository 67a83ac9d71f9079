"""The WebShop HTTP server: AgentGym's WebShop API on the shared server kit.

Owns only the mapping of HTTP onto `agentenv_webshop.environment` (one shared `WebshopWorld`
per process, loaded at startup; one small `WebshopSession` per env_idx). Endpoints, with the
same request/response shapes as AgentGym's server so its client works unchanged (GET /, /list_envs,
/create and /close are the kit's generic routes, `agentenv.server.app`):

| Method & path                   | Request                              | Response                              |
|---------------------------------|--------------------------------------|---------------------------------------|
| GET  /                          | -                                    | "ok"                                  |
| GET  /list_envs                 | -                                    | [int, ...] live ids                   |
| POST /create                    | (no body)                            | int (new env_idx, sequential from 0)  |
| POST /reset                     | {"env_idx": int, "session_id": int?} | [observation, null]                   |
| POST /step                      | {"env_idx": int, "action": str}      | {"state", "reward", "done", "info"}   |
| GET  /observation?env_idx=N     | -                                    | str                                   |
| GET  /available_actions?env_idx | -                                    | {"has_search_bar", "clickables"}      |
| GET  /instruction_text?env_idx  | -                                    | str                                   |
| GET  /state?env_idx=N           | -                                    | {"url", "html", "instruction_text"}   |
| POST /close                     | {"env_idx": int}                     | {"closed": true, "env_idx": int}      |

Errors use the kit's JSON schema: unknown env_idx -> 404 "unknown_env_idx"; session_id outside
[0, num_goals) -> 422 "session_id_out_of_range"; wrong JSON types -> 422 "invalid_request";
body not JSON/UTF-8 -> 400 "malformed_json"; action over the length limit -> 422
"action_too_long". An empty or unparseable action is not an HTTP error: as in WebShop it is a
no-op step (same page, reward 0, done false). A session used before any /reset is lazily reset
to a weighted-random goal, as AgentGym's server does at /create.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from agentenv.server import (
    EnvServerError,
    ResetRequest,
    ServerSettings,
    SessionRegistry,
    StepRequest,
    check_action,
    create_env_app,
    get_sessions,
    json_response,
)

__all__ = ["create_app", "router"]

logger = logging.getLogger(__name__)

# The kit mounts GET /, /list_envs, /create and /close; these are WebShop's own routes. Every
# handler that touches a session's state is a plain `def` (threadpool).
router = APIRouter()


def _ensure_reset(env: Any) -> Any:
    if env.goal is None:
        env.reset(None)
    return env


def _num_goals(request: Request) -> int:
    return request.app.state.resources.num_goals


@router.post("/reset")
def reset(body: ResetRequest, request: Request, sessions: SessionRegistry = Depends(get_sessions)) -> Response:
    """Start goal `session_id` (None: a weighted-random goal); returns [observation, null]."""
    num_goals = _num_goals(request)
    if body.session_id is not None and not 0 <= body.session_id < num_goals:
        raise EnvServerError(
            422, "session_id_out_of_range",
            f"session_id {body.session_id} is out of range: this server has {num_goals} goals, "
            f"so use 0..{num_goals - 1} (or null for a random goal)",
            session_id=body.session_id, valid_range=[0, num_goals - 1],
        )
    with sessions.use(body.env_idx) as env:
        try:
            result = env.reset(body.session_id)
        except ValueError as exc:
            raise EnvServerError(422, "invalid_session_id", str(exc), session_id=body.session_id) from exc
    return json_response([result.observation, None])


@router.post("/step")
def step(body: StepRequest, request: Request, sessions: SessionRegistry = Depends(get_sessions)) -> Response:
    """Apply one `search[...]`/`click[...]` action; returns {state, reward, done, info}."""
    check_action(body.action, request.app.state.settings)
    with sessions.use(body.env_idx) as env:
        result = _ensure_reset(env).step(body.action)
    return json_response({"state": result.observation, "reward": result.reward, "done": result.done,
                          "info": result.info})


def _add_session_reader(path: str, read: Callable[[Any], Any], doc: str) -> None:
    """GET `path`?env_idx=N -> `read(session)` as JSON (the session must have been reset)."""

    def endpoint(env_idx: int = Query(...), sessions: SessionRegistry = Depends(get_sessions)) -> Response:
        with sessions.use(env_idx) as env:
            return json_response(read(_ensure_reset(env)))

    endpoint.__doc__ = doc
    router.add_api_route(path, endpoint, methods=["GET"], name=path.strip("/"), description=doc)


for _path, _read, _doc in (
    ("/observation", lambda env: env.observe(), "Current page text."),
    ("/available_actions", lambda env: env.available_actions(),
     '{"has_search_bar": bool, "clickables": [str]} for the current page.'),
    ("/instruction_text", lambda env: env.instruction_text, "The goal instruction of the session."),
    ("/state", lambda env: env.state(), '{"url", "html", "instruction_text"} of the current page.'),
):
    _add_session_reader(_path, _read, _doc)


def create_app(
    settings: Optional[ServerSettings] = None,
    *,
    data_dir: Optional[str] = None,
    num_products: Optional[int] = None,
    human_goals: bool = False,
    cache_dir: Optional[str] = None,
    world_loader: Optional[Callable[[], Any]] = None,
    session_factory: Optional[Callable[[Any], Any]] = None,
) -> Any:
    """Build the WebShop app; the world (catalog, index, goals) loads once at startup.

    Args:
        settings: kit settings (limits, TTL); defaults to `ServerSettings()`.
        data_dir, num_products, human_goals, cache_dir: passed to `WebshopWorld.load`.
        world_loader: replaces `WebshopWorld.load` (tests); must return an object with `num_goals`.
        session_factory: replaces `WebshopSession` (tests); `world -> Session`.
    """
    settings = settings or ServerSettings()

    def load_world() -> Any:
        if world_loader is not None:
            return world_loader()
        from agentenv_webshop.environment import WebshopWorld

        world = WebshopWorld.load(data_dir=data_dir, num_products=num_products, human_goals=human_goals,
                                  cache_dir=cache_dir)
        logger.info("WebShop world ready: %d goals", world.num_goals)
        return world

    if session_factory is None:
        def session_factory(world: Any) -> Any:
            from agentenv_webshop.environment import WebshopSession

            return WebshopSession(world)

    return create_env_app(
        title="agentenv WebShop server",
        settings=settings,
        session_factory=session_factory,
        load_resources=load_world,
        routers=[router],
        cheap_sessions=True,  # a WebshopSession loads nothing: /create runs on the event loop
    )
