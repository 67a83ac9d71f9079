"""The expert probe of the learning report: how likely the policy finds an expert's actions on held-out goals,
before and after training. Greedy success moves only when a goal's whole episode flips; the log-likelihood of
the expert's actions moves with every change of the policy's preferences, so it shows transfer (or forgetting)
that success misses.

A probe file is a list of AgentTraj-style demonstrations (``[{"item_id", "conversations": [{"from", "loss",
"value"}, ...]}, ...]``; WebShop's: ``python -m agentenv_webshop.expert --item-ids AgentItemId/webshop_test.json
--num-goals 100 --demos-out F``). Each is tokenised as supervised fine-tuning does (`main_sft.tokenize_conversation`:
the layout the agent loop gives a trajectory) and laid out as one trajectory row: the tokens before the first
expert turn are the prompt, the rest the response with `response_mask` 1 on the expert's tokens. The actor's
own `compute_log_prob` scores it (temperature 1, the copy-only rule applied as in training), and a goal's score
is the mean log-probability of its expert tokens.

Owns the probe's batch and its section of the report; the trainer (`RayPPOTrainer`) runs it around training when
`data.expert_probe_file` is set.
"""
from __future__ import annotations

import json
from typing import Sequence

import numpy as np
import torch

from verl.protocol import DataProto
from verl.utils.stats import bootstrap_mean_ci

__all__ = ["load_demos", "probe_batch", "per_goal_log_likelihood", "build_probe_section"]


def load_demos(path: str) -> list[dict]:
    """The demonstrations of a probe file.

    Raises:
        ValueError: not a non-empty list of objects with ``item_id`` and ``conversations``.
    """
    with open(path, encoding="utf-8") as fh:
        demos = json.load(fh)
    if not isinstance(demos, list) or not demos:
        raise ValueError(f"data.expert_probe_file={path!r}: expected a non-empty JSON list of demonstrations")
    for i, demo in enumerate(demos):
        if not isinstance(demo, dict) or not {"item_id", "conversations"} <= set(demo):
            raise ValueError(f"data.expert_probe_file={path!r}: entry {i} lacks item_id or conversations")
    return demos


def probe_batch(tokenizer, demos: Sequence[dict], max_length: int | None = None,
                system_prompt: str | None = None) -> DataProto:
    """One trajectory row per demonstration (left-padded prompt, right-padded response), ready for the actor's
    `compute_log_prob`; non-tensor `item_id`. `max_length` cuts a long demonstration (its later turns)."""
    from verl.agent_trainer.main_sft import tokenize_conversation

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    rows = []
    for demo in demos:
        ids, mask = tokenize_conversation(tokenizer, demo["conversations"], system_prompt=system_prompt,
                                          max_length=max_length)
        first = mask.index(1)
        rows.append((ids[:first], ids[first:], mask[first:]))
    n, P, R = len(rows), max(len(p) for p, _, _ in rows), max(len(r) for _, r, _ in rows)
    prompts = torch.full((n, P), pad, dtype=torch.long)
    responses = torch.full((n, R), pad, dtype=torch.long)
    attention = torch.zeros((n, P + R), dtype=torch.long)
    response_mask = torch.zeros((n, R), dtype=torch.long)
    for i, (prompt, response, mask) in enumerate(rows):
        prompts[i, P - len(prompt):] = torch.tensor(prompt)
        responses[i, :len(response)] = torch.tensor(response)
        attention[i, P - len(prompt):P + len(response)] = 1
        response_mask[i, :len(mask)] = torch.tensor(mask)
    return DataProto.from_dict(
        tensors={"prompts": prompts, "responses": responses, "input_ids": torch.cat([prompts, responses], dim=1),
                 "attention_mask": attention, "position_ids": (attention.cumsum(-1) - 1).clamp(min=0),
                 "response_mask": response_mask},
        non_tensors={"item_id": np.array([str(d["item_id"]) for d in demos], dtype=object)},
        meta_info={"temperature": 1.0})


def per_goal_log_likelihood(log_probs: torch.Tensor, response_mask: torch.Tensor) -> list[float]:
    """Each row's mean log-probability over its expert tokens (`response_mask` 1)."""
    mask = response_mask.float()
    return ((log_probs.float() * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).tolist()


def build_probe_section(ids: Sequence[str], before: Sequence[float], after: Sequence[float], *, seed: int,
                        file: str | None = None) -> dict:
    """The report's ``"expert_probe"``: mean per-token log-likelihood of the expert's actions before and after,
    the change and its paired 95% CI (bootstrap over goals, seeded), and per-goal values.

    Raises:
        ValueError: the lists differ in length or are empty.
    """
    if not len(ids) == len(before) == len(after) or not ids:
        raise ValueError(f"expert probe: {len(ids)} goals, {len(before)} before and {len(after)} after values")
    diffs = [a - b for b, a in zip(before, after, strict=True)]
    return {"n_goals": len(ids), "file": file, "before": float(np.mean(before)), "after": float(np.mean(after)),
            "change": float(np.mean(diffs)), "change_ci95": list(bootstrap_mean_ci(diffs, seed=seed)),
            "per_goal": {"ids": [str(i) for i in ids], "before": [float(v) for v in before],
                         "after": [float(v) for v in after]}}
