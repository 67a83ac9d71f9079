"""WebshopEnvClient against a scripted local server: request shapes, invalid actions, close."""
import pytest

from agentenv.controller import EnvClientError, ResetResult, StepResult
from agentenv.envs import WebshopEnvClient, WebshopTask, webshop
from agentenv.envs.webshop import INVALID_ACTION_PREFIX


@pytest.fixture
def server(scripted_server):
    s = scripted_server
    s.routes["/create"] = [(200, 7, 0)]
    s.routes["/reset"] = [(200, ["WebShop [SEP] Instruction: [SEP] buy socks [SEP] Search", None], 0)]
    s.routes["/observation"] = [(200, "current page", 0)]
    s.routes["/step"] = [(200, {"state": "results page", "reward": 0.0, "done": False, "info": None}, 0)]
    s.routes["/close"] = [(200, {"closed": True, "env_idx": 7}, 0)]
    return s


def make(server, **kw):
    return WebshopEnvClient(server.url, data_len=100, timeout=2, **kw)


def test_create_reset_step_shapes(server):
    env = make(server)
    assert env.env_id == 7 and len(env) == 100
    assert env.conversation_start[0]["from"] == "human" and "search[" in env.conversation_start[0]["value"]
    assert env.conversation_start[1] == {"from": "gpt", "loss": False, "value": "Ok."}
    obs = env.reset(12)
    assert isinstance(obs, ResetResult) and obs.observation.startswith("WebShop") and obs.info == {}
    assert server.calls("/reset")[0][3] == {"env_idx": 7, "session_id": 12}
    out = env.step("Thought:\nI think I should search.\n\nAction:\nsearch[wool socks]</s>")
    assert out == StepResult(observation="results page", reward=0.0, terminated=False, truncated=False, info=None)
    assert out.state == "results page" and out.done is False  # AgentGym's names
    assert server.calls("/step")[0][3] == {"env_idx": 7, "action": "search[wool socks]"}
    assert env.observe() == "current page"
    assert server.calls("/observation")[0][2] == "env_idx=7"


def test_unparseable_action_does_not_call_server(server):
    env = make(server)
    env.reset(0)
    out = env.step("I have no idea")
    assert out.state.startswith(INVALID_ACTION_PREFIX) and out.state.endswith("Search")
    assert out.reward == 0.0 and out.done is False
    assert out.info["valid"] is False and "unparseable" in out.info["reason"]  # counted as a refused action
    assert server.calls("/step") == [] and server.calls("/observation") == []


def test_close_frees_session_once(server):
    env = make(server)
    env.close()
    env.close()
    assert [c[3] for c in server.calls("/close")] == [{"env_idx": 7}]
    with pytest.raises(EnvClientError, match="closed"):
        env.step("Action: click[x]")


def test_close_tolerates_404_from_servers_without_close(server):
    server.routes["/close"] = [(404, {"detail": "Not Found"}, 0)]
    with make(server) as env:
        pass
    assert len(server.calls("/close")) == 1
    assert env._closed


def test_step_failure_is_not_retried(server):
    server.routes["/step"] = [(500, {"error": {"code": "internal_error"}}, 0)]
    env = make(server, max_retries=4)
    with pytest.raises(EnvClientError) as info:
        env.step("Action: click[buy now]")
    assert info.value.status == 500
    assert len(server.calls("/step")) == 1


def test_create_failure_raises_env_client_error(server):
    server.routes["/create"] = [(503, {"error": {"code": "too_many_sessions"}}, 0)]
    with pytest.raises(EnvClientError, match="too_many_sessions"):
        make(server)


def test_unknown_action_format_is_rejected(server):
    with pytest.raises(ValueError, match="react"):
        make(server, action_format="telepathy")


def test_task_generate_experience_plays_until_done(server):
    server.routes["/step"] = [
        (200, {"state": "results", "reward": 0.0, "done": False, "info": None}, 0),
        (200, {"state": "Thank you", "reward": 0.75, "done": True, "info": None}, 0),
    ]
    actions = iter(["Action: search[socks]", "Action: click[buy now]"])
    with WebshopTask({"env_server_base": server.url, "data_len": 10, "timeout": 2}, n_clients=1) as task:
        [exp] = task.generate_experience(lambda conv: next(actions), idxs=[3], max_rounds=5)
    assert exp.item_idx == 3 and exp.reward == 0.75 and exp.done and exp.num_rounds == 2
    turns = [m["from"] for m in exp.conversation]
    assert turns == ["human", "gpt", "human", "gpt", "human", "gpt", "human"]
    # the first observation is the one the reset returned (typed ResetResult): no extra GET /observation
    assert exp.conversation[2]["value"] == "WebShop [SEP] Instruction: [SEP] buy socks [SEP] Search"
    assert server.calls("/observation") == []
    assert len(server.calls("/close")) == 1


def test_task_max_rounds_truncates(server):
    with WebshopTask({"env_server_base": server.url, "data_len": 10, "timeout": 2}) as task:
        [exp] = task.generate_experience(lambda conv: "Action: click[next >]", idxs=[0], max_rounds=3)
    assert exp.num_rounds == 3 and not exp.done


def test_reset_recreates_a_session_the_server_evicted(server):
    env = make(server)
    server.routes["/reset"] = [
        (404, {"error": {"code": "unknown_env_idx", "message": "evicted"}}, 0),
        (200, ["WebShop [SEP] fresh", None], 0),
    ]
    server.routes["/create"] = [(200, 8, 0)]
    assert env.reset(4) == ResetResult(observation="WebShop [SEP] fresh")
    assert env.env_id == 8
    assert [c[3] for c in server.calls("/reset")] == [{"env_idx": 7, "session_id": 4}, {"env_idx": 8, "session_id": 4}]


def test_reset_does_not_hide_other_errors(server):
    env = make(server, max_retries=0)
    server.routes["/reset"] = [(422, {"error": {"code": "session_id_out_of_range"}}, 0)]
    with pytest.raises(EnvClientError, match="session_id_out_of_range"):
        env.reset(10 ** 6)
    assert len(server.calls("/create")) == 1


@pytest.mark.parametrize("fmt,text,action", [
    ("function_calling", '{"thought": "t", "function_name": "search", "arguments": {"keywords": "red mug"}}',
     "search[red mug]"),
    ("code_as_action", 'I pick it.\n```python\nclick("Buy Now")\n```', "click[Buy Now]"),
])
def test_other_action_formats_map_to_webshop_actions(server, fmt, text, action):
    env = make(server, action_format=fmt)
    expected = {"function_calling": webshop.WEBSHOP_FUNCTION_CALLING_INSTRUCTION,
                "code_as_action": webshop.WEBSHOP_CODE_AS_ACTION_INSTRUCTION}[fmt]
    assert env.conversation_start[0]["value"] == expected and env.conversation_start[1]["value"] == "Ok."
    env.reset(0)
    env.step(text)
    assert server.calls("/step")[-1][3] == {"env_idx": 7, "action": action}
    assert env.step("search[red mug]").state.startswith(INVALID_ACTION_PREFIX)  # ReAct text is not a call here
