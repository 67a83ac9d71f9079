"""Step 2: the server on the kit; the kit mounts GET /, /list_envs, /create and /close."""
from __future__ import annotations

from typing import Optional

from fastapi import APIRouter, Depends, Query
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
    get_settings,
    json_response,
)
from toy_env.environment import EchoSession

router = APIRouter()


class ResetBody(EnvIdxRequest):
    idx: Optional[StrictInt] = None


@router.post("/reset")
def reset(body: ResetBody, sessions: SessionRegistry = Depends(get_sessions)):
    with sessions.use(body.env_idx) as env:
        try:
            result = env.reset(body.idx)
        except ValueError as exc:
            raise EnvServerError(422, "item_out_of_range", str(exc), idx=body.idx) from exc
    return json_response({"observation": result.observation})


@router.post("/step")
def step(body: StepRequest, sessions: SessionRegistry = Depends(get_sessions),
         settings: ServerSettings = Depends(get_settings)):
    check_action(body.action, settings)
    with sessions.use(body.env_idx) as env:
        r = env.step(body.action)
    return json_response({"observation": r.observation, "reward": r.reward, "terminated": r.terminated,
                          "truncated": r.truncated, "info": r.info})


@router.get("/observation")
def observation(env_idx: int = Query(...), sessions: SessionRegistry = Depends(get_sessions)):
    with sessions.use(env_idx) as env:
        return json_response(env.observe())


def create_app(settings: Optional[ServerSettings] = None):
    return create_env_app(title="toy echo server", settings=settings or ServerSettings(),
                          session_factory=lambda resources: EchoSession(), routers=[router], cheap_sessions=True)
