"""The naive reward manager: environment rewards as they came from the rollout, plus rule-based
scores for rows of non-environment datasets that carry `reward_model.ground_truth`, scored one by
one in this process; with a learned reward model, its `rm_scores` joined by `reward_model.combine`.

Output is `token_level_scores` (bs, response_length): each row's scalar reward on its LAST model
token (the last position where `response_mask == 1`), 0 elsewhere. Subclasses change only how the
rule-scored rows are scored (`_score_jobs`; see `prime.py`).
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from collections import defaultdict
from typing import Callable

import numpy as np
import torch

from verl.config.schema import RewardModelConfig, as_section
from verl.utils.reward_score import default_compute_score
from verl.workers.reward_manager.combine import combine_rm_scores, rm_score_metrics
from verl.workers.reward_manager.registry import register_reward_manager

__all__ = ["NaiveRewardManager", "ScoreJob"]

logger = logging.getLogger(__name__)


def _ground_truth(row_reward_model) -> str | None:
    if isinstance(row_reward_model, dict):
        gt = row_reward_model.get("ground_truth")
        return None if gt is None else gt
    return None


@dataclasses.dataclass(frozen=True)
class ScoreJob:
    """One rule-scored row: where its score goes and the scorer's arguments."""

    row: int
    last: int            # index of the row's last model token
    data_source: str
    text: str            # the decoded model tokens
    ground_truth: object
    extra_info: object

    @property
    def args(self) -> tuple:
        return self.data_source, self.text, self.ground_truth, self.extra_info


@register_reward_manager("naive")
class NaiveRewardManager:
    """Reward manager for env rollouts and rule-scored datasets.

    Args:
        tokenizer: used to decode responses of rule-scored rows.
        num_examine: how many decoded rule-scored rows per data source to log at INFO.
        compute_score: `(data_source, solution_str, ground_truth, extra_info) -> float | dict`;
            defaults to `verl.utils.reward_score.default_compute_score` with the config's code sandbox.
        reward_fn_key: non-tensor key holding the data source name.
        config: the `reward_model` section (`combine`, `rm_coef`, `prime`, `code_sandbox`).
    """

    def __init__(self, tokenizer=None, num_examine: int = 0, compute_score: Callable | None = None,
                 reward_fn_key: str = "data_source", config=None, **kwargs):
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        self.config: RewardModelConfig = as_section(RewardModelConfig, config, "reward_model")
        self.compute_score = compute_score or functools.partial(default_compute_score,
                                                                sandbox=self.config.code_sandbox)
        self.reward_fn_key = reward_fn_key

    def __call__(self, data, return_dict: bool = False):
        """Compute `token_level_scores` for a batch.

        Args:
            data: DataProto with `responses`, `response_mask` (or `attention_mask`) and, for env
                rows, `token_level_scores` from the rollout; rule-scored rows carry
                non_tensor `reward_model` ({"ground_truth": ...}) and `data_source`; with a
                reward model, `rm_scores` (bs, response_length).
            return_dict: return a dict instead of the tensor: "reward_tensor" (the scores),
                "task_scores" ((bs,) env/rule score of each row, before the reward model is
                joined), "reward_extra_info" (per-row extras a scorer returned) and
                "reward_metrics" (reward/* scalars).

        Returns:
            (bs, response_length) float32 tensor, or the dict described above.
        """
        responses = data.batch["responses"]
        bs, resp_len = responses.shape
        if "token_level_scores" in data.batch.keys():
            task = data.batch["token_level_scores"].clone().float()
        else:
            task = torch.zeros(bs, resp_len, dtype=torch.float32)
        jobs = self._jobs(data)
        results, metrics = self._score_jobs(jobs)
        extra: dict[str, list] = defaultdict(list)
        printed: dict[str, int] = defaultdict(int)
        for job, score in zip(jobs, results, strict=True):
            if isinstance(score, dict):  # verl's custom scorers may return {"score": ..., extras}
                for k, v in score.items():
                    extra[k].append(v)
                score = score["score"]
            task[job.row] = 0.0
            task[job.row, job.last] = float(score)
            if printed[job.data_source] < self.num_examine:
                printed[job.data_source] += 1
                logger.info("[%s] response=%r ground_truth=%r score=%s", job.data_source, job.text,
                            job.ground_truth, score)
        reward = task
        if "rm_scores" in data.batch.keys():
            rm_scores = data.batch["rm_scores"].float()
            reward = combine_rm_scores(task, rm_scores, self.config.combine, self.config.rm_coef)
            metrics.update(rm_score_metrics(rm_scores))
        penalty = self.config.invalid_action_penalty
        if penalty > 0 and "invalid_actions" in data.non_tensor_batch:
            counts = torch.tensor([float(c) for c in data.non_tensor_batch["invalid_actions"]], dtype=reward.dtype)
            reward = _penalise_invalid_actions(reward, self._response_mask(data), penalty * counts)
            metrics["reward/invalid_action_penalty_mean"] = float(penalty * counts.mean()) if len(counts) else 0.0
        if not return_dict:
            return reward
        return {"reward_tensor": reward, "task_scores": task.sum(-1), "reward_extra_info": dict(extra),
                "reward_metrics": metrics}

    def _jobs(self, data) -> list[ScoreJob]:
        """The rows that carry `reward_model.ground_truth` and have model tokens, decoded."""
        reward_models = data.non_tensor_batch.get("reward_model")
        if reward_models is None:
            return []
        responses = data.batch["responses"]
        bs = responses.shape[0]
        response_mask = self._response_mask(data)
        sources = data.non_tensor_batch.get(self.reward_fn_key, np.array(["unknown"] * bs, dtype=object))
        extra_infos = data.non_tensor_batch.get("extra_info")
        jobs = []
        for i in range(bs):
            gt = _ground_truth(reward_models[i])
            if gt is None:
                continue
            valid = response_mask[i].nonzero(as_tuple=True)[0]
            if valid.numel() == 0:
                logger.warning("row %d has no model tokens; its rule-based score is skipped", i)
                continue
            if self.tokenizer is None:
                raise ValueError(
                    f"{type(self).__name__} needs a tokenizer to score rows with reward_model.ground_truth"
                )
            text = self.tokenizer.decode(responses[i][valid].tolist(), skip_special_tokens=True)
            info = extra_infos[i] if extra_infos is not None else None
            jobs.append(ScoreJob(i, int(valid[-1]), str(sources[i]), text, gt, info))
        return jobs

    def _score_jobs(self, jobs: list[ScoreJob]) -> tuple[list, dict[str, float]]:
        """Scores of `jobs` (in order) and reward/* metrics; here: one by one, in this process."""
        return [self.compute_score(*job.args) for job in jobs], {}

    def close(self) -> None:
        """Release what the manager holds (nothing here; scorer processes in `prime`)."""

    @staticmethod
    def _response_mask(data) -> torch.Tensor:
        if "response_mask" in data.batch.keys():
            return data.batch["response_mask"]
        resp_len = data.batch["responses"].shape[-1]
        return data.batch["attention_mask"][:, -resp_len:]


def _penalise_invalid_actions(scores: torch.Tensor, response_mask: torch.Tensor, penalties: torch.Tensor
                              ) -> torch.Tensor:
    """`scores` with each row's penalty (its refused actions x `invalid_action_penalty`) taken off its last
    model token; rows without model tokens are left alone. Returns a new tensor."""
    last = response_mask.shape[1] - 1 - response_mask.flip(-1).float().argmax(-1)
    rows = torch.nonzero((response_mask.sum(-1) > 0) & (penalties > 0)).squeeze(-1)
    out = scores.clone()
    out[rows, last[rows]] -= penalties[rows]
    return out
