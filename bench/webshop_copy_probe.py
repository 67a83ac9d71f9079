"""Does a WebShop policy copy product ids from the page, or recall them? A two-minute probe instead of a rollout.

    python bench/webshop_copy_probe.py MODEL_DIR [MODEL_DIR ...] [--goals 200] [--noise-steps 10 --noise-lr 1e-4]

For each model: teacher-forced next-token accuracy on the assistant tokens of expert demonstrations (the expert
plays each goal in process, ids clicked as shown) of the first `--goals` held-out goals
(AgentItemId/webshop_test.json) and as many training goals, (a) as played and (b) with every product id replaced,
consistently within the episode, by a random catalog id (`agentenv_webshop.demo_augment`). In (b) an id can
only be predicted by copying it, so (a) minus (b) is what the policy recalls by heart. Columns, where the demo's
next token is a product id: `page id acc` for the first id of an assistant turn (the expert's `Thought: I think
B0.. matches`: an id chosen from the results page), `page id: an id shown` (there, the share of predictions that
are an id the episode shows, right or wrong: copying from the page at all), `repeated id acc` for an id repeated
within the turn (`click[B0..]` copying the Thought, a few tokens back); `tok acc` and `nll` over all assistant
tokens.

`--noise-steps K` also applies K AdamW steps of a policy-gradient loss with zero-mean random advantages (pure
noise, what an RL update with no signal does; 32 training demos a step) at `--noise-lr`, and measures again:
how fragile the policy is to a GRPO step's noise.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from verl.agent_trainer.main_sft import tokenize_conversation  # noqa: E402
from verl.agent_trainer.sft_batch import collate_sft_examples  # noqa: E402

PRODUCT_ID_TOKEN = re.compile(r"B0[0-9A-Z]{8}")


def expert_conversations(item_file: str, count: int) -> list[dict]:
    """Successful expert conversations (main_sft format) for the first `count` WebShop goals of `item_file`."""
    from agentenv.item_ids import load_item_id_file
    from agentenv_webshop.environment import WebshopSession, WebshopWorld
    from agentenv_webshop.expert import ExpertPolicy, SessionEnv, to_conversation

    world = WebshopWorld.load()
    env, policy = SessionEnv(WebshopSession(world)), ExpertPolicy(click_as_shown=True)
    rows = [r for r in load_item_id_file(item_file, "item_id") if r["task_name"] == "webshop"][:count]
    episodes = [policy.play(env, int(r["index"]), world.goals[int(r["index"])]) for r in rows]
    return [to_conversation(e) for e in episodes if e.success]


def permuted(conversations: list[dict], seed: int = 0) -> list[dict]:
    """The conversations with product ids replaced by random catalog ids (consistently within each)."""
    from agentenv_webshop.demo_augment import permute_product_ids
    from agentenv_webshop.environment import WebshopWorld

    rng, ids = random.Random(seed), sorted(WebshopWorld.load().by_asin)
    return [permute_product_ids(c, ids, rng) for c in conversations]


def _assistant_logits(model, batch: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Logits at the positions predicting an assistant token, those tokens, and the row of each."""
    from verl.utils.model_utils import next_token_logits

    targets = batch["input_ids"][:, 1:]
    mask = batch["loss_mask"][:, 1:].bool()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = next_token_logits(model, batch["input_ids"], batch["attention_mask"], mask)
    rows = torch.arange(mask.shape[0])[:, None].expand_as(mask)[mask]
    return logits.float(), targets[mask], rows


def repeated_in_turn(loss_mask: list[int], targets: list[int]) -> list[bool]:
    """For each assistant position (mask 1) of one row: does its token already occur earlier in the same
    assistant turn (a run of 1s)? The expert names a product id in its Thought and repeats it in its Action."""
    out, seen, inside = [], set(), False
    for m, t in zip(loss_mask, targets, strict=True):
        if m:
            if not inside:
                seen = set()
            out.append(t in seen)
            seen.add(t)
        inside = bool(m)
    return out


@torch.no_grad()
def accuracy(model, examples: list[tuple[list[int], list[int]]], id_tokens: torch.Tensor, pad_id: int,
             batch_size: int = 16) -> dict:
    """Teacher-forced accuracy over the assistant tokens of tokenized `examples`.

    Returns `page_id_acc` (where the demo's token is a product id named for the first time in its turn: the
    Thought's id, chosen from the page), `page_id_shown` (there, the share of predictions that are an id the
    episode shows, right or wrong), `repeat_id_acc` (ids repeated within the turn: the Action copying its
    Thought), `tok_acc` and `nll` (all assistant tokens), and the counts `page_ids`, `repeat_ids`.
    """
    model.eval()
    counts = dict.fromkeys(("tokens", "correct", "page_ids", "page_correct", "page_shown", "repeat_ids",
                            "repeat_correct"), 0)
    nll = 0.0
    for start in range(0, len(examples), batch_size):
        batch = collate_sft_examples(examples[start:start + batch_size], pad_id)
        logits, targets, rows = _assistant_logits(model, batch)
        masks, tgts = batch["loss_mask"][:, 1:].tolist(), batch["input_ids"][:, 1:].tolist()
        repeat = torch.tensor([r for mask, tgt in zip(masks, tgts, strict=True) for r in repeated_in_turn(mask, tgt)],
                              dtype=torch.bool)
        pred = logits.argmax(-1)
        hit = pred == targets
        is_id = id_tokens[targets]
        nll += torch.nn.functional.cross_entropy(logits, targets, reduction="sum").item()
        page, again = is_id & ~repeat, is_id & repeat
        shown = torch.zeros_like(page)
        for k in page.nonzero()[:, 0].tolist():  # is the predicted token an id this conversation shows?
            shown[k] = bool(id_tokens[pred[k]]) and bool((batch["input_ids"][rows[k]] == pred[k]).any())
        for key, value in (("tokens", targets.numel()), ("correct", hit.sum()), ("page_ids", page.sum()),
                           ("page_correct", (hit & page).sum()), ("page_shown", (shown & page).sum()),
                           ("repeat_ids", again.sum()), ("repeat_correct", (hit & again).sum())):
            counts[key] += int(value)
    return {"page_id_acc": counts["page_correct"] / max(counts["page_ids"], 1),
            "page_id_shown": counts["page_shown"] / max(counts["page_ids"], 1),
            "repeat_id_acc": counts["repeat_correct"] / max(counts["repeat_ids"], 1),
            "tok_acc": counts["correct"] / max(counts["tokens"], 1), "nll": nll / max(counts["tokens"], 1),
            "page_ids": counts["page_ids"], "repeat_ids": counts["repeat_ids"]}


def noise_steps(model, examples: list[tuple[list[int], list[int]]], pad_id: int, steps: int, lr: float,
                batch: int = 32, micro: int = 8, seed: int = 1) -> None:
    """`steps` AdamW steps of -A * log p (token mean) with zero-mean random per-sequence advantages A."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.999), weight_decay=0.01)
    gen = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(steps):
        picks = torch.randint(len(examples), (batch,), generator=gen).tolist()
        adv = torch.randn(batch, generator=gen)
        adv -= adv.mean()
        opt.zero_grad()
        for start in range(0, batch, micro):
            rows = collate_sft_examples([examples[k] for k in picks[start:start + micro]], pad_id)
            mask = rows["loss_mask"][:, 1:].bool()
            logits, targets, seq = _assistant_logits(model, rows)
            logp = torch.log_softmax(logits, -1).gather(-1, targets[:, None])[:, 0]
            (-(adv[start:start + micro][seq] * logp).sum() / mask.sum() / (batch // micro)).backward()
        opt.step()
    model.eval()


def report(label: str, model, data: dict[str, list[tuple[list[int], list[int]]]], id_tokens: torch.Tensor,
           pad_id: int) -> None:
    """Print one table row per demo set in `data`: the probe's metrics for `model`, labelled `label`."""
    for name, examples in data.items():
        start = time.time()
        r = accuracy(model, examples, id_tokens, pad_id)
        print(f"| {label} | {name} | {len(examples)} | {r['page_id_acc']:.3f} | {r['page_id_shown']:.3f} | "
              f"{r['repeat_id_acc']:.3f} | {r['tok_acc']:.4f} | {r['nll']:.4f} | {time.time() - start:.0f} |",
              flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+", help="HF model directories (e.g. agentenv_webshop/sft_policy)")
    ap.add_argument("--goals", type=int, default=200, help="held-out goals (and as many training goals)")
    ap.add_argument("--noise-steps", type=int, default=0)
    ap.add_argument("--noise-lr", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(args.seed)
    sets = {"held-out": expert_conversations("AgentItemId/webshop_test.json", args.goals),
            "training": expert_conversations("AgentItemId/webshop_train.json", args.goals)}
    sets = {**sets, **{f"{name}, ids permuted": permuted(convs, args.seed) for name, convs in list(sets.items())}}
    print("| model | demos | n | page id acc | page id: an id shown | repeated id acc | tok acc | nll | seconds |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    for path in args.models:
        tokenizer = AutoTokenizer.from_pretrained(path)
        vocab = tokenizer.get_vocab()
        id_tokens = torch.zeros(max(vocab.values()) + 1, dtype=torch.bool)
        id_tokens[[i for t, i in vocab.items() if PRODUCT_ID_TOKEN.fullmatch(t)]] = True
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        data = {name: [tokenize_conversation(tokenizer, c["conversations"]) for c in convs]
                for name, convs in sets.items()}
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
        report(path, model, data, id_tokens, pad)
        if args.noise_steps:
            noise_steps(model, data["training"], pad, args.noise_steps, args.noise_lr, seed=args.seed + 1)
            report(f"{path} + {args.noise_steps} noise steps at lr {args.noise_lr:g}", model, data, id_tokens, pad)

if __name__ == "__main__":
    main()
