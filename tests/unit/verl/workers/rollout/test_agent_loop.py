"""AgentLoop against a fake in-process env client: exact masks over several turns, ids trained ==
ids sampled, reward on the last model token, truncated turns, round/token limits, env failures."""
import json
import logging
import threading

import numpy as np
import pytest
import torch

from agentenv.controller import EnvClientError, ResetResult, StepResult
from verl.protocol import DataProto
from verl.workers.rollout.agent_loop import AgentLoop

START = ({"from": "human", "loss": None, "value": "You are web shopping. Reply with Thought and Action."},
         {"from": "gpt", "loss": False, "value": "Ok."})


class FakeEnv:
    """In-process stand-in for WebshopEnvClient: done after `done_after` steps with `reward`."""

    conversation_start = START
    instances = []
    lock = threading.Lock()

    def __init__(self, done_after=3, reward=0.75, fail_step_for=(), fail_reset_for=()):
        self.done_after, self.reward = done_after, reward
        self.fail_step_for, self.fail_reset_for = set(fail_step_for), set(fail_reset_for)
        self.actions, self.closed, self.idx = [], False, None
        with FakeEnv.lock:
            FakeEnv.instances.append(self)

    def reset(self, idx):
        if idx in self.fail_reset_for:
            raise EnvClientError("POST http://fake/reset failed to connect", url="http://fake/reset")
        self.idx, self.t = idx, 0
        return ResetResult(observation=f"WebShop [SEP] Instruction: [SEP] goal {idx} [SEP] Search")

    def step(self, action):
        if self.idx in self.fail_step_for:
            raise EnvClientError("POST http://fake/step timed out", url="http://fake/step")
        self.t += 1
        self.actions.append(action)
        done = self.t >= self.done_after
        return StepResult(observation=f"page {self.t} of goal {self.idx}", reward=self.reward if done else 0.0,
                          terminated=done)

    def close(self):
        self.closed = True


def _batch(n, max_rounds=5, **meta):
    ids = np.array([f"webshop_{i}" for i in range(n)], dtype=object)
    uid = np.array([f"u{i // 2}" for i in range(n)], dtype=object)
    return DataProto.from_dict(non_tensors={"item_id": ids, "uid": uid},
                               meta_info={"max_rounds": max_rounds, "global_step": 3, **meta})


def _loop(engine, tokenizer, factory=FakeEnv, max_tokens=32, P=256, R=512, **rollout):
    cfg = {"max_tokens": max_tokens, "temperature": 1.0, "max_model_len": 8192, "max_concurrency": 8, **rollout}
    return AgentLoop(engine, tokenizer, cfg, {"task_name": "webshop", "max_rounds": 5},
                     {"max_prompt_length": P, "max_response_length": R}, env_client_factory=factory)


def _action_script(tokenizer, eos=True):
    ids = tokenizer.encode("Thought:\nI think I should buy.\n\nAction:\nclick[buy now]", add_special_tokens=False)

    def script(prompt_ids, sampling):
        return (ids + [tokenizer.eos_token_id] if eos else ids + ids), "stop" if eos else "length"
    return ids, script


def test_exact_masks_and_reward_over_several_turns(tokenizer, scripted_engine_cls):
    action_ids, script = _action_script(tokenizer)
    eng = scripted_engine_cls(script)
    loop = _loop(eng, tokenizer)
    out = loop.run(_batch(2))
    assert not any(k.startswith("rollout/engine_") for k in out.meta_info)  # an engine without decode counters
    eos = tokenizer.eos_token_id
    for i in range(2):
        msgs = [{"role": "system", "content": loop.system_prompt}, {"role": "user", "content": START[0]["value"]},
                {"role": "assistant", "content": "Ok."},
                {"role": "user", "content": f"WebShop [SEP] Instruction: [SEP] goal {i} [SEP] Search"}]
        prompt = tokenizer.encode(tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True),
                                  add_special_tokens=False)
        model_turn = action_ids + [eos]
        obs = [tokenizer.encode(f"\n<|im_start|>user\npage {k} of goal {i}<|im_end|>\n<|im_start|>assistant\n",
                                add_special_tokens=False) for k in (1, 2)]
        expect = model_turn + obs[0] + model_turn + obs[1] + model_turn
        mask = ([1] * len(model_turn) + [0] * len(obs[0]) + [1] * len(model_turn) + [0] * len(obs[1])
                + [1] * len(model_turn))
        L = len(expect)
        P = 256
        assert out.batch["prompts"][i, P - len(prompt):].tolist() == prompt
        assert (out.batch["prompts"][i, : P - len(prompt)] == tokenizer.pad_token_id).all()
        assert out.batch["responses"][i, :L].tolist() == expect
        assert out.batch["response_mask"][i].tolist() == mask + [0] * (512 - L)
        assert out.batch["attention_mask"][i].tolist() == (
            [0] * (P - len(prompt)) + [1] * (len(prompt) + L) + [0] * (512 - L)
        )
        am = out.batch["attention_mask"][i]
        assert out.batch["position_ids"][i].tolist() == (am.cumsum(0) - 1).clamp(min=0).tolist()
        assert torch.equal(out.batch["input_ids"][i], torch.cat([out.batch["prompts"][i], out.batch["responses"][i]]))
        scores = out.batch["token_level_scores"][i]
        assert scores[L - 1] == pytest.approx(0.75) and scores.abs().sum() == pytest.approx(0.75)
        lp = out.batch["rollout_log_probs"][i]
        expect_lp = [-0.01 * (k + 1) for k in range(len(model_turn))]
        assert lp[: len(model_turn)].tolist() == pytest.approx(expect_lp)
        assert (lp[torch.tensor(mask + [0] * (512 - L)) == 0] == 0).all()
    nt = out.non_tensor_batch
    assert list(nt["num_turns"]) == [3, 3] and list(nt["reward"]) == [0.75, 0.75]
    assert list(nt["turn_rewards"][0]) == [0.0, 0.0, 0.75] and not nt["success"][0]
    assert list(nt["terminated"]) == [True, True] and list(nt["truncated"]) == [False, False]
    assert list(nt["env_error"]) == ["", ""] and list(nt["uid"]) == ["u0", "u0"]
    assert nt["messages"][0][-2] == {"role": "assistant",
                                     "content": "Thought:\nI think I should buy.\n\nAction:\nclick[buy now]"}
    # every generate call saw exactly the trained context: prompt + response prefix
    prompts = [out.batch["prompts"][i][out.batch["attention_mask"][i, :256] == 1].tolist() for i in range(2)]
    for prompt_ids, _, gen in eng.calls:
        row = [i for i in range(2) if prompt_ids[: len(prompts[i])] == prompts[i]]
        assert len(row) == 1, "a generate call's context matches no trajectory prompt"
        full = out.batch["input_ids"][row[0]][out.batch["attention_mask"][row[0]] == 1].tolist()
        assert full[: len(prompt_ids) + len(gen.token_ids)] == prompt_ids + gen.token_ids
    assert out.meta_info["timing_s/rollout"] > 0 and "rollout/env_wait_frac" in out.meta_info
    loop.close()


def test_ids_trained_equal_ids_sampled_with_hf_engine(tiny_model_dir, tokenizer):
    from transformers import AutoModelForCausalLM

    from verl.workers.rollout.hf_rollout import HFEngine

    class Recording(HFEngine):
        calls = []

        async def generate(self, prompt_ids, sampling):
            out = await super().generate(prompt_ids, sampling)
            self.calls.append((list(prompt_ids), out))
            return out

    eng = Recording(tiny_model_dir)
    loop = _loop(eng, tokenizer, max_tokens=12, R=160, temperature=0.8)
    try:
        out = loop.run(_batch(3, max_rounds=4))
    finally:
        eng.shutdown()
        loop.close()
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    b = out.batch
    for i in range(3):
        mask = b["response_mask"][i].bool()
        trained = b["responses"][i][mask].tolist()
        prompt = b["prompts"][i][b["attention_mask"][i, :256] == 1].tolist()
        mine = [o for p, o in eng.calls if p[: len(prompt)] == prompt]
        assert trained == [t for o in mine for t in o.token_ids]
        # log-probs recomputed by a forward pass over the TRAINING input equal the rollout's
        with torch.no_grad():
            logits = model(input_ids=b["input_ids"][i:i + 1], attention_mask=b["attention_mask"][i:i + 1],
                           position_ids=b["position_ids"][i:i + 1]).logits[0, 255:-1].float() / 0.8
        ref = torch.log_softmax(logits, -1).gather(1, b["responses"][i][:, None]).squeeze(1)
        torch.testing.assert_close(ref[mask], b["rollout_log_probs"][i][mask], atol=3e-4, rtol=0)
        assert out.non_tensor_batch["num_turns"][i] >= 1
    assert eng.stats["reused_tokens"] > 0  # later turns reused the KV of earlier ones
    m = out.meta_info  # the engine's batching and speed during this rollout (3 trajectories at most at once)
    assert 1.0 <= m["rollout/engine_rows_per_step"] <= 3.0 and m["rollout/engine_step_ms"] > 0
    assert 0.0 < m["rollout/engine_busy_frac"] <= 1.0
    assert (b["responses"].shape[1] == 160) and int(b["attention_mask"][:, 256:].sum(1).max()) <= 160


class RefusingEnv(FakeEnv):
    """FakeEnv whose first step is refused (info valid=false), as the WebShop client and server say so."""

    def step(self, action):
        out = super().step(action)
        if self.t == 1:
            return StepResult(observation=out.observation, reward=0.0, terminated=False,
                              info={"valid": False, "reason": "not clickable"})
        return out


def test_refused_actions_are_counted_per_trajectory(tokenizer, scripted_engine_cls):
    _, script = _action_script(tokenizer)
    loop = _loop(scripted_engine_cls(script), tokenizer, factory=RefusingEnv)
    out = loop.run(_batch(2))
    assert list(out.non_tensor_batch["invalid_actions"]) == [1, 1]
    assert list(out.non_tensor_batch["num_turns"]) == [3, 3]
    assert out.meta_info["rollout/invalid_action_rate"] == pytest.approx(2 / 6)
    plain = _loop(scripted_engine_cls(script), tokenizer).run(_batch(2))
    assert list(plain.non_tensor_batch["invalid_actions"]) == [0, 0]
    assert plain.meta_info["rollout/invalid_action_rate"] == 0


def test_truncated_turn_gets_closing_tokens_with_mask_zero(tokenizer, scripted_engine_cls):
    action_ids, script = _action_script(tokenizer, eos=False)
    eng = scripted_engine_cls(script)
    loop = _loop(eng, tokenizer, max_tokens=len(action_ids) + 3)
    out = loop.run(_batch(1, max_rounds=2))
    turn = (action_ids + action_ids)[: len(action_ids) + 3]
    closing = tokenizer.encode("<|im_end|>\n<|im_start|>user\npage 1 of goal 0<|im_end|>\n<|im_start|>assistant\n",
                               add_special_tokens=False)
    L = 2 * len(turn) + len(closing)
    assert out.batch["responses"][0, :L].tolist() == turn + closing + turn
    assert out.batch["response_mask"][0, :L].tolist() == [1] * len(turn) + [0] * len(closing) + [1] * len(turn)
    assert tokenizer.eos_token_id not in out.batch["responses"][0][out.batch["response_mask"][0] == 1].tolist()
    nt = out.non_tensor_batch
    assert nt["truncated"][0] and not nt["terminated"][0] and nt["num_turns"][0] == 2  # round limit
    assert len(FakeEnv.instances[-1].actions) == 2  # the cut-off turns were still sent to the env
    loop.close()


def test_token_budget_stops_the_trajectory(tokenizer, scripted_engine_cls):
    action_ids, script = _action_script(tokenizer)
    eng = scripted_engine_cls(script)
    R = len(action_ids) + 1 + 20  # one full turn, then not enough room for the next observation + turn
    loop = _loop(eng, tokenizer, R=R)
    out = loop.run(_batch(2, max_rounds=10))
    m = out.batch["response_mask"]
    assert out.batch["responses"].shape == (2, R)
    assert list(out.non_tensor_batch["truncated"]) == [True, True]
    assert all(int(m[i].sum()) <= R for i in range(2))
    last = int(m[0].nonzero().max())
    assert out.batch["token_level_scores"][0].abs().sum() == 0  # not done: last-step reward 0
    assert out.batch["attention_mask"][0, 256:][last + 1:].sum() == 0  # nothing after the last model token
    loop.close()


def test_env_failures_fail_only_their_trajectories(tokenizer, scripted_engine_cls, caplog):
    _, script = _action_script(tokenizer)
    eng = scripted_engine_cls(script)
    made = []

    def factory():
        env = FakeEnv(fail_step_for={1}, fail_reset_for={2})
        made.append(env)
        return env

    loop = _loop(eng, tokenizer, factory=factory)
    with caplog.at_level(logging.WARNING):
        out = loop.run(_batch(4))
    nt = out.non_tensor_batch
    assert nt["env_error"][0] == "" and nt["env_error"][3] == ""
    assert "timed out" in nt["env_error"][1] and "failed to connect" in nt["env_error"][2]
    assert list(nt["reward"]) == [0.75, 0.0, 0.0, 0.75]
    assert out.batch["token_level_scores"][1:3].abs().sum() == 0
    # neither is trained on: the step that failed had sampled tokens, but the env failed, not the policy
    assert out.batch["response_mask"][2].sum() == 0 and out.batch["response_mask"][1].sum() == 0
    assert out.batch["responses"][1].ne(tokenizer.pad_token_id).any()  # the tokens are still there
    assert list(nt["uid"]) == ["u0", "u0#env_error1", "u1#env_error2", "u1"]  # out of their groups
    assert out.meta_info["rollout/env_errors"] == 2
    assert any("2/4 trajectories failed" in r.getMessage() for r in caplog.records)
    failed_envs = [e for e in made if e.idx == 1 or (e.idx is None)]
    assert failed_envs and all(e.closed for e in failed_envs)  # broken sessions are closed, not pooled
    assert len(loop.pool) == 2  # healthy sessions went back to the pool
    loop.close()
    assert all(e.closed for e in made)


def test_sessions_reused_across_steps_and_dumps(tokenizer, scripted_engine_cls, tmp_path):
    _, script = _action_script(tokenizer)
    eng = scripted_engine_cls(script)
    loop = _loop(eng, tokenizer, rollout_log_dir=str(tmp_path))
    loop.run(_batch(3))
    created = loop.pool.created
    loop.run(_batch(3))
    assert loop.pool.created == created and loop.pool.reused >= 3
    rows = [json.loads(line) for line in open(tmp_path / "step3.jsonl")]
    assert len(rows) == 6 and rows[0]["turns"] == 3 and rows[0]["reward"] == 0.75
    assert rows[0]["messages"][3]["content"].startswith("WebShop [SEP]")
    loop.close()


def test_validation_is_greedy_and_single_turn_rows(tokenizer, scripted_engine_cls):
    _, script = _action_script(tokenizer)
    eng = scripted_engine_cls(script)
    loop = _loop(eng, tokenizer, val_kwargs={"temperature": 0.0})
    loop.run(_batch(1, validate=True))
    assert all(s.temperature == 0 and s.greedy for _, s, _ in eng.calls)
    rows = np.empty(2, dtype=object)
    rows[0] = [{"role": "user", "content": "What is 2+2?"}]
    rows[1] = [{"role": "user", "content": "What is 3+3?"}]
    batch = DataProto.from_dict(non_tensors={"prompt": rows, "uid": np.array(["a", "b"], dtype=object),
                                             "reward_model": np.array([{"ground_truth": "4"}, {"ground_truth": "6"}],
                                                                      dtype=object)})
    out = loop.run(batch)
    assert list(out.non_tensor_batch["num_turns"]) == [1, 1]
    assert out.non_tensor_batch["reward_model"][0] == {"ground_truth": "4"}
    m = out.batch["response_mask"][0]
    assert int(m.sum()) == int(out.batch["attention_mask"][0, 256:].sum())  # single turn: all model tokens
    loop.close()


def test_wrong_task_prefix_is_a_clear_error(tokenizer, scripted_engine_cls):
    _, script = _action_script(tokenizer)
    loop = _loop(scripted_engine_cls(script), tokenizer)
    batch = DataProto.from_dict(non_tensors={"item_id": np.array(["webarena_3"], dtype=object)})
    with pytest.raises(ValueError, match="agentgym.task_name='webshop'"):
        loop.run(batch)
    loop.close()


def test_other_stop_token_keeps_full_turn_closing(tokenizer, scripted_engine_cls):
    action_ids, _ = _action_script(tokenizer)
    other = tokenizer.pad_token_id  # <|endoftext|>: a stop id that is not the template's end-of-turn

    def script(prompt_ids, sampling):
        assert other in sampling.stop_token_ids and tokenizer.eos_token_id in sampling.stop_token_ids
        return action_ids + [other], "stop"

    loop = _loop(scripted_engine_cls(script), tokenizer, stop_token_ids=[other])
    out = loop.run(_batch(1, max_rounds=2))
    closing = tokenizer.encode("<|im_end|>\n<|im_start|>user\npage 1 of goal 0<|im_end|>\n<|im_start|>assistant\n",
                               add_special_tokens=False)
    turn = action_ids + [other]
    L = 2 * len(turn) + len(closing)
    assert out.batch["responses"][0, :L].tolist() == turn + closing + turn
    assert out.batch["response_mask"][0, :L].tolist() == [1] * len(turn) + [0] * len(closing) + [1] * len(turn)
    loop.close()


def test_rollout_is_reproducible_for_a_seed(tiny_model_dir, tokenizer):
    from verl.workers.rollout.hf_rollout import HFEngine

    eng = HFEngine(tiny_model_dir)
    loop = _loop(eng, tokenizer, max_tokens=8, R=96)
    try:
        a = loop.run(_batch(3, max_rounds=3))
        b = loop.run(_batch(3, max_rounds=3))  # same step -> same seeds (batching and KV cache state differ)
        c = loop.run(_batch(3, max_rounds=3, global_step=4))
    finally:
        eng.shutdown()
        loop.close()
    assert torch.equal(a.batch["responses"], b.batch["responses"])
    torch.testing.assert_close(a.batch["rollout_log_probs"], b.batch["rollout_log_probs"], atol=2e-4, rtol=0)
    assert not torch.equal(a.batch["responses"], c.batch["responses"])


def test_stop_token_sampled_at_max_tokens_counts_as_a_stop(tokenizer, scripted_engine_cls):
    """vLLM reports an end-of-turn token sampled exactly at max_tokens as "length"; the turn did end."""
    action_ids, _ = _action_script(tokenizer)
    eng = scripted_engine_cls(lambda p, s: (action_ids + [tokenizer.eos_token_id], "length"))
    loop = _loop(eng, tokenizer, max_tokens=len(action_ids) + 1)  # the EOS is the last token allowed
    out = loop.run(_batch(1, max_rounds=2))
    closing = tokenizer.encode("\n<|im_start|>user\npage 1 of goal 0<|im_end|>\n<|im_start|>assistant\n",
                               add_special_tokens=False)
    turn = action_ids + [tokenizer.eos_token_id]
    L = 2 * len(turn) + len(closing)
    assert out.batch["responses"][0, :L].tolist() == turn + closing + turn  # one <|im_end|>, not two
    assert out.batch["response_mask"][0, :L].tolist() == [1] * len(turn) + [0] * len(closing) + [1] * len(turn)
    assert len(FakeEnv.instances[-1].actions) == 2  # both actions reached the env
    loop.close()


@pytest.mark.parametrize("masked_head", [True, False])
def test_copy_only_rollout_log_probs_equal_the_actors_under_the_same_rule(tiny_model_dir, tokenizer, masked_head):
    """rollout.copy_only_tokens over several turns: no turn emits a copy-only token absent from its context,
    and the actor's log-probs under CopyOnlyRule equal the engine's (without the rule they do not)."""
    from transformers import AutoModelForCausalLM

    from verl.config.schema import ActorConfig, from_dict
    from verl.workers.agent_actor.dp_actor import DataParallelPPOActor
    from verl.workers.copy_only import CopyOnlyRule, copy_only_token_ids
    from verl.workers.rollout.hf_rollout import HFEngine

    pattern = r"[A-Za-z]+"  # most word tokens: a random policy puts much of its mass on them
    eng = HFEngine(tiny_model_dir)
    loop = _loop(eng, tokenizer, max_tokens=12, R=160, temperature=0.8, copy_only_tokens=pattern)
    try:
        out = loop.run(_batch(3, max_rounds=4))
    finally:
        eng.shutdown()
        loop.close()
    ids = copy_only_token_ids(tokenizer, pattern)
    b = out.batch
    for i in range(3):
        seq, mask = b["input_ids"][i].tolist(), [0] * 256 + b["response_mask"][i].tolist()
        seen = set(seq[:256])
        for t in range(256, len(seq)):
            if mask[t] and not mask[t - 1]:  # a turn begins: it may copy what came before it
                seen = set(seq[:t])
            if mask[t]:
                assert seq[t] not in ids or seq[t] in seen
    cfg = from_dict(ActorConfig, dict(ppo_mini_batch_size=3, ppo_micro_batch_size_per_gpu=2, ppo_epochs=1,
                                      policy_loss={"loss_mode": "vanilla"}, loss_agg_mode="token-mean"),
                    "actor_rollout_ref.actor")
    actor = DataParallelPPOActor(cfg, AutoModelForCausalLM.from_pretrained(tiny_model_dir).float().eval())
    actor.head_on_response_mask = masked_head
    out.meta_info["temperature"] = 0.8
    mask = b["response_mask"].bool()
    free, _ = actor.compute_log_prob(out, calculate_entropy=False)
    actor.copy_only = CopyOnlyRule(ids)
    ruled, entropy = actor.compute_log_prob(out, calculate_entropy=True)
    torch.testing.assert_close(ruled[mask], b["rollout_log_probs"][mask], atol=3e-4, rtol=0)
    assert (free[mask] - b["rollout_log_probs"][mask]).abs().max() > 0.05
    assert torch.isfinite(entropy[mask]).all()


def test_a_turn_ends_at_the_actions_end_and_the_closing_is_added_unmasked(tokenizer, scripted_engine_cls):
    """With an engine that honours stop rules, a turn whose text runs on after `click[buy now]` ends on the
    token that closes the action (WebShop's `action_end`): the env gets the action, nothing after it is in the
    response, and the chat's closing (EOS, newline) follows with mask 0, as after a turn cut at max_tokens."""
    text_ids = tokenizer.encode("Thought:\nbuy [it].\n\nAction:\nclick[buy now] and then some more text",
                                add_special_tokens=False)

    class StopRuleEngine(scripted_engine_cls):
        stops_on_rules = True

    def script(prompt_ids, sampling):
        rule = sampling.stop_rule
        assert rule is not None  # the agent loop asked for the cut
        for k, t in enumerate(text_ids):
            if rule.feed(t):
                return text_ids[:k + 1], "stop"
        return text_ids, "length"

    eng = StopRuleEngine(script)
    out = _loop(eng, tokenizer, stop_at_action_end=True).run(_batch(1, max_rounds=2))
    turn = eng.calls[0][2].token_ids
    assert tokenizer.decode(turn).endswith("click[buy now]") and eng.calls[0][2].finish_reason == "stop"
    assert FakeEnv.instances[-1].actions[0].endswith("click[buy now]")
    resp, mask = out.batch["responses"][0].tolist(), out.batch["response_mask"][0].tolist()
    assert resp[:len(turn)] == turn and mask[:len(turn)] == [1] * len(turn)
    closing = tokenizer.encode("<|im_end|>\n<|im_start|>user\n", add_special_tokens=False)
    assert resp[len(turn):len(turn) + len(closing)] == closing and mask[len(turn)] == 0
    # off: the same engine gets no rule
    eng_off = StopRuleEngine(lambda p, s: (text_ids + [tokenizer.eos_token_id], "stop") if s.stop_rule is None
                             else pytest.fail("a stop rule was sent with stop_at_action_end=false"))
    _loop(eng_off, tokenizer, stop_at_action_end=False).run(_batch(1, max_rounds=1))


def test_max_concurrency_null_puts_every_trajectory_in_flight(tokenizer, scripted_engine_cls):
    """`rollout.max_concurrency` null (the default): all of the batch's trajectories wait on the engine at once
    (no 64-row waves); a number caps them."""
    import asyncio

    action_ids, _ = _action_script(tokenizer)

    class SlowEngine(scripted_engine_cls):
        inflight = peak = 0

        async def generate(self, prompt_ids, sampling):
            SlowEngine.inflight += 1
            SlowEngine.peak = max(SlowEngine.peak, SlowEngine.inflight)
            await asyncio.sleep(0.3)
            SlowEngine.inflight -= 1
            return await super().generate(prompt_ids, sampling)

    for cap, expect in ((None, 80), (24, 24)):
        SlowEngine.peak = 0
        loop = _loop(SlowEngine(lambda p, s: (action_ids + [tokenizer.eos_token_id], "stop")), tokenizer,
                     max_concurrency=cap)
        loop.run(_batch(80, max_rounds=1))
        loop.close()
        assert SlowEngine.peak == expect
