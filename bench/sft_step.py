"""SFT training throughput on WebShop expert conversations: fp32 vs bf16 autocast, full logits vs the LM head on
the assistant positions only (what `main_sft` does), on the same model, batches and optimizer.

    python bench/sft_step.py [--model DIR] [--demos saves/sft/webshop_demos.json] [--steps 3] [--batch 16] [--micro 8]

Without `--model` it builds the SFT policy's shape (hidden 256, 4 layers, GQA 4/2, FFN 768) with a tokenizer
fitted to the conversations; without the demos file it writes 64 expert demonstrations in process. Prints
tokens/s (all tokens forwarded) per mode; the first step of each mode is a warm-up and not counted.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from verl.agent_trainer.main_sft import tokenize_conversation  # noqa: E402
from verl.agent_trainer.sft_batch import collate_sft_examples, sft_nll_sum  # noqa: E402
from verl.utils import model_utils  # noqa: E402
from verl.workers.rollout.tokenizer import chat_template_pieces  # noqa: E402


def _demos(path: str | None, count: int) -> list[dict]:
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)[:count]
    from agentenv_webshop.environment import WebshopSession, WebshopWorld
    from agentenv_webshop.expert import ExpertPolicy, SessionEnv, to_conversation

    world = WebshopWorld.load()
    env, policy = SessionEnv(WebshopSession(world)), ExpertPolicy(click_as_shown=True)
    episodes = [policy.play(env, i, world.goals[i]) for i in range(count)]
    return [to_conversation(e) for e in episodes if e.success]


def _model_dir(demos: list[dict], out: str) -> str:
    from verl.utils.tiny_model import build_tiny_model

    corpus = os.path.join(out, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as fh:
        for row in demos:
            for turn in row["conversations"]:
                fh.write(turn["value"].replace("\n", "\\n") + "\n")
    with open(corpus, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    return build_tiny_model(os.path.join(out, "model"), vocab_size=4096, hidden_size=256, num_layers=4, num_heads=4,
                            num_kv_heads=2, intermediate_size=768, corpus=lines)


def _full_logits_nll(model, batch):
    """The plain loss: logits at every position, then the masked cross-entropy."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1]
    weight = batch["loss_mask"][:, 1:].reshape(-1).to(torch.float32)
    nll = torch.nn.functional.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                                            batch["input_ids"][:, 1:].reshape(-1), reduction="none")
    return (nll * weight).sum()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model")
    parser.add_argument("--demos", default="saves/sft/webshop_demos.json")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--micro", type=int, default=8)
    args = parser.parse_args()

    demos = _demos(args.demos, args.batch * (args.steps + 1))
    with tempfile.TemporaryDirectory() as tmp:
        path = args.model or _model_dir(demos, tmp)
        tokenizer = model_utils.load_tokenizer(path)
        pieces = chat_template_pieces(tokenizer)
        examples = [tokenize_conversation(tokenizer, row["conversations"], None, 4096, pieces) for row in demos]
        random.Random(0).shuffle(examples)
        mean_len = sum(len(ids) for ids, _ in examples) / len(examples)
        print(f"model {path}: {sum(p.numel() for p in model_utils.load_causal_lm(path).parameters()) / 1e6:.1f}M "
              f"params; {len(examples)} conversations, {mean_len:.0f} tokens each; torch threads "
              f"{torch.get_num_threads()}")
        print(f"| mode | loss path | tokens/s | s/step ({args.batch} conversations) |")
        print("|---|---|---:|---:|")
        for dtype in ("float32", "bfloat16"):
            for name, loss_fn in (("full logits", _full_logits_nll),
                                  ("LM head on assistant positions", sft_nll_sum)):
                model = model_utils.load_causal_lm(path, torch.float32)
                model.train()
                optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
                autocast = (torch.autocast("cpu", dtype=torch.bfloat16) if dtype == "bfloat16"
                            else contextlib.nullcontext())
                tokens, seconds = 0, 0.0
                for step in range(args.steps + 1):
                    chunk = sorted(examples[step * args.batch:(step + 1) * args.batch], key=lambda e: len(e[0]))
                    start = time.perf_counter()
                    optimizer.zero_grad(set_to_none=True)
                    for first in range(0, len(chunk), args.micro):
                        part = chunk[first:first + args.micro]
                        with autocast:
                            loss = loss_fn(model, collate_sft_examples(part, 0))
                        loss.backward()
                    optimizer.step()
                    if step:  # step 0 warms up
                        seconds += time.perf_counter() - start
                        tokens += sum(len(ids) for ids, _ in chunk)
                print(f"| {dtype} | {name} | {tokens / seconds:,.0f} | {seconds / args.steps:.2f} |", flush=True)


if __name__ == "__main__":
    main()
