"""Turn an actor checkpoint into a HuggingFace model folder (verl's `model_merger` command line):

    python -m verl.model_merger merge --backend fsdp --local_dir <default_local_dir>/global_step_N/actor \
        --target_dir saves/merged [--base_model PATH]

A LoRA checkpoint (`lora_adapter/`, written with `actor_rollout_ref.model.lora_rank > 0`) is merged into its
base model (`base_model_name_or_path` of the adapter's config, or `--base_model`): the result is a plain
model, as a full fine-tune would have left it, in the base checkpoint's dtype. A full checkpoint of one rank
(`model_world_size_1_rank_0.pt`) is written as it is. The tokenizer and config come from the checkpoint's
`huggingface/` folder. The output loads with `AutoModelForCausalLM` and any engine (`model.path=...`).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
from typing import Sequence

__all__ = ["merge_checkpoint", "main"]

logger = logging.getLogger(__name__)


def merge_checkpoint(local_dir: str, target_dir: str, base_model: str | None = None) -> str:
    """Write the HF model of the actor checkpoint `local_dir` to `target_dir` (see the module docstring).

    Returns:
        The absolute path of `target_dir`.

    Raises:
        FileNotFoundError: `local_dir` holds neither an adapter nor a one-rank model file, or the base model
            of an adapter is not there (pass `--base_model`).
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from verl.utils import lora, model_utils

    local_dir = os.path.abspath(os.path.expanduser(local_dir))
    hf_dir = os.path.join(local_dir, "huggingface")
    adapter_dir = os.path.join(local_dir, lora.ADAPTER_DIR)
    full_file = os.path.join(local_dir, "model_world_size_1_rank_0.pt")
    if os.path.isdir(adapter_dir):
        if base_model is None:
            with open(os.path.join(adapter_dir, "adapter_config.json"), encoding="utf-8") as fh:
                base_model = json.load(fh).get("base_model_name_or_path")
        base_model = os.path.expanduser(base_model or "")
        if not os.path.isdir(base_model):
            raise FileNotFoundError(f"the base model of the adapter in {adapter_dir} is not at {base_model!r}; "
                                    "pass --base_model DIR (the actor_rollout_ref.model.path it was trained on)")
        config = AutoConfig.from_pretrained(base_model)
        dtype = getattr(config, "dtype", None) or torch.float32
        model = lora.merge_adapter(model_utils.load_causal_lm(base_model, dtype=dtype), adapter_dir)
        tokenizer_dir = hf_dir if os.path.exists(os.path.join(hf_dir, "tokenizer_config.json")) else base_model
        logger.info("merged the LoRA adapter %s into %s", adapter_dir, base_model)
    elif os.path.exists(full_file):
        config = AutoConfig.from_pretrained(hf_dir)
        model = AutoModelForCausalLM.from_config(config)
        model.load_state_dict(torch.load(full_file, map_location="cpu", weights_only=False))
        tokenizer_dir = hf_dir
    else:
        raise FileNotFoundError(f"{local_dir} holds no {lora.ADAPTER_DIR}/ and no model_world_size_1_rank_0.pt; "
                                "point --local_dir at a global_step_N/actor directory (checkpoints of several "
                                "ranks: set trainer.export_hf=true, which writes the merged model there)")
    return model_utils.save_hf_dir(target_dir, model, model_utils.load_tokenizer(tokenizer_dir))


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: `merge --local_dir DIR --target_dir DIR [--base_model DIR] [--backend fsdp]`."""
    parser = argparse.ArgumentParser(prog="python -m verl.model_merger", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="operation", required=True)
    merge = sub.add_parser("merge", help="write the checkpoint as an HF model folder")
    merge.add_argument("--backend", default="fsdp", choices=["fsdp"], help="checkpoint format (verl's flag)")
    merge.add_argument("--local_dir", required=True, help="the checkpoint's global_step_N/actor directory")
    merge.add_argument("--target_dir", required=True, help="the HF model folder to write")
    merge.add_argument("--base_model", default=None, help="LoRA: the base model (default: the adapter's config)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    out = merge_checkpoint(args.local_dir, args.target_dir, args.base_model)
    print(f"merged model: {out}")


if __name__ == "__main__":
    main()
