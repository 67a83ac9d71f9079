"""main_sft tokenisation: the loss mask covers exactly the assistant tokens (with their <|im_end|>), and the
ids equal the ids the rollout's agent loop produces for the same conversation."""
from __future__ import annotations

import json

import numpy as np
import pytest

from agentenv.controller import ResetResult, StepResult
from verl.agent_trainer.main_sft import load_conversations, tokenize_conversation
from verl.protocol import DataProto
from verl.workers.rollout.agent_loop import AgentLoop
from verl.workers.rollout.base import GenerationOutput, RolloutEngine
from verl.workers.rollout.tokenizer import DEFAULT_SYSTEM_PROMPT

START = [{"from": "human", "loss": None, "value": "You are web shopping. Reply with Thought: and Action:."},
         {"from": "gpt", "loss": False, "value": "Ok."}]
OBS = ["WebShop [SEP] Instruction: [SEP] i need a red mug [SEP] Search",
       "Instruction: [SEP] i need a red mug [SEP] Back to Search [SEP] B0ABCDEF12 [SEP] Red Mug [SEP] $9.99",
       "Instruction: [SEP] i need a red mug [SEP] Back to Search [SEP] < Prev [SEP] Red Mug [SEP] Buy Now"]
ACTS = ["Thought:\nI think I should search for red mug.\n\nAction:\nsearch[red mug]",
        "Thought:\nI think B0ABCDEF12 matches the instruction, so I should open it.\n\nAction:\nclick[b0abcdef12]",
        "Thought:\nI think I should buy it.\n\nAction:\nclick[buy now]"]
FINAL = "Thank you for shopping with us! Your score (min 0.0, max 1.0) [SEP] 1.0"


def _conversation(final_obs: bool = True) -> list[dict]:
    turns = [dict(t) for t in START]
    for obs, act in zip(OBS, ACTS, strict=True):
        turns += [{"from": "human", "loss": None, "value": obs}, {"from": "gpt", "loss": True, "value": act}]
    if final_obs:
        turns.append({"from": "human", "loss": None, "value": FINAL})
    return turns


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from verl.utils.tiny_model import build_tiny_model

    return AutoTokenizer.from_pretrained(build_tiny_model())


def _spans(mask: list[int]) -> list[tuple[int, int]]:
    spans, start = [], None
    for i, m in enumerate(mask + [0]):
        if m and start is None:
            start = i
        if not m and start is not None:
            spans.append((start, i))
            start = None
    return spans


def test_mask_is_exactly_the_assistant_turns_with_their_im_end(tokenizer):
    ids, mask = tokenize_conversation(tokenizer, _conversation())
    assert len(ids) == len(mask)
    spans = _spans(mask)
    assert len(spans) == len(ACTS)  # "Ok." (loss false) is not trained
    eos = tokenizer.eos_token_id
    assert tokenizer.convert_ids_to_tokens(eos) == "<|im_end|>"
    for (a, b), act in zip(spans, ACTS, strict=True):
        assert ids[a:b] == tokenizer.encode(act, add_special_tokens=False) + [eos]
        assert tokenizer.decode(ids[a:b]) == act + "<|im_end|>"
        # the token before each span is the assistant header's last token (context, not trained)
        assert tokenizer.decode(ids[:a]).endswith("<|im_start|>assistant\n")
    # the whole sequence is the chat template's text of the conversation (final observation not rendered)
    msgs = [{"role": "system", "content": DEFAULT_SYSTEM_PROMPT}] + [
        {"role": "user" if t["from"] == "human" else "assistant", "content": t["value"]} for t in _conversation(False)]
    text = tokenizer.apply_chat_template(msgs, tokenize=False)
    assert tokenizer.decode(ids) == text.rstrip("\n")
    assert ids[-1] == eos and mask[-1] == 1


def test_truncation_system_prompt_and_bad_input(tokenizer):
    ids, mask = tokenize_conversation(tokenizer, _conversation(), system_prompt="")
    assert "system" not in tokenizer.decode(ids[:5])
    cut_ids, cut_mask = tokenize_conversation(tokenizer, _conversation(), system_prompt="", max_length=len(ids) - 7)
    assert cut_ids == ids[:-7] and cut_mask == mask[:-7]
    with pytest.raises(ValueError, match="no trained assistant turn"):
        tokenize_conversation(tokenizer, START + [{"from": "human", "value": "x"}])
    bad = _conversation()
    bad.insert(4, {"from": "human", "loss": None, "value": "twice"})
    with pytest.raises(ValueError, match="alternate"):
        tokenize_conversation(tokenizer, bad)


def test_load_conversations_json_and_jsonl(tmp_path):
    rows = [{"item_id": "webshop_1", "conversations": _conversation()}]
    (tmp_path / "a.json").write_text(json.dumps(rows))
    (tmp_path / "b.jsonl").write_text("\n".join(json.dumps(r) for r in rows * 3) + "\n")
    assert load_conversations(str(tmp_path / "a.json")) == rows
    assert len(load_conversations(str(tmp_path / "b.jsonl"), max_examples=2)) == 2
    (tmp_path / "c.json").write_text(json.dumps([{"item_id": "x", "conversations": [{"from": "bot", "value": "v"}]}]))
    with pytest.raises(ValueError, match="turn 0"):
        load_conversations(str(tmp_path / "c.json"))
    with pytest.raises(FileNotFoundError, match="data.train_file"):
        load_conversations(str(tmp_path / "missing.json"))


class _ReplayEngine(RolloutEngine):
    """Mock engine that 'samples' the demonstration's assistant turns (their ids + EOS), in order."""

    def __init__(self, tokenizer):
        self.turns = [tokenizer.encode(a, add_special_tokens=False) + [tokenizer.eos_token_id] for a in ACTS]

    async def _generate_ids(self, prompt_ids, sampling):
        ids = self.turns.pop(0)
        return GenerationOutput(token_ids=ids, log_probs=[-0.1] * len(ids), finish_reason="stop")

    def update_weights(self, named_tensors):
        pass


class _ReplayEnv:
    """Fake env client returning the demonstration's observations."""

    conversation_start = START

    def reset(self, idx):
        self.t = 0
        return ResetResult(observation=OBS[0])

    def step(self, action):
        assert action == ACTS[self.t]
        self.t += 1
        done = self.t == len(ACTS)
        return StepResult(observation=FINAL if done else OBS[self.t], reward=1.0 if done else 0.0, terminated=done)

    def close(self):
        pass


@pytest.mark.parametrize("system_prompt", [None, "You are a shopping agent."])
def test_ids_and_mask_equal_the_rollouts(tokenizer, system_prompt):
    loop = AgentLoop(_ReplayEngine(tokenizer), tokenizer,
                     {"max_tokens": 64, "max_model_len": 8192, "system_prompt": system_prompt},
                     {"task_name": "webshop", "max_rounds": 5}, {"max_prompt_length": 512, "max_response_length": 512},
                     env_client_factory=_ReplayEnv)
    try:
        out = loop.run(DataProto.from_dict(non_tensors={"item_id": np.array(["webshop_3"], dtype=object)},
                                           meta_info={"max_rounds": 5}))
    finally:
        loop.close()
    attn = out.batch["attention_mask"][0].bool()
    rollout_ids = out.batch["input_ids"][0][attn].tolist()
    n_resp = int(out.batch["attention_mask"][0, 512:].sum())
    rollout_mask = [0] * (len(rollout_ids) - n_resp) + out.batch["response_mask"][0, :n_resp].tolist()
    ids, mask = tokenize_conversation(tokenizer, _conversation(), system_prompt=system_prompt)
    assert out.non_tensor_batch["reward"][0] == 1.0
    assert ids == rollout_ids
    assert mask == rollout_mask
