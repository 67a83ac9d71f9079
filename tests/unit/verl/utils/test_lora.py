"""LoRA with PEFT on the tiny Qwen2 (CPU): config keys, merged weights, the adapter-disabled reference,
the adapter folder and sharded files, and the model merger."""
from __future__ import annotations

import json
import os

import pytest
import torch

from verl.config.models import ModelConfig
from verl.utils import lora
from verl.utils.checkpoint import load_sharded, save_sharded, split_by_size, tensor_bytes
from verl.utils.model_utils import load_causal_lm
from verl.utils.tiny_model import build_tiny_model


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    return build_tiny_model(str(tmp_path_factory.mktemp("tiny") / "model"))


def _peft(path: str, rank: int = 4, targets="all-linear", seed: int = 0):
    """A LoRA model whose B matrices are random (PEFT starts them at 0, where merged == base)."""
    model = lora.apply_lora(load_causal_lm(path), ModelConfig(path=path, lora_rank=rank, target_modules=targets))
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_B" in name:
                param.copy_(torch.randn(param.shape, generator=g) * 0.05)
    return model.eval()


def _ids(seed: int = 1) -> torch.Tensor:
    return torch.randint(3, 200, (2, 10), generator=torch.Generator().manual_seed(seed))


def test_lora_config_keys_and_their_errors():
    assert ModelConfig(path="m").lora_rank == 0 and not ModelConfig(path="m").use_lora
    cfg = ModelConfig(path="m", lora_rank=8, target_modules=["q_proj", "v_proj"])
    assert cfg.use_lora and cfg.lora_alpha == 16
    with pytest.raises(ValueError, match="actor_rollout_ref.model.lora_rank"):
        ModelConfig(path="m", lora_rank=-1)
    with pytest.raises(ValueError, match="actor_rollout_ref.model.lora_alpha"):
        ModelConfig(path="m", lora_rank=8, lora_alpha=0)
    for bad in ([], "", ["q_proj", ""], 3):
        with pytest.raises(ValueError, match="actor_rollout_ref.model.target_modules"):
            ModelConfig(path="m", lora_rank=8, target_modules=bad)
    ModelConfig(path="m", lora_rank=0, target_modules=[])  # not read while LoRA is off


def test_yaml_keys_and_export_default(tiny_path):
    from omegaconf import OmegaConf

    from verl.config.schema import default_config_path, load_config

    base = OmegaConf.load(default_config_path())
    cfg = load_config(OmegaConf.merge(base, OmegaConf.from_dotlist([
        f"actor_rollout_ref.model.path={tiny_path}", "actor_rollout_ref.model.lora_rank=8",
        "actor_rollout_ref.model.target_modules=[q_proj,v_proj]"])), resolve_auto=False)
    assert cfg.actor_rollout_ref.model.target_modules == ["q_proj", "v_proj"]
    assert cfg.trainer.export_hf is None and not cfg.exports_hf  # null: off with LoRA
    plain = load_config(OmegaConf.merge(base, OmegaConf.from_dotlist([f"actor_rollout_ref.model.path={tiny_path}"])),
                        resolve_auto=False)
    assert plain.exports_hf  # null: on without


def test_only_the_adapter_trains_and_bad_targets_name_the_key(tiny_path):
    model = _peft(tiny_path, targets=["q_proj", "v_proj"])
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all(".lora_A." in n or ".lora_B." in n for n in trainable)
    assert {n.split(".")[-4] for n in trainable} == {"q_proj", "v_proj"}
    with pytest.raises(ValueError, match="target_modules"):
        _peft(tiny_path, targets=["no_such_proj"])


def test_merged_weights_give_the_peft_models_logits(tiny_path):
    """What the engine receives: the base names, W + scale * B @ A; a plain model loaded with them computes
    the PEFT model's logits, and the PEFT model itself is untouched."""
    model = _peft(tiny_path)
    before = {n: p.clone() for n, p in model.named_parameters()}
    merged = dict(lora.merged_named_parameters(model))
    plain = load_causal_lm(tiny_path).eval()
    assert sorted(merged) == sorted(n for n, _ in plain.named_parameters())
    plain.load_state_dict(merged, strict=False)
    ids = _ids()
    with torch.no_grad():
        torch.testing.assert_close(plain(ids).logits, model(input_ids=ids).logits, rtol=1e-5, atol=1e-5)
    assert all(torch.equal(before[n], p) for n, p in model.named_parameters())
    base_q = load_causal_lm(tiny_path).state_dict()["model.layers.0.self_attn.q_proj.weight"]
    assert not torch.equal(merged["model.layers.0.self_attn.q_proj.weight"], base_q)


def test_adapter_disabled_is_the_base_model(tiny_path):
    model, base = _peft(tiny_path), load_causal_lm(tiny_path).eval()
    ids = _ids()
    with torch.no_grad(), lora.adapter_disabled(model):
        torch.testing.assert_close(model(input_ids=ids).logits, base(ids).logits)
    with torch.no_grad():
        assert not torch.allclose(model(input_ids=ids).logits, base(ids).logits)  # enabled again
    with lora.adapter_disabled(base):  # a plain module: nothing to disable
        pass


def test_adapter_folder_round_trip_one_file_and_shards(tiny_path, tmp_path):
    from peft import PeftModel

    model = _peft(tiny_path)
    state = lora.adapter_state_dict(model)
    one = lora.save_adapter(model, str(tmp_path / "one"), max_shard_bytes=2**30)
    assert sorted(os.listdir(one)) == ["adapter_config.json", "adapter_model.safetensors"]
    # PEFT itself reads the one-file folder
    loaded = PeftModel.from_pretrained(load_causal_lm(tiny_path), one).eval()
    ids = _ids()
    with torch.no_grad():
        torch.testing.assert_close(loaded(input_ids=ids).logits, model(input_ids=ids).logits)

    limit = (max(tensor_bytes(t) for t in state.values()) + 1024) * 3
    sharded = lora.save_adapter(model, str(tmp_path / "sharded"), max_shard_bytes=limit)
    shards = [f for f in os.listdir(sharded) if f.endswith(".safetensors")]
    assert len(shards) > 2 and "adapter_model.safetensors.index.json" in os.listdir(sharded)
    assert all(os.path.getsize(os.path.join(sharded, f)) <= limit for f in shards)
    fresh = lora.apply_lora(load_causal_lm(tiny_path), ModelConfig(path=tiny_path, lora_rank=4))
    lora.load_adapter(fresh, lora.read_adapter(sharded))
    for name, param in fresh.named_parameters():
        if param.requires_grad:
            assert torch.equal(param, dict(model.named_parameters())[name]), name
    with pytest.raises(KeyError, match="lora_rank or target_modules"):
        lora.load_adapter(_peft(tiny_path, targets=["q_proj"]), lora.read_adapter(sharded))
    with pytest.raises(FileNotFoundError, match="no LoRA adapter"):
        lora.read_adapter(str(tmp_path))


def test_save_sharded_splits_mappings_and_loads_them_back(tmp_path):
    state = {i: {"exp_avg": torch.randn(64, 64), "step": torch.tensor(3.0)} for i in range(10)}
    obj = {"state": state, "param_groups": [{"lr": 0.1, "params": list(range(10))}]}
    limit = 3 * (tensor_bytes(state[0]) + 2 * 1024)  # three entries: their data and the per-tensor allowance
    assert [len(p) for p in split_by_size(state, limit)] == [3, 3, 3, 1]
    files = save_sharded(obj, str(tmp_path / "optim.pt"), limit, keys=["state"])
    assert len(files) == 5 and all(os.path.getsize(f) <= limit for f in files)
    back = load_sharded(files[0])
    assert back["param_groups"] == obj["param_groups"] and sorted(back["state"]) == list(range(10))
    assert all(torch.equal(back["state"][i]["exp_avg"], state[i]["exp_avg"]) for i in range(10))
    assert save_sharded(obj, str(tmp_path / "small.pt"), 2**30, keys=["state"]) == [str(tmp_path / "small.pt")]
    assert sorted(load_sharded(str(tmp_path / "small.pt"))["state"]) == list(range(10))


def test_model_merger_writes_the_merged_model(tiny_path, tmp_path):
    from transformers import AutoModelForCausalLM

    from verl.model_merger import main

    model = _peft(tiny_path)
    actor = tmp_path / "global_step_1" / "actor"
    lora.save_adapter(model, str(actor / lora.ADAPTER_DIR), max_shard_bytes=2**30)
    assert json.loads((actor / lora.ADAPTER_DIR / "adapter_config.json").read_text())["base_model_name_or_path"]
    main(["merge", "--backend", "fsdp", "--local_dir", str(actor), "--target_dir", str(tmp_path / "merged")])
    merged = AutoModelForCausalLM.from_pretrained(str(tmp_path / "merged")).eval()
    ids = _ids()
    with torch.no_grad():
        torch.testing.assert_close(merged(ids).logits, model(input_ids=ids).logits, rtol=1e-5, atol=1e-5)
    with pytest.raises(FileNotFoundError, match="local_dir"):
        main(["merge", "--local_dir", str(tmp_path), "--target_dir", str(tmp_path / "x")])


def test_evaluation_refuses_lora_keys_and_says_to_merge():
    from verl.config.generation_schema import load_generation_config

    with pytest.raises(ValueError, match="verl.model_merger"):
        load_generation_config({"model": {"path": "m", "lora_rank": 8}}, resolve_auto=False)
