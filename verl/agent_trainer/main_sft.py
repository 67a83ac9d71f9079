"""Supervised warm start (Hydra): fine-tune a causal LM on AgentTraj-style agent conversations.

    python -m verl.agent_trainer.main_sft data.train_file=saves/sft/webshop_demos.json \
        model.path=saves/tiny_model trainer.total_training_steps=300 trainer.default_local_dir=saves/sft/model

Config: `verl/agent_trainer/config/sft_trainer.yaml` (schema: `config/sft_schema.py`). Data: a JSON list
(or JSONL) of `{"item_id", "conversations": [{"from": "human"|"gpt", "loss": ..., "value": ...}]}`
(AgentTraj-L's format; `python -m agentenv_webshop.expert --demos-out F` writes it). Each conversation
is tokenised exactly as the rollout's agent loop (`verl.workers.rollout.agent_loop`) builds a
trajectory: the prompt is the chat template over the system line, the turns before the first trained
assistant turn and the observation before it (with the assistant header); then each assistant turn is
its text's ids plus the tokenizer's EOS (loss mask 1, like the ids the model samples and the EOS it
stops with), and each observation is the template's turn closing + user turn + next assistant header
(loss mask 0). Assistant turns with `"loss": false` (AgentGym's "Ok.") are never trained on.

Training is single-process (no Ray): AdamW with the trainer's schedule keys, the loss is the token
mean of the negative log-likelihood over all assistant tokens of an optimizer step. At the end the
model and tokenizer are saved (atomically) to `trainer.default_local_dir`, an HF directory that
`actor_rollout_ref.model.path` / `model.path` of evaluation can point to, with `sft_metrics.json`.

With `model.lora_rank > 0` a LoRA adapter (PEFT, `verl.utils.lora`) is trained instead of every weight; the
resumable checkpoint then holds the adapter and its optimizer state (files <= 16 MiB each), the adapter is
also saved in PEFT's format under `<default_local_dir>/lora_adapter`, and the saved model is the base with
the adapter merged in.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import random
import shutil
import time
from typing import Any, Sequence

import hydra
import torch

from verl.agent_trainer.sft_batch import collate_sft_examples, sft_nll_sum
from verl.config.schema import console_entry
from verl.config.sft_schema import SFTConfig, load_sft_config
from verl.workers.rollout.tokenizer import (
    chat_template_pieces,
    encode_text,
    initial_messages,
    observation_token_ids,
    render_chat,
    resolve_system_prompt,
)

__all__ = ["main", "run_sft", "load_conversations", "tokenize_conversation", "is_trained_turn", "SFT_METRICS_FILE"]

logger = logging.getLogger(__name__)

SFT_METRICS_FILE = "sft_metrics.json"


# ------------------------------------------------------------------------------------------- data
def load_conversations(path: str, max_examples: int | None = None) -> list[dict]:
    """Conversations from a JSON list or a JSONL file, checked for the AgentTraj shape.

    Raises:
        FileNotFoundError: `path` does not exist.
        ValueError: a row lacks `conversations` or a turn lacks `from`/`value` (names the row).
    """
    path = os.path.expanduser(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"data.train_file={path!r} does not exist; write demonstrations first "
                                "(bash scripts/webshop_sft.sh or python -m agentenv_webshop.expert "
                                f"--demos-out {path})")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    stripped = text.lstrip()
    if stripped.startswith("["):
        rows = json.loads(text)
    else:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    for i, row in enumerate(rows):
        turns = row.get("conversations") if isinstance(row, dict) else None
        if not isinstance(turns, list) or not turns:
            raise ValueError(f"{path}: row {i} has no 'conversations' list (AgentTraj format: "
                             f"{{'item_id', 'conversations': [{{'from', 'loss', 'value'}}, ...]}})")
        for j, turn in enumerate(turns):
            if (
                not isinstance(turn, dict)
                or turn.get("from") not in ("human", "gpt")
                or not isinstance(turn.get("value"), str)
            ):
                raise ValueError(f"{path}: row {i} ({row.get('item_id')}) turn {j} must be "
                                 f"{{'from': 'human'|'gpt', 'value': str}}, got {turn!r}"[:400])
    return rows[:max_examples] if max_examples else rows


def is_trained_turn(turn: dict) -> bool:
    """An assistant (gpt) turn whose `loss` is not false (AgentTraj marks "Ok." with false)."""
    return turn["from"] == "gpt" and turn.get("loss") is not False


def tokenize_conversation(tokenizer, conversations: Sequence[dict], system_prompt: str | None = None,
                          max_length: int | None = None, pieces: tuple | None = None) -> tuple[list[int], list[int]]:
    """Ids and loss mask of one conversation, built like the agent loop builds a trajectory.

    Args:
        tokenizer: HF tokenizer with an append-only chat template; its EOS ends an assistant turn.
        conversations: AgentTraj turns `{"from": "human"|"gpt", "loss", "value"}`.
        system_prompt: system line (None: the model family's default, as in the rollout:
            `rollout.tokenizer.default_system_prompt`; "" for none).
        max_length: cut ids and mask to this many tokens (None: no cut).
        pieces: `chat_template_pieces(tokenizer)`, computed when not given.

    Returns:
        `(input_ids, loss_mask)`: mask 1 exactly on assistant text tokens and the EOS closing them.

    Raises:
        ValueError: no trained assistant turn, or the turns after it do not alternate gpt/human.
    """
    system_prompt = resolve_system_prompt(system_prompt, tokenizer)
    turns = list(conversations)
    first = next((k for k, t in enumerate(turns) if is_trained_turn(t)), None)
    if first is None:
        raise ValueError("the conversation has no trained assistant turn (from='gpt' with loss not false)")
    if first == 0 or turns[first - 1]["from"] != "human":
        raise ValueError(f"turn {first} (the first trained assistant turn) must follow a human observation turn")
    while turns and turns[-1]["from"] == "human":  # the rollout never renders the final observation
        turns.pop()
    pieces = pieces or chat_template_pieces(tokenizer)
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ValueError("the tokenizer has no eos_token; an assistant turn must end with it (as in the rollout)")
    messages = initial_messages(system_prompt, turns[:first - 1], turns[first - 1]["value"])
    ids = encode_text(tokenizer, render_chat(tokenizer, messages, add_generation_prompt=True))
    mask = [0] * len(ids)
    expected = "gpt"
    for k in range(first, len(turns)):
        turn = turns[k]
        if turn["from"] != expected:
            raise ValueError(f"turn {k} is from {turn['from']!r} but {expected!r} was expected: after the first "
                             f"trained turn, assistant and human turns must alternate")
        if turn["from"] == "gpt":
            part = encode_text(tokenizer, turn["value"]) + [eos]
            mask += [1 if is_trained_turn(turn) else 0] * len(part)
            expected = "human"
        else:
            part = observation_token_ids(tokenizer, pieces, turn["value"], eos)
            mask += [0] * len(part)
            expected = "gpt"
        ids += part
    if max_length is not None:
        ids, mask = ids[:max_length], mask[:max_length]
    return ids, mask


def _tokenize_all(tokenizer, rows: list[dict], config: SFTConfig) -> list[tuple[list[int], list[int]]]:
    pieces = chat_template_pieces(tokenizer)
    out, skipped = [], 0
    for row in rows:
        ids, mask = tokenize_conversation(tokenizer, row["conversations"], config.data.system_prompt,
                                          config.data.max_length, pieces)
        if sum(mask) == 0:  # the prompt alone fills max_length
            skipped += 1
            continue
        out.append((ids, mask))
    if skipped:
        logger.warning("%d/%d conversations have no assistant token within data.max_length=%d and are skipped",
                       skipped, len(rows), config.data.max_length)
    if not out:
        raise ValueError(f"no conversation of {config.data.train_file!r} has an assistant token within "
                         f"data.max_length={config.data.max_length}; raise data.max_length")
    return out


# ------------------------------------------------------------------------------------------ train
def _batches(n: int, batch_size: int, shuffle: bool, seed: int):
    """Endless epochs of index batches (reshuffled per epoch); yields (epoch, indices)."""
    epoch = 0
    while True:
        order = list(range(n))
        if shuffle:
            random.Random(seed + epoch).shuffle(order)
        for start in range(0, n, batch_size):
            yield epoch, order[start:start + batch_size]
        epoch += 1


class _Checkpoint:
    """The resumable state of an SFT run, in `<default_local_dir>.checkpoint/state.pt` (written atomically):
    model, optimizer, schedule, losses so far, the step (which fixes the data position) and the RNG. With LoRA
    the model part is the adapter, and adapter and optimizer state are split into files <= MAX_SHARD_BYTES."""

    def __init__(self, out_dir: str):
        self.dir = os.path.abspath(os.path.expanduser(out_dir)).rstrip("/") + ".checkpoint"
        self.path = os.path.join(self.dir, "state.pt")

    def save(self, model, optimizer, scheduler, losses: list, step: int, total_steps: int, wall_s: float) -> None:
        from verl.utils import lora
        from verl.utils.checkpoint import MAX_SHARD_BYTES, save_atomic, save_sharded, to_cpu

        os.makedirs(self.dir, exist_ok=True)
        optim = optimizer.state_dict()
        state = {"model": model.state_dict(), "optimizer": optim, "scheduler": scheduler.state_dict(),
                 "losses": list(losses), "step": step, "total_steps": total_steps, "rng": torch.get_rng_state(),
                 "wall_s": wall_s}
        if lora.is_lora(model):  # the adapter only; the optimizer's per-parameter state split like it
            state.update(model={n: p for n, p in model.named_parameters() if p.requires_grad},
                         optimizer={"param_groups": optim["param_groups"]}, optimizer_state=optim["state"])
            save_sharded(to_cpu(state), self.path, MAX_SHARD_BYTES, keys=["model", "optimizer_state"])
        else:
            save_atomic(to_cpu(state), self.path)
        logger.info("SFT checkpoint at step %d: %s", step, self.path)

    def restore(self, model, optimizer, scheduler, losses: list, total_steps: int) -> tuple[int, float]:
        """Load the checkpoint into the given objects; returns its step and the training seconds spent up to it
        (`(0, 0.0)` when there is none to resume)."""
        if not os.path.exists(self.path):
            return 0, 0.0
        from verl.utils import lora
        from verl.utils.checkpoint import load_sharded

        state = load_sharded(self.path)
        if state["total_steps"] != total_steps:
            logger.warning("ignoring %s: it belongs to a run of %d steps, this one has %d", self.path,
                           state["total_steps"], total_steps)
            return 0, 0.0
        if lora.is_lora(model):
            lora.load_adapter(model, state["model"])
            optimizer.load_state_dict({**state["optimizer"], "state": state["optimizer_state"]})
        else:
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        losses.extend(state["losses"])
        torch.set_rng_state(state["rng"])
        logger.info("resuming SFT from step %d of %d (%s)", state["step"], total_steps, self.path)
        return int(state["step"]), float(state.get("wall_s", 0.0))

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _save(model, tokenizer, out_dir: str, metrics: dict) -> None:
    """Write model + tokenizer + metrics atomically (`model_utils.save_hf_dir`); a LoRA model is saved merged,
    its adapter in PEFT's format under `lora_adapter/` beside it."""
    from verl.utils import lora, model_utils
    from verl.utils.checkpoint import MAX_SHARD_BYTES

    if lora.is_lora(model):
        adapter = lora.adapter_state_dict(model)
        out_dir = model_utils.save_hf_dir(out_dir, model.merge_and_unload(), tokenizer,
                                          json_files={SFT_METRICS_FILE: metrics})
        lora.save_adapter(model, os.path.join(out_dir, lora.ADAPTER_DIR), MAX_SHARD_BYTES, adapter)
        return
    model_utils.save_hf_dir(out_dir, model, tokenizer, json_files={SFT_METRICS_FILE: metrics})


def run_sft(cfg: Any = None) -> dict:
    """Train on `data.train_file` and save the HF model to `trainer.default_local_dir`.

    Args:
        cfg: DictConfig, dict, `SFTConfig` or None (shipped defaults).

    Returns:
        metrics dict (`steps`, `epochs`, `examples`, `first_loss`, `final_loss`, `losses`, `wall_s`,
        `output_dir`); also written to `<output_dir>/sft_metrics.json`.
    """
    from verl.config.device import resolve_dtype
    from verl.utils import lora, model_utils
    from verl.utils.tracking import Tracking

    config = cfg if isinstance(cfg, SFTConfig) else load_sft_config(cfg)
    data, tcfg = config.data, config.trainer
    torch.manual_seed(tcfg.seed)
    device = torch.device(tcfg.device)
    model_path = os.path.expanduser(config.model.path)
    tokenizer = model_utils.load_tokenizer(os.path.expanduser(config.model.tokenizer_path or model_path),
                                           trust_remote_code=config.model.trust_remote_code)
    examples = _tokenize_all(tokenizer, load_conversations(data.train_file, data.max_examples), config)
    steps_per_epoch = math.ceil(len(examples) / data.batch_size)
    total_steps = tcfg.total_training_steps or tcfg.total_epochs * steps_per_epoch
    model = model_utils.load_causal_lm(model_path, getattr(torch, resolve_dtype(config.model.dtype, device)),
                                       trust_remote_code=config.model.trust_remote_code,
                                       attn_implementation=config.model.attn_implementation,
                                       override_config=dict(config.model.override_config)).to(device)
    if config.model.use_lora:  # only the adapter requires gradients, so only it reaches the optimizer
        model = lora.apply_lora(model, config.model)
    if config.model.enable_gradient_checkpointing:  # non-reentrant: gradients reach an adapter on frozen inputs
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    optim_cfg = dataclasses.replace(config.optim, total_training_steps=total_steps)
    optimizer = model_utils.build_optimizer(model, optim_cfg)
    scheduler = model_utils.build_lr_scheduler(optimizer, optim_cfg)
    tracker = Tracking(tcfg.project_name, tcfg.experiment_name, tcfg.logger, config=dataclasses.asdict(config))
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    n_tokens = sum(sum(m) for _, m in examples)
    logger.info("SFT of %s on %d conversations (%d assistant tokens): %d steps of %d conversations (%d epochs)",
                model_path, len(examples), n_tokens, total_steps, data.batch_size,
                math.ceil(total_steps / steps_per_epoch))

    autocast = (torch.autocast(device.type, dtype=getattr(torch, tcfg.autocast_dtype)) if tcfg.autocast_dtype
                else contextlib.nullcontext())
    losses: list[float] = []
    ckpt = _Checkpoint(tcfg.default_local_dir)
    start, wall_before = (ckpt.restore(model, optimizer, scheduler, losses, total_steps)
                          if tcfg.resume_mode == "auto" else (0, 0.0))
    t0 = time.perf_counter()
    batches = _batches(len(examples), data.batch_size, data.shuffle, data.seed)
    epoch = 0
    for _ in range(start):  # the data position of the restored step
        epoch, _ = next(batches)
    for step in range(start + 1, total_steps + 1):
        t_step = time.perf_counter()
        epoch, idx = next(batches)
        step_examples = [examples[i] for i in idx]
        denom = max(1, sum(sum(m[1:]) for _, m in step_examples))
        optimizer.zero_grad(set_to_none=True)
        step_loss = 0.0
        step_examples.sort(key=lambda example: len(example[0]))  # similar lengths share a micro-batch: less padding
        for first in range(0, len(step_examples), data.micro_batch_size):
            batch = {k: v.to(device) for k, v in
                     collate_sft_examples(step_examples[first:first + data.micro_batch_size], pad_id).items()}
            with autocast:
                loss = sft_nll_sum(model, batch, data.observation_loss_weight) / denom
            loss.backward()
            step_loss += float(loss.detach())
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.optim.clip_grad)
        optimizer.step()
        scheduler.step()
        losses.append(step_loss)
        if step % tcfg.log_freq == 0 or step in (1, total_steps):
            tracker.log({"train/loss": step_loss, "train/grad_norm": float(grad_norm),
                         "train/lr": scheduler.get_last_lr()[0], "train/epoch": epoch,
                         "train/assistant_tokens": denom, "timing_s/step": time.perf_counter() - t_step,
                         "timing_s/elapsed": time.perf_counter() - t0}, step=step)
        if tcfg.save_freq > 0 and step % tcfg.save_freq == 0 and step < total_steps:
            ckpt.save(model, optimizer, scheduler, losses, step, total_steps, wall_before + time.perf_counter() - t0)

    model.eval()
    wall = wall_before + time.perf_counter() - t0  # training seconds over all (resumed) segments
    window = max(1, min(10, len(losses) // 4))
    metrics = {"steps": total_steps, "epochs": epoch + 1, "examples": len(examples), "assistant_tokens": n_tokens,
               "first_loss": losses[0], "final_loss": sum(losses[-window:]) / window, "losses": losses,
               "wall_s": wall, "model_path": model_path, "train_file": data.train_file,
               "output_dir": os.path.abspath(os.path.expanduser(tcfg.default_local_dir)),
               "device": str(device), "resumed_from_step": start, "config": dataclasses.asdict(config)}
    _save(model, tokenizer, tcfg.default_local_dir, metrics)
    ckpt.remove()  # the run is complete: a new run in this directory starts over
    logger.info("SFT done: %d steps in %.1fs, loss %.4f -> %.4f; saved to %s", total_steps, wall, losses[0],
                metrics["final_loss"], metrics["output_dir"])
    return metrics


@hydra.main(config_path="config", config_name="sft_trainer", version_base=None)
def _hydra_main(cfg) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    metrics = run_sft(cfg)
    print(f"sft: {metrics['steps']} steps, {metrics['examples']} conversations, loss {metrics['first_loss']:.4f} -> "
          f"{metrics['final_loss']:.4f}, {metrics['wall_s']:.1f}s; model: {metrics['output_dir']}")


main = console_entry(SFTConfig, _hydra_main)


if __name__ == "__main__":
    main()
