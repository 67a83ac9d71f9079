"""Batch metrics for one training step: rewards, advantages, lengths, KL, entropy, env outcomes, timing;
and the evaluation outcome (success rate, mean reward, their 95% CIs) shared by validation and
`main_generation`, with the paired change between two evaluations of the same items (the learning report).

Owns turning a DataProto (and the step's timers) into a flat ``{name: float}`` dict under fixed
namespaces (``critic/``, ``actor/``, ``env/``, ``rollout/``, ``response_length/``,
``prompt_length/``, ``timing_s/``, ``timing_per_token_ms/``, ``perf/``). Metrics whose inputs are
absent from the batch are left out; nothing here logs or mutates the batch.
"""
from __future__ import annotations

import contextlib
import time
from typing import Any, Iterator

import numpy as np
import pandas as pd
import torch

from verl.utils import torch_functional as VF
from verl.utils.stats import bootstrap_mean_ci, wilson_interval

__all__ = ["compute_data_metrics", "compute_timing_metrics", "compute_throughout_metrics", "reduce_metrics",
           "reduce_rank_metrics", "compute_outcome_metrics", "compute_outcome_change", "timer"]


@contextlib.contextmanager
def timer(name: str, timing: dict[str, float]) -> Iterator[None]:
    """Add the block's wall seconds to `timing[name]` (the step's timers, `timing_s/<name>`)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        timing[name] = timing.get(name, 0.0) + time.perf_counter() - start


def _stats(prefix: str, values: torch.Tensor) -> dict[str, float]:
    values = values.float()
    if values.numel() == 0:
        return {}
    return {
        f"{prefix}/mean": values.mean().item(),
        f"{prefix}/max": values.max().item(),
        f"{prefix}/min": values.min().item(),
    }


def _goal_mean_ci(values: np.ndarray, uids: np.ndarray | None) -> tuple[float, float]:
    """95% CI of a step's mean over its goals: the seeded percentile bootstrap (`bootstrap_mean_ci`) of the
    per-goal means (rows grouped by `uid`; each row its own goal without uids). Goals are the sampling unit:
    a goal's samples are alike, so a CI over trajectories would be too narrow."""
    if uids is None:
        means = values
    else:
        groups: dict = {}
        for uid, value in zip(uids, values, strict=True):
            groups.setdefault(uid, []).append(value)
        means = np.array([np.mean(v) for v in groups.values()])
    return bootstrap_mean_ci(means, seed=0)


def _masked_stats(prefix: str, values: torch.Tensor, mask: torch.Tensor) -> dict[str, float]:
    return _stats(prefix, values[mask.bool()])


def _zero_variance_group_frac(scores: np.ndarray, uid: np.ndarray) -> float:
    """Fraction of uid groups (size >= 2) whose scores are all equal: they carry no GRPO signal."""
    df = pd.DataFrame({"uid": pd.Series(list(uid), dtype=object), "s": scores})
    grouped = df.groupby("uid", sort=False)["s"].agg(["min", "max", "size"])
    grouped = grouped[grouped["size"] >= 2]
    if len(grouped) == 0:
        return 0.0
    return float((grouped["max"] == grouped["min"]).mean())


def compute_data_metrics(batch, use_critic: bool = True) -> dict[str, float]:
    """Metrics of a finished step's batch.

    Reads (when present) ``token_level_scores``, ``token_level_rewards``, ``advantages``,
    ``returns``, ``values``, ``response_mask``, ``attention_mask``, ``responses``,
    ``old_log_probs``, ``ref_log_prob``, ``rollout_log_probs``, ``entropys`` and the non-tensor
    keys ``uid``, ``num_turns``, ``success``, ``reward``, ``terminated``, ``truncated``, ``env_error``,
    ``needs_judge``. Rows that need an LLM judge have no outcome: ``env/reward/*`` and
    ``env/success_rate`` leave them out, ``env/needs_judge`` counts them (``env/needs_judge_rate``: their share).

    Returns:
        e.g. ``critic/score/mean``, ``critic/advantages/max``, ``critic/score/zero_variance_group_frac``,
        ``response_length/mean``, ``response_length/clip_ratio``, ``rollout/model_tokens/mean``,
        ``actor/entropy``, ``rollout/ref_kl``, ``env/success_rate``, ``env/num_turns/mean``, ...
    """
    td, nt = batch.batch, batch.non_tensor_batch
    keys = set(td.keys()) if td is not None else set()
    m: dict[str, float] = {}
    mask = td["response_mask"].bool() if "response_mask" in keys else None

    if "token_level_scores" in keys:
        scores = td["token_level_scores"].sum(-1)
        m.update(_stats("critic/score", scores))
        if "uid" in nt:
            m["critic/score/zero_variance_group_frac"] = _zero_variance_group_frac(
                scores.float().cpu().numpy(), nt["uid"]
            )
    if "token_level_rewards" in keys:
        m.update(_stats("critic/rewards", td["token_level_rewards"].sum(-1)))
    if mask is not None:
        for key, name in (("advantages", "critic/advantages"), ("returns", "critic/returns")):
            if key in keys:
                m.update(_masked_stats(name, td[key], mask))
        if use_critic and "values" in keys:
            m.update(_masked_stats("critic/values", td["values"], mask))
            if "returns" in keys:
                ret, val = td["returns"].float(), td["values"].float()
                var_ret = VF.masked_var(ret, mask)
                m["critic/vf_explained_var"] = (1.0 - VF.masked_var(ret - val, mask) / (var_ret + 1e-5)).item()
        model_tokens = mask.sum(-1)
        m.update(_stats("rollout/model_tokens", model_tokens))
        if "entropys" in keys:
            m["actor/entropy"] = VF.masked_mean(td["entropys"].float(), mask).item()
        if "old_log_probs" in keys and "ref_log_prob" in keys:
            m["rollout/ref_kl"] = VF.masked_mean((td["old_log_probs"] - td["ref_log_prob"]).float(), mask).item()
        if "old_log_probs" in keys and "rollout_log_probs" in keys:
            diff = (td["old_log_probs"] - td["rollout_log_probs"]).abs().float()
            m.update({"rollout/log_prob_diff/mean": VF.masked_mean(diff, mask).item(),
                      "rollout/log_prob_diff/max": diff[mask].max().item() if mask.any() else 0.0})

    if "attention_mask" in keys and "responses" in keys:
        max_resp = td["responses"].shape[-1]
        attn = td["attention_mask"]
        resp_len = attn[:, -max_resp:].sum(-1).float()
        prompt_len = attn[:, :-max_resp].sum(-1).float()
        max_prompt = attn.shape[-1] - max_resp
        m.update(_stats("response_length", resp_len))
        m["response_length/clip_ratio"] = (resp_len == max_resp).float().mean().item()
        m.update(_stats("prompt_length", prompt_len))
        m["prompt_length/clip_ratio"] = (prompt_len == max_prompt).float().mean().item()

    if "num_turns" in nt:
        m.update(_stats("env/num_turns", torch.as_tensor(nt["num_turns"].astype(np.float64))))
    judged = nt["needs_judge"].astype(bool) if "needs_judge" in nt else None
    scored = ~judged if judged is not None else slice(None)  # rows with an outcome
    if "reward" in nt:
        m.update(_stats("env/reward", torch.as_tensor(nt["reward"][scored].astype(np.float64))))
    for key, name in (("success", "env/success_rate"), ("terminated", "env/terminated_rate"),
                      ("truncated", "env/truncated_rate")):
        values = nt[key][scored] if key == "success" and key in nt else nt.get(key)
        if values is not None and len(values):
            m[name] = float(np.mean(values.astype(bool)))
    uids = nt["uid"][scored] if "uid" in nt else None
    for key, name in (("reward", "env/reward/mean"), ("success", "env/success_rate")):
        if key in nt and len(nt[key][scored]):
            lo, hi = _goal_mean_ci(nt[key][scored].astype(np.float64), uids)
            m[f"{name}_ci95_lo"], m[f"{name}_ci95_hi"] = lo, hi
    if judged is not None and len(judged):
        m["env/needs_judge"] = float(judged.sum())
        m["env/needs_judge_rate"] = float(judged.mean())
    if "env_error" in nt and len(nt["env_error"]):
        m["env/error_rate"] = float(np.mean([bool(e) for e in nt["env_error"]]))
    return m


_TOKEN_SECTIONS_ALL = ("ref", "values", "adv", "update_critic", "update_actor", "old_log_prob")


def compute_timing_metrics(batch, timing_raw: dict[str, float]) -> dict[str, float]:
    """``timing_s/<stage>`` for every timer, and ``timing_per_token_ms/<stage>`` where a token count
    applies (``gen``: response tokens; ``ref``/``values``/``adv``/``update_*``/``old_log_prob``: all tokens)."""
    attn = batch.batch["attention_mask"]
    resp_tokens = attn[:, -batch.batch["responses"].shape[-1]:].sum().item()
    all_tokens = attn.sum().item()
    per_section = {"gen": resp_tokens, **{name: all_tokens for name in _TOKEN_SECTIONS_ALL}}
    out = {f"timing_s/{name}": float(v) for name, v in timing_raw.items()}
    for name in set(per_section) & set(timing_raw):
        out[f"timing_per_token_ms/{name}"] = float(timing_raw[name]) * 1000.0 / max(per_section[name], 1)
    return out


def compute_throughout_metrics(batch, timing_raw: dict[str, float], n_gpus: int) -> dict[str, float]:
    """verl's (sic) throughput metrics: ``perf/total_num_tokens``, ``perf/time_per_step`` (timer ``step``)
    and ``perf/throughput`` = tokens / (time * n_gpus) (n_gpus = devices or workers; >= 1)."""
    total = int(batch.batch["attention_mask"].sum().item())
    step_s = float(timing_raw["step"])
    return {"perf/total_num_tokens": total, "perf/time_per_step": step_s,
            "perf/throughput": total / (step_s * max(n_gpus, 1)) if step_s > 0 else 0.0}


def reduce_metrics(metrics: dict[str, Any]) -> dict[str, float]:
    """Mean of each list of values (scalars pass through), e.g. per-micro-batch actor metrics."""
    out = {}
    for key, val in metrics.items():
        if isinstance(val, (list, tuple, np.ndarray)):
            out[key] = float(np.mean([float(v) for v in val])) if len(val) else 0.0
        else:
            out[key] = float(val)
    return out


def _rank_reduction(key: str) -> str:
    """How one metric combines over data-parallel ranks, from its name: counts, sums and rates of work
    that the ranks do side by side add up; durations take the slowest rank (a parallel stage lasts that
    long); everything else (means, fractions, norms, learning rates) is averaged over the equal shares."""
    name = key.rsplit("/", 1)[-1]
    if name.endswith(("_sum", "_per_s")) or name in ("env_errors", "needs_judge", "generated_tokens"):
        return "sum"
    if key.startswith("timing_s/") or name.endswith("_s"):
        return "max"
    return "mean"


def reduce_rank_metrics(metas: list[dict[str, Any]]) -> dict[str, Any]:
    """One `meta_info` from every rank's answer to a data-parallel call (rollout, update, ...).

    Metrics (a `/` in the key and a number) are reduced over the ranks by `_rank_reduction`; a nested
    dict (the update's `metrics`) is reduced the same way; anything else (global_step, temperature)
    is the same on every rank and is taken from rank 0.
    """
    out = dict(metas[0])
    for key, first in metas[0].items():
        values = [m.get(key) for m in metas]
        if isinstance(first, dict) and all(isinstance(v, dict) for v in values):
            out[key] = reduce_rank_metrics(values)
        elif "/" in key and all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in values):
            how = _rank_reduction(key)
            arr = np.asarray(values, dtype=float)
            out[key] = float(arr.sum() if how == "sum" else arr.max() if how == "max" else arr.mean())
    return out


def compute_outcome_metrics(item_ids, rewards, successes, seed: int = 0, needs_judge=None,
                            per_item: bool = False) -> dict:
    """Success rate and mean reward over items, with 95% confidence intervals.

    Trajectories are grouped by item id (items may have several samples, in any order); each item
    counts once: its success share and its mean reward are averaged over items.

    * ``success_ci95``: Wilson score interval with n = items. With one sample per item this is the
      exact binomial case; with k > 1 samples an item's success share stands for its outcome, which
      is conservative (a share varies no more than a single Bernoulli outcome with the same mean).
    * ``mean_reward_ci95``: percentile bootstrap (10,000 resamples of the items, seeded with `seed`).
    * ``needs_judge``: trajectories the env could not score without an LLM judge (flags in
      `needs_judge`, one per trajectory). They are no failures: the rates, the CIs and
      ``scored_items`` leave them out (an item all of whose samples need a judge drops out; with no
      scored item at all the rates are NaN); ``num_items`` and ``num_trajectories`` count everything.
      The two keys are there when `needs_judge` is given.
    * ``per_item`` (with `per_item=True`): each scored item's success share and mean reward, items in the
      order of their first trajectory: what `compute_outcome_change` pairs across two evaluations.

    Returns:
        ``{"num_items", "num_trajectories", ["scored_items", "needs_judge",] "success_rate",
        "success_ci95": [lo, hi], "mean_reward", "mean_reward_ci95": [lo, hi][, "per_item": {"ids": [...],
        "success": [...], "reward": [...]}]}``.

    Raises:
        ValueError: no trajectories, or inputs of different lengths.
    """
    judged = [False] * len(rewards) if needs_judge is None else [bool(x) for x in needs_judge]
    if not len(item_ids) == len(rewards) == len(successes) == len(judged):
        raise ValueError(f"compute_outcome_metrics: {len(item_ids)} item ids, {len(rewards)} rewards, "
                         f"{len(successes)} success flags and {len(judged)} needs_judge flags; one of each per "
                         f"trajectory")
    if not len(item_ids):
        raise ValueError("compute_outcome_metrics needs at least one trajectory")
    by_item: dict = {}
    for item, reward, success, judge in zip(item_ids, rewards, successes, judged, strict=True):
        outs = by_item.setdefault(item, [])
        if not judge:
            outs.append((float(reward), bool(success)))
    scored = {item: outs for item, outs in by_item.items() if outs}
    out = {"num_items": len(by_item), "num_trajectories": len(item_ids)}
    if needs_judge is not None:
        out.update(scored_items=len(scored), needs_judge=int(sum(judged)))
    item_rewards = [float(np.mean([r for r, _ in outs])) for outs in scored.values()]
    item_success = [float(np.mean([s for _, s in outs])) for outs in scored.values()]
    if per_item:
        out["per_item"] = {"ids": list(scored), "success": item_success, "reward": item_rewards}
    if not scored:
        nan = float("nan")
        return {**out, "success_rate": nan, "success_ci95": [nan, nan], "mean_reward": nan,
                "mean_reward_ci95": [nan, nan]}
    n = len(scored)
    return {
        **out,
        "success_rate": float(np.mean(item_success)),
        "success_ci95": list(wilson_interval(min(float(sum(item_success)), n), n)),
        "mean_reward": float(np.mean(item_rewards)),
        "mean_reward_ci95": list(bootstrap_mean_ci(item_rewards, seed=seed)),
    }


def compute_outcome_change(before: dict, after: dict, seed: int = 0) -> dict:
    """The change from `before` to `after`, two `compute_outcome_metrics(..., per_item=True)` results on the
    same items, with paired 95% CIs.

    Items are paired by id: d_i = after_i - before_i per item (success share, mean reward); the change is
    mean(d) and its CI the percentile bootstrap of mean(d) over items (`bootstrap_mean_ci`, 10,000 resamples,
    seeded with `seed`). Pairing removes the spread between items that two separate CIs carry, so a change
    can be clear while the two intervals overlap. An item scored in only one of the two (its trajectories
    needed an LLM judge in the other) is left out of the pairing: `num_items` counts the pairs.

    Returns:
        ``{"num_items", "success_change", "success_change_ci95": [lo, hi], "mean_reward_change",
        "mean_reward_change_ci95": [lo, hi]}``.

    Raises:
        ValueError: an outcome has no ``per_item``, or the two share no scored item.
    """
    for name, outcome in (("before", before), ("after", after)):
        if "per_item" not in outcome:
            raise ValueError(f"compute_outcome_change: the {name} outcome has no per-item results; compute it "
                             "with compute_outcome_metrics(..., per_item=True)")
    b, a = before["per_item"], after["per_item"]
    at = {str(item): i for i, item in enumerate(a["ids"])}
    pairs = [(i, at[str(item)]) for i, item in enumerate(b["ids"]) if str(item) in at]  # (before row, after row)
    if not pairs:
        raise ValueError(f"compute_outcome_change: before ({len(b['ids'])} items, e.g. {list(b['ids'])[:3]}) and "
                         f"after ({len(a['ids'])} items, e.g. {list(a['ids'])[:3]}) share no scored item")
    out: dict = {"num_items": len(pairs)}
    for key, name in (("success", "success_change"), ("reward", "mean_reward_change")):
        diffs = [a[key][j] - b[key][i] for i, j in pairs]  # d_i = after_i - before_i
        out[name] = float(np.mean(diffs))
        out[f"{name}_ci95"] = list(bootstrap_mean_ci(diffs, seed=seed))
    return out
