"""Copy-only tokens (rollout.copy_only_tokens): the vocabulary match, the engine's ban (never emitted,
log-probs over the allowed ids) and the actor's rule (a token is allowed from the turn after it appears)."""
import asyncio

import pytest
import torch

from verl.config.schema import RolloutConfig
from verl.workers.copy_only import BANNED_LOGIT, CopyOnlyRule, banned_in_context, copy_only_token_ids
from verl.workers.rollout.base import SamplingParams
from verl.workers.rollout.hf_rollout import HFEngine


def test_token_ids_are_the_tokens_matching_the_pattern(tokenizer):
    ids = copy_only_token_ids(tokenizer, r"[0-9]+")
    assert len(ids) > 10
    for i in ids:
        assert tokenizer.convert_tokens_to_string([tokenizer.convert_ids_to_tokens(i)]).strip().isdigit()
    assert tokenizer.convert_tokens_to_ids("3") in ids and tokenizer.convert_tokens_to_ids("SEP") not in ids
    with pytest.raises(ValueError, match="matches no token"):
        copy_only_token_ids(tokenizer, r"B0[0-9A-Z]{8}")


def test_config_refuses_a_pattern_that_is_not_a_regex():
    with pytest.raises(ValueError, match="copy_only_tokens is not a regular expression"):
        RolloutConfig(copy_only_tokens="[B0")


def test_banned_in_context_is_the_copy_only_ids_not_in_the_context():
    assert banned_in_context(frozenset({5, 7, 9}), [1, 7, 2]) == (5, 9)
    assert banned_in_context(frozenset(), [1, 2]) == ()


@pytest.mark.parametrize("temperature", [0.0, 0.9])
def test_engine_never_emits_a_banned_id_and_its_log_probs_exclude_them(tiny_model_dir, tokenizer, temperature):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    prompt = tokenizer.encode("Instruction: [SEP] i need a red mug [SEP] Search", add_special_tokens=False)
    engine = HFEngine(tiny_model_dir)

    def generate(banned, seed):
        async def main():
            return await asyncio.gather(
                engine.generate(prompt, SamplingParams(max_tokens=16, temperature=temperature, seed=seed,
                                                       banned_token_ids=banned)),
                engine.generate(prompt, SamplingParams(max_tokens=16, temperature=temperature, seed=seed)))
        return asyncio.run(main())

    try:
        free = generate((), 1)[0]
        banned = tuple(sorted(set(free.token_ids)))  # everything the unconstrained policy wrote
        constrained, unconstrained = generate(banned, 1)  # batched together: the ban is per row
    finally:
        engine.shutdown()
    assert unconstrained.token_ids == free.token_ids
    assert not set(constrained.token_ids) & set(banned)
    with torch.no_grad():
        logits = model(torch.tensor([prompt + constrained.token_ids])).logits[0, len(prompt) - 1:-1].float()
    logits[:, list(banned)] = float("-inf")
    scale = temperature if temperature > 0 else 1.0
    ref = torch.log_softmax(logits / scale, -1).gather(1, torch.tensor(constrained.token_ids)[:, None]).squeeze(1)
    torch.testing.assert_close(torch.tensor(constrained.log_probs), ref, atol=2e-4, rtol=0)
    if temperature == 0:
        assert constrained.token_ids == logits.argmax(-1).tolist()


def test_rule_allows_an_id_from_the_turn_after_it_appears():
    # prompt [pad, 11, 3]; response: turn 1 [12, 4], observation [13, 5], turn 2 [6, 7], pad
    input_ids = torch.tensor([[0, 11, 3, 12, 4, 13, 5, 6, 7, 0]])
    response_mask = torch.tensor([[1, 1, 0, 0, 1, 1, 0]])
    rule = CopyOnlyRule({11, 12, 13, 14}).for_batch(input_ids, response_mask)
    cols = torch.tensor([0, 1, 4, 5])
    out = rule(torch.zeros(4, 16), torch.zeros(4, dtype=torch.long), cols)
    banned = [(out[k] == BANNED_LOGIT).nonzero().flatten().tolist() for k in range(4)]
    # turn 1 saw only the prompt's 11; 12 (its own output) and 13 (the next observation) come after it
    assert banned[0] == banned[1] == [12, 13, 14]
    assert banned[2] == banned[3] == [14]  # turn 2 saw 11, 12 and 13
    assert (out[:, :11] == 0).all() and (out[:, 15:] == 0).all()


def test_agent_loop_refuses_copy_only_tokens_on_an_engine_that_cannot_ban(tokenizer, scripted_engine_cls):
    from verl.workers.rollout.agent_loop import AgentLoop

    engine = scripted_engine_cls(lambda prompt, sampling: ([tokenizer.eos_token_id], "stop"))
    with pytest.raises(ValueError, match="copy_only_tokens needs an engine that can ban tokens"):
        AgentLoop(engine, tokenizer, {"copy_only_tokens": r"[0-9]+"}, {"task_name": "webshop"},
                  {"max_prompt_length": 64, "max_response_length": 64})


# ---------------------------------------------------------------- ids that span several tokens

ID_PATTERN = r"[Bb]0[0-9A-Za-z]{8}"


def test_copy_only_rule_works_over_whole_tokens_or_token_sequences(tokenizer):
    from verl.workers.copy_only import SequenceCopyOnlyRule, copy_only_rule

    assert isinstance(copy_only_rule(tokenizer, r"[0-9]+"), CopyOnlyRule)  # single-token matches exist
    assert isinstance(copy_only_rule(tokenizer, ID_PATTERN), SequenceCopyOnlyRule)  # ids split into pieces
    with pytest.raises(ValueError, match="no token starts an id"):
        copy_only_rule(tokenizer, r"\(\(\(")


def test_sequence_rule_lets_a_turn_write_only_the_ids_its_context_shows(tokenizer):
    """Token by token, a shown id (in the case shown) is always allowed; an unshown one, or the shown one in
    another case, is banned at some token; words that cannot become ids are free."""
    from verl.workers.copy_only import copy_only_rule

    rule = copy_only_rule(tokenizer, ID_PATTERN)
    context = tokenizer.encode("Results [SEP] B0ABCDEFGH [SEP] red mug [SEP] B0ZZZZ1234 [SEP] blue mug",
                               add_special_tokens=False)
    turn = rule.turn_rule(context)
    assert turn.shown == {"B0ABCDEFGH", "B0ZZZZ1234"}
    vocab = len(tokenizer)

    def first_ban(text):
        ids = tokenizer.encode(text, add_special_tokens=False)
        assert len(ids) > 3  # the id is several tokens here
        return next((k for k in range(len(ids)) if turn.ban_mask(ids[:k], vocab)[ids[k]]), None)

    assert first_ban("Action:\nclick[B0ABCDEFGH]") is None
    assert first_ban("Action:\nclick[B0ZZZZ1234] then search[red mug]") is None
    for unshown in ("click[B0ABCDEFGX]", "click[B0QQQQQQQQ]", "click[b0abcdefgh]"):
        assert first_ban(unshown) is not None, unshown
    assert first_ban("Thought: I should click the red mug.") is None


def test_sequence_rule_engine_and_actor_log_probs_agree(tiny_model_dir, tokenizer):
    """The HF engine samples under the per-step rule and the actor's log-probs under `for_batch` equal it
    (a broad pattern, so the rule bans most words: without it the log-probs differ)."""
    from test_agent_loop import _batch, _loop
    from transformers import AutoModelForCausalLM

    from verl.config.schema import ActorConfig, from_dict
    from verl.workers.agent_actor.dp_actor import DataParallelPPOActor
    from verl.workers.copy_only import SequenceCopyOnlyRule, copy_only_rule
    from verl.workers.rollout.hf_rollout import HFEngine

    pattern = r"[A-Za-z]{2,}[0-9]{3}"  # every word is the start of a possible id; no token is a whole one
    rule = copy_only_rule(tokenizer, pattern)
    assert isinstance(rule, SequenceCopyOnlyRule)
    eng = HFEngine(tiny_model_dir)
    loop = _loop(eng, tokenizer, max_tokens=10, R=128, temperature=0.8, copy_only_tokens=pattern)
    try:
        out = loop.run(_batch(3, max_rounds=3))
    finally:
        eng.shutdown()
        loop.close()
    cfg = from_dict(ActorConfig, dict(ppo_mini_batch_size=3, ppo_micro_batch_size_per_gpu=2, ppo_epochs=1,
                                      policy_loss={"loss_mode": "vanilla"}, loss_agg_mode="token-mean"),
                    "actor_rollout_ref.actor")
    actor = DataParallelPPOActor(cfg, AutoModelForCausalLM.from_pretrained(tiny_model_dir).float().eval())
    out.meta_info["temperature"] = 0.8
    mask = out.batch["response_mask"].bool()
    free, _ = actor.compute_log_prob(out, calculate_entropy=False)
    actor.copy_only = rule
    ruled, entropy = actor.compute_log_prob(out, calculate_entropy=True)
    torch.testing.assert_close(ruled[mask], out.batch["rollout_log_probs"][mask], atol=3e-4, rtol=0)
    assert (free[mask] - out.batch["rollout_log_probs"][mask]).abs().max() > 0.05
    assert torch.isfinite(entropy[mask]).all()


def test_agent_loop_refuses_multi_token_ids_on_an_engine_without_sequence_bans(tokenizer, scripted_engine_cls):
    from verl.workers.rollout.agent_loop import AgentLoop

    engine = scripted_engine_cls(lambda prompt, sampling: ([tokenizer.eos_token_id], "stop"))
    engine.bans_tokens = True
    with pytest.raises(ValueError, match="splits ids into several tokens"):
        AgentLoop(engine, tokenizer, {"copy_only_tokens": ID_PATTERN}, {"task_name": "webshop"},
                  {"max_prompt_length": 64, "max_response_length": 64})
