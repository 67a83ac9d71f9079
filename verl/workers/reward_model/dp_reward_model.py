"""A learned reward model on one data-parallel rank: one scalar per trajectory, on its last model token.

Owns the scoring forward pass. The model is an HF sequence-classification model with one label
(`Qwen2ForSequenceClassification`, `LlamaForSequenceClassification`, ...): a decoder whose `score`
head maps each position's hidden state to a scalar and whose pooled output is the scalar at the
last token. The score is read from the `score` head's per-token output at each row's LAST REAL
token (the end of the whole trajectory: prompt, model turns and observations), through a forward
hook, rather than from the model's own pooling, which finds that token by searching for the pad
id and misses when a real token equals it (pad = eos tokenizers). It is written to
`rm_scores` (bs, response_length) on the row's last MODEL token (`response_mask == 1`), where the
trainer's rewards live; a row without model tokens scores 0.

It does not own the model's lifecycle (`verl.workers.fsdp_workers.RewardModelWorker`) or how the
score joins the env reward (`verl.workers.reward_manager.combine`).
"""
from __future__ import annotations

import torch

from verl.workers.agent_actor.base import iter_slices, padding_trim_bounds

__all__ = ["DataParallelRewardModel"]


class DataParallelRewardModel:
    """Scores trajectories with a sequence-classification reward model.

    Args:
        module: the reward model (possibly FSDP-wrapped); it must have a `score` head module.
        micro_batch_size: trajectories per forward (`reward_model.micro_batch_size_per_gpu`).

    Raises:
        ValueError: the model has no `score` head (e.g. an encoder classifier with a pooler).
    """

    def __init__(self, module: torch.nn.Module, micro_batch_size: int):
        head = getattr(module, "score", None)
        if not isinstance(head, torch.nn.Module):
            raise ValueError(f"reward model {type(module).__name__} has no `score` head; decoder sequence "
                             "classifiers (Qwen2/Llama/Mistral...ForSequenceClassification) are supported")
        self.module, self.head, self.micro_batch_size = module, head, int(micro_batch_size)

    def _forward_micro_batch(self, micro) -> torch.Tensor:
        """(mb,) reward-model score at each row's last real token."""
        response_length = micro["responses"].shape[-1]
        start, keep = padding_trim_bounds(micro["attention_mask"], response_length)
        end = micro["input_ids"].shape[1] - response_length + keep
        input_ids, attention_mask, position_ids = (micro[k][:, start:end].contiguous()
                                                   for k in ("input_ids", "attention_mask", "position_ids"))
        captured: list[torch.Tensor] = []
        handle = self.head.register_forward_hook(lambda _m, _i, out: captured.append(out))
        try:
            self.module(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False)
        finally:
            handle.remove()
        token_scores = captured[-1][..., 0].float()                                   # (mb, T)
        positions = torch.arange(attention_mask.shape[1], device=attention_mask.device)
        last_real = (attention_mask.long() * positions).argmax(-1)                   # (mb,)
        return token_scores[torch.arange(len(last_real), device=last_real.device), last_real]

    @torch.no_grad()
    def compute_rm_score(self, data) -> torch.Tensor:
        """Reward-model scores of `data`'s trajectories.

        Args:
            data: DataProto with `input_ids`, `attention_mask`, `position_ids` (bs, P+R), `responses`
                and `response_mask` (bs, R).

        Returns:
            (bs, response_length) float32: each row's score on its last model token, 0 elsewhere.
        """
        batch = data.batch.select("input_ids", "attention_mask", "position_ids", "responses", "response_mask")
        was_training = self.module.training
        self.module.eval()
        try:
            seq_scores = torch.cat(
                [self._forward_micro_batch(batch[sl]) for sl in iter_slices(len(batch), self.micro_batch_size)]
            )
        finally:
            self.module.train(was_training)
        mask = batch["response_mask"]
        positions = torch.arange(mask.shape[1], device=mask.device)
        last_model = (mask.long() * positions).argmax(-1)
        has_model = mask.bool().any(-1)
        rm_scores = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device)
        rows = torch.arange(mask.shape[0], device=mask.device)
        rm_scores[rows, last_model] = torch.where(has_model, seq_scores.to(mask.device), torch.zeros_like(seq_scores))
        return rm_scores
