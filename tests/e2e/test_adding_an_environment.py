"""End to end: the toy environment built from docs/adding_an_environment.md alone (tests/data/toy_env_pkg)
installs with pip, registers through its entry point, serves on the kit, and trains with GRPO.

Nothing in the repository knows the toy env: the trainer finds its client and launch module through
the `agentenv.envs` entry point of the installed package, in the driver and in the Ray workers.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
import requests
from helpers import launched_server

pytestmark = pytest.mark.timeout(400)

PKG = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "toy_env_pkg")


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory):
    """The toy package installed with pip into a folder of its own (the venv stays untouched)."""
    target = tmp_path_factory.mktemp("toy_site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(target), PKG], check=True, timeout=120)
    return str(target)


@pytest.fixture(scope="module")
def toy_env(toy_site):
    """The guide's step 6: PYTHONPATH carries the installed package to the server and the trainer."""
    return {"PYTHONPATH": os.pathsep.join([toy_site, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


@pytest.fixture(scope="module")
def toy_url(toy_env):
    with launched_server("toy_env.launch", env=toy_env) as (base, _proc):
        yield base


def test_the_guide_is_short_and_names_every_step():
    guide = open(os.path.join(os.path.dirname(PKG), "..", "..", "docs", "adding_an_environment.md")).read()
    assert len(guide.splitlines()) <= 90
    for step in ("Session", "create_env_app", "launch", "HttpEnvClient", "agentenv.envs", "item_id",
                 "task_name="):
        assert step in guide, step


def test_registry_finds_the_installed_env_and_its_client_plays(toy_site, toy_url, monkeypatch):
    from agentenv import registry

    monkeypatch.syspath_prepend(toy_site)
    assert "toy" not in registry.ENVS  # nothing in the repository knows it
    try:
        record = registry.get_env("toy")
    finally:
        registry.ENVS.pop("toy", None)  # keep the process-wide registry as the other tests expect it
    assert record.launch_module == "toy_env.launch"
    client = record.client_cls()(toy_url, data_len=8)
    try:
        assert client.reset(2).observation == "Say the word: stone"
        bad = client.step("hello")
        assert "Invalid action" in bad.observation and not bad.done and bad.reward == 0.0
        wrong = client.step("Action: say[river]")
        assert not wrong.done and "Wrong" in wrong.observation
        right = client.step("Action: say[stone]")
        assert right.done and right.reward == 1.0
        assert requests.get(f"{toy_url}/list_envs", timeout=5).json() == [client.env_id]
    finally:
        client.close()
        client.close()  # safe twice
    assert requests.get(f"{toy_url}/list_envs", timeout=5).json() == []
    err = requests.post(f"{toy_url}/reset", json={"env_idx": 99, "idx": 0}, timeout=5)
    assert err.status_code == 404 and err.json()["error"]["code"] == "unknown_env_idx"


def test_grpo_trains_on_the_toy_env(toy_env, toy_url, tmp_path):
    from verl.utils.tiny_model import build_tiny_model

    model = build_tiny_model(str(tmp_path / "model"))
    train, test = tmp_path / "toy_train.json", tmp_path / "toy_test.json"
    train.write_text(json.dumps([{"item_id": f"toy_{i}"} for i in range(6)]))
    test.write_text(json.dumps([{"item_id": f"toy_{i}"} for i in (6, 7)]))
    args = [
        "algorithm.adv_estimator=grpo", f"data.train_file={train}", f"data.val_file={test}",
        "data.train_batch_size=2",
        "data.max_prompt_length=512", "data.max_response_length=128",
        f"actor_rollout_ref.model.path={model}", "actor_rollout_ref.rollout.name=hf",
        "actor_rollout_ref.rollout.n=2", "actor_rollout_ref.rollout.max_tokens=8",
        "actor_rollout_ref.rollout.max_model_len=1024",
        f"actor_rollout_ref.rollout.rollout_log_dir={tmp_path / 'rollouts'}",
        "actor_rollout_ref.agentgym.task_name=toy", f"actor_rollout_ref.agentgym.env_addr={toy_url}",
        "actor_rollout_ref.agentgym.timeout=30", "actor_rollout_ref.agentgym.max_rounds=2",
        "actor_rollout_ref.actor.ppo_mini_batch_size=2", "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "trainer.device=cpu", "trainer.total_training_steps=2", "trainer.save_freq=-1", "trainer.test_freq=-1",
        "trainer.val_before_train=False", "trainer.logger=[console,file]", f"trainer.log_dir={tmp_path / 'logs'}",
        f"trainer.default_local_dir={tmp_path / 'ckpt'}", "ray_init.num_cpus=2",
        "ray_init.object_store_memory=200000000",
    ]
    env = {**os.environ, **toy_env, "HF_HUB_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0",
           "TOKENIZERS_PARALLELISM": "false", "HYDRA_FULL_ERROR": "1"}
    proc = subprocess.run([sys.executable, "-m", "verl.agent_trainer.main_ppo", *args], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=350)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    rows = [json.loads(line) for line in (tmp_path / "logs" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        assert math.isfinite(row["actor/pg_loss"]) and row["timing_s/gen"] > 0
        assert row["rollout/env_errors"] == 0  # every trajectory was played on the toy server
    dumped = [json.loads(line) for path in (tmp_path / "rollouts").rglob("*") if path.is_file()
              for line in path.read_text().splitlines() if line.strip()]
    assert dumped and all(r["item_id"].startswith("toy_") for r in dumped)
    assert any("Say the word" in json.dumps(r) for r in dumped)  # the toy server's observations reached the policy
