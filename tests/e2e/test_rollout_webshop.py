"""The agent loop against a real WebShop server: tiny HF model, a scripted shopper, and a server
killed mid-rollout (failed trajectories, not a crash)."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import launched_server
from scripted_engine import ScriptedWebshopEngine

from verl.protocol import DataProto
from verl.workers.rollout.agent_loop import AgentLoop


@pytest.fixture(scope="module")
def tiny():
    from transformers import AutoTokenizer

    from verl.utils.tiny_model import build_tiny_model

    path = build_tiny_model()
    return path, AutoTokenizer.from_pretrained(path)


def _batch(ids, step=1):
    return DataProto.from_dict(non_tensors={"item_id": np.array([f"webshop_{i}" for i in ids], dtype=object),
                                            "uid": np.array([str(i) for i in ids], dtype=object)},
                               meta_info={"max_rounds": 5, "global_step": step})


def _loop(engine, tok, url, **kw):
    return AgentLoop(engine, tok, {"max_tokens": kw.get("max_tokens", 64), "temperature": 1.0, "max_model_len": 4096},
                     {"task_name": "webshop", "env_addr": url, "max_retries": kw.get("max_retries", 3), "timeout": 10},
                     {"max_prompt_length": 1024, "max_response_length": 2048})


def test_scripted_shopper_buys_through_the_loop(webshop_url, tiny):
    _, tok = tiny
    loop = _loop(ScriptedWebshopEngine(tok), tok, webshop_url)
    try:
        out = loop.run(_batch([0, 1, 2, 5]))
    finally:
        loop.close()
    nt = out.non_tensor_batch
    assert list(nt["env_error"]) == [""] * 4
    assert all(nt["terminated"]) and list(nt["num_turns"]) == [3, 3, 3, 3]
    for i in range(4):
        r = nt["reward"][i]
        assert 0.0 <= r <= 1.0 and nt["turn_rewards"][i][-1] == r and nt["turn_rewards"][i][:2] == [0.0, 0.0]
        last = int(out.batch["response_mask"][i].nonzero().max())
        assert float(out.batch["token_level_scores"][i, last]) == pytest.approx(r)
        assert "Back to Search" in nt["messages"][i][5]["content"]  # a real results page came back
    assert out.meta_info["rollout/env_errors"] == 0


def test_tiny_model_rollout_against_server(webshop_url, tiny):
    from verl.workers.rollout.hf_rollout import HFEngine

    path, tok = tiny
    engine = HFEngine(path)
    loop = _loop(engine, tok, webshop_url, max_tokens=24)
    try:
        out = loop.run(_batch([3, 4, 6]))
        again = loop.run(_batch([3, 4, 6], step=2))
    finally:
        loop.close()
        engine.shutdown()
    assert list(out.non_tensor_batch["env_error"]) == [""] * 3 and list(again.non_tensor_batch["env_error"]) == [""] * 3
    assert loop.pool.reused >= 3  # sessions reused across steps
    for i in range(3):
        msgs = out.non_tensor_batch["messages"][i]
        assert msgs[3]["content"].startswith("WebShop [SEP] Instruction: [SEP]")
        m = out.batch["response_mask"][i]
        assert 0 < int(m.sum()) <= 5 * 24


def test_server_killed_mid_rollout_gives_failed_trajectories(tiny):
    _, tok = tiny
    with launched_server("agentenv_webshop.launch") as (url, proc):
        def kill_after_first_turns(n):
            if n == 4:  # every trajectory has reset; most are about to step
                proc.kill()
                proc.wait(timeout=10)

        loop = _loop(ScriptedWebshopEngine(tok, on_call=kill_after_first_turns), tok, url, max_retries=0)
        try:
            out = loop.run(_batch([0, 1, 2, 3]))
            after = loop.run(_batch([0, 1], step=2))  # the server stays dead: resets fail, no crash
        finally:
            loop.close()
    nt = out.non_tensor_batch
    errors = [e for e in nt["env_error"] if e]
    assert errors and all("EnvClientError" in e for e in errors)
    for i in range(4):
        if nt["env_error"][i]:
            assert nt["reward"][i] == 0.0 and float(out.batch["token_level_scores"][i].abs().sum()) == 0.0
            assert int(out.batch["response_mask"][i].sum()) == 0  # not trained on: the env failed
            assert nt["uid"][i] == f"{i}#env_error{i}"  # and out of its group
        else:
            assert nt["terminated"][i] and nt["uid"][i] == str(i)
    assert all(after.non_tensor_batch["env_error"]) and out.meta_info["rollout/env_errors"] == len(errors)


def test_interaction_path_gives_the_same_batch_as_the_env_client_path(webshop_url, tiny):
    """WebshopInteraction driven by the one agent loop (through InteractionEnvClient) and
    WebshopEnvClient produce identical batches for the same item ids and seeds."""
    import torch

    from verl.interactions import WebshopInteraction, interaction_client_factory
    from verl.workers.rollout.agent_loop import AgentLoop

    _, tok = tiny
    ids = [0, 1, 2, 5]
    direct = _loop(ScriptedWebshopEngine(tok), tok, webshop_url)
    interaction = WebshopInteraction({"env_addr": webshop_url, "timeout": 10})
    via = AgentLoop(ScriptedWebshopEngine(tok), tok, direct.rollout_config, direct.agentgym_config, direct.data_config,
                    env_client_factory=interaction_client_factory(interaction, "webshop"))
    try:
        a, b = direct.run(_batch(ids)), via.run(_batch(ids))
    finally:
        direct.close()
        via.close()
        interaction.close()
    assert list(b.non_tensor_batch["env_error"]) == [""] * 4
    for key in ("prompts", "responses", "response_mask", "attention_mask", "token_level_scores"):
        assert torch.equal(a.batch[key], b.batch[key]), key
    for key in ("reward", "num_turns", "terminated", "turn_rewards", "messages"):
        assert list(a.non_tensor_batch[key]) == list(b.non_tensor_batch[key]), key
    assert max(b.non_tensor_batch["reward"]) > 0  # real purchases were scored through the interaction


def test_parquet_interaction_rows_give_the_same_batch_as_item_ids(webshop_url, tiny, tmp_path):
    """verl's recipe: parquet rows with extra_info.interaction_kwargs, rollout.multi_turn on with an
    interaction YAML, through the worker's factory -> the same batch as AgentGym-RL's item-id rows."""
    import subprocess
    import sys

    import pandas as pd
    import torch

    from verl.protocol import DataProto
    from verl.workers.fsdp_workers import _interaction_factory
    from verl.workers.rollout.agent_loop import AgentLoop

    _, tok = tiny
    ids = [0, 1, 2, 5]
    root = __file__.rsplit("/tests/", 1)[0]
    subprocess.run([sys.executable, f"{root}/scripts/data_preprocess/webshop_multiturn_w_interaction.py",
                    "--local_save_dir", str(tmp_path), "--num_samples", "6"], check=True, capture_output=True)
    frame = pd.read_parquet(tmp_path / "train.parquet")
    rows = frame[frame.extra_info.map(lambda e: int(e["index"]) in ids)]
    cfg = tmp_path / "interaction.yaml"
    cfg.write_text("interaction:\n  - class_name: verl.interactions.webshop_interaction.WebshopInteraction\n"
                   f"    config: {{env_server_base: '{webshop_url}', timeout: 10}}\n")
    direct = _loop(ScriptedWebshopEngine(tok), tok, webshop_url)
    import dataclasses

    from verl.config.schema import MultiTurnConfig

    rollout = dataclasses.replace(direct.rollout_config,
                                  multi_turn=MultiTurnConfig(enable=True, interaction_config_path=str(cfg)))
    via = AgentLoop(ScriptedWebshopEngine(tok), tok, rollout, direct.agentgym_config, direct.data_config,
                    env_client_factory=_interaction_factory(rollout, direct.agentgym_config))
    parquet_batch = DataProto.from_dict(non_tensors={
        "prompt": np.array(list(rows.prompt), dtype=object),
        "extra_info": np.array(list(rows.extra_info), dtype=object),
        "uid": np.array([str(i) for i in ids], dtype=object)}, meta_info={"max_rounds": 5, "global_step": 1})
    try:
        a, b = direct.run(_batch(ids)), via.run(parquet_batch)
    finally:
        direct.close()
        via.close()
    assert list(b.non_tensor_batch["messages"]) == list(a.non_tensor_batch["messages"])  # the same goals were played
    for key in ("prompts", "responses", "response_mask", "token_level_scores"):
        assert torch.equal(a.batch[key], b.batch[key]), key
    assert list(a.non_tensor_batch["reward"]) == list(b.non_tensor_batch["reward"])


def test_the_shipped_policy_stops_at_each_actions_end_and_reuses_its_turns(webshop_url):
    """The shipped SFT policy through the HF engine against the real server: every model turn that writes an
    action ends on its closing "]" (nothing after it is generated; the closing follows unmasked), every
    trajectory is live at once, and most context tokens come from the previous turns' KV."""
    import os

    from transformers import AutoTokenizer

    from verl.workers.rollout.hf_rollout import HFEngine

    path = os.path.join(os.path.dirname(__file__), "..", "..", "agentenv_webshop", "sft_policy")
    tok = AutoTokenizer.from_pretrained(path)
    engine = HFEngine(path)
    loop = AgentLoop(engine, tok, {"max_tokens": 96, "temperature": 0.0, "max_model_len": 5120},
                     {"task_name": "webshop", "env_addr": webshop_url, "max_retries": 3, "timeout": 30},
                     {"max_prompt_length": 1024, "max_response_length": 4096})
    try:
        out = loop.run(_batch(range(10, 22)))
    finally:
        loop.close()
        engine.shutdown()
    nt = out.non_tensor_batch
    assert list(nt["env_error"]) == [""] * 12
    turns = [m["content"] for msgs in nt["messages"] for m in msgs
             if m["role"] == "assistant" and m["content"] != "Ok."]
    acting = [t for t in turns if "Action:" in t]
    assert len(acting) >= 24 and all(t.rstrip().endswith("]") for t in acting)
    assert out.meta_info["rollout/prefix_reuse"] > 0.5
    assert engine.stats["max_batch"] == 12  # every trajectory decoding together
