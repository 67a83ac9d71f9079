"""Retry and timeout policy of the shared HTTP transport, against a real local HTTP server."""
import time

import pytest

from agentenv.controller import EnvClientError, EnvHttp


def make(server, **kw):
    kw.setdefault("timeout", 2.0)
    kw.setdefault("backoff_s", 0.01)
    return EnvHttp(server.url, **kw)


def test_get_returns_json_and_passes_params(scripted_server):
    scripted_server.routes["/observation"] = [(200, "page text", 0)]
    http = make(scripted_server)
    assert http.get("observation", params={"env_idx": 3}) == "page text"
    assert scripted_server.calls("/observation")[0][2] == "env_idx=3"


def test_get_is_retried_on_5xx_then_succeeds(scripted_server):
    scripted_server.routes["/observation"] = [(503, {}, 0), (500, {}, 0), (200, "ok", 0)]
    assert make(scripted_server, max_retries=3).get("observation") == "ok"
    assert len(scripted_server.calls("/observation")) == 3


def test_idempotent_post_retried_but_gives_up_with_url_and_status(scripted_server):
    scripted_server.routes["/reset"] = [(503, {"error": {"code": "busy"}}, 0)]
    with pytest.raises(EnvClientError) as info:
        make(scripted_server, max_retries=2).post("reset", {"env_idx": 0})
    assert info.value.status == 503 and info.value.url.endswith("/reset") and "busy" in info.value.body
    assert len(scripted_server.calls("/reset")) == 3


@pytest.mark.parametrize("path", ["step", "create"])
def test_non_idempotent_post_is_sent_exactly_once(scripted_server, path):
    scripted_server.routes[f"/{path}"] = [(503, {"error": {"code": "x"}}, 0), (200, 1, 0)]
    with pytest.raises(EnvClientError) as info:
        make(scripted_server, max_retries=5).post(path, {"env_idx": 0})
    assert info.value.status == 503
    assert len(scripted_server.calls(f"/{path}")) == 1


def test_4xx_is_never_retried(scripted_server):
    scripted_server.routes["/observation"] = [(404, {"error": {"code": "unknown_env_idx"}}, 0)]
    with pytest.raises(EnvClientError, match="404"):
        make(scripted_server, max_retries=3).get("observation")
    assert len(scripted_server.calls("/observation")) == 1


def test_timeout_is_honoured_and_step_not_resent(scripted_server):
    scripted_server.routes["/step"] = [(200, {"state": "late"}, 1.5)]
    http = make(scripted_server, timeout=0.3, max_retries=3)
    start = time.monotonic()
    with pytest.raises(EnvClientError, match="timed out") as info:
        http.post("step", {"env_idx": 0, "action": "click[x]"})
    assert time.monotonic() - start < 1.2
    assert info.value.status is None
    assert len(scripted_server.calls("/step")) == 1


def test_connection_refused_raises_env_client_error():
    http = EnvHttp("http://127.0.0.1:9", timeout=0.5, max_retries=1, backoff_s=0.01)
    with pytest.raises(EnvClientError, match="127.0.0.1:9"):
        http.get("observation")


def test_non_json_success_body_is_an_error(scripted_server):
    scripted_server.routes["/observation"] = [(200, b"<html>proxy page</html>", 0)]
    with pytest.raises(EnvClientError, match="non-JSON") as info:
        make(scripted_server).get("observation")
    assert info.value.status == 200 and "proxy page" in info.value.body


@pytest.mark.parametrize("kw", [{"timeout": 0}, {"timeout": -1}, {"max_retries": -1}])
def test_bad_settings_rejected(kw):
    with pytest.raises(ValueError):
        EnvHttp("http://127.0.0.1:1", **kw)
