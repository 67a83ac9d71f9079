"""The naive reward manager: environment rewards as they came from the rollout, plus rule-based
scores for rows of non-environment datasets that carry `reward_model.ground_truth`.

Output is `token_level_scores` (bs, response_length): each row's scalar reward on its LAST model
token (the last position where `response_mask == 1`), 0 elsewhere.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from typing import Callable

import numpy as np
import torch

from verl.utils.reward_score import default_compute_score
from verl.workers.reward_manager.registry import register_reward_manager

__all__ = ["NaiveRewardManager"]

logger = logging.getLogger(__name__)


def _ground_truth(row_reward_model) -> str | None:
    if isinstance(row_reward_model, dict):
        gt = row_reward_model.get("ground_truth")
        return None if gt is None else gt
    return None


@register_reward_manager("naive")
class NaiveRewardManager:
    """Reward manager for env rollouts and rule-scored datasets.

    Args:
        tokenizer: used to decode responses of rule-scored rows.
        num_examine: how many decoded rule-scored rows per data source to log at INFO.
        compute_score: `(data_source, solution_str, ground_truth, extra_info) -> float`;
            defaults to `verl.utils.reward_score.default_compute_score`.
        reward_fn_key: non-tensor key holding the data source name.
    """

    def __init__(self, tokenizer=None, num_examine: int = 0, compute_score: Callable | None = None,
                 reward_fn_key: str = "data_source", **kwargs):
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        self.compute_score = compute_score or default_compute_score
        self.reward_fn_key = reward_fn_key

    def __call__(self, data, return_dict: bool = False):
        """Compute `token_level_scores` for a batch.

        Args:
            data: DataProto with `responses`, `response_mask` (or `attention_mask`) and, for env
                rows, `token_level_scores` from the rollout; rule-scored rows carry
                non_tensor `reward_model` ({"ground_truth": ...}) and `data_source`.
            return_dict: return {"reward_tensor", "reward_extra_info"} instead of the tensor.

        Returns:
            (bs, response_length) float32 tensor, or the dict described above.
        """
        responses = data.batch["responses"]
        bs, resp_len = responses.shape
        response_mask = self._response_mask(data)
        if "token_level_scores" in data.batch.keys():
            reward = data.batch["token_level_scores"].clone().float()
        else:
            reward = torch.zeros(bs, resp_len, dtype=torch.float32)
        reward_models = data.non_tensor_batch.get("reward_model")
        extra: dict[str, list] = defaultdict(list)
        if reward_models is None:
            return {"reward_tensor": reward, "reward_extra_info": dict(extra)} if return_dict else reward

        sources = data.non_tensor_batch.get(self.reward_fn_key, np.array(["unknown"] * bs, dtype=object))
        extra_infos = data.non_tensor_batch.get("extra_info")
        printed: dict[str, int] = defaultdict(int)
        for i in range(bs):
            gt = _ground_truth(reward_models[i])
            if gt is None:
                continue
            valid = response_mask[i].nonzero(as_tuple=True)[0]
            if valid.numel() == 0:
                logger.warning("row %d has no model tokens; its rule-based score is skipped", i)
                continue
            if self.tokenizer is None:
                raise ValueError("NaiveRewardManager needs a tokenizer to score rows with reward_model.ground_truth")
            text = self.tokenizer.decode(responses[i][valid].tolist(), skip_special_tokens=True)
            info = extra_infos[i] if extra_infos is not None else None
            score = self.compute_score(sources[i], text, gt, info)
            if isinstance(score, dict):  # verl's custom scorers may return {"score": ..., extras}
                for k, v in score.items():
                    extra[k].append(v)
                score = score["score"]
            reward[i] = 0.0
            reward[i, valid[-1]] = float(score)
            if printed[sources[i]] < self.num_examine:
                printed[sources[i]] += 1
                logger.info("[%s] response=%r ground_truth=%r score=%s", sources[i], text, gt, score)
        return {"reward_tensor": reward, "reward_extra_info": dict(extra)} if return_dict else reward

    @staticmethod
    def _response_mask(data) -> torch.Tensor:
        if "response_mask" in data.batch.keys():
            return data.batch["response_mask"]
        resp_len = data.batch["responses"].shape[-1]
        return data.batch["attention_mask"][:, -resp_len:]
