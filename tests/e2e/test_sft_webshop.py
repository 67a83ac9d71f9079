"""End to end: expert demonstrations from an in-process WebShop -> main_sft -> an HF dir that loads."""
from __future__ import annotations

import json
import os

import pytest
import torch


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    from agentenv_webshop.environment import WebshopSession, WebshopWorld
    from agentenv_webshop.expert import ExpertPolicy, SessionEnv, to_conversation

    world = WebshopWorld.load()
    env, policy = SessionEnv(WebshopSession(world)), ExpertPolicy()
    episodes = [policy.play(env, i, world.goals[i]) for i in range(6)]
    rows = [to_conversation(e) for e in episodes if e.success][:4]
    assert len(rows) == 4
    path = tmp_path_factory.mktemp("sft") / "demos.json"
    path.write_text(json.dumps(rows))
    return str(path)


@pytest.mark.timeout(90)
def test_sft_on_expert_demos_lowers_loss_and_saves_a_loadable_model(demos, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from verl.agent_trainer.main_sft import SFT_METRICS_FILE, run_sft, tokenize_conversation
    from verl.utils.tiny_model import build_tiny_model

    out = tmp_path / "sft_model"
    metrics = run_sft({
        # 640 tokens: the prompt and the first (search) turn; keeps the test fast on 2 loaded cores
        "data": {"train_file": demos, "max_length": 640, "micro_batch_size": 1, "train_batch_size": 2},
        "model": {"path": build_tiny_model()},
        "optim": {"lr": 1e-3},
        "trainer": {"total_training_steps": 8, "default_local_dir": str(out), "device": "cpu", "log_freq": 4},
    })
    losses = metrics["losses"]
    assert len(losses) == 8 and metrics["examples"] == 4
    assert sum(losses[-2:]) / 2 < 0.9 * sum(losses[:2]) / 2, losses

    model = AutoModelForCausalLM.from_pretrained(str(out))
    tok = AutoTokenizer.from_pretrained(str(out))
    saved = json.loads((out / SFT_METRICS_FILE).read_text())
    assert saved["steps"] == 8 and os.path.samefile(saved["output_dir"], out)
    # the saved weights are the trained ones: their loss on the demos is the trained loss, below the start
    ids, mask = tokenize_conversation(tok, json.loads(open(demos).read())[0]["conversations"], max_length=640)
    x = torch.tensor([ids])
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=x).logits[0, :-1].float(), -1)
    nll = -(logp.gather(-1, x[0, 1:, None])[:, 0] * torch.tensor(mask[1:])).sum() / sum(mask[1:])
    assert float(nll) < losses[0]


def test_unknown_override_key_names_close_matches():
    from verl.agent_trainer.config.schema import check_override_keys
    from verl.agent_trainer.config.sft_schema import SFTConfig

    with pytest.raises(ValueError, match="micro_batch_size"):
        check_override_keys(["data.micro_batch=2"], root=SFTConfig)
