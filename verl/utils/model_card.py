"""Model card of a trained policy: `README.md` in the HF directory, YAML front matter + a readable body.

    python -m verl.utils.model_card DIR [--greedy-eval saves/eval/x/metrics.json] \
        [--sampled-eval saves/eval/y/metrics.json] [--command "bash scripts/webshop_sft.sh"] [--copy-to OUT]

The front matter is the machine-readable record (`read_model_card` returns it): the architecture from
`config.json` and the parameter count from the weights, the training run from `sft_metrics.json` (command,
demonstrations file + sha256, steps, batch, schedule, seconds, device, losses; one entry per stage when the run
started from an earlier SFT run's directory, followed back through `model_path`) and the held-out numbers from
`main_generation`'s `metrics.json` files (greedy and sampled: success with its Wilson CI, mean reward with its
bootstrap CI, pass@j). The body says the same for people. `--copy-to` first copies the loadable part of DIR
(weights, config, tokenizer, metrics) to OUT and writes the card there: that is how the shipped policy
(`agentenv_webshop/sft_policy`) is made from a training run.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import os
import shutil
from typing import Any

import yaml

__all__ = ["build_card", "write_model_card", "read_model_card", "copy_model_dir", "CARD_FILE"]

CARD_FILE = "README.md"
ARCH_KEYS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size",
             "vocab_size", "max_position_embeddings", "tie_word_embeddings")
MODEL_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
               "chat_template.jinja", "special_tokens_map.json", "tiny_model_build.json", "sft_metrics.json")


def _load_json(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


@functools.lru_cache(maxsize=None)
def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _parameter_count(model_dir: str) -> int:
    from safetensors import safe_open

    with safe_open(os.path.join(model_dir, "model.safetensors"), framework="np") as fh:
        return sum(math.prod(fh.get_slice(name).get_shape()) for name in fh.keys())


def _eval_record(metrics_path: str) -> dict:
    """The overall numbers of one `main_generation` run (its metrics.json) and how it was sampled."""
    run = _load_json(metrics_path)
    overall, cfg = run["overall"], run.get("config", {})
    rollout, agentgym, data = cfg.get("rollout", {}), cfg.get("agentgym", {}), cfg.get("data", {})
    keep = ("num_items", "num_trajectories", "k", "success_rate", "success_ci95", "mean_reward", "mean_reward_ci95",
            "pass_at_k", "pass_at_k_success", "success_pass_at", "mean_turns", "env_errors")
    record = {key: overall[key] for key in keep if key in overall}
    record.update({"items_file": data.get("path"), "temperature": rollout.get("temperature"),
                   "max_rounds": agentgym.get("max_rounds"), "max_tokens": rollout.get("max_tokens"),
                   "seed": rollout.get("seed"), "seconds": round(float(run.get("timing_s", {}).get("wall_s", 0.0)), 1)})
    return record


def build_card(model_dir: str, greedy_eval: str | None = None, sampled_eval: str | None = None,
               command: str | None = None) -> dict:
    """The card's record for `model_dir` (see the module docstring for the sources)."""
    config = _load_json(os.path.join(model_dir, "config.json"))
    card: dict[str, Any] = {
        "library_name": "transformers", "pipeline_tag": "text-generation", "tags": ["webshop", "agent", "sft"],
        "model": {"architecture": (config.get("architectures") or ["?"])[0], "model_type": config.get("model_type"),
                  **{key: config.get(key) for key in ARCH_KEYS}, "parameters": _parameter_count(model_dir),
                  "weights_bytes": os.path.getsize(os.path.join(model_dir, "model.safetensors"))},
    }
    stages = _sft_stages(model_dir)
    if stages:
        last = stages[-1]
        card["training"] = {
            "command": command, "demonstrations": last["demonstrations"],
            "demonstrations_sha256": last["demonstrations_sha256"], "conversations": last["conversations"],
            "assistant_tokens": last["assistant_tokens"], "steps": sum(stage["steps"] or 0 for stage in stages),
            "epochs": round(sum(stage["epochs"] or 0 for stage in stages), 2),
            "batch_size": last["batch_size"], "micro_batch_size": last["micro_batch_size"],
            "autocast_dtype": last["autocast_dtype"], "device": last["device"],
            "seconds": round(sum(stage["seconds"] for stage in stages), 1),
            "first_loss": stages[0]["first_loss"], "final_loss": last["final_loss"], "stages": stages,
        }
    evaluation = {}
    if greedy_eval:
        evaluation["greedy"] = _eval_record(greedy_eval)
    if sampled_eval:
        evaluation["sampled"] = _eval_record(sampled_eval)
    if evaluation:
        card["evaluation"] = evaluation
    return card


def _sft_stages(model_dir: str) -> list[dict]:
    """The SFT runs that made `model_dir`, oldest first: its sft_metrics.json, then the one of the model it started
    from (`model_path`), and so on while that directory holds one (a second stage continues a first)."""
    stages, seen = [], set()
    while model_dir and os.path.exists(os.path.join(model_dir, "sft_metrics.json")) and model_dir not in seen:
        seen.add(model_dir)
        sft = _load_json(os.path.join(model_dir, "sft_metrics.json"))
        stages.insert(0, _stage_record(sft))
        model_dir = _init_dir(sft)
    return stages


def _init_dir(sft: dict) -> str | None:
    """The model directory an SFT run (its sft_metrics.json) started from."""
    return sft.get("model_path") or sft.get("config", {}).get("model", {}).get("path")


def _stage_record(sft: dict) -> dict:
    """One SFT run (its sft_metrics.json): data, schedule, cost and loss."""
    cfg = sft.get("config", {})
    data, optim, trainer = cfg.get("data", {}), cfg.get("optim", {}), cfg.get("trainer", {})
    train_file = sft.get("train_file") or data.get("train_file")
    init = _init_dir(sft)
    return {
        "init": os.path.basename(os.path.normpath(init)) if init else None,
        "demonstrations": os.path.relpath(train_file) if train_file else None,
        "demonstrations_sha256": _sha256(train_file) if train_file and os.path.exists(train_file) else None,
        "conversations": sft.get("examples"), "assistant_tokens": sft.get("assistant_tokens"),
        "steps": sft.get("steps"), "epochs": _epochs(sft, data), "batch_size": data.get("train_batch_size"),
        "micro_batch_size": data.get("micro_batch_size"), "lr": optim.get("lr"),
        "lr_scheduler": optim.get("lr_scheduler_type"), "autocast_dtype": trainer.get("autocast_dtype"),
        "device": sft.get("device"), "seconds": round(float(sft.get("wall_s", 0.0)), 1),
        "first_loss": sft.get("first_loss"), "final_loss": sft.get("final_loss"),
    }


def _epochs(sft: dict, data: dict):
    """Passes over the data: steps x conversations per step / conversations (the started-epoch count otherwise)."""
    batch = data.get("train_batch_size") or data.get("micro_batch_size")
    if batch and sft.get("steps") and sft.get("examples"):
        return round(sft["steps"] * batch / sft["examples"], 2)
    return sft.get("epochs")


def _pct(value) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}%"


def _ci(pair) -> str:
    return "-" if not pair else f"[{100 * pair[0]:.1f}, {100 * pair[1]:.1f}]"


def _body(card: dict) -> str:
    model, training, evaluation = card["model"], card.get("training"), card.get("evaluation", {})
    lines = ["# WebShop SFT policy", "",
             f"A {model['parameters'] / 1e6:.1f}M-parameter {model['architecture']} ({model['hidden_size']} hidden, "
             f"{model['num_hidden_layers']} layers, {model['num_attention_heads']}/{model['num_key_value_heads']} "
             f"query/KV heads, FFN {model['intermediate_size']}, vocabulary {model['vocab_size']}) trained from "
             "scratch on expert WebShop demonstrations. It is the policy the CPU profile of "
             "`bash scripts/webshop_train.sh` starts GRPO from; load it like any HF causal LM.", ""]
    if training:
        lines += ["## Training", "",
                  f"- command: `{training['command']}`" if training.get("command") else "- command: (not recorded)",
                  f"- data: {training['conversations']} expert conversations from `{training['demonstrations']}` "
                  f"({training['assistant_tokens']} assistant tokens; "
                  f"sha256 `{(training['demonstrations_sha256'] or '-')[:16]}...`)",
                  f"- {training['steps']} steps x {training['batch_size']} conversations ({training['epochs']} epochs) "
                  f"on {training['device']}: {training['seconds'] / 60:.1f} min of training, autocast "
                  f"{training['autocast_dtype']}",
                  *(f"  - stage {i}: {stage['steps']} steps from `{stage['init']}`, lr {stage['lr']} "
                    f"{stage['lr_scheduler']}, {stage['seconds'] / 60:.1f} min, loss {stage['first_loss']:.3f} -> "
                    f"{stage['final_loss']:.3f}" for i, stage in enumerate(training["stages"], 1)),
                  f"- loss (assistant tokens): {training['first_loss']:.3f} -> {training['final_loss']:.3f}", ""]
    if evaluation:
        lines += ["## Held-out evaluation (AgentItemId/webshop_test.json)", "",
                  "| decoding | goals | samples/goal | success | success 95% CI | mean reward | reward 95% CI "
                  "| pass@k (success) | max turns |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for name, ev in evaluation.items():
            passes = ", ".join(f"pass@{j} {_pct(v)}" for j, v in (ev.get("success_pass_at") or {}).items())
            label = "greedy" if name == "greedy" else f"T={ev.get('temperature')}"
            reward_ci = ev.get("mean_reward_ci95")
            lines.append(f"| {label} | {ev.get('num_items')} | {ev.get('k')} | {_pct(ev.get('success_rate'))} | "
                         f"{_ci(ev.get('success_ci95'))} | {ev.get('mean_reward', 0):.3f} | "
                         f"{'-' if not reward_ci else f'[{reward_ci[0]:.3f}, {reward_ci[1]:.3f}]'} | {passes or '-'} | "
                         f"{ev.get('max_rounds')} |")
        lines += ["",
                  "Success = reward 1.0 (WebShop's exact match); CIs over goals: Wilson (success), "
                  "bootstrap (reward).",
                  ""]
    lines += ["The YAML header above is the machine-readable record (`verl.utils.model_card.read_model_card`)."]
    return "\n".join(lines) + "\n"


def write_model_card(model_dir: str, card: dict) -> str:
    """Write `card` as `<model_dir>/README.md` (front matter + body); returns the path."""
    path = os.path.join(model_dir, CARD_FILE)
    text = "---\n" + yaml.safe_dump(card, sort_keys=False) + "---\n\n" + _body(card)
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(path + ".tmp", path)
    return path


def read_model_card(model_dir: str) -> dict:
    """The front matter of `<model_dir>/README.md` as a dict.

    Raises:
        ValueError: the file has no `---` front matter.
    """
    with open(os.path.join(model_dir, CARD_FILE), encoding="utf-8") as fh:
        text = fh.read()
    if not text.startswith("---\n") or "\n---\n" not in text[4:]:
        raise ValueError(f"{model_dir}/{CARD_FILE} has no YAML front matter (--- ... ---)")
    return yaml.safe_load(text[4:text.index("\n---\n", 4)])


def copy_model_dir(src: str, dst: str) -> None:
    """Copy the loadable files of an HF dir (weights, config, tokenizer, build and SFT metrics) to `dst`."""
    os.makedirs(dst, exist_ok=True)
    for name in MODEL_FILES:
        if os.path.exists(os.path.join(src, name)):
            shutil.copy2(os.path.join(src, name), os.path.join(dst, name))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("--greedy-eval", help="metrics.json of a greedy main_generation run")
    parser.add_argument("--sampled-eval", help="metrics.json of a sampled (temperature > 0) main_generation run")
    parser.add_argument("--command", default="bash scripts/webshop_sft.sh", help="the command that trained it")
    parser.add_argument("--copy-to", help="copy the model there first and write the card in the copy")
    args = parser.parse_args(argv)
    target = args.model_dir
    if args.copy_to:
        copy_model_dir(args.model_dir, args.copy_to)
        target = args.copy_to
    card = build_card(target, args.greedy_eval, args.sampled_eval, args.command)
    print(write_model_card(target, card))


if __name__ == "__main__":
    main()
