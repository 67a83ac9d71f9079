"""expert_probe: demonstrations laid out as trajectory rows score what the model gives the expert's tokens, the same
as one forward over each conversation alone; the report section's hand values."""
from __future__ import annotations

import json

import pytest
import torch

from verl.agent_trainer.expert_probe import build_probe_section, load_demos, per_goal_log_likelihood, probe_batch
from verl.agent_trainer.main_sft import tokenize_conversation


def _demo(item: str, actions: list[str]) -> dict:
    turns = [{"from": "human", "loss": None, "value": "You are a shopping agent."},
             {"from": "gpt", "loss": False, "value": "Ok."}]
    for k, action in enumerate(actions):
        turns.append({"from": "human", "loss": None, "value": f"page {k} of {item}: [Search] [Next >]"})
        turns.append({"from": "gpt", "loss": True, "value": f"Thought:\nstep {k}\n\nAction:\n{action}"})
    return {"item_id": item, "conversations": turns}


def test_probe_rows_score_the_expert_tokens_as_a_lone_forward_does(tiny_model):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    demos = [_demo("webshop_1", ["search[red shoes]", "click[b0abcdefgh]", "click[buy now]"]),
             _demo("webshop_2", ["search[a lamp]"])]
    batch = probe_batch(tok, demos)
    td = batch.batch
    with torch.no_grad():
        logits = model(input_ids=td["input_ids"], attention_mask=td["attention_mask"],
                       position_ids=td["position_ids"]).logits.float()
    P = td["prompts"].shape[1]
    logp = torch.log_softmax(logits[:, P - 1:-1], -1).gather(-1, td["responses"].unsqueeze(-1)).squeeze(-1)
    got = per_goal_log_likelihood(logp, td["response_mask"])
    for demo, value in zip(demos, got, strict=True):
        ids, mask = tokenize_conversation(tok, demo["conversations"])
        with torch.no_grad():
            alone = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, :-1].float(), -1)
        token_lp = alone.gather(-1, torch.tensor(ids[1:]).unsqueeze(-1)).squeeze(-1)
        expert = torch.tensor(mask[1:], dtype=torch.bool)
        assert value == pytest.approx(token_lp[expert].mean().item(), abs=1e-4)
    assert list(batch.non_tensor_batch["item_id"]) == ["webshop_1", "webshop_2"]
    assert td["response_mask"][1].sum() < td["response_mask"][0].sum()  # one action against three
    assert batch.meta_info["temperature"] == 1.0


def test_probe_section_hand_values_and_bad_files(tmp_path):
    sec = build_probe_section(["a", "b", "c"], [-2.0, -1.0, -3.0], [-1.5, -1.0, -2.0], seed=0, file="f.json")
    assert sec["n_goals"] == 3 and sec["before"] == -2.0 and sec["after"] == pytest.approx(-1.5)
    assert sec["change"] == pytest.approx(0.5) and sec["file"] == "f.json"
    lo, hi = sec["change_ci95"]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0  # per-goal changes 0.5, 0, 1
    with pytest.raises(ValueError, match="3 goals, 3 before and 2 after"):
        build_probe_section(["a", "b", "c"], [0.0] * 3, [0.0] * 2, seed=0)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"item_id": "x"}]))
    with pytest.raises(ValueError, match="entry 0 lacks"):
        load_demos(str(bad))
    bad.write_text("[]")
    with pytest.raises(ValueError, match="non-empty"):
        load_demos(str(bad))
