"""The PPO critic on one data-parallel rank: values of response positions and the value update.

Owns the value forward pass (a model with a one-output token head) and the clipped value-loss
update with mini/micro batches (fixed or token-budget, `use_dynamic_bsz`) and exact gradient
accumulation. The loss formula lives in
`verl.agent_trainer.ppo.core_algos.compute_value_loss`.
"""
from __future__ import annotations

import logging

import torch

from verl.agent_trainer.ppo import core_algos
from verl.config.schema import CriticConfig
from verl.utils.torch_functional import masked_mean
from verl.workers.agent_actor.base import (
    MicroBatching,
    map_micro_batches,
    micro_batching_from_meta,
    response_forward,
    run_ppo_epochs,
)
from verl.workers.agent_critic.base import BasePPOCritic

__all__ = ["DataParallelPPOCritic"]

logger = logging.getLogger(__name__)


class DataParallelPPOCritic(BasePPOCritic):
    """Value model wrapper.

    Args:
        config: the typed `critic` section.
        critic_module: a model whose `.logits` are (bs, T, 1) (e.g.
            AutoModelForTokenClassification with num_labels=1).
        critic_optimizer: its optimizer.
        ppo_mini_batch_size: mini-batch size in samples (prompts x rollout.n / dp size);
            defaults to `config.ppo_mini_batch_size`.
        shuffle_seed: base seed of the per-epoch mini-batch shuffle (`trainer.seed`; read when
            `config.shuffle`); each update mixes in `meta_info["global_step"]`.

    Attributes:
        trim_padding: drop the columns that are padding in every row of a micro-batch before the
            forward pass (exact; see `verl.workers.agent_actor.base.response_forward`).
    """

    def __init__(self, config: CriticConfig, critic_module: torch.nn.Module,
                 critic_optimizer: torch.optim.Optimizer | None = None, ppo_mini_batch_size: int | None = None,
                 shuffle_seed: int = 0):
        if not isinstance(config, CriticConfig):
            raise TypeError(f"DataParallelPPOCritic takes the typed critic section (CriticConfig), got "
                            f"{type(config).__name__}; load it first (schema.load_config or schema.from_dict)")
        self.config = config
        self.critic_module = critic_module
        self.critic_optimizer = critic_optimizer
        self.ppo_mini_batch_size = int(ppo_mini_batch_size or self.config.ppo_mini_batch_size)
        self.micro_batch_size = self.config.ppo_micro_batch_size_per_gpu
        self.micro_batching = MicroBatching(
            self.micro_batch_size, self.config.ppo_max_token_len_per_gpu if self.config.use_dynamic_bsz else None,
            by_length=True)
        self.shuffle_seed = int(shuffle_seed)
        self.loss_agg_mode = self.config.loss_agg_mode
        self.trim_padding = True

    def _forward_micro_batch(self, micro) -> torch.Tensor:
        # (bs, R): V(s) before each response token; 0 past the micro-batch's longest response
        return response_forward(self.critic_module, micro, lambda out, _: out[..., 0].float(), trim=self.trim_padding)

    @torch.no_grad()
    def compute_values(self, data) -> torch.Tensor:
        """Values of the response positions, zero where `response_mask` is 0.

        meta_info may override the micro-batching (`micro_batch_size`, `use_dynamic_bsz`, `max_token_len`);
        by default it follows the critic's config.

        Returns:
            (bs, response_length) float32, rows in the batch's order.
        """
        batching = micro_batching_from_meta(data.meta_info, self.micro_batching)
        batch = data.batch.select("input_ids", "attention_mask", "position_ids", "responses", "response_mask")
        was_training = self.critic_module.training
        self.critic_module.eval()
        try:
            values = map_micro_batches(batch, batching, self._forward_micro_batch)
        finally:
            self.critic_module.train(was_training)
        return values * batch["response_mask"].to(values.dtype)

    def update_critic(self, data) -> dict[str, float]:
        """ppo_epochs x mini-batches x micro-batches of clipped value-loss updates.

        Args:
            data: DataProto with the forward keys plus `response_mask`, `values` (old values) and
                `returns`.

        Returns:
            Metrics: critic/vf_loss, critic/vf_clipfrac, critic/vpred_mean, critic/grad_norm, critic/lr.
        """
        if self.critic_optimizer is None:
            raise RuntimeError("update_critic called on a critic without an optimizer")
        cfg = self.config
        cliprange_value, grad_clip, ppo_epochs = cfg.cliprange_value, cfg.grad_clip, cfg.ppo_epochs
        batch = data.batch.select(
            "input_ids", "attention_mask", "position_ids", "responses", "response_mask", "values", "returns"
        )

        def micro_loss(micro, mask, metrics):
            vpreds = self._forward_micro_batch(micro)
            vf_loss, vf_clipfrac = self._value_loss(vpreds, micro["returns"], micro["values"], mask, cliprange_value)
            metrics["critic/vf_loss"].append(float(vf_loss.detach()))
            metrics["critic/vf_clipfrac"].append(float(vf_clipfrac))
            metrics["critic/vpred_mean"].append(float(masked_mean(vpreds.detach(), mask)))
            return vf_loss

        shuffle_seed = (self.shuffle_seed, int(data.meta_info.get("global_step", 0))) if cfg.shuffle else None
        return run_ppo_epochs(self.critic_module, self.critic_optimizer, batch, micro_loss, ppo_epochs=ppo_epochs,
                              mini_batch_size=self.ppo_mini_batch_size, micro_batching=self.micro_batching,
                              loss_agg_mode=self.loss_agg_mode, grad_clip=grad_clip, prefix="critic",
                              shuffle_seed=shuffle_seed)

    def _value_loss(self, vpreds, returns, values, mask, cliprange_value):
        out = core_algos.compute_value_loss(
            vpreds=vpreds, returns=returns, values=values, response_mask=mask,
            cliprange_value=cliprange_value, loss_agg_mode=self.loss_agg_mode,
        )
        vf_loss, vf_clipfrac = out[0], out[1]
        if isinstance(vf_clipfrac, dict):  # metrics-dict form
            vf_clipfrac = vf_clipfrac.get("critic/vf_clipfrac", vf_clipfrac.get("vf_clipfrac", 0.0))
        return vf_loss, vf_clipfrac.detach() if torch.is_tensor(vf_clipfrac) else vf_clipfrac
