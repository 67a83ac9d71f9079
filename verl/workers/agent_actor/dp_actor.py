"""The PPO actor on one data-parallel rank: log-probs of responses and the policy update.

Owns the forward pass over (prompt + response) ids, temperature scaling, micro-batching (fixed or
token-budget, `use_dynamic_bsz`) with exact gradient accumulation, and the loss = policy loss - entropy_coeff * entropy
+ kl_loss_coef * KL(pi || ref). The loss formulas themselves live in
`verl.agent_trainer.ppo.core_algos`; model loading, FSDP and checkpoints live in
`verl.workers.fsdp_workers`.
"""
from __future__ import annotations

import logging

import torch

from verl.agent_trainer.ppo import core_algos
from verl.config.schema import ActorConfig
from verl.utils.torch_functional import entropy_from_logits, logprobs_from_logits
from verl.workers.agent_actor.base import (
    BasePPOActor,
    MicroBatching,
    effective_agg_mode,
    map_micro_batches,
    micro_batching_from_meta,
    response_forward,
    run_ppo_epochs,
)
from verl.workers.copy_only import CopyOnlyRule, SequenceCopyOnlyRule

__all__ = ["DataParallelPPOActor", "logprobs_and_entropy"]

logger = logging.getLogger(__name__)


def logprobs_and_entropy(logits: torch.Tensor, labels: torch.Tensor, with_entropy: bool = True,
                         entropy_grad: bool = True):
    """log pi(label) and the per-position entropy (C's fp32 chunked helpers).

    Args:
        logits: (bs, T, vocab), already temperature-scaled.
        labels: (bs, T) token ids.
        with_entropy: also compute the entropy.
        entropy_grad: build a graph for the entropy (only needed when it enters the loss).

    Returns:
        (log_probs (bs, T), entropy (bs, T) or None), both float32.
    """
    log_probs = logprobs_from_logits(logits, labels)
    entropy = None
    if with_entropy:
        with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
            entropy = entropy_from_logits(logits)
    return log_probs, entropy


class DataParallelPPOActor(BasePPOActor):
    """PPO/GRPO actor over a (possibly FSDP-wrapped) causal LM.

    Args:
        config: the typed `actor_rollout_ref.actor` section; it is also the config the policy loss reads.
        actor_module: the causal LM; `module(input_ids, attention_mask, position_ids).logits`.
        actor_optimizer: its optimizer (None for a frozen reference policy).
        ppo_mini_batch_size: mini-batch size in *samples* (already prompts x rollout.n / dp size);
            defaults to `config.ppo_mini_batch_size`.
        shuffle_seed: base seed of the per-epoch mini-batch shuffle (`trainer.seed`; read when
            `config.shuffle`); each update mixes in `meta_info["global_step"]`.
        activation_offload: keep the activations saved for backward in CPU memory during the update
            (`actor_rollout_ref.model.enable_activation_offloading`; a no-op on CPU).

    Attributes:
        trim_padding: drop the columns that are padding in every row of a micro-batch before the
            forward pass (exact; see `base.response_forward`). False forwards the full P+R length.
        head_on_response_mask: when the batch has `response_mask`, run the LM head, log-probs and entropy on
            its positions only (the model's own tokens; observations are most of an agent trajectory);
            log-probs and entropies are 0 elsewhere, where every loss and metric masks them anyway.
        copy_only: `copy_only.copy_only_rule` of `rollout.copy_only_tokens` (set by the worker), so log-probs
            and entropies are those of the policy the rollout sampled from; None: off.
    """

    def __init__(self, config: ActorConfig, actor_module: torch.nn.Module,
                 actor_optimizer: torch.optim.Optimizer | None = None, ppo_mini_batch_size: int | None = None,
                 shuffle_seed: int = 0, activation_offload: bool = False):
        if not isinstance(config, ActorConfig):
            raise TypeError(f"DataParallelPPOActor takes the typed actor_rollout_ref.actor section (ActorConfig), "
                            f"got {type(config).__name__}; load it first (schema.load_config or schema.from_dict)")
        self.config = config
        self.actor_module = actor_module
        self.actor_optimizer = actor_optimizer
        self.ppo_mini_batch_size = int(ppo_mini_batch_size or self.config.ppo_mini_batch_size)
        self.micro_batch_size = self.config.ppo_micro_batch_size_per_gpu
        self.micro_batching = MicroBatching(
            self.micro_batch_size, self.config.ppo_max_token_len_per_gpu if self.config.use_dynamic_bsz else None,
            by_length=True)
        self.shuffle_seed = int(shuffle_seed)
        self.activation_offload = activation_offload
        self.loss_mode = self.config.policy_loss.loss_mode
        self.loss_agg_mode = self.config.loss_agg_mode
        self.policy_loss_fn = core_algos.get_policy_loss_fn(self.loss_mode)
        self._warned_rollout_fallback = False
        self.trim_padding = True
        self.head_on_response_mask = True
        self.copy_only: CopyOnlyRule | SequenceCopyOnlyRule | None = None

    # ------------------------------------------------------------------ forward
    def _forward_micro_batch(self, micro, temperature: float, with_entropy: bool, entropy_grad: bool = False):
        def head(logits, responses):
            if temperature and temperature > 0:  # match the sampler's distribution; 0 (greedy) keeps raw logits
                logits = logits / temperature
            return logprobs_and_entropy(logits, responses, with_entropy=with_entropy, entropy_grad=entropy_grad)

        has_mask = "response_mask" in micro.keys()
        head_mask = micro["response_mask"] if self.head_on_response_mask and has_mask else None
        rule = None
        if self.copy_only is not None:
            if not has_mask:
                raise ValueError("rollout.copy_only_tokens: the actor needs the batch's response_mask (the turns)")
            rule = self.copy_only.for_batch(micro["input_ids"], micro["response_mask"])
        return response_forward(self.actor_module, micro, head, lm_head_tail=True, trim=self.trim_padding,
                                head_mask=head_mask, logits_rule=rule)

    @torch.no_grad()
    def compute_log_prob(self, data, calculate_entropy: bool = True):
        """Log-probs (and entropies) of `responses` under the current weights.

        Args:
            data: DataProto with `input_ids`, `attention_mask`, `position_ids`, `responses`;
                meta_info may carry `temperature`, `micro_batch_size` and (verl's keys)
                `use_dynamic_bsz` + `max_token_len`: token-budget micro-batches.
            calculate_entropy: also return per-token entropies.

        Returns:
            (log_probs (bs, response_length), entropys (bs, response_length) or None) in the rows'
            original order; 0 at the positions past the longest response of each micro-batch and, when the
            batch has `response_mask`, wherever it is 0 (`head_on_response_mask`).
        """
        temperature = float(data.meta_info.get("temperature", 1.0))
        batching = micro_batching_from_meta(data.meta_info, self.micro_batching)
        keys = ["input_ids", "attention_mask", "position_ids", "responses"]
        batch = data.batch.select(*keys, *(["response_mask"] if "response_mask" in data.batch.keys() else []))
        was_training = self.actor_module.training
        self.actor_module.eval()
        try:
            log_probs, entropys = map_micro_batches(
                batch, batching, lambda micro: self._forward_micro_batch(micro, temperature, calculate_entropy))
        finally:
            self.actor_module.train(was_training)
        return log_probs, entropys

    # ------------------------------------------------------------------ update
    def _old_log_prob_key(self, keys) -> str:
        if self.config.use_rollout_log_probs:
            return "rollout_log_probs"
        if "old_log_probs" in keys:
            return "old_log_probs"
        if "rollout_log_probs" in keys:
            if not self._warned_rollout_fallback:
                logger.warning("batch has no 'old_log_probs'; using the engine's 'rollout_log_probs' as pi_old")
                self._warned_rollout_fallback = True
            return "rollout_log_probs"
        raise KeyError("update_policy needs 'old_log_probs' (or 'rollout_log_probs') in the batch")

    def update_policy(self, data) -> dict[str, float]:
        """Run ppo_epochs x mini-batches x micro-batches of PPO updates on `data`.

        Args:
            data: DataProto with the forward keys plus `response_mask`, `advantages`,
                `old_log_probs` (or `rollout_log_probs`) and, with use_kl_loss, `ref_log_prob`.

        Returns:
            Metrics averaged over the update (actor/pg_loss, actor/pg_clipfrac, actor/ppo_kl,
            actor/entropy, actor/kl_loss, actor/grad_norm, actor/lr, ...).
        """
        if self.actor_optimizer is None:
            raise RuntimeError("update_policy called on an actor without an optimizer (a reference policy?)")
        cfg = self.config
        temperature = float(data.meta_info.get("temperature", 1.0))
        entropy_coeff, use_kl_loss, kl_loss_coef = cfg.entropy_coeff, cfg.use_kl_loss, cfg.kl_loss_coef
        kl_loss_type, grad_clip, ppo_epochs = cfg.kl_loss_type, cfg.grad_clip, cfg.ppo_epochs
        agg_mode = effective_agg_mode(self.loss_agg_mode, self.loss_mode)

        keys = set(data.batch.keys())
        old_key = self._old_log_prob_key(keys)
        select = ["input_ids", "attention_mask", "position_ids", "responses", "response_mask", "advantages", old_key]
        if use_kl_loss:
            if "ref_log_prob" not in keys:
                raise KeyError("actor.use_kl_loss=True but the batch has no 'ref_log_prob'; enable the ref worker")
            select.append("ref_log_prob")
        batch = data.batch.select(*select)

        need_entropy_grad = entropy_coeff != 0

        def micro_loss(micro, mask, metrics):
            log_prob, entropy = self._forward_micro_batch(
                micro, temperature, with_entropy=True, entropy_grad=need_entropy_grad
            )
            pg_loss, pg_metrics = self._policy_loss(micro[old_key], log_prob, micro["advantages"], mask)
            loss = pg_loss
            # The entropy and KL terms are aggregated like the policy loss (agg_mode, which gspo & co.
            # force to seq-mean-token-mean): one micro-batch weight then scales all three exactly.
            entropy_agg = core_algos.agg_loss(entropy, mask, agg_mode)
            if need_entropy_grad:
                loss = loss - entropy_coeff * entropy_agg
            if use_kl_loss:
                kl = core_algos.kl_penalty(log_prob, micro["ref_log_prob"], kl_loss_type)
                kl_loss = core_algos.agg_loss(kl, mask, agg_mode)
                loss = loss + kl_loss_coef * kl_loss
                metrics["actor/kl_loss"].append(float(kl_loss.detach()))
                metrics["actor/kl_coef"].append(kl_loss_coef)
            metrics["actor/pg_loss"].append(float(pg_loss.detach()))
            metrics["actor/entropy"].append(float(entropy_agg.detach()))
            for k, v in pg_metrics.items():
                metrics[k].append(float(v))
            return loss

        shuffle_seed = (self.shuffle_seed, int(data.meta_info.get("global_step", 0))) if cfg.shuffle else None
        return run_ppo_epochs(self.actor_module, self.actor_optimizer, batch, micro_loss, ppo_epochs=ppo_epochs,
                              mini_batch_size=self.ppo_mini_batch_size, micro_batching=self.micro_batching,
                              loss_agg_mode=agg_mode, grad_clip=grad_clip, prefix="actor", shuffle_seed=shuffle_seed,
                              activation_offload=self.activation_offload)

    def _policy_loss(self, old_log_prob, log_prob, advantages, mask):
        """Call the registered policy loss; normalise its metrics to actor/* names."""
        out = self.policy_loss_fn(
            old_log_prob=old_log_prob, log_prob=log_prob, advantages=advantages, response_mask=mask,
            loss_agg_mode=self.loss_agg_mode, config=self.config,
        )
        if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict):
            pg_loss, raw = out
        else:  # older verl form: (loss, clipfrac, ppo_kl, clipfrac_lower)
            pg_loss, clipfrac, ppo_kl, clipfrac_lower = out
            raw = {"pg_clipfrac": clipfrac, "ppo_kl": ppo_kl, "pg_clipfrac_lower": clipfrac_lower}
        named = {}
        for k, v in raw.items():
            name = k if k.startswith("actor/") else f"actor/{k}"
            named[name] = v.detach() if torch.is_tensor(v) else v
        return pg_loss, named
