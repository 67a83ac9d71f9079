"""The app factory and the one JSON error schema, on a tiny fake env server built with the kit."""
import logging

import pytest
from fastapi import APIRouter, Depends
from fastapi.testclient import TestClient

from agentenv.server import (
    ResetResult,
    ServerSettings,
    SessionRegistry,
    StepRequest,
    StepResult,
    check_action,
    create_env_app,
    get_resources,
    get_sessions,
    json_response,
)


class CounterEnv:
    """A `Session`: counts its steps; closing it records it in `closed`."""

    def __init__(self, resources, closed):
        self.resources = resources
        self.count = 0
        self.closed_list = closed

    def reset(self, idx):
        self.count = 0
        return ResetResult(observation="start")

    def step(self, action):
        if action == "crash":
            raise RuntimeError("bug in env")
        self.count += 1
        return StepResult(observation=f"{action} #{self.count}", reward=0.0, terminated=False)

    def observe(self):
        return f"#{self.count}"

    def close(self):
        self.closed_list.append(self)


def build_app(loads, closed, **settings):
    router = APIRouter()  # the server's own routes; /create, /list_envs and /close come from the kit

    @router.post("/step")
    def step(body: StepRequest, sessions: SessionRegistry = Depends(get_sessions), res=Depends(get_resources)):
        check_action(body.action, ServerSettings(**settings))
        with sessions.use(body.env_idx) as env:
            return json_response({"state": env.step(body.action).observation, "catalog": res["name"]})

    def load():
        loads.append(1)
        return {"name": "shared"}

    return create_env_app(title="fake", settings=ServerSettings(**settings),
                          session_factory=lambda res: CounterEnv(res, closed), load_resources=load, routers=[router])


@pytest.fixture
def client():
    loads, closed = [], []
    app = build_app(loads, closed, max_sessions=2, max_action_chars=20)
    assert loads == []  # nothing heavy happens when the app is built (import time)
    with TestClient(app, raise_server_exceptions=False) as c:
        c.loads, c.closed = loads, closed
        yield c


def error_of(response, status, code):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code and body["error"]["message"]
    return body["error"]


def test_health_and_resources_loaded_once(client):
    assert client.get("/").json() == "ok" and client.get("/health").json() == "ok"
    a, b = client.post("/create").json(), client.post("/create").json()
    assert (a, b) == (0, 1) and client.loads == [1]
    assert client.post("/step", json={"env_idx": 1, "action": "go"}).json() == {"state": "go #1", "catalog": "shared"}


def test_limit_unknown_and_validation_errors(client):
    client.post("/create"), client.post("/create")
    error_of(client.post("/create"), 503, "too_many_sessions")
    err = error_of(client.post("/step", json={"env_idx": 9, "action": "go"}), 404, "unknown_env_idx")
    assert err["env_idx"] == 9
    err = error_of(client.post("/step", json={"env_idx": "0", "action": ["go"]}), 422, "invalid_request")
    assert {tuple(p["loc"]) for p in err["problems"]} == {("body", "env_idx"), ("body", "action")}
    error_of(client.post("/step", json={"action": "go"}), 422, "invalid_request")
    err = error_of(client.post("/step", json={"env_idx": 0, "action": "x" * 21}), 422, "action_too_long")
    assert err["max_chars"] == 20 and err["length"] == 21


@pytest.mark.parametrize(
    "raw", [b'{"env_idx": 0, ', b"\xff\xfe\xfa\x00garbage", b'{"env_idx": 0, "action": "\xe9t\xe9"}']
)
def test_malformed_and_non_utf8_bodies_are_400(client, raw):
    client.post("/create")
    error_of(client.post("/step", content=raw, headers={"content-type": "application/json"}), 400, "malformed_json")
    # the server keeps serving and the session is untouched
    assert client.post("/step", json={"env_idx": 0, "action": "go"}).json()["state"] == "go #1"


def test_unknown_route_method_and_huge_body(client):
    error_of(client.get("/nope"), 404, "not_found")
    error_of(client.get("/step"), 405, "method_not_allowed")
    error_of(client.post("/step", content=b"{" + b" " * (2 << 20) + b"}",
                         headers={"content-type": "application/json"}), 413, "body_too_large")
    chunks = (b" " * 65536 for _ in range(40))  # no Content-Length: chunked transfer, counted while read
    error_of(client.post("/step", content=chunks, headers={"content-type": "application/json"}), 413, "body_too_large")


def test_unexpected_exception_is_500_json_and_server_survives(caplog):
    # raise_server_exceptions=True (the default): the 500 must be answered, not re-raised, so that
    # uvicorn keeps the client's keep-alive connection open
    with TestClient(build_app([], [])) as client:
        client.post("/create")
        with caplog.at_level(logging.ERROR):
            err = error_of(client.post("/step", json={"env_idx": 0, "action": "crash"}), 500, "internal_error")
        assert "RuntimeError" in err["message"] and "bug in env" in caplog.text
        assert client.post("/step", json={"env_idx": 0, "action": "go"}).status_code == 200


def test_lone_surrogate_action_is_422_not_500(client):
    client.post("/create")
    raw = b'{"env_idx": 0, "action": "search[\\ud800]"}'
    err = error_of(client.post("/step", content=raw, headers={"content-type": "application/json"}), 422,
                   "invalid_request")
    assert "surrogate" in err["message"] and err["problems"][0]["loc"] == ["body", "action"]


def test_shutdown_closes_live_sessions():
    loads, closed = [], []
    with TestClient(build_app(loads, closed)) as c:
        ids = [c.post("/create").json() for _ in range(3)]
        assert ids == [0, 1, 2] and closed == []
    assert len(closed) == 3 and all(isinstance(env, CounterEnv) for env in closed)


def test_json_response_handles_values_envs_return():
    import json

    import numpy as np

    body = json.loads(json_response({"reward": np.float32(0.5), "done": np.bool_(True), "ids": (1, 2)}).body)
    assert body == {"reward": 0.5, "done": True, "ids": [1, 2]}
    with pytest.raises(TypeError):
        json_response({"x": object()})


def test_generic_routes_list_close_and_create_answer():
    with TestClient(build_app([], [])) as client:
        ids = [client.post("/create").json() for _ in range(3)]
        assert client.get("/list_envs").json() == ids
        assert client.post("/close", json={"env_idx": ids[1]}).json() == {"closed": True, "env_idx": ids[1]}
        assert client.get("/list_envs").json() == [ids[0], ids[2]]
        error_of(client.post("/close", json={"env_idx": ids[1]}), 404, "unknown_env_idx")
    app = create_env_app(title="obj", settings=ServerSettings(), session_factory=lambda res: CounterEnv(res, []),
                         create_answer=lambda env_idx: {"env_idx": env_idx})
    with TestClient(app) as client:
        assert client.post("/create").json() == {"env_idx": 0}


def test_a_session_without_the_contract_is_refused_at_create():
    class NoObserve:
        def reset(self, idx):
            return ResetResult("x")

        def step(self, action):
            return StepResult("x", 0.0, False)

        def close(self):
            pass

    app = create_env_app(title="bad", settings=ServerSettings(), session_factory=lambda res: NoObserve())
    with TestClient(app, raise_server_exceptions=False) as client:
        err = error_of(client.post("/create"), 500, "internal_error")
        assert "NoObserve" in err["message"] and "observe" in err["message"]
