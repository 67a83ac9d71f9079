"""The FastAPI app factory every env server is built on.

Owns what all env servers share: heavy resources loaded once in the lifespan hook (never at import
or per session), the `SessionRegistry` with its sweeper, the JSON error handlers, a request-body
size limit, fast JSON responses, and the generic routes every environment has:

| Method & path   | Request            | Response                                              |
|-----------------|--------------------|-------------------------------------------------------|
| GET  / (/health)| -                  | "ok" once the resources are loaded                    |
| GET  /list_envs | -                  | [int, ...] live ids, in creation order                |
| POST /create    | (no body)          | the new env_idx, as `create_answer` writes it          |
| POST /close     | {"env_idx": int}   | {"closed": true, "env_idx": int}                      |

A server adds only its own routes (an APIRouter): /reset, /step, /observation and whatever else
its API has, calling the typed `Session` methods (`agentenv.server.session`).
"""
from __future__ import annotations

import contextlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import anyio.to_thread
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentenv.server.errors import EnvServerError, error_body, install_error_handlers
from agentenv.server.models import EnvIdxRequest
from agentenv.server.session import check_session
from agentenv.server.session_registry import SessionRegistry

__all__ = ["ServerSettings", "create_env_app", "get_sessions", "get_resources", "get_settings", "json_response",
           "check_action"]

logger = logging.getLogger(__name__)

try:  # orjson is ~5x faster for our small payloads; plain json is the fallback
    import orjson

    def _dumps(obj: Any) -> bytes:
        return orjson.dumps(obj, default=_plain, option=orjson.OPT_SERIALIZE_NUMPY)
except ImportError:  # pragma: no cover - depends on the install
    def _dumps(obj: Any) -> bytes:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=_plain).encode("utf-8")


def _plain(obj: Any) -> Any:
    """JSON fallback for values an environment may hand back (numpy scalars, tuples, sets)."""
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


@dataclass
class ServerSettings:
    """Settings shared by all env servers (the launch flags of `agentenv.server.launch`).

    Attributes:
        host: interface to bind; 127.0.0.1 keeps the server private to this machine.
        port: TCP port.
        log_level: "critical" | "error" | "warning" | "info" | "debug" (debug also logs each request).
        max_sessions: live-session limit (503 when full); None = unlimited.
        session_ttl_s: idle seconds before a session is evicted; None = never.
        max_action_chars: longer actions are refused with 422 "action_too_long".
        max_body_bytes: larger request bodies are refused with 413 "body_too_large".
        keep_alive_s: idle seconds before the server closes a client's keep-alive connection. Long
            (uvicorn's default is 5 s) because agents think for seconds between steps, and a
            connection closed just as a /step is sent fails that step (steps are never retried).
        worker_threads: threadpool size for the plain-`def` handlers. CPU-bound servers (WebShop)
            want few (more threads only fight over the GIL); servers that wait on I/O (browsers) more.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    log_level: str = "info"
    max_sessions: Optional[int] = 100_000
    session_ttl_s: Optional[float] = 3600.0
    max_action_chars: int = 4096
    max_body_bytes: int = 1 << 20
    worker_threads: int = 8
    keep_alive_s: float = 300.0


def json_response(obj: Any, status_code: int = 200) -> Response:
    """Serialise `obj` straight to a JSON response (skips FastAPI's slower generic encoder)."""
    return Response(content=_dumps(obj), status_code=status_code, media_type="application/json")


# The dependency getters below are `async def` on purpose: they only read app.state, and FastAPI
# would run a plain `def` dependency in the threadpool (one extra thread hop per request).


async def get_sessions(request: Request) -> SessionRegistry:
    """The app's session registry (created in the lifespan hook)."""
    return request.app.state.sessions


async def get_resources(request: Request) -> Any:
    """The app's shared resources (what `load_resources` returned)."""
    return request.app.state.resources


async def get_settings(request: Request) -> ServerSettings:
    """The app's `ServerSettings`."""
    return request.app.state.settings


def check_action(action: str, settings: ServerSettings) -> None:
    """Refuse an action longer than `settings.max_action_chars` with 422 "action_too_long"."""
    if len(action) > settings.max_action_chars:
        raise EnvServerError(
            422, "action_too_long",
            f"action has {len(action)} characters; the limit is {settings.max_action_chars} "
            "(an agent action is one short search[...] or click[...] command)",
            length=len(action), max_chars=settings.max_action_chars,
        )


class _CatchAll:
    """ASGI middleware turning an unexpected exception into the 500 JSON error *without* re-raising.

    Starlette's own `Exception` handler re-raises after answering, which makes uvicorn drop the
    keep-alive connection; here the client gets its 500 and keeps its connection.
    """

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: dict) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            if started:  # too late for an error body; let the server close the connection
                raise
            logger.exception("unhandled error in %s %s", scope.get("method"), scope.get("path"))
            body = _dumps(error_body("internal_error", f"the server failed on {scope.get('method')} "
                                     f"{scope.get('path')}: {type(exc).__name__}: {str(exc)[:200]}; "
                                     "this is a server bug, please report it"))
            await send({"type": "http.response.start", "status": 500,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})


class _BodyLimit:
    """ASGI middleware refusing request bodies over the limit with the JSON 413 "body_too_large".

    A declared Content-Length is checked before anything is read; a chunked body is counted while
    the handler reads it (the HTTPException raised then goes through the JSON error handlers).
    """

    def __init__(self, app: Any, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    def _message(self, size: str) -> str:
        return f"request body of {size} bytes exceeds the limit of {self.max_bytes} bytes"

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                if value.isdigit() and int(value) > self.max_bytes:
                    body = _dumps(error_body("body_too_large", self._message(str(int(value))),
                                             max_bytes=self.max_bytes))
                    await send({"type": "http.response.start", "status": 413,
                                "headers": [(b"content-type", b"application/json"),
                                            (b"content-length", str(len(body)).encode())]})
                    await send({"type": "http.response.body", "body": body})
                    return
                await self.app(scope, receive, send)  # declared and small: no counting needed
                return
        seen = 0

        async def counting_receive() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise StarletteHTTPException(413, self._message(f"more than {self.max_bytes}"))
            return message

        await self.app(scope, counting_receive, send)


def _close_session(session: Any) -> None:
    session.close()


def _generic_router(create_answer: Callable[[int], Any], cheap_sessions: bool) -> APIRouter:
    """The routes every environment has: /list_envs, /create, /close (see the module docstring)."""
    router = APIRouter()

    @router.get("/list_envs")
    async def list_envs(request: Request) -> Response:
        """Ids of the live sessions, in creation order."""
        return json_response(request.app.state.sessions.ids())

    def create(request: Request) -> Response:
        """Open a session and return its id."""
        return json_response(create_answer(request.app.state.sessions.create()))

    async def create_on_loop(request: Request) -> Response:
        return create(request)

    create_on_loop.__doc__ = create.__doc__
    # A session that loads nothing is made on the event loop; one that may block (a browser) in the threadpool.
    router.add_api_route("/create", create_on_loop if cheap_sessions else create, methods=["POST"], name="create")

    @router.post("/close")
    def close(body: EnvIdxRequest, request: Request) -> Response:
        """Free the session (AgentGym's servers lack this endpoint); an unknown id is a 404."""
        request.app.state.sessions.close(body.env_idx)
        return json_response({"closed": True, "env_idx": body.env_idx})

    return router


def create_env_app(
    *,
    title: str,
    settings: ServerSettings,
    session_factory: Callable[[Any], Any],
    load_resources: Optional[Callable[[], Any]] = None,
    routers: Sequence[APIRouter] = (),
    close_resources: Optional[Callable[[Any], None]] = None,
    create_answer: Callable[[int], Any] = int,
    cheap_sessions: bool = False,
) -> FastAPI:
    """Build an env server app: the generic routes plus the server's own `routers`.

    Args:
        title: shown in the OpenAPI docs and logs.
        settings: shared server settings (limits, TTL).
        session_factory: `resources -> Session` (`agentenv.server.session`), called by
            `SessionRegistry.create` without the registry lock. Closing or evicting a session
            calls its `close()`.
        load_resources: called once at startup (lifespan), e.g. to load a catalog and search index.
        routers: the server's own endpoints; handlers that block must be plain `def`.
        close_resources: called once at shutdown, after every session is closed, with what
            `load_resources` returned (e.g. to stop a browser).
        create_answer: how /create writes the new env_idx (AgentGym's WebShop server answers a bare
            int, the default; its WebArena server `{"env_idx": int}`).
        cheap_sessions: True when building a session loads nothing, so /create runs on the event
            loop instead of the threadpool.

    Returns:
        A FastAPI app with `app.state.{settings, resources, sessions}` set during its lifespan.
    """

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.worker_threads
        start = time.perf_counter()
        resources = load_resources() if load_resources is not None else None
        logger.info("%s: resources loaded in %.2f s", title, time.perf_counter() - start)
        def new_session() -> Any:
            session = session_factory(resources)
            check_session(session)
            return session

        sessions = SessionRegistry(
            new_session,
            max_sessions=settings.max_sessions,
            ttl_s=settings.session_ttl_s,
            on_close=_close_session,
        )
        app.state.resources = resources
        app.state.sessions = sessions
        sessions.start_sweeper()
        try:
            yield
        finally:
            sessions.stop_sweeper()
            sessions.close_all()
            if close_resources is not None and resources is not None:
                close_resources(resources)

    app = FastAPI(title=title, lifespan=lifespan)
    app.state.settings = settings
    install_error_handlers(app)

    @app.get("/")
    async def health() -> Response:
        """Health check: answers "ok" once the resources are loaded."""
        return json_response("ok")

    app.add_api_route("/health", health, methods=["GET"], include_in_schema=False)
    app.include_router(_generic_router(create_answer, cheap_sessions))
    for router in routers:
        app.include_router(router)
    app.add_middleware(_CatchAll)
    app.add_middleware(_BodyLimit, max_bytes=settings.max_body_bytes)
    return app
