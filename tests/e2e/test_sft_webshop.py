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
    from verl.config.schema import check_override_keys
    from verl.config.sft_schema import SFTConfig

    with pytest.raises(ValueError, match="micro_batch_size"):
        check_override_keys(["data.micro_batch=2"], root=SFTConfig)


@pytest.mark.timeout(240)
def test_a_killed_sft_run_resumes_from_its_last_checkpoint(demos, tmp_path, caplog):
    """save_freq checkpoints; a run killed (SIGKILL) after one resumes there and ends exactly where an
    uninterrupted run ends (same losses): at most one interval of work is lost."""
    import logging
    import subprocess
    import sys
    import time

    from verl.agent_trainer.main_sft import run_sft
    from verl.utils.tiny_model import build_tiny_model

    def config(out):
        return {"data": {"train_file": demos, "max_length": 640, "micro_batch_size": 2, "train_batch_size": 2},
                "model": {"path": build_tiny_model()}, "optim": {"lr": 1e-3},
                "trainer": {"total_training_steps": 40, "save_freq": 4, "default_local_dir": str(out), "device": "cpu",
                            "log_freq": 100}}

    reference = run_sft(config(tmp_path / "reference"))["losses"]
    assert not os.path.exists(str(tmp_path / "reference") + ".checkpoint")  # removed once the run completes

    out = tmp_path / "killed"
    state = str(out) + ".checkpoint/state.pt"
    code = "import json, sys; from verl.agent_trainer.main_sft import run_sft; run_sft(json.loads(sys.argv[1]))"
    proc = subprocess.Popen([sys.executable, "-c", code, json.dumps(config(out))])
    deadline = time.monotonic() + 150
    while not os.path.exists(state) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.kill()
    proc.wait(timeout=30)
    assert os.path.exists(state) and not out.exists(), "the run should die between its first checkpoint and its end"
    step = torch.load(state, weights_only=False)["step"]
    assert 4 <= step < 40

    with caplog.at_level(logging.INFO, logger="verl.agent_trainer.main_sft"):
        resumed = run_sft(config(out))
    assert any(f"resuming SFT from step {step} of 40" in r.getMessage() for r in caplog.records)
    assert resumed["losses"] == pytest.approx(reference, rel=1e-5, abs=1e-6)
    assert out.exists() and not os.path.exists(state)


@pytest.mark.timeout(120)
def test_lora_sft_trains_the_adapter_checkpoints_it_small_and_saves_the_merged_model(demos, tmp_path):
    """`model.lora_rank=8`: the loss falls, the resumable checkpoint holds the adapter and its optimizer state
    (no base weights) and restores them, and the output is the merged model plus the adapter in PEFT's format."""
    from transformers import AutoModelForCausalLM

    from verl.agent_trainer.main_sft import _Checkpoint, run_sft
    from verl.config.models import ModelConfig
    from verl.utils import lora
    from verl.utils.model_utils import build_lr_scheduler, build_optimizer, load_causal_lm
    from verl.utils.tiny_model import build_tiny_model

    base = build_tiny_model()
    out = tmp_path / "sft_lora"
    metrics = run_sft({
        "data": {"train_file": demos, "max_length": 640, "micro_batch_size": 2, "train_batch_size": 2},
        "model": {"path": base, "lora_rank": 8, "target_modules": ["q_proj", "v_proj", "up_proj"]},
        "optim": {"lr": 1e-2},
        "trainer": {"total_training_steps": 4, "default_local_dir": str(out), "device": "cpu", "log_freq": 100},
    })
    losses = metrics["losses"]
    assert losses[-1] < losses[0], losses
    merged = AutoModelForCausalLM.from_pretrained(str(out)).state_dict()
    expected = lora.merge_adapter(load_causal_lm(base), str(out / lora.ADAPTER_DIR))  # base + the saved adapter
    for name, tensor in expected.state_dict().items():
        torch.testing.assert_close(merged[name], tensor)
    plain = load_causal_lm(base).state_dict()
    q, o = "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.o_proj.weight"
    assert not torch.equal(merged[q], plain[q]) and torch.equal(merged[o], plain[o])  # o_proj has no adapter

    # the resumable checkpoint: adapter + optimizer state only, restored exactly
    def fresh():
        model = lora.apply_lora(load_causal_lm(base), ModelConfig(path=base, lora_rank=8))
        optimizer = build_optimizer(model, {"lr": 1e-2})
        return model, optimizer, build_lr_scheduler(optimizer, {"lr": 1e-2})

    model, optimizer, scheduler = fresh()
    loss = model(input_ids=torch.tensor([[5, 6, 7, 8]]), labels=torch.tensor([[5, 6, 7, 8]])).loss
    loss.backward()
    optimizer.step()
    ckpt = _Checkpoint(str(tmp_path / "run"))
    ckpt.save(model, optimizer, scheduler, [float(loss.detach())], 1, 10, 0.0)
    state = torch.load(ckpt.path, weights_only=False)
    assert all(".lora_" in name for name in state["model"])
    model2, optimizer2, scheduler2 = fresh()
    assert ckpt.restore(model2, optimizer2, scheduler2, [], 10) == (1, 0.0)
    for (name, p), p2 in zip(model.named_parameters(), model2.parameters(), strict=True):
        assert torch.equal(p, p2), name
    assert torch.equal(optimizer2.state_dict()["state"][0]["exp_avg"], optimizer.state_dict()["state"][0]["exp_avg"])
