"""Two GRPO steps on CUDA through the real Hydra entry point: the HF engine generates on the GPU against a
real WebShop server (which hides the GPUs from itself), the actor trains there, validation runs, and
step 2 is checkpointed and exported. The same run as tests/e2e/test_train_webshop.py's first half, with
`trainer.device=cuda` (which fails at start-up when torch sees no GPU). Skipped without CUDA (conftest:
`gpu` marker)."""
from __future__ import annotations

import math

import pytest
from e2e.test_train_webshop import check_two_steps, grpo_args, run_main_ppo

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(400)]


def test_grpo_two_steps_on_cuda(webshop_url, tiny_model, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    run_main_ppo(grpo_args(tmp_path, tiny_model, webshop_url, device="cuda") + ["trainer.total_training_steps=2"],
                 cwd=str(tmp_path))
    rows = check_two_steps(tmp_path)
    for row in rows:
        assert row["response_length/mean"] > 0 and math.isfinite(row["actor/grad_norm"]), row
        assert row["perf/max_memory_allocated_gb"] > 0  # the actor worker's tensors lived on the GPU
    model = AutoModelForCausalLM.from_pretrained(str(tmp_path / "ckpt" / "global_step_2" / "actor" / "huggingface"))
    assert all(torch.isfinite(p).all() for p in model.parameters())  # weights came back from the GPU intact
