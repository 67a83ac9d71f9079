"""The actor update on CUDA (one process): param/optimizer offload and activation offloading change where
tensors wait, not what is computed. Skipped without CUDA (conftest: `gpu` marker)."""
from __future__ import annotations

import math

import pytest
import torch
from omegaconf import OmegaConf
from unit.verl.workers.test_fsdp_workers import actor_worker, dict_config, make_batch

pytestmark = pytest.mark.gpu

OFFLOADS = {
    "none": [],
    "param+optimizer": ["actor_rollout_ref.actor.fsdp_config.param_offload=true",
                        "actor_rollout_ref.actor.fsdp_config.optimizer_offload=true"],
    "activations": ["actor_rollout_ref.model.enable_activation_offloading=true"],
    "all": ["actor_rollout_ref.actor.fsdp_config.param_offload=true",
            "actor_rollout_ref.actor.fsdp_config.optimizer_offload=true",
            "actor_rollout_ref.model.enable_activation_offloading=true"],
}


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    from verl.utils.tiny_model import build_tiny_model

    return build_tiny_model(str(tmp_path_factory.mktemp("tiny") / "model"))


def _run(tiny_path: str, overrides: list[str], steps: int = 2, R: int = 96, micro_bsz: int = 2) -> dict:
    """`steps` actor updates on CUDA: their losses and gradient norms, where the weights and the optimizer
    state wait afterwards, the peak memory above what was held when the updates began (`peak_mib`), and the
    log-probs after the updates."""
    cfg = OmegaConf.merge(dict_config(tiny_path), OmegaConf.from_dotlist([
        "trainer.device=cuda", "actor_rollout_ref.actor.use_kl_loss=false",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={micro_bsz}", *overrides]))
    torch.manual_seed(0)
    worker = actor_worker(cfg, role="actor")
    worker.init_model()
    data = make_batch(worker.tokenizer, bs=4, R=R, seed=1)
    data = data.union(worker.compute_log_prob(data))
    out = {"pg_loss": [], "grad_norm": [], "param_devices": set(), "optim_devices": set()}
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    held_at_reset = torch.cuda.memory_allocated()
    for _ in range(steps):
        metrics = worker.update_actor(data).meta_info["metrics"]
        out["pg_loss"].append(metrics["actor/pg_loss"])
        out["grad_norm"].append(metrics["actor/grad_norm"])
    torch.cuda.synchronize()
    out["peak_mib"] = (torch.cuda.max_memory_allocated() - held_at_reset) / 2**20
    out["param_devices"] = {p.device.type for p in worker.module.parameters()}
    out["optim_devices"] = {v.device.type for s in worker.optimizer.state.values() for v in s.values()
                            if torch.is_tensor(v) and v.dim() > 0}
    out["log_probs"] = worker.compute_log_prob(data).batch["old_log_probs"]
    return out


def test_offloaded_actor_updates_match_the_resident_run(tiny_path):
    base = _run(tiny_path, OFFLOADS["none"])
    assert base["param_devices"] == {"cuda"} and base["optim_devices"] == {"cuda"}
    for name, overrides in OFFLOADS.items():
        if name == "none":
            continue
        run = _run(tiny_path, overrides)
        for key in ("pg_loss", "grad_norm"):
            assert all(math.isfinite(v) for v in run[key]), (name, key, run[key])
            assert run[key] == pytest.approx(base[key], rel=1e-4, abs=1e-6), (name, key)
        torch.testing.assert_close(run["log_probs"], base["log_probs"], atol=1e-5, rtol=1e-4)
        if "param_offload=true" in " ".join(overrides):  # one process, no FSDP: weights wait in CPU memory
            assert run["param_devices"] == {"cpu"}, name
            assert run["optim_devices"] == {"cpu"}, name


def test_activation_offloading_lowers_peak_gpu_memory(tiny_path):
    """A shape where saved activations dominate the peak (R=2,048, one micro-batch of 4 rows; the tiny model's
    weights, optimizer state and cuBLAS workspace are small next to them), measured above the memory held
    when the update began. On an H100: 200.2 -> 83.9 MiB (0.42)."""
    resident = _run(tiny_path, OFFLOADS["none"], steps=1, R=2048, micro_bsz=4)
    offloaded = _run(tiny_path, OFFLOADS["activations"], steps=1, R=2048, micro_bsz=4)
    ratio = offloaded["peak_mib"] / resident["peak_mib"]
    assert ratio < 0.7, (offloaded["peak_mib"], resident["peak_mib"], ratio)
