"""The WebArena HTTP server: AgentGym's WebArena API on the shared server kit.

Owns only the mapping of HTTP onto `agentenv_webarena.environment` (one `WebarenaWorld` per
process: tasks, the embedded sites, one Chromium; one `WebarenaSession` per env_idx: a browser
context). Endpoints, with the request/response shapes of AgentGym's WebArena server (GET /,
/list_envs, /create and /close are the kit's generic routes, `agentenv.server.app`):

| Method & path              | Request               | Response                                                     |
|----------------------------|-----------------------|--------------------------------------------------------------|
| GET  /                     | -                     | "ok"                                                         |
| GET  /list_envs            | -                     | [int, ...] live ids                                          |
| POST /create               | (no body)             | {"env_idx": int}                                             |
| POST /reset                | {"env_idx", "idx"}    | {"observation", "sites", "object", "task_id", "info"}        |
| POST /step                 | {"env_idx", "action"} | {"observation", "reward", "terminated", "truncated", "info"} |
| GET  /observation          | ?env_idx=N            | str (OBSERVATION / URL / OBJECTIVE / PREVIOUS ACTION)        |
| GET  /observation_metadata | ?env_idx=N            | {"obs_nodes_info", "url", "display_url", "tabs"}             |
| GET  /screenshot           | ?env_idx=N            | {"png_base64": str} (the current tab's viewport)             |
| GET  /tasks                | -                     | {"num_tasks", "site_urls", "embedded", "judge", "state_guard"} |
| POST /close                | {"env_idx": int}      | {"closed": true, "env_idx": int}                             |

/reset also takes an optional "seed"; /step's "action" is the raw LLM text.
The /reset observation is in the same prompt layout as /step's, so a client needs one request per
reset. Errors use the kit's JSON schema: unknown env_idx -> 404 "unknown_env_idx"; task index out of
range -> 422 "task_index_out_of_range"; a task needing an unconfigured site -> 422
"site_not_configured"; /step or /observation before /reset -> 409 "not_reset"; on a real deployment, a
state-changing task whose site another env's state-changing episode is using -> 409 "site_busy" (the body
names `site` and the `holder` episode: `env_idx`, `task_index`, `task_id`); a start page that
cannot be opened (site down) -> 502 "start_page_failed"; a browser that does not answer in time ->
504 "browser_timeout"; wrong JSON types -> 422 "invalid_request".
An unparseable action or an unknown element id is not an HTTP error: the observation says what
was wrong. Every handler that touches a browser is a plain `def` (threadpool); the browser work
itself runs on the world's one asyncio loop.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from pydantic import StrictInt

from agentenv.server import (
    EnvIdxRequest,
    EnvServerError,
    ServerSettings,
    SessionRegistry,
    StepRequest,
    check_action,
    create_env_app,
    get_sessions,
    json_response,
)

__all__ = ["create_app", "router", "WebarenaResetRequest"]

logger = logging.getLogger(__name__)

router = APIRouter()


class WebarenaResetRequest(EnvIdxRequest):
    """POST /reset body: `{"env_idx": int, "seed": int?, "idx": int}` (idx = task index)."""

    seed: Optional[StrictInt] = None
    idx: StrictInt


def _call(fn: Callable[[], Any]) -> Any:
    """Run an environment call, turning its expected failures into JSON errors."""
    from agentenv_webarena.environment import EpisodeStateError, StartPageError, TaskIndexError
    from agentenv_webarena.site_locks import SiteBusyError

    try:
        return fn()
    except SiteBusyError as exc:
        raise EnvServerError(409, "site_busy", str(exc), site=exc.site, holder=exc.holder.describe()) from exc
    except StartPageError as exc:
        raise EnvServerError(502, "start_page_failed", str(exc)) from exc
    except TaskIndexError as exc:
        raise EnvServerError(422, "task_index_out_of_range", str(exc)) from exc
    except EpisodeStateError as exc:
        raise EnvServerError(409, "not_reset", str(exc)) from exc
    except TimeoutError as exc:
        raise EnvServerError(504, "browser_timeout", f"the browser did not answer in time: {exc}") from exc
    except ValueError as exc:  # e.g. a placeholder whose site URL is not configured
        raise EnvServerError(422, "site_not_configured", str(exc)) from exc


@router.get("/tasks")
async def tasks(request: Request) -> Response:
    """How many tasks this server has, which sites it drives, its LLM judge's model (None: no judge) and
    whether state-changing episodes run one at a time per site (`state_guard`: on, and the sites held)."""
    world = request.app.state.resources
    return json_response({"num_tasks": world.num_tasks, "site_urls": world.config.site_urls,
                          "embedded": world.config.embedded,
                          "judge": world.judge.model if world.judge is not None else None,
                          "state_guard": {"on": world.guards_state, "held": world.site_locks.held()}})


@router.post("/reset")
def reset(body: WebarenaResetRequest, sessions: SessionRegistry = Depends(get_sessions)) -> Response:
    """Start task `idx`: restore site state, fresh browser context, log in, open the start tabs."""
    with sessions.use(body.env_idx) as env:
        env.env_idx = body.env_idx
        result = _call(lambda: env.reset(body.idx))
    return json_response({"observation": result.observation, **result.info})


@router.post("/step")
def step(body: StepRequest, request: Request, sessions: SessionRegistry = Depends(get_sessions)) -> Response:
    """Apply one action (raw LLM text; the first ``` block is the action)."""
    check_action(body.action, request.app.state.settings)
    with sessions.use(body.env_idx) as env:
        result = _call(lambda: env.step(body.action))
    return json_response({"observation": result.observation, "reward": result.reward,
                          "terminated": result.terminated, "truncated": result.truncated, "info": result.info})


@router.get("/observation")
def observation(env_idx: int = Query(...), sessions: SessionRegistry = Depends(get_sessions)) -> Response:
    """The current observation in WebArena's prompt layout."""
    with sessions.use(env_idx) as env:
        return json_response(_call(env.observe))


@router.get("/observation_metadata")
def observation_metadata(env_idx: int = Query(...), sessions: SessionRegistry = Depends(get_sessions)) -> Response:
    """Element metadata of the current observation (id -> role, name, bounds, backend id)."""
    with sessions.use(env_idx) as env:
        return json_response(_call(env.observation_metadata))


@router.get("/screenshot")
def screenshot(env_idx: int = Query(...), sessions: SessionRegistry = Depends(get_sessions)) -> Response:
    """A PNG of the current tab's viewport, base64-encoded."""
    import base64

    with sessions.use(env_idx) as env:
        png = _call(env.screenshot)
    return json_response({"png_base64": base64.b64encode(png).decode("ascii")})


def create_app(settings: Optional[ServerSettings] = None, env_config: Any = None, judge: Any = None) -> Any:
    """Build the WebArena app; tasks, embedded sites and Chromium start once, at startup.

    Args:
        settings: kit settings (limits, TTL, threads); defaults to `ServerSettings()`.
        env_config: `agentenv_webarena.environment.EnvConfig` (tasks, sites, browser, limits).
        judge: an `LLMJudge` for fuzzy_match / N/A tasks, or None.
    """
    from agentenv_webarena.environment import EnvConfig, WebarenaSession, WebarenaWorld

    settings = settings or ServerSettings(max_sessions=64, session_ttl_s=1800.0, worker_threads=32,
                                          max_action_chars=8192)
    env_config = env_config or EnvConfig()

    def load_world() -> Any:
        return WebarenaWorld.load(env_config, judge=judge)

    def close_world(world: Any) -> None:
        world.close()

    return create_env_app(
        title="agentenv WebArena server",
        settings=settings,
        session_factory=WebarenaSession,
        load_resources=load_world,
        routers=[router],
        close_resources=close_world,
        create_answer=lambda env_idx: {"env_idx": env_idx},  # AgentGym's WebArena server answers an object
    )
