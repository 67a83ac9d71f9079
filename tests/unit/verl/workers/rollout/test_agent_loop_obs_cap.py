"""The agent loop cuts every observation with the env client's hook (`agentgym.max_obs_tokens`, tokens of
the policy's tokenizer) before it enters the chat: what the messages record, what the engine is given and
what is trained on are the same cut text (WebArena: the tree is cut, URL / OBJECTIVE / PREVIOUS ACTION kept)."""
import numpy as np
import pytest

from agentenv.controller import BaseEnvClient, HFTokenCodec, ResetResult, StepResult, cut_to_tokens
from agentenv.envs.webarena import OBSERVATION_LAYOUT, WebarenaEnvClient
from verl.protocol import DataProto
from verl.workers.rollout.agent_loop import AgentLoop


def _obs(page: int, previous: str = "None") -> str:
    tree = "\n".join([f"Tab 0 (current): Page {page}", "", f"[1] RootWebArea 'Page {page}' focused: True"]
                     + [f"\t[{i}] link 'Item {i} on page {page}'" for i in range(2, 120)]
                     + [f"\t[120] StaticText 'ANSWER-AT-THE-END-{page}'"])
    return (f"OBSERVATION:\n{tree}\nURL: http://onestopmarket.com/p{page}\nOBJECTIVE: find the answer\n"
            f"PREVIOUS ACTION: {previous}")


class FakeWebarena(BaseEnvClient):
    """In-process stand-in for WebarenaEnvClient: WebArena's layout and cut, done after 2 steps."""

    conversation_start = WebarenaEnvClient.conversation_start
    default_max_obs_tokens = WebarenaEnvClient.default_max_obs_tokens

    def __init__(self):
        super().__init__()
        self.t = 0

    @classmethod
    def cap_observation(cls, text, codec, max_tokens):
        return WebarenaEnvClient.cap_observation(text, codec, max_tokens)

    def __len__(self):
        return 10

    def observe(self):
        return _obs(self.t)

    def reset(self, idx):
        self.t = 0
        return ResetResult(observation=_obs(0))

    def step(self, action):
        self.t += 1
        return StepResult(observation=_obs(self.t, "click [2]"), reward=1.0 if self.t >= 2 else 0.0,
                          terminated=self.t >= 2)

    def close(self):
        pass


def _run(tokenizer, engine, **agentgym):
    loop = AgentLoop(engine, tokenizer, {"max_tokens": 16, "temperature": 1.0, "max_model_len": 16384},
                     {"task_name": "webarena", "max_rounds": 3, **agentgym},
                     {"max_prompt_length": 4096, "max_response_length": 8192}, env_client_factory=FakeWebarena)
    batch = DataProto.from_dict(non_tensors={"item_id": np.array(["webarena_0"], dtype=object)},
                                meta_info={"max_rounds": 3, "global_step": 0})
    try:
        return loop, loop.run(batch)
    finally:
        loop.close()


def _script(tokenizer):
    ids = tokenizer.encode("```click [2]```", add_special_tokens=False) + [tokenizer.eos_token_id]
    return lambda prompt_ids, sampling: (ids, "stop")


def test_the_policy_sees_and_is_trained_on_the_cut_observation(tokenizer, scripted_engine_cls):
    engine = scripted_engine_cls(_script(tokenizer))
    loop, out = _run(tokenizer, engine, max_obs_tokens=60)
    codec = HFTokenCodec(tokenizer)
    shown = [WebarenaEnvClient.cap_observation(_obs(k, "None" if k == 0 else "click [2]"), codec, 60)
             for k in range(3)]
    for k, text in enumerate(shown):
        fields = OBSERVATION_LAYOUT.match(text)
        assert fields["observation"] == cut_to_tokens(_obs(k).split("\n", 1)[1].rsplit("\nURL:", 1)[0], codec, 60)
        assert fields["url"] == f"http://onestopmarket.com/p{k}" and fields["objective"] == "find the answer"
        assert "ANSWER-AT-THE-END" not in text
    messages = out.non_tensor_batch["messages"][0]
    users = [m["content"] for m in messages if m["role"] == "user"][1:]  # [0] is the instruction
    assert users == shown  # the first observation too
    assert list(out.non_tensor_batch["anchor_obs"][0]) == shown[:2]
    # what the engine was given is what is trained on, and it holds the cut text, not the full page
    full = out.batch["input_ids"][0][out.batch["attention_mask"][0] == 1].tolist()
    for prompt_ids, _, gen in engine.calls:
        assert full[: len(prompt_ids) + len(gen.token_ids)] == prompt_ids + gen.token_ids
    text = tokenizer.decode(full)
    for k in range(2):
        assert shown[k] in text
    assert "ANSWER-AT-THE-END" not in text
    prompt = tokenizer.encode(tokenizer.apply_chat_template(messages[:4], tokenize=False, add_generation_prompt=True),
                              add_special_tokens=False)
    assert full[: len(prompt)] == prompt


@pytest.mark.parametrize("max_obs_tokens, cut", [(None, True), (0, False)])
def test_default_is_the_env_benchmark_cap_and_zero_turns_it_off(tokenizer, scripted_engine_cls, max_obs_tokens, cut):
    loop, out = _run(tokenizer, scripted_engine_cls(_script(tokenizer)), max_obs_tokens=max_obs_tokens)
    assert loop.max_obs_tokens == (1920 if max_obs_tokens is None else 0)
    first = [m["content"] for m in out.non_tensor_batch["messages"][0] if m["role"] == "user"][1]
    # the tiny tokenizer spends more than 1,920 tokens on this page: the default (WebArena's) cuts it
    assert len(tokenizer.encode(_obs(0), add_special_tokens=False)) > 1920
    assert ("ANSWER-AT-THE-END-0" not in first) == cut and first.endswith("PREVIOUS ACTION: None")


def test_interaction_rows_get_the_env_clients_cut(tokenizer):
    from verl.interactions import interaction_client_factory
    from verl.interactions.base import BaseInteraction

    codec = HFTokenCodec(tokenizer)
    client = interaction_client_factory(BaseInteraction({}), "webarena")()
    assert client.default_max_obs_tokens == 1920
    assert client.cap_observation(_obs(1), codec, 60) == WebarenaEnvClient.cap_observation(_obs(1), codec, 60)
    assert client.cap_observation(_obs(1), codec, 60).endswith("PREVIOUS ACTION: None")
    plain = interaction_client_factory(BaseInteraction({}), "webshop")()
    assert plain.cap_observation(_obs(1), codec, 60) == cut_to_tokens(_obs(1), codec, 60)


def test_the_key_is_checked():
    from verl.config.schema import AgentGymConfig

    assert AgentGymConfig().max_obs_tokens is None and AgentGymConfig(max_obs_tokens=0).max_obs_tokens == 0
    with pytest.raises(ValueError, match="actor_rollout_ref.agentgym.max_obs_tokens"):
        AgentGymConfig(max_obs_tokens=-1)


def test_trajectories_stop_at_the_models_positions_not_past_them(tokenizer, scripted_engine_cls, caplog):
    """rollout.max_model_len above the engine model's max_position_embeddings: the loop uses the model's limit
    (and says so) instead of generating past the positions the model was trained on."""
    engine = scripted_engine_cls(_script(tokenizer))
    loop, out = _run(tokenizer, engine, max_obs_tokens=60)  # positions unknown: the config's value stands
    full = int(out.batch["attention_mask"].sum())
    assert loop.max_model_len == 16384 and not caplog.text

    engine.max_positions = full - 20
    with caplog.at_level("WARNING", logger="verl.workers.rollout.agent_loop"):
        loop, out = _run(tokenizer, engine, max_obs_tokens=60)
    assert loop.max_model_len == full - 20
    assert f"rollout.max_model_len=16384 is longer than the model's {full - 20} positions" in caplog.text
    assert int(out.batch["attention_mask"].sum()) <= full - 20 < full
