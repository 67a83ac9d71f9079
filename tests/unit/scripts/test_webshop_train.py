"""`scripts/webshop_train.sh`'s command lines, tested without a GPU. The GPU learning profile (SFT, GRPO, learning
report): `bash scripts/webshop_train.sh` with PROFILE=gpu, MODEL_PATH = a pretrained model, WARM_START=1 and
GPU_LEARNING=1 runs `webshop_sft.sh` (one fine-tuning stage of MODEL_PATH) and then main_ppo from the SFT folder with
the learning profile. PYTHON is a stub that records the main_sft / main_ppo / model_card command lines (and says the
env server answers); the recorded main_ppo line is then composed by Hydra and validated into a `PPOConfig`, as
main_ppo would. Also: the CPU profile's command line trains on the fixed goal set and evaluates it in the learning
report, takes the overrides a user tries (the report off, another training file), and the job merges the profile's
and the command line's overrides into one list, each key once, which it prints."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
RECORDED = ("verl.agent_trainer.main_ppo", "verl.agent_trainer.main_sft", "verl.utils.model_card",
            "verl.utils.tiny_model", "verl.utils.smollm2")

STUB = f'''#!{sys.executable}
import json, os, sys
args = sys.argv[1:]
if args[:2] == ["-m", "agentenv.health"]:
    sys.exit(0)
if args[:1] == ["-m"] and args[1] in {RECORDED!r}:
    with open(os.environ["STUB_LOG"], "a") as fh:
        fh.write(json.dumps(args[1:]) + "\\n")
    if args[1] == "verl.agent_trainer.main_sft":
        out = [a.split("=", 1)[1] for a in args if a.startswith("trainer.default_local_dir=")][-1]
        os.makedirs(out, exist_ok=True)
        open(os.path.join(out, "sft_metrics.json"), "w").write("{{}}")
    if args[1] == "verl.utils.smollm2":
        os.makedirs(args[args.index("--out") + 1], exist_ok=True)
    sys.exit(0)
os.execv({sys.executable!r}, [{sys.executable!r}, *args])
'''


def _run(tmp_path, env_extra: dict, *args: str, script: str = "scripts/webshop_train.sh"
         ) -> tuple[subprocess.CompletedProcess, list[list[str]]]:
    stub = tmp_path / "python"
    stub.write_text(STUB)
    stub.chmod(0o755)
    log = tmp_path / "calls.jsonl"
    demos = tmp_path / "demos.json"
    demos.write_text("[]")
    env = {**os.environ, "PYTHON": str(stub), "STUB_LOG": str(log), "ENV_ADDR": "http://127.0.0.1:9",
           "DEMOS": str(demos), **env_extra}
    for key in ("MODEL_PATH", "WARM_START", "GPU_LEARNING", "SFT_DIR", "POLICY_DIR"):
        if key not in env_extra:
            env.pop(key, None)
    proc = subprocess.run(["bash", script, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return proc, calls


def _compose(overrides: list[str]):
    from hydra import compose, initialize_config_dir

    from verl.config.schema import default_config_path, load_config

    with initialize_config_dir(config_dir=os.path.dirname(default_config_path()), version_base=None):
        return load_config(compose("ppo_trainer", overrides=overrides), resolve_auto=False)


def _value(args: list[str], key: str) -> str:
    """The last `key=value` of a command line (Hydra: the last one wins)."""
    return [a.split("=", 1)[1] for a in args if a.startswith(key + "=")][-1]


def test_gpu_learning_profile_sft_then_grpo_command_lines(tmp_path):
    model, sft_dir = tmp_path / "smollm2", tmp_path / "sft"
    proc, calls = _run(tmp_path, {"PROFILE": "gpu", "MODEL_PATH": str(model), "WARM_START": "1",
                                  "GPU_LEARNING": "1", "SFT_DIR": str(sft_dir), "EXPERIMENT": "gpu_learning"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [c[0] for c in calls] == ["verl.agent_trainer.main_sft", "verl.utils.model_card",
                                     "verl.agent_trainer.main_ppo"]
    sft = calls[0]
    assert _value(sft, "model.path") == str(model) and _value(sft, "trainer.default_local_dir") == str(sft_dir)
    assert _value(sft, "optim.lr") == "2e-5" and _value(sft, "trainer.total_training_steps") == "400"
    assert _value(sft, "trainer.save_freq") == "100"  # a cut-short SFT resumes from its checkpoint

    ppo = calls[2][1:]
    cfg = _compose(ppo)
    assert cfg.actor_rollout_ref.model.path == str(sft_dir)  # GRPO starts from the SFT policy
    assert cfg.trainer.device == "cuda" and cfg.actor_rollout_ref.rollout.name == "vllm"
    assert (cfg.data.train_batch_size, cfg.actor_rollout_ref.rollout.n) == (32, 8)
    assert cfg.actor_rollout_ref.agentgym.max_rounds == 5 and cfg.trainer.total_training_steps == 20
    assert cfg.trainer.save_freq == 5 and cfg.trainer.resume_mode == "auto"  # resumable across short sessions
    assert cfg.trainer.learning_report and cfg.data.val_max_items == 200
    assert cfg.data.val_paths == ["AgentItemId/webshop_test.json"]
    assert cfg.data.train_paths == ["AgentItemId/webshop_train.json"] and cfg.data.trained_val_file is None


def test_finished_sft_is_reused_and_gpu_warm_start_needs_a_model(tmp_path):
    sft_dir = tmp_path / "sft"
    sft_dir.mkdir()
    (sft_dir / "sft_metrics.json").write_text("{}")
    proc, calls = _run(tmp_path, {"PROFILE": "gpu", "MODEL_PATH": str(tmp_path / "m"), "WARM_START": "1",
                                  "GPU_LEARNING": "1", "SFT_DIR": str(sft_dir)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [c[0] for c in calls] == ["verl.agent_trainer.main_ppo"]
    assert _value(calls[0], "actor_rollout_ref.model.path") == str(sft_dir)

    proc, _ = _run(tmp_path, {"PROFILE": "gpu", "WARM_START": "1"})
    assert proc.returncode == 2 and "MODEL_PATH" in proc.stderr
    proc, _ = _run(tmp_path, {"PROFILE": "cpu", "GPU_LEARNING": "1"})
    assert proc.returncode == 2 and "GPU_LEARNING=1" in proc.stderr


@pytest.mark.parametrize("policy", ["shipped", "tiny"])
def test_cpu_profile_trains_on_the_fixed_goals_and_reports_them(tmp_path, policy):
    env = {"PROFILE": "cpu"}
    if policy == "tiny":
        env.update(POLICY_DIR=str(tmp_path / "none"), TINY_MODEL_DIR=str(tmp_path / "tiny"))
    proc, calls = _run(tmp_path, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ppo = calls[-1][1:]
    assert calls[-1][0] == "verl.agent_trainer.main_ppo"
    cfg = _compose(ppo)
    if policy == "tiny":  # no policy: says so, builds the tiny random model and trains it
        assert f"no policy at {tmp_path / 'none'}" in proc.stdout and "tiny random model" in proc.stdout
        assert ["verl.utils.tiny_model", "--out", str(tmp_path / "tiny")] in calls
        assert cfg.actor_rollout_ref.model.path == str(tmp_path / "tiny")
    goals = "AgentItemId/webshop_train_learnable32_max50.json"
    assert cfg.data.train_paths == [goals] and cfg.data.trained_val_file == goals and cfg.trainer.learning_report
    ids = json.loads(open(os.path.join(ROOT, goals)).read())
    assert len(ids) == len({r["item_id"] for r in ids}) == 32
    train = {r["item_id"] for r in json.loads(open(os.path.join(ROOT, "AgentItemId", "webshop_train.json")).read())}
    assert {r["item_id"] for r in ids} <= train  # training goals only, none held out
    if policy == "shipped":  # 12 steps of 8 goals: every goal 3 times
        assert cfg.trainer.total_training_steps * cfg.data.train_batch_size == 3 * len(ids)
        # a KL term to the SFT policy, its reference pass beside the next step's rollout; the trainer accepts both
        from verl.agent_trainer.ppo.rollout_overlap import check_overlap_supported

        actor = cfg.actor_rollout_ref.actor
        assert actor.use_kl_loss and actor.kl_loss_coef > 0 and cfg.trainer.rollout_overlap
        check_overlap_supported(cfg)


def test_gpu_learning_joins_the_carried_gguf_then_runs_lora_sft_and_budgeted_lora_grpo(tmp_path):
    """scripts/gpu_learning.sh (a window on a lent GPU machine): the GGUF is joined from its carried parts (checked
    against their SHA256SUMS) and converted, SmolLM2 is supervised with a LoRA adapter, then GRPO with a LoRA adapter
    runs on the GPU learning profile with the HF engine and a time budget; a call missing parts says which."""
    carry = tmp_path / "carry"
    carry.mkdir()
    (carry / "part-0").write_bytes(b"GGUF-head-")
    (carry / "part-1").write_bytes(b"tail")
    (carry / "NAME").write_text("SmolLM2-135M-Instruct.Q4_1.gguf\n")
    subprocess.run("sha256sum part-* > SHA256SUMS", shell=True, cwd=carry, check=True)
    work, out = tmp_path / "work", tmp_path / "out"
    env = {"PROFILE": "gpu", "CARRY": str(carry), "WORK": str(work), "OUT": str(out), "BUDGET_S": "900",
           "STATE_IN": str(tmp_path / "no_state"), "EXPERT_PROBE_GOALS": "2"}
    proc, calls = _run(tmp_path, env, script="scripts/gpu_learning.sh")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    gguf = work / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert gguf.read_bytes() == b"GGUF-head-tail"
    assert [c[0] for c in calls] == ["verl.utils.smollm2", "verl.agent_trainer.main_sft", "verl.utils.model_card",
                                     "verl.agent_trainer.main_ppo"]
    assert calls[0][1:] == ["--out", str(work / "smollm2"), "--gguf", str(gguf)]
    assert _value(calls[1], "model.path") == str(work / "smollm2") and _value(calls[1], "model.lora_rank") == "8"
    assert _value(calls[1], "optim.lr") == "2e-4"
    cfg = _compose(calls[3][1:])
    assert cfg.actor_rollout_ref.model.path == str(work / "sft") and cfg.actor_rollout_ref.model.lora_rank == 8
    assert cfg.actor_rollout_ref.rollout.name == "hf" and cfg.trainer.device == "cuda"
    assert cfg.data.train_batch_size == 32 and cfg.trainer.total_training_steps == 20  # the GPU learning profile
    assert 0 < cfg.trainer.time_budget_s <= 900 - 90 and cfg.trainer.default_local_dir == str(work / "grpo")
    assert cfg.trainer.learning_report and cfg.data.val_max_items == 200

    state = tmp_path / "state"  # a state carried in part: its MANIFEST names a file that has not come yet
    (state / "sft").mkdir(parents=True)
    (state / "sft" / "sft_metrics.json").write_text("{}")
    (state / "MANIFEST").write_text("./sft/sft_metrics.json\n./grpo/trainer_state.pt\n")
    proc, _ = _run(tmp_path, {**env, "STATE_IN": str(state)}, script="scripts/gpu_learning.sh")
    assert proc.returncode == 3 and "the carried state lacks 1 files, e.g. ./grpo/trainer_state.pt" in proc.stdout

    (carry / "part-1").unlink()
    proc, _ = _run(tmp_path, {**env, "WORK": str(tmp_path / "work2")}, script="scripts/gpu_learning.sh")
    assert proc.returncode == 3 and "carry the missing GGUF parts next: part-1" in proc.stdout


def test_cpu_profile_takes_the_overrides_a_user_tries_and_prints_each_key_once(tmp_path):
    proc, calls = _run(tmp_path, {"PROFILE": "cpu"}, "trainer.learning_report=False", "trainer.total_training_steps=1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    ppo = calls[-1][1:]
    keys = [a.split("=", 1)[0] for a in ppo]
    assert len(keys) == len(set(keys))  # the three layers merged: each key once, with the value that wins
    assert _value(ppo, "trainer.learning_report") == "False" and _value(ppo, "trainer.total_training_steps") == "1"
    assert _value(ppo, "data.train_batch_size") == "8"  # the shipped policy's layer over the CPU profile's 4
    printed = [line.strip() for line in proc.stdout.splitlines() if line.startswith("    ")]
    assert printed == ppo  # what the job prints is what it runs
    cfg = _compose(ppo)  # the profile names the trained goals; without the report they are simply not read
    assert not cfg.trainer.learning_report and cfg.trainer.total_training_steps == 1

    other = "AgentItemId/webshop_train_cpu32.json"
    proc, calls = _run(tmp_path, {"PROFILE": "cpu"}, f"data.train_file={other}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cfg = _compose(calls[-1][1:])
    assert cfg.data.train_paths == [other] and cfg.data.trained_val_file == other  # the report follows the file


def test_merge_overrides_keeps_the_first_place_and_the_last_value():
    script = ('source scripts/lib/job.sh; OVERRIDES=(a.b=1 +c=2 x=1 a.b=3 --cfg job "d=\'p=q\'" +c=4 x=1);'
              'merge_overrides; printf "%s\\n" "${OVERRIDES[@]}"')
    out = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["a.b=3", "+c=2", "x=1", "--cfg", "job", "d='p=q'", "+c=4"]
