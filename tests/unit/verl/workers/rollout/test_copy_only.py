"""Copy-only tokens (rollout.copy_only_tokens): the vocabulary match, the engine's ban (never emitted,
log-probs over the allowed ids) and the actor's rule (a token is allowed from the turn after it appears)."""
import asyncio

import pytest
import torch

from verl.agent_trainer.config.schema import RolloutConfig
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
