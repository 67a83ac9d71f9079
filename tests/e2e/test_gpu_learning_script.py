"""scripts/gpu_learning.sh on CPU, as two short windows on two fresh machines: the first supervises a LoRA adapter on
the tiny model, trains one GRPO step with a LoRA adapter and stops (its time budget), leaving its state under
$OUT in small files; the second starts from that state alone (another work folder), merges the SFT adapter again,
resumes GRPO and writes the learning report against the first window's validation."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]  # ~4.5 min: RUN_SLOW=1
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRPO_ARGS = ["trainer.total_training_steps=2", "data.val_max_items=3", "data.train_batch_size=2",
             "data.trained_val_file=null", "data.control_val_file=null", "trainer.save_freq=-1",
             "ray_init.object_store_memory=200000000"]


def _window(tmp_path, name: str, tiny: str, webshop_url: str, state_in: str | None) -> tuple[str, str]:
    out, work = tmp_path / name / "out", tmp_path / name / "work"
    env = {**os.environ, "PYTHON": sys.executable, "PROFILE": "cpu", "ENV_ADDR": webshop_url, "MODEL_PATH": tiny,
           "OUT": str(out), "WORK": str(work), "STATE_IN": state_in or str(tmp_path / "none"), "SFT_STEPS": "4",
           "NUM_DEMOS": "16", "DEMOS": str(tmp_path / "demos.json"), "GRPO_BUDGET_S": "1", "MAX_FILE_MIB": "1",
           "EXPERT_PROBE_GOALS": "3", "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.run(["bash", "scripts/gpu_learning.sh", *GRPO_ARGS], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=420)
    logs = "\n".join(p.read_text()[-3000:] for p in out.glob("*.log")) if out.exists() else ""
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}\n{logs}"
    return proc.stdout, str(out / "gpu_learning_state")


def test_two_windows_add_up_to_a_learning_report(webshop_url, tmp_path):
    from verl.utils.tiny_model import build_tiny_model

    tiny = build_tiny_model(str(tmp_path / "tiny"))
    first, state = _window(tmp_path, "first", tiny, webshop_url, None)
    assert "GRPO stopped by the budget after 1 steps" in first
    files = [os.path.join(d, f) for d, _, fs in os.walk(state) for f in fs]
    assert files and max(os.path.getsize(f) for f in files) <= 1024 * 1024  # MAX_FILE_MIB=1 here, 16 by default
    rel = {os.path.relpath(f, state) for f in files}
    assert "sft/sft_metrics.json" in rel and "sft/model.safetensors" not in rel  # the merged SFT model stays
    assert any(r.startswith("sft/lora_adapter/") for r in rel)
    assert any(r.startswith("grpo/global_step_1/actor/lora_adapter/") for r in rel)
    assert "grpo/learning_report_before.json" in rel and "grpo/learning_report.json" not in rel

    second, state2 = _window(tmp_path, "second", tiny, webshop_url, state)
    assert "done: the learning report" in second
    report = json.loads(open(os.path.join(state2, "grpo", "learning_report.json")).read())
    kept = json.loads(open(os.path.join(state, "grpo", "learning_report_before.json")).read())
    assert report["train_steps"] == 2 and report["before"]["step"] == 0 and report["after"]["step"] == 2
    assert report["per_goal"]["reward_before"] == kept["held_out"]["greedy"]["per_item"]["reward"]
    assert report["model_path"].endswith(os.path.join("second", "work", "sft"))  # the SFT model merged again
