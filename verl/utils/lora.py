"""LoRA adapters with PEFT: the one place the actor, SFT and the model merger wrap, read, write and merge them.

Owns: wrapping a causal LM with a LoRA adapter from `model.{lora_rank, lora_alpha, target_modules}` (base
weights frozen), the reference policy's view (the same model with the adapter disabled), the merged weights
the rollout engine receives (`W + lora_alpha / lora_rank * B @ A` under the base model's parameter names,
computed without touching the trained module), and the adapter folder of a checkpoint in PEFT's format
(`adapter_config.json` + `adapter_model.safetensors`, split into shards of at most `max_shard_bytes` with
an HF index when larger), which `peft.PeftModel.from_pretrained` reads when it is one file.

Does not own FSDP (the caller passes `gather`, which turns a sharded tensor into the full one) or the
optimizer state (`verl.utils.checkpoint.save_sharded`).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from typing import Callable, Iterator

import torch

from verl.utils.checkpoint import split_by_size

__all__ = ["ADAPTER_DIR", "apply_lora", "is_lora", "base_model", "adapter_disabled", "merged_named_parameters",
           "adapter_state_dict", "save_adapter", "read_adapter", "load_adapter", "merge_adapter"]

ADAPTER_DIR = "lora_adapter"  # the adapter folder inside a checkpoint's actor directory
_WEIGHTS = "adapter_model.safetensors"
_INDEX = "adapter_model.safetensors.index.json"
_ADAPTER = "default"  # PEFT's adapter name; the only one this project trains


def _identity(tensor: torch.Tensor) -> torch.Tensor:
    return tensor


def apply_lora(module: torch.nn.Module, model_cfg) -> torch.nn.Module:
    """`module` wrapped by PEFT's `get_peft_model` with a LoRA adapter of `model_cfg.lora_rank` on
    `model_cfg.target_modules`, scale `lora_alpha / lora_rank`, no dropout (the engine samples from the same
    function the actor scores); only the adapter's parameters require gradients.

    Raises:
        ValueError: `target_modules` matches no layer, or a layer that is not a linear one (the merged
            weights of the engine sync are written for linear layers).
    """
    from peft import LoraConfig, get_peft_model
    from peft.tuners.lora.layer import Linear as LoraLinear

    targets = model_cfg.target_modules
    targets = targets if isinstance(targets, str) else list(targets)
    config = LoraConfig(r=int(model_cfg.lora_rank), lora_alpha=model_cfg.lora_alpha, target_modules=targets,
                        lora_dropout=0.0, bias="none", task_type="CAUSAL_LM")
    try:
        peft_model = get_peft_model(module, config)
    except ValueError as exc:
        raise ValueError(f"actor_rollout_ref.model.target_modules={targets!r} fits this model's layers badly: {exc}; "
                         "use all-linear or names of its linear layers (e.g. q_proj, v_proj)") from exc
    from peft.tuners.lora import LoraLayer

    for name, layer in peft_model.named_modules():
        if isinstance(layer, LoraLayer) and not isinstance(layer, LoraLinear):
            raise ValueError(f"actor_rollout_ref.model.target_modules={targets!r} selects {name} "
                             f"({type(layer).__name__}); only linear layers are supported")
    return peft_model


def is_lora(module: torch.nn.Module) -> bool:
    """True for a module wrapped by PEFT (also once sharded by FSDP2)."""
    return hasattr(module, "peft_config") and hasattr(module, "get_base_model")


def base_model(module: torch.nn.Module) -> torch.nn.Module:
    """The transformers model inside a PEFT model (its linear layers carry the adapter), else `module`."""
    return module.get_base_model() if is_lora(module) else module


def adapter_disabled(module: torch.nn.Module):
    """Context in which a PEFT model computes with its base weights only (the reference policy); a no-op
    context for a plain module."""
    return module.disable_adapter() if is_lora(module) else contextlib.nullcontext()


def merged_named_parameters(module: torch.nn.Module,
                            gather: Callable[[torch.Tensor], torch.Tensor] = _identity
                            ) -> Iterator[tuple[str, torch.Tensor]]:
    """Yield `(base-model parameter name, tensor)` one at a time, the LoRA layers' weights merged:
    `W + scale * B @ A` (computed in fp32, returned in W's dtype). The names are those of the base
    model (`model.layers.0.self_attn.q_proj.weight`), so an engine built from the base checkpoint loads
    them unchanged; tied duplicates come once, as in `named_parameters`. `module` is not modified.

    Args:
        gather: full tensor of a (possibly FSDP-sharded) parameter; every rank must iterate in step.
    """
    from peft.tuners.lora import LoraLayer

    base = base_model(module)
    layers = {name: layer for name, layer in base.named_modules() if isinstance(layer, LoraLayer)}
    for name, param in base.named_parameters():
        owner, _, leaf = name.rpartition(".")
        if ".lora_" in name:
            continue
        tensor = gather(param.detach())
        if owner.endswith(".base_layer") and leaf == "weight":
            layer = layers[owner[:-len(".base_layer")]]
            a = gather(layer.lora_A[_ADAPTER].weight.detach()).float()
            b = gather(layer.lora_B[_ADAPTER].weight.detach()).float()
            delta = b @ a
            if layer.fan_in_fan_out:
                delta = delta.T
            tensor = (tensor.float() + layer.scaling[_ADAPTER] * delta).to(tensor.dtype)
        yield name.replace(".base_layer.", "."), tensor


def adapter_state_dict(module: torch.nn.Module,
                       gather: Callable[[torch.Tensor], torch.Tensor] = _identity) -> dict[str, torch.Tensor]:
    """The adapter's weights as full CPU tensors under PEFT's saved names (`...q_proj.lora_A.weight`)."""
    from peft import get_peft_model_state_dict

    return {k: gather(v.detach()).cpu().contiguous() for k, v in get_peft_model_state_dict(module).items()}


def _module_names(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """PEFT's saved names -> the PEFT model's parameter names (the adapter name put back)."""
    out = {}
    for key, value in state.items():
        for part in (".lora_A.", ".lora_B."):
            if part in key:
                key = key.replace(part, f"{part}{_ADAPTER}.")
        out[key] = value
    return out


def save_adapter(module: torch.nn.Module, directory: str, max_shard_bytes: int,
                 state: dict[str, torch.Tensor] | None = None) -> str:
    """Write the adapter to `directory` atomically in PEFT's format: `adapter_config.json` (its
    `base_model_name_or_path` is the base checkpoint) and `adapter_model.safetensors`, or, above
    `max_shard_bytes`, `adapter_model-0000i-of-0000n.safetensors` with `adapter_model.safetensors.index.json`.

    Args:
        state: the adapter weights (`adapter_state_dict`) when already gathered; None reads them from `module`.

    Returns:
        The absolute path of `directory`.
    """
    from safetensors.torch import save_file

    state = adapter_state_dict(module) if state is None else state
    directory = os.path.abspath(directory)
    parent = os.path.dirname(directory)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(directory)}-", dir=parent)
    try:
        module.peft_config[_ADAPTER].save_pretrained(tmp)
        shards = split_by_size(state, max_shard_bytes)
        if len(shards) == 1:
            save_file(shards[0], os.path.join(tmp, _WEIGHTS), metadata={"format": "pt"})
        else:
            weight_map = {}
            for i, shard in enumerate(shards, 1):
                name = f"adapter_model-{i:05d}-of-{len(shards):05d}.safetensors"
                save_file(shard, os.path.join(tmp, name), metadata={"format": "pt"})
                weight_map.update(dict.fromkeys(shard, name))
            total = sum(t.numel() * t.element_size() for t in state.values())
            with open(os.path.join(tmp, _INDEX), "w", encoding="utf-8") as fh:
                json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, fh, indent=1)
        if os.path.exists(directory):
            shutil.rmtree(directory)
        os.replace(tmp, directory)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return directory


def read_adapter(directory: str) -> dict[str, torch.Tensor]:
    """The adapter weights `save_adapter` wrote (one file or shards), under the PEFT model's parameter
    names (`...q_proj.lora_A.default.weight`), as CPU tensors.

    Raises:
        FileNotFoundError: `directory` holds no adapter weights.
    """
    from safetensors.torch import load_file

    single, index = os.path.join(directory, _WEIGHTS), os.path.join(directory, _INDEX)
    if os.path.exists(single):
        state = load_file(single)
    elif os.path.exists(index):
        with open(index, encoding="utf-8") as fh:
            files = sorted(set(json.load(fh)["weight_map"].values()))
        state = {}
        for name in files:
            state.update(load_file(os.path.join(directory, name)))
    else:
        raise FileNotFoundError(f"no LoRA adapter in {directory} (expected {_WEIGHTS} or {_INDEX})")
    return _module_names(state)


def load_adapter(module: torch.nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Copy `read_adapter`'s weights into a (not sharded) PEFT model.

    Raises:
        KeyError: the weights do not cover the model's adapter exactly (another rank or target_modules).
    """
    trainable = {n for n, p in module.named_parameters() if p.requires_grad}
    missing, unexpected = sorted(trainable - set(state)), sorted(set(state) - trainable)
    if missing or unexpected:
        raise KeyError(f"the saved LoRA adapter does not fit the model: missing {missing[:3]}, unexpected "
                       f"{unexpected[:3]} (saved with another lora_rank or target_modules?)")
    module.load_state_dict(state, strict=False)


def merge_adapter(base: torch.nn.Module, directory: str) -> torch.nn.Module:
    """`base` (a transformers model) with the adapter in `directory` merged into its weights: a plain model
    again, as a full fine-tune would have left it."""
    from peft import LoraConfig, get_peft_model

    config = LoraConfig.from_pretrained(directory)
    config.inference_mode = False
    model = get_peft_model(base, config)
    load_adapter(model, read_adapter(directory))
    return model.merge_and_unload()
