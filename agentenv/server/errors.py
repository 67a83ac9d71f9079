"""The one server exception type and the handlers that give every failure one JSON shape.

Every error answer of every env server has the body
    {"error": {"code": "<snake_case>", "message": "<what was wrong and what to do>", ...details}}
This covers our own `EnvServerError`, FastAPI's request validation errors (422, or 400 for a body
that is not JSON / not UTF-8), unknown routes and methods (404/405), and unexpected exceptions
(500, logged with a traceback; the server keeps serving).
"""
from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

__all__ = ["EnvServerError", "error_body", "install_error_handlers"]

logger = logging.getLogger(__name__)

_MAX_ECHO_CHARS = 200  # never echo more of a bad input than this into an error body


class EnvServerError(Exception):
    """A request the server refuses, with its HTTP status and a stable machine-readable code.

    Args:
        status: HTTP status (4xx for bad requests, 503 when full).
        code: snake_case identifier clients can branch on, e.g. "unknown_env_idx".
        message: what was wrong, the offending value, and what to do.
        **details: extra JSON-serialisable fields added to the error object.
    """

    def __init__(self, status: int, code: str, message: str, **details: Any):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


def error_body(code: str, message: str, **details: Any) -> dict[str, Any]:
    """Build the JSON error body `{"error": {"code", "message", ...details}}`."""
    return {"error": {"code": code, "message": message, **details}}


def _echo(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "backslashreplace")
    if isinstance(value, str):  # lone surrogates would make the error body itself unencodable
        value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, str) and len(value) > _MAX_ECHO_CHARS:
        return value[:_MAX_ECHO_CHARS] + f"... ({len(value)} chars)"
    if isinstance(value, (int, float, bool)) or value is None or isinstance(value, str):
        return value
    return _echo(repr(value))


async def _env_server_error(request: Request, exc: EnvServerError) -> JSONResponse:
    logger.debug("%s %s -> %d %s: %s", request.method, request.url.path, exc.status, exc.code, exc.message)
    return JSONResponse(error_body(exc.code, exc.message, **exc.details), status_code=exc.status)


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return JSONResponse(
            error_body("malformed_json", "the request body is not valid UTF-8 JSON; send a JSON object such as "
                       '{"env_idx": 0, "action": "search[shoes]"}'),
            status_code=400,
        )
    problems = [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": e.get("msg", ""), "type": e.get("type", ""),
         "input": _echo(e.get("input"))}
        for e in errors
    ]
    summary = "; ".join(f"{'.'.join(p['loc'])}: {p['msg']} (got {p['input']!r})" for p in problems)
    return JSONResponse(
        error_body("invalid_request", f"{request.method} {request.url.path}: {summary}", problems=problems),
        status_code=422,
    )


_HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    code = _HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
    if exc.status_code == 404:
        message = f"no route {request.method} {request.url.path}; see the server's API table (GET /docs)"
    elif exc.status_code == 405:
        message = f"{request.url.path} does not accept {request.method}"
    elif exc.status_code == 400:
        # FastAPI raises a bare 400 when the body cannot be decoded at all (e.g. not UTF-8).
        code = "malformed_json"
        message = f"the request body could not be parsed ({exc.detail}); send UTF-8 JSON"
    else:
        message = str(exc.detail)
    return JSONResponse(error_body(code, message), status_code=exc.status_code, headers=getattr(exc, "headers", None))


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unhandled error in %s %s", request.method, request.url.path)
    return JSONResponse(
        error_body("internal_error", f"the server failed on {request.method} {request.url.path}: "
                   f"{type(exc).__name__}: {_echo(str(exc))}; this is a server bug, please report it"),
        status_code=500,
    )


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every failure into the one JSON error schema."""
    app.add_exception_handler(EnvServerError, _env_server_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)
