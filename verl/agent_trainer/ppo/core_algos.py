"""PPO-family algorithm core: advantage estimators, policy losses, loss aggregation, KL, value loss.

Owns the pure math of the update (tensors in, tensors out) with verl's function names and keyword
signatures, behind two registries that are the only dispatch:

* ``register_adv_est`` / ``get_adv_estimator_fn`` (YAML ``algorithm.adv_estimator``): each
  registration also records what the estimator needs from the trainer (``estimator_info``: a critic,
  groups of samples per prompt, extra inputs); the trainer derives ``critic.enable=null`` and its
  ``rollout.n`` check from that record and nowhere else. Every estimator is called with keywords
  ``token_level_rewards (bs, T)``, ``response_mask (bs, T)``, ``config`` (the ``algorithm`` section)
  plus what it needs (``values``, ``index`` = uid array, ``reward_baselines``, GiGPO's ``anchor_obs``
  / ``turn_rewards``), accepts and ignores other keywords, and returns ``(advantages, returns)``,
  both (bs, T) and 0 where ``response_mask`` is 0.
* ``register_policy_loss`` / ``get_policy_loss_fn`` (YAML ``actor.policy_loss.loss_mode``): every
  loss is ``fn(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode, config,
  rollout_is_weights=None) -> (loss, metrics)``.

Parameters resolve in one order: an explicit keyword argument, else the attribute on ``config``
(the attribute must exist when a config is passed), else the default named in the docstring.
Nothing here imports Ray or needs a GPU. It does not own configs (``verl/config``),
batching (``verl.protocol``) or model code (workers).

Multi-turn convention: ``response_mask`` is 1 only on tokens the model sampled; environment
observation tokens inside the response have mask 0. Temporal estimators (``gae``,
``reinforce_plus_plus``) skip mask-0 tokens entirely: the recursion runs over model tokens only, so
a reward must sit on a model token (the rollout puts the final reward on the last one). Rewards or
values at mask-0 positions do not change any result.

Groups after failures: a trajectory whose env failed (or that needs a judge) leaves its uid group in the
agent loop, so group baselines see real samples only. A group left with ONE member has no baseline: on
the batch level (``compute_advantage``, what the trainer calls) a group estimator drops that row
(``drop_lone_survivors``: its ``response_mask`` becomes 0, so no policy, KL or entropy loss, and its
advantages are 0), never training it on its raw reward. The trainer refuses ``rollout.n < 2`` for group
estimators, so in training a one-row group always means its other samples failed. The estimators called
directly keep verl's rule for a singleton group (mean 0, std 1).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd
import torch

from verl.config.schema import ActorConfig, AlgoConfig
from verl.protocol import to_object_array
from verl.utils import torch_functional as VF
from verl.utils.registry import Registry

logger = logging.getLogger(__name__)

__all__ = [
    "AdvantageEstimator", "ADV_ESTIMATOR_REGISTRY", "register_adv_est", "get_adv_estimator_fn",
    "EstimatorInfo", "ESTIMATOR_INFO", "estimator_info", "estimator_needs",
    "POLICY_LOSS_REGISTRY", "register_policy_loss", "get_policy_loss_fn",
    "compute_gae_advantage_return", "compute_grpo_outcome_advantage", "compute_grpo_passk_outcome_advantage",
    "compute_rloo_outcome_advantage", "compute_reinforce_plus_plus_outcome_advantage",
    "compute_reinforce_plus_plus_baseline_outcome_advantage", "compute_remax_outcome_advantage",
    "compute_opo_outcome_advantage", "compute_gpg_outcome_advantage", "compute_gigpo_outcome_advantage",
    "anchor_obs_from_messages", "discounted_reverse_cumsum",
    "compute_policy_loss_vanilla", "compute_policy_loss_gspo", "compute_policy_loss_gpg",
    "compute_policy_loss_cispo", "compute_policy_loss_clip_cov", "compute_policy_loss_kl_cov",
    "agg_loss", "AGG_LOSS_MODES", "kl_penalty", "KL_PENALTY_TYPES",
    "FixedKLController", "AdaptiveKLController", "get_kl_controller",
    "compute_value_loss", "compute_entropy_loss", "apply_kl_penalty", "compute_advantage", "drop_lone_survivors",
]

_ALGO_DEFAULTS = AlgoConfig()


def _resolve(name: str, explicit: Any, config: Any, required: bool = False) -> Any:
    """explicit keyword > ``config.<name>`` (dotted path; any object with the attributes) > the
    ``AlgoConfig`` default (defaults live once, in the config schema). A ``required`` hyperparameter
    (gamma, lam) has no silent default: missing from both the keyword and ``config`` it raises."""
    if explicit is not None:
        return explicit
    for node in (config, None if required else _ALGO_DEFAULTS):
        for part in name.split("."):
            node = getattr(node, part, None)
            if node is None:
                break
        if node is not None:
            return node
    raise ValueError(f"algorithm.{name} is required here: pass {name.split('.')[-1]}=... or set it in the config")


# ============================================================================ registries
class AdvantageEstimator(str, Enum):
    """Names accepted by ``algorithm.adv_estimator``."""

    GAE = "gae"
    GRPO = "grpo"
    REINFORCE_PLUS_PLUS = "reinforce_plus_plus"
    REINFORCE_PLUS_PLUS_BASELINE = "reinforce_plus_plus_baseline"
    REMAX = "remax"
    RLOO = "rloo"
    OPO = "opo"
    GRPO_PASSK = "grpo_passk"
    GPG = "gpg"
    GIGPO = "gigpo"


ADV_ESTIMATOR_REGISTRY = Registry("advantage estimator", "algorithm.adv_estimator")
POLICY_LOSS_REGISTRY = Registry("policy loss", "actor.policy_loss.loss_mode")


@dataclass(frozen=True)
class EstimatorInfo:
    """What an advantage estimator needs from the trainer, recorded where it registers.

    Attributes:
        needs_critic: it reads ``values``, so a critic is trained (``critic.enable: null`` turns it on).
        needs_groups: its baseline is the other samples of the same prompt, so ``rollout.n`` must be >= 2.
        needs: extra inputs the trainer produces before the advantage step (e.g. "reward_baselines":
            the reward of one greedy rollout per prompt, for ReMax); they arrive as keyword arguments.
    """

    needs_critic: bool = False
    needs_groups: bool = False
    needs: frozenset = frozenset()


# name -> EstimatorInfo, filled by `register_adv_est` beside ADV_ESTIMATOR_REGISTRY.
ESTIMATOR_INFO: dict[str, EstimatorInfo] = {}


def register_adv_est(name_or_enum, needs: tuple[str, ...] = (), needs_critic: bool = False,
                     needs_groups: bool = False) -> Callable:
    """Decorator: register an advantage estimator under ``name_or_enum`` (str or AdvantageEstimator).

    Args:
        needs: inputs the trainer must produce for it before the advantage step (see `EstimatorInfo`).
        needs_critic: the estimator reads ``values`` (a critic is trained).
        needs_groups: the estimator compares the samples of one prompt (``rollout.n >= 2``).

    Raises:
        ValueError: if a different function, or the same with other needs, already holds the name.
    """
    name = name_or_enum.value if isinstance(name_or_enum, Enum) else str(name_or_enum)
    info = EstimatorInfo(needs_critic=needs_critic, needs_groups=needs_groups, needs=frozenset(needs))
    if ESTIMATOR_INFO.get(name, info) != info:
        raise ValueError(f"advantage estimator {name!r} is already registered with {ESTIMATOR_INFO[name]}; "
                         f"pick another name for {info}")
    register = ADV_ESTIMATOR_REGISTRY.register(name_or_enum)

    def deco(fn: Callable) -> Callable:
        register(fn)
        ESTIMATOR_INFO[name] = info
        return fn

    return deco


def estimator_info(name_or_enum) -> EstimatorInfo:
    """What the estimator registered under ``name_or_enum`` needs (a critic, groups, extra inputs).

    Raises:
        ValueError: naming the value and listing the registered estimators.
    """
    get_adv_estimator_fn(name_or_enum)  # unknown names fail here, listing the choices
    name = name_or_enum.value if isinstance(name_or_enum, Enum) else str(name_or_enum)
    return ESTIMATOR_INFO.get(name, EstimatorInfo())


def estimator_needs(name_or_enum) -> frozenset:
    """The extra inputs the estimator registered under ``name_or_enum`` needs (empty for most)."""
    return estimator_info(name_or_enum).needs


def get_adv_estimator_fn(name_or_enum) -> Callable:
    """The estimator registered under ``name_or_enum`` (case-sensitive).

    Raises:
        ValueError: naming the value and listing the registered estimators.
    """
    return ADV_ESTIMATOR_REGISTRY.get(name_or_enum)


def register_policy_loss(name: str) -> Callable:
    """Decorator: register a policy loss under ``name``.

    Raises:
        ValueError: if a different function already holds the name.
    """
    return POLICY_LOSS_REGISTRY.register(name)


def get_policy_loss_fn(name: str) -> Callable:
    """The policy loss registered under ``name``.

    Raises:
        ValueError: naming the value and listing the registered losses.
    """
    return POLICY_LOSS_REGISTRY.get(name)


# ============================================================================ shared helpers
def discounted_reverse_cumsum(x: torch.Tensor, discount: float, block: int = 64) -> torch.Tensor:
    """``y_t = sum_{k>=0} discount^k * x_{t+k}`` along the last dim, without a loop over tokens.

    Blocked scan: within blocks of ``block`` tokens one (block x block) matmul with the power
    matrix; the per-block carries are the same problem on a sequence ``block`` times shorter
    (discount ``discount**block``), solved recursively.

    Args:
        x: (bs, T) float.
        discount: scalar in [0, 1].
    """
    bs, T = x.shape
    if T == 0:
        return x.clone()
    if T <= block:
        pos = torch.arange(T, device=x.device)
        expo = (pos.view(-1, 1) - pos.view(1, -1)).to(x.dtype)         # [j, t] = j - t
        powers = torch.where(expo >= 0, torch.pow(torch.tensor(discount, dtype=x.dtype), expo.clamp(min=0)),
                             torch.zeros((), dtype=x.dtype))
        return x @ powers
    nb = -(-T // block)
    xp = torch.nn.functional.pad(x, (0, nb * block - T)).view(bs, nb, block)
    local = discounted_reverse_cumsum(xp.reshape(bs * nb, block), discount, block).view(bs, nb, block)
    starts = local[:, :, 0]                                              # (bs, nb) block-local sums
    tails = discounted_reverse_cumsum(starts, discount ** block, block)  # (bs, nb) sums to the end
    nxt = torch.nn.functional.pad(tails[:, 1:], (0, 1))                  # tail of the NEXT block
    decay = torch.pow(torch.tensor(discount, dtype=x.dtype), torch.arange(block, 0, -1, dtype=x.dtype))
    out = local + nxt.unsqueeze(-1) * decay                              # (bs, nb, block)
    return out.reshape(bs, nb * block)[:, :T]


def _compact(mask: torch.Tensor, *xs: torch.Tensor):
    """Move each row's masked entries of every ``x`` to the front (order kept, zeros after).

    Returns:
        (compacted x for each x..., slot) where ``slot`` (bs, T) is each token's compact index.
    """
    bs, T = mask.shape
    m = mask.bool()
    slot = torch.cumsum(m, dim=-1) - 1                                   # compact index of each valid token
    idx = torch.where(m, slot, T)                                         # invalid -> trash column T
    outs = []
    for x in xs:
        out = x.new_zeros(bs, T + 1)
        out.scatter_(1, idx, x)                                           # trash column absorbs mask-0 values
        outs.append(out[:, :T])
    return (*outs, slot.clamp(min=0))


def _expand(compact: torch.Tensor, slot: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`_compact`: values back at their token positions, 0 on mask-0 tokens."""
    return torch.gather(compact, 1, slot) * mask.to(compact.dtype)


def _warn_rewards_off_mask(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, name: str) -> None:
    if bool(((token_level_rewards != 0) & (response_mask == 0)).any()):
        logger.warning(
            "%s: non-zero rewards on response_mask==0 tokens are ignored; place rewards on model tokens", name
        )


def _group_ids(index, bs: int) -> tuple[torch.Tensor, int]:
    """Dense group ids (0..G-1) for the per-sample ``index`` (uids: str, int, any hashable)."""
    if index is None:
        raise ValueError(
            "this estimator needs index=non_tensor_batch['uid'] (one id per prompt, shared by its samples)"
        )
    if isinstance(index, torch.Tensor):
        index = index.cpu().numpy()
    arr = to_object_array(index)
    if len(arr) != bs:
        raise ValueError(f"index has {len(arr)} entries but token_level_rewards has {bs} rows")
    codes, uniques = pd.factorize(arr)
    return torch.from_numpy(codes.astype(np.int64)), len(uniques)


def _group_stats(scores: torch.Tensor, gid: torch.Tensor, n_groups: int):
    """Per-sample (count, mean, unbiased std) of its group; singleton groups get mean 0, std 1."""
    gid = gid.to(scores.device)
    count = torch.zeros(n_groups, dtype=scores.dtype, device=scores.device).index_add_(0, gid, torch.ones_like(scores))
    total = torch.zeros_like(count).index_add_(0, gid, scores)
    mean = total / count
    sq = torch.zeros_like(count).index_add_(0, gid, (scores - mean[gid]) ** 2)
    std = torch.sqrt(sq / (count - 1).clamp(min=1))
    single = count[gid] < 2
    return count[gid], torch.where(single, 0.0, mean[gid]), torch.where(single, 1.0, std[gid])


def _broadcast(per_sample: torch.Tensor, response_mask: torch.Tensor) -> torch.Tensor:
    return per_sample.unsqueeze(-1) * response_mask.to(per_sample.dtype)


# ============================================================================ advantage estimators
@register_adv_est(AdvantageEstimator.GAE, needs_critic=True)
def compute_gae_advantage_return(token_level_rewards: torch.Tensor, values: torch.Tensor, response_mask: torch.Tensor,
                                 gamma: Optional[float] = None, lam: Optional[float] = None, config=None, **kwargs):
    """Observation-masked GAE (arXiv:1506.02438), run over model tokens only.

    On the subsequence of tokens with mask 1 (V_next = 0 after the last one):
    ``delta_t = r_t + gamma * V_next - V_t``; ``A_t = delta_t + gamma * lam * A_next``. Mask-0 tokens
    are skipped (their rewards/values never enter). ``returns = A + V``; advantages are then
    whitened over the mask. Reads ``config.gamma`` / ``config.lam`` when not passed.

    Returns:
        (advantages, returns), each (bs, T), 0 where response_mask is 0.
    """
    gamma = float(_resolve("gamma", gamma, config, required=True))
    lam = float(_resolve("lam", lam, config, required=True))
    with torch.no_grad():
        _warn_rewards_off_mask(token_level_rewards, response_mask, "gae")
        r_c, v_c, slot = _compact(response_mask, token_level_rewards.float(), values.float())
        v_next = torch.nn.functional.pad(v_c[:, 1:], (0, 1))   # zeros past each row's last model token
        delta = r_c + gamma * v_next - v_c
        adv_c = discounted_reverse_cumsum(delta, gamma * lam)
        advantages = _expand(adv_c, slot, response_mask)
        returns = (advantages + values.float()) * response_mask
        advantages = VF.masked_whiten(advantages, response_mask) * response_mask
    return advantages, returns


@register_adv_est(AdvantageEstimator.GRPO, needs_groups=True)
def compute_grpo_outcome_advantage(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index=None,
                                   epsilon: float = 1e-6, norm_adv_by_std_in_grpo: Optional[bool] = None,
                                   config=None, **kwargs):
    """GRPO (arXiv:2402.03300): ``A_i = (s_i - mean_g) / (std_g + eps)``, s_i = sum of token rewards.

    std is unbiased; a singleton group uses mean 0, std 1. ``norm_adv_by_std_in_grpo=False``
    (Dr.GRPO, arXiv:2503.20783) gives ``A_i = s_i - mean_g``. Default for the flag: True.
    """
    norm = bool(_resolve("norm_adv_by_std_in_grpo", norm_adv_by_std_in_grpo, config))
    scores = token_level_rewards.sum(dim=-1).float()
    gid, n_groups = _group_ids(index, scores.shape[0])
    _, mean, std = _group_stats(scores, gid, n_groups)
    adv = (scores - mean) / (std + epsilon) if norm else scores - mean
    adv = _broadcast(adv, response_mask)
    return adv, adv


@register_adv_est(AdvantageEstimator.GRPO_PASSK, needs_groups=True)
def compute_grpo_passk_outcome_advantage(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index=None,
                                         epsilon: float = 1e-6, norm_adv_by_std_in_grpo: Optional[bool] = None,
                                         config=None, **kwargs):
    """Pass@k GRPO: only each group's best sample (first on ties) gets ``r_max - r_second``
    (divided by std + eps when normalising); all others get 0. A row with no model token (a failed or
    dropped sample, alone in its group) gets 0.

    Raises:
        ValueError: if a group with model tokens has fewer than 2 samples.
    """
    norm = bool(_resolve("norm_adv_by_std_in_grpo", norm_adv_by_std_in_grpo, config))
    scores = token_level_rewards.sum(dim=-1).float()
    bs = scores.shape[0]
    gid, n_groups = _group_ids(index, bs)
    count, _, std = _group_stats(scores, gid, n_groups)
    if bool(((count < 2) & (response_mask.sum(dim=-1) > 0).to(count.device)).any()):
        raise ValueError("grpo_passk needs at least 2 samples per uid group (set actor_rollout_ref.rollout.n >= 2)")
    gmax = torch.full((n_groups,), -torch.inf).scatter_reduce(0, gid, scores, "amax")
    pos = torch.arange(bs)
    cand = torch.where(scores == gmax[gid], pos, torch.full_like(pos, bs))
    best = torch.full((n_groups,), bs, dtype=torch.int64).scatter_reduce(0, gid, cand, "amin")
    is_best = pos == best[gid]
    second = torch.full((n_groups,), -torch.inf).scatter_reduce(
        0, gid, torch.where(is_best, torch.full_like(scores, -torch.inf), scores), "amax")
    gap = torch.where(count > 1, gmax[gid] - second[gid], torch.zeros_like(scores))  # a lone row: no second
    if norm:
        gap = gap / (std + epsilon)
    adv = _broadcast(torch.where(is_best, gap, torch.zeros_like(gap)), response_mask)
    return adv, adv


@register_adv_est(AdvantageEstimator.RLOO, needs_groups=True)
def compute_rloo_outcome_advantage(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index=None,
                                   epsilon: float = 1e-6, config=None, **kwargs):
    """RLOO (arXiv:2402.14740): ``A_i = s_i - mean_{j != i} s_j = (n*s_i - sum_g) / (n - 1)``.

    A singleton group has no other sample: ``A_i = s_i`` (no baseline).
    """
    scores = token_level_rewards.sum(dim=-1).float()
    gid, n_groups = _group_ids(index, scores.shape[0])
    gid = gid.to(scores.device)
    count = torch.zeros(n_groups, device=scores.device).index_add_(0, gid, torch.ones_like(scores))[gid]
    total = torch.zeros(n_groups, device=scores.device).index_add_(0, gid, scores)[gid]
    adv = torch.where(count > 1, (count * scores - total) / (count - 1).clamp(min=1), scores)
    adv = _broadcast(adv, response_mask)
    return adv, adv


@register_adv_est(AdvantageEstimator.REINFORCE_PLUS_PLUS)
def compute_reinforce_plus_plus_outcome_advantage(token_level_rewards: torch.Tensor, response_mask: torch.Tensor,
                                                  gamma: Optional[float] = None, config=None, **kwargs):
    """REINFORCE++ (arXiv:2501.03262): discounted return over model tokens, whitened over the batch.

    ``G_t = r_t + gamma * G_next`` on the mask-1 subsequence (observation tokens are skipped, not
    reset points); ``A = whiten(G)`` over the mask. ``returns = G``. Reads ``config.gamma``.
    """
    gamma = float(_resolve("gamma", gamma, config, required=True))
    with torch.no_grad():
        _warn_rewards_off_mask(token_level_rewards, response_mask, "reinforce_plus_plus")
        r_c, slot = _compact(response_mask, token_level_rewards.float())
        returns = _expand(discounted_reverse_cumsum(r_c, gamma), slot, response_mask)
        adv = VF.masked_whiten(returns, response_mask) * response_mask
    return adv, returns


@register_adv_est(AdvantageEstimator.REINFORCE_PLUS_PLUS_BASELINE, needs_groups=True)
def compute_reinforce_plus_plus_baseline_outcome_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index=None,
    epsilon: float = 1e-6,
    config=None,
    **kwargs,
):
    """REINFORCE++-baseline: ``A_i = s_i - mean_g`` (singleton mean 0), tiled, then whitened over the batch."""
    scores = token_level_rewards.sum(dim=-1).float()
    gid, n_groups = _group_ids(index, scores.shape[0])
    _, mean, _ = _group_stats(scores, gid, n_groups)
    adv = _broadcast(scores - mean, response_mask)
    adv = VF.masked_whiten(adv, response_mask) * response_mask
    return adv, adv


@register_adv_est(AdvantageEstimator.REMAX, needs=("reward_baselines",))
def compute_remax_outcome_advantage(token_level_rewards: torch.Tensor, reward_baselines: Optional[torch.Tensor] = None,
                                    response_mask: Optional[torch.Tensor] = None, config=None, **kwargs):
    """ReMax (arXiv:2310.10505): ``A_t = sum_{k>=t} r_k m_k - b``, b = greedy-rollout reward (bs,).

    ``returns`` is the undiscounted reward-to-go.
    """
    if reward_baselines is None or response_mask is None:
        raise ValueError(
            "remax needs reward_baselines (bs,), the reward of a greedy rollout per prompt, and response_mask"
        )
    with torch.no_grad():
        rm = (token_level_rewards * response_mask).float()
        returns = torch.flip(torch.cumsum(torch.flip(rm, [-1]), dim=-1), [-1]) * response_mask
        adv = returns - _broadcast(reward_baselines.float().view(-1), response_mask)
    return adv, returns


@register_adv_est(AdvantageEstimator.OPO, needs_groups=True)
def compute_opo_outcome_advantage(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index=None,
                                  epsilon: float = 1e-6, config=None, **kwargs):
    """OPO: length-weighted group baseline ``b = sum_j |y_j| s_j / sum_j |y_j|`` (|y| = model tokens);
    ``A_i = s_i - b``, singleton b = 0."""
    scores = token_level_rewards.sum(dim=-1).float()
    lengths = response_mask.sum(dim=-1).float()
    gid, n_groups = _group_ids(index, scores.shape[0])
    gid = gid.to(scores.device)
    zeros = torch.zeros(n_groups, device=scores.device)
    count = zeros.index_add(0, gid, torch.ones_like(scores))[gid]
    wsum = zeros.index_add(0, gid, lengths * scores)[gid]
    lsum = zeros.index_add(0, gid, lengths)[gid]
    baseline = torch.where(count > 1, wsum / lsum.clamp(min=epsilon), torch.zeros_like(scores))
    adv = _broadcast(scores - baseline, response_mask)
    return adv, adv


@register_adv_est(AdvantageEstimator.GPG, needs_groups=True)
def compute_gpg_outcome_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index=None,
    epsilon: float = 1e-6,
    f_norm: float = 1.0,
    alpha: float = 1.0,
    config=None,
    **kwargs,
):
    """GPG (arXiv:2504.02546): ``A_i = alpha * (s_i - mean_g) / f_norm`` with
    ``alpha = bs / max(#nonzero scores, 1)`` (overrides the ``alpha`` argument, as in verl); singleton mean 0.
    Use with ``actor.policy_loss.loss_mode=gpg``."""
    scores = token_level_rewards.sum(dim=-1).float()
    bs = scores.shape[0]
    gid, n_groups = _group_ids(index, bs)
    _, mean, _ = _group_stats(scores, gid, n_groups)
    alpha = bs / max(int((scores != 0).sum()), 1)
    adv = _broadcast(alpha * (scores - mean) / f_norm, response_mask)
    return adv, adv


def _turn_ids(response_mask: torch.Tensor) -> torch.Tensor:
    """0-based model-turn index of each token (turn = maximal run of mask-1 tokens), -1 on mask-0."""
    m = response_mask.to(torch.int64)
    starts = m - torch.nn.functional.pad(m[:, :-1], (1, 0))
    turn = torch.cumsum((starts == 1).to(torch.int64), dim=-1) - 1
    return torch.where(m.bool(), turn, torch.full_like(turn, -1))


class _Unique:
    """An anchor equal only to itself: a turn with no recorded observation forms its own step group."""


def _hashable(x):
    """A hashable stand-in for an anchor observation (lists -> tuples, dicts -> sorted items)."""
    if isinstance(x, np.ndarray):
        return (x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, (list, tuple)):
        return tuple(_hashable(e) for e in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in x.items()))
    return x


def anchor_obs_from_messages(messages, num_turns) -> np.ndarray:
    """Anchor observations for GiGPO from chat logs: for each of the last ``num_turns[i]`` assistant
    messages of sample i, the content of the message right before it (the state it acted in)."""
    out = np.empty(len(messages), dtype=object)
    for i, (msgs, n) in enumerate(zip(messages, num_turns, strict=True)):
        pos = [k for k, msg in enumerate(msgs) if msg["role"] == "assistant"]
        pos = pos[len(pos) - int(n):] if int(n) else []
        out[i] = [msgs[k - 1]["content"] if k > 0 else "" for k in pos]
    return out


@register_adv_est(AdvantageEstimator.GIGPO, needs_groups=True)
def compute_gigpo_outcome_advantage(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index=None,
                                    anchor_obs=None, turn_rewards=None, messages=None, num_turns=None,
                                    gamma: Optional[float] = None, step_advantage_w: Optional[float] = None,
                                    mode: Optional[str] = None, epsilon: float = 1e-6, config=None, **kwargs):
    """GiGPO (arXiv:2505.10978) on whole multi-turn trajectories.

    Turn k of sample i is the k-th maximal run of ``response_mask == 1`` tokens.
    * Episode advantage: ``A_E(i) = R_i - mean_g(R)`` (R = sum of token rewards; g = uid group of
      trajectories), divided by ``std_g + eps`` in mode ``mean_std_norm``; singleton: mean 0, std 1.
    * Step advantage: step groups are the turns with an identical (hashable) anchor observation
      inside one uid group; ``G_{i,k} = sum_{j>=k} gamma^(j-k) turn_rewards[i][j]``;
      ``A_S(i,k) = G_{i,k} - mean_step_group(G)`` (/ (std + eps) in ``mean_std_norm``); a step
      group of one turn has nothing to compare with and gets ``A_S = 0``.
    * ``A = A_E + step_advantage_w * A_S(turn of the token)`` on model tokens.

    Args:
        anchor_obs: (bs,) object array of per-turn observations the model acted on (one per model
            turn; lists/dicts are made hashable); when None it is derived with
            :func:`anchor_obs_from_messages` from ``messages`` and ``num_turns``.
        turn_rewards: (bs,) object array of per-turn env rewards; may be shorter than anchor_obs
            when the last turn got no env step (its reward counts as 0).
        gamma / step_advantage_w / mode: else ``config.gamma`` / ``config.gigpo.step_advantage_w``
            (default 1.0) / ``config.gigpo.mode`` (``mean_norm`` default, or ``mean_std_norm``).

    Raises:
        ValueError: on missing inputs, when a sample has more rewards than anchors, or more
            model-token runs than anchors (single-turn samples with no anchor are allowed).
    """
    gamma = float(_resolve("gamma", gamma, config, required=True))
    w = float(_resolve("gigpo.step_advantage_w", step_advantage_w, config))
    mode = _resolve("gigpo.mode", mode, config)
    if mode not in ("mean_norm", "mean_std_norm"):
        raise ValueError(f"algorithm.gigpo.mode={mode!r}; choose one of ['mean_norm', 'mean_std_norm']")
    if turn_rewards is None:
        raise ValueError("gigpo needs turn_rewards=non_tensor_batch['turn_rewards'] (per-turn env rewards)")
    if anchor_obs is None:
        if messages is None or num_turns is None:
            raise ValueError(
                "gigpo needs anchor_obs=non_tensor_batch['anchor_obs'], or messages and num_turns to derive it"
            )
        anchor_obs = anchor_obs_from_messages(messages, num_turns)
    use_std = mode == "mean_std_norm"
    bs = token_level_rewards.shape[0]
    gid, n_groups = _group_ids(index, bs)

    # Episode level.
    scores = token_level_rewards.sum(dim=-1).float()
    _, mean, std = _group_stats(scores, gid, n_groups)
    adv_ep = (scores - mean) / (std + epsilon) if use_std else scores - mean

    # Step level: flatten turns of all samples. A turn without an env step (budget cut, env error)
    # has reward 0; a turn without an anchor (single-turn data) is its own step group (A_S = 0).
    turn = _turn_ids(response_mask)
    n_seg = (turn.max(dim=-1).values + 1).tolist()
    n_steps, rewards_flat, keys_flat = [], [], []
    for i, gid_i in enumerate(gid.tolist()):
        anchors, rewards = list(anchor_obs[i]), list(turn_rewards[i])
        if len(rewards) > len(anchors) or n_seg[i] > max(len(anchors), 1):
            raise ValueError(f"gigpo: sample {i} has {n_seg[i]} model turns in response_mask, "
                             f"{len(anchors)} anchor_obs and {len(rewards)} turn_rewards; expected one anchor per "
                             f"model turn and at most one reward per anchor")
        n = max(len(anchors), n_seg[i])
        n_steps.append(n)
        rewards_flat.extend(float(x) for x in rewards + [0.0] * (n - len(rewards)))
        keys_flat.extend((gid_i, _hashable(a)) for a in anchors)
        keys_flat.extend((gid_i, _Unique()) for _ in range(n - len(anchors)))
    offsets = torch.tensor([0] + n_steps[:-1], dtype=torch.int64).cumsum(0)
    total = int(sum(n_steps))
    if total == 0:
        return _broadcast(adv_ep, response_mask), _broadcast(adv_ep, response_mask)
    step_r = torch.tensor(rewards_flat)
    sample_of_step = torch.repeat_interleave(torch.arange(bs), torch.tensor(n_steps))
    pos_in_sample = torch.arange(total) - offsets[sample_of_step]
    # Discounted return inside each trajectory: dense (bs, max_turns) layout then the blocked scan.
    dense = torch.zeros(bs, max(n_steps))
    dense[sample_of_step, pos_in_sample] = step_r
    returns_step = discounted_reverse_cumsum(dense, gamma)[sample_of_step, pos_in_sample]
    codes, uniq = pd.factorize(to_object_array(keys_flat))
    sgid = torch.from_numpy(codes.astype(np.int64))
    s_count, s_mean, s_std = _group_stats(returns_step, sgid, len(uniq))
    adv_step = returns_step - s_mean
    if use_std:
        adv_step = adv_step / (s_std + epsilon)
    adv_step = torch.where(s_count > 1, adv_step, torch.zeros_like(adv_step))

    # Back to tokens.
    flat = (offsets.view(-1, 1) + turn.clamp(min=0)).clamp(max=total - 1)
    adv = (adv_ep.view(-1, 1) + w * adv_step[flat]) * response_mask
    return adv, adv


# ============================================================================ loss aggregation
AGG_LOSS_MODES = ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm")


def agg_loss(loss_mat: torch.Tensor, loss_mask: torch.Tensor, loss_agg_mode: str, dp_size: int = 1,
             batch_num_tokens: Optional[int] = None, global_batch_size: Optional[int] = None,
             loss_scale_factor: Optional[float] = None) -> torch.Tensor:
    """Reduce a (bs, T) loss matrix to a scalar.

    * ``token-mean``: ``sum(L*m) / N_tok`` (N_tok = batch_num_tokens or sum(m)).
    * ``seq-mean-token-sum``: ``sum_i(sum_t L*m) / N_seq``.
    * ``seq-mean-token-mean``: ``sum_i(sum_t L*m / sum_t m) / N_seq``.
    * ``seq-mean-token-sum-norm`` (Dr.GRPO): ``sum_i(sum_t L*m) / N_seq / C``, C = loss_scale_factor or T.

    N_seq = global_batch_size or the number of rows with at least one mask-1 token. Under data
    parallelism with global denominators the result is multiplied by ``dp_size``. Empty masks give 0.

    Raises:
        ValueError: for an unknown mode, listing the choices.
    """
    mask = loss_mask.to(loss_mat.dtype)
    token_sum = VF.masked_sum(loss_mat, mask, axis=-1)                   # (bs,)
    row_tokens = mask.sum(dim=-1)
    n_seq = global_batch_size if global_batch_size is not None else (row_tokens > 0).sum().clamp(min=1)
    if loss_agg_mode == "token-mean":
        n_tok = batch_num_tokens if batch_num_tokens is not None else row_tokens.sum().clamp(min=1)
        loss = token_sum.sum() / n_tok
    elif loss_agg_mode == "seq-mean-token-sum":
        loss = token_sum.sum() / n_seq
    elif loss_agg_mode == "seq-mean-token-mean":
        loss = (token_sum / (row_tokens + 1e-8)).sum() / n_seq
    elif loss_agg_mode == "seq-mean-token-sum-norm":
        scale = loss_scale_factor if loss_scale_factor is not None else loss_mask.shape[-1]
        loss = token_sum.sum() / n_seq / scale
    else:
        raise ValueError(
            f"actor.loss_agg_mode={loss_agg_mode!r} is not supported; choose one of {list(AGG_LOSS_MODES)}"
        )
    return loss * dp_size


# ============================================================================ policy losses
def _clip_range(config) -> tuple[float, float]:
    clip_ratio = config.clip_ratio
    low = config.clip_ratio_low if config.clip_ratio_low is not None else clip_ratio
    high = config.clip_ratio_high if config.clip_ratio_high is not None else clip_ratio
    return float(low), float(high)


def _apply_is(loss: torch.Tensor, rollout_is_weights: Optional[torch.Tensor]) -> torch.Tensor:
    return loss if rollout_is_weights is None else loss * rollout_is_weights


@register_policy_loss("vanilla")
def compute_policy_loss_vanilla(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode="token-mean",
                                config=None, rollout_is_weights=None):
    """PPO clip (arXiv:1707.06347) with asymmetric clip (DAPO clip-higher) and dual-clip (arXiv:1912.09729).

    ``r = exp(clamp(logp - logp_old, -20, 20))``; ``L = max(-A r, -A clip(r, 1-eps_low, 1+eps_high))``;
    for A < 0, ``L = min(L, -A * clip_ratio_c)``.

    Returns:
        (loss scalar, {"actor/pg_clipfrac", "actor/pg_clipfrac_lower", "actor/ppo_kl"}).
    """
    config = config if config is not None else ActorConfig()
    low, high = _clip_range(config)
    clip_c = float(config.clip_ratio_c)
    scale = config.loss_scale_factor
    if clip_c <= 1.0:
        raise ValueError(f"actor.clip_ratio_c must be > 1 for dual-clip, got {clip_c}")
    neg_lr = torch.clamp(log_prob - old_log_prob, -20.0, 20.0)
    ratio = torch.exp(neg_lr)
    loss1 = -advantages * ratio
    loss2 = -advantages * torch.clamp(ratio, 1 - low, 1 + high)
    clipped = torch.maximum(loss1, loss2)
    loss3 = -advantages * clip_c
    dual = torch.minimum(loss3, clipped)
    loss_mat = _apply_is(torch.where(advantages < 0, dual, clipped), rollout_is_weights)
    loss = agg_loss(loss_mat, response_mask, loss_agg_mode, loss_scale_factor=scale)
    metrics = {
        "actor/pg_clipfrac": VF.masked_mean((loss2 > loss1).float(), response_mask).item(),
        "actor/pg_clipfrac_lower": VF.masked_mean(((clipped > loss3) & (advantages < 0)).float(), response_mask).item(),
        "actor/ppo_kl": VF.masked_mean(-neg_lr, response_mask).item(),
    }
    return loss, metrics


@register_policy_loss("gspo")
def compute_policy_loss_gspo(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode="seq-mean-token-mean",
                             config=None, rollout_is_weights=None):
    """GSPO (arXiv:2507.18071): sequence-level ratio ``s_i = exp(mean_t(logp - logp_old))`` applied per
    token as ``exp(sg(log s_i) + logp - sg(logp))`` (log clamped <= 10), PPO-clipped; always
    aggregated with seq-mean-token-mean (the ``loss_agg_mode`` argument is ignored)."""
    config = config if config is not None else ActorConfig()
    low, high = _clip_range(config)
    lr = log_prob - old_log_prob
    seq_lr = VF.masked_sum(lr, response_mask, axis=-1) / response_mask.sum(dim=-1).clamp(min=1)
    tok_lr = torch.clamp(seq_lr.detach().unsqueeze(-1) + log_prob - log_prob.detach(), max=10.0)
    ratio = torch.exp(tok_lr)
    loss1 = -advantages * ratio
    loss2 = -advantages * torch.clamp(ratio, 1 - low, 1 + high)
    loss_mat = _apply_is(torch.maximum(loss1, loss2), rollout_is_weights)
    loss = agg_loss(loss_mat, response_mask, "seq-mean-token-mean")
    metrics = {
        "actor/pg_clipfrac": VF.masked_mean((loss2 > loss1).float(), response_mask).item(),
        "actor/pg_clipfrac_lower": 0.0,
        "actor/ppo_kl": VF.masked_mean(-lr, response_mask).item(),
    }
    return loss, metrics


@register_policy_loss("gpg")
def compute_policy_loss_gpg(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode="token-mean",
                            config=None, rollout_is_weights=None):
    """GPG (arXiv:2504.02546): ``L = -logp * A``, no ratio, no clip."""
    scale = config.loss_scale_factor if config is not None else None
    loss_mat = _apply_is(-log_prob * advantages, rollout_is_weights)
    loss = agg_loss(loss_mat, response_mask, loss_agg_mode, loss_scale_factor=scale)
    return loss, {"actor/ppo_kl": VF.masked_mean(old_log_prob - log_prob, response_mask).item()}


@register_policy_loss("cispo")
def compute_policy_loss_cispo(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode="token-mean",
                              config=None, rollout_is_weights=None):
    """CISPO (arXiv:2506.13585): ``L = -sg(clip(r, 1-eps_low, 1+eps_high)) * A * logp``."""
    config = config if config is not None else ActorConfig()
    low, high = _clip_range(config)
    lr = torch.clamp(log_prob - old_log_prob, -20.0, 20.0)
    ratio = torch.exp(lr)
    clipped_ratio = torch.clamp(ratio, 1 - low, 1 + high).detach()
    loss_mat = _apply_is(-clipped_ratio * advantages * log_prob, rollout_is_weights)
    loss = agg_loss(loss_mat, response_mask, loss_agg_mode, loss_scale_factor=config.loss_scale_factor)
    metrics = {
        "actor/pg_clipfrac": VF.masked_mean((clipped_ratio != ratio.detach()).float(), response_mask).item(),
        "actor/ppo_kl": VF.masked_mean(-lr, response_mask).item(),
    }
    return loss, metrics


def _token_cov(advantages, log_prob, response_mask) -> torch.Tensor:
    """Per-token ``(A - mean A) * (logp - mean logp)`` with means over valid tokens (no grad)."""
    lp = log_prob.detach()
    return (advantages - VF.masked_mean(advantages, response_mask)) * (lp - VF.masked_mean(lp, response_mask))


@register_policy_loss("clip_cov")
def compute_policy_loss_clip_cov(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode="token-mean",
                                 config=None, rollout_is_weights=None):
    """Clip-Cov (arXiv:2505.22617): PPO clip, plus the gradient of a random
    ``max(1, clip_cov_ratio * N_tok)`` tokens whose covariance lies in (clip_cov_lb, clip_cov_ub) is cut."""
    config = config if config is not None else ActorConfig()
    low, high = _clip_range(config)
    ratio_k = config.policy_loss.clip_cov_ratio
    lb, ub = config.policy_loss.clip_cov_lb, config.policy_loss.clip_cov_ub
    lr = log_prob - old_log_prob
    ratio = torch.exp(lr)
    loss1 = -advantages * ratio
    loss2 = -advantages * torch.clamp(ratio, 1 - low, 1 + high)
    valid = response_mask.bool()
    clipped_by_ppo = (loss2 > loss1) & valid
    cov = _token_cov(advantages, log_prob, response_mask)
    cand = (valid & ~clipped_by_ppo & (cov > lb) & (cov < ub)).reshape(-1).nonzero().squeeze(-1)
    corr = torch.ones_like(advantages)
    n_clip = max(int(ratio_k * int(valid.sum())), 1)
    if cand.numel() > 0:
        chosen = cand[torch.randperm(cand.numel(), device=cand.device)[:n_clip]]
        corr.view(-1)[chosen] = 0.0
    loss_mat = _apply_is(torch.maximum(loss1, loss2) * corr, rollout_is_weights)
    loss = agg_loss(loss_mat, response_mask, loss_agg_mode, loss_scale_factor=config.loss_scale_factor)
    metrics = {
        "actor/pg_clipfrac": VF.masked_mean(clipped_by_ppo.float(), response_mask).item(),
        "actor/ppo_kl": VF.masked_mean(-lr, response_mask).item(),
    }
    return loss, metrics


@register_policy_loss("kl_cov")
def compute_policy_loss_kl_cov(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode="token-mean",
                               config=None, rollout_is_weights=None):
    """KL-Cov (arXiv:2505.22617): unclipped ``-A r``; the top ``max(1, kl_cov_ratio * N_tok)`` tokens by
    covariance get ``+ ppo_kl_coef * |logp - logp_old|``."""
    config = config if config is not None else ActorConfig()
    ratio_k = config.policy_loss.kl_cov_ratio
    kl_coef = config.policy_loss.ppo_kl_coef
    lr = log_prob - old_log_prob
    ratio = torch.exp(lr)
    loss_mat = -advantages * ratio
    valid = response_mask.bool()
    n_valid = int(valid.sum())
    if ratio_k > 0 and n_valid > 0:
        cov = torch.where(valid, _token_cov(advantages, log_prob, response_mask),
                          torch.full_like(advantages, -torch.inf))
        k = min(max(int(ratio_k * n_valid), 1), n_valid)
        top = torch.topk(cov.reshape(-1), k).indices
        penalty = torch.zeros_like(loss_mat).view(-1).index_fill(0, top, 1.0).view_as(loss_mat)
        loss_mat = loss_mat + penalty * kl_coef * lr.abs()
    loss = agg_loss(_apply_is(loss_mat, rollout_is_weights), response_mask, loss_agg_mode,
                    loss_scale_factor=config.loss_scale_factor)
    return loss, {"actor/pg_clipfrac": 0.0, "actor/ppo_kl": VF.masked_mean(-lr, response_mask).item()}


# ============================================================================ KL, entropy, value
KL_PENALTY_TYPES = ("kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3")


def _kl_forward(logprob: torch.Tensor, ref_logprob: torch.Tensor, kind: str) -> torch.Tensor:
    if kind in ("kl", "k1"):
        return logprob - ref_logprob
    if kind == "abs":
        return (logprob - ref_logprob).abs()
    if kind in ("mse", "k2"):
        return 0.5 * (logprob - ref_logprob).square()
    if kind in ("low_var_kl", "k3"):
        # http://joschu.net/blog/kl-approx.html : k3 = e^x - x - 1 with x = ref - logp, >= 0.
        x = torch.clamp(ref_logprob - logprob, -20, 20)
        return torch.clamp(torch.exp(x) - x - 1, -10, 10)
    choices = list(KL_PENALTY_TYPES) + [k + "+" for k in KL_PENALTY_TYPES]
    raise ValueError(f"kl_penalty={kind!r} is not supported; choose one of {choices}")


def kl_penalty(logprob: torch.Tensor, ref_logprob: torch.Tensor, kl_penalty: str) -> torch.Tensor:
    """Per-token KL estimate between the policy and the reference.

    ``kl``/``k1``: logp - ref; ``abs``: |logp - ref|; ``mse``/``k2``: 0.5 (logp - ref)^2;
    ``low_var_kl``/``k3``: e^x - x - 1, x = clamp(ref - logp, +-20), result clamped to [-10, 10].
    A trailing ``+`` (e.g. ``k3+``) is straight-through: the named estimator's value, k2's gradient.
    """
    return _kl_estimate(logprob, ref_logprob, kl_penalty)


def _kl_estimate(logprob: torch.Tensor, ref_logprob: torch.Tensor, name: str) -> torch.Tensor:
    straight_through = name.endswith("+")
    kind = name[:-1] if straight_through else name
    forward = _kl_forward(logprob, ref_logprob, kind)
    if not straight_through or kind in ("mse", "k2"):
        return forward
    k2 = 0.5 * (logprob - ref_logprob).square()
    return k2 - k2.detach() + forward.detach()


class FixedKLController:
    """Constant KL coefficient ``value``."""

    def __init__(self, kl_coef: float):
        self.value = float(kl_coef)

    def update(self, current_kl: float, n_steps: int) -> None:
        """No-op (kept for the controller interface)."""


class AdaptiveKLController:
    """Adaptive KL coefficient (arXiv:1909.08593): ``e = clip(KL/target - 1, +-0.2)``;
    ``beta *= 1 + e * n_steps / horizon``."""

    def __init__(self, init_kl_coef: float, target_kl: float, horizon: int):
        self.value = float(init_kl_coef)
        self.target = float(target_kl)
        self.horizon = float(horizon)

    def update(self, current_kl: float, n_steps: int) -> None:
        """Move ``value`` toward keeping ``current_kl`` at the target."""
        error = float(np.clip(current_kl / self.target - 1, -0.2, 0.2))
        self.value *= 1 + error * n_steps / self.horizon


def get_kl_controller(kl_ctrl):
    """Controller from ``algorithm.kl_ctrl`` (reads ``type``, ``kl_coef``; adaptive also ``target_kl``, ``horizon``).

    Raises:
        ValueError: for an unknown type, listing the choices.
    """
    kind = kl_ctrl.type
    if kind == "fixed":
        return FixedKLController(kl_coef=kl_ctrl.kl_coef)
    if kind == "adaptive":
        if kl_ctrl.horizon <= 0:
            raise ValueError(f"algorithm.kl_ctrl.horizon must be > 0, got {kl_ctrl.horizon}")
        return AdaptiveKLController(init_kl_coef=kl_ctrl.kl_coef, target_kl=kl_ctrl.target_kl, horizon=kl_ctrl.horizon)
    raise ValueError(f"algorithm.kl_ctrl.type={kind!r} is not supported; choose one of ['adaptive', 'fixed']")


def compute_value_loss(vpreds: torch.Tensor, returns: torch.Tensor, values: torch.Tensor, response_mask: torch.Tensor,
                       cliprange_value: float, loss_agg_mode: str = "token-mean"):
    """Clipped value loss: ``0.5 * agg(max((v - R)^2, (clip(v, v_old +- c) - R)^2))``.

    Returns:
        (vf_loss scalar, vf_clipfrac scalar tensor).
    """
    vclipped = VF.clip_by_value(vpreds, values - cliprange_value, values + cliprange_value)
    loss1 = (vpreds - returns) ** 2
    loss2 = (vclipped - returns) ** 2
    vf_loss = 0.5 * agg_loss(torch.maximum(loss1, loss2), response_mask, loss_agg_mode)
    vf_clipfrac = VF.masked_mean((loss2 > loss1).float(), response_mask)
    return vf_loss, vf_clipfrac


def compute_entropy_loss(
    logits: torch.Tensor, response_mask: torch.Tensor, loss_agg_mode: str = "token-mean"
) -> torch.Tensor:
    """Aggregated entropy of softmax(logits) (bs, T, vocab) over the mask (the caller subtracts coef * this)."""
    return agg_loss(VF.entropy_from_logits(logits), response_mask, loss_agg_mode)


# ============================================================================ batch-level helpers
def apply_kl_penalty(data, kl_ctrl, kl_penalty: str = "kl"):
    """Reward-side KL (``algorithm.use_kl_in_reward``): ``token_level_rewards = scores - beta * KL * m``.

    KL is between ``old_log_probs`` and ``ref_log_prob`` on model tokens; ``kl_ctrl`` is updated
    with the batch's mean per-sequence KL.

    Returns:
        (data with ``token_level_rewards`` set, metrics ``actor/reward_kl_penalty(_coeff)``).
    """
    mask = data.batch["response_mask"]
    kld = _kl_estimate(data.batch["old_log_probs"], data.batch["ref_log_prob"], kl_penalty) * mask
    beta = kl_ctrl.value
    data.batch["token_level_rewards"] = data.batch["token_level_scores"] - beta * kld
    current_kl = VF.masked_mean(kld, mask, axis=-1).mean().item()
    kl_ctrl.update(current_kl=current_kl, n_steps=len(data))
    return data, {"actor/reward_kl_penalty": current_kl, "actor/reward_kl_penalty_coeff": beta}


# Non-tensor batch keys an estimator may take as keywords (passed when present in the batch).
_OPTIONAL_NON_TENSOR = ("anchor_obs", "turn_rewards", "messages", "num_turns")


def drop_lone_survivors(data) -> int:
    """Drop the rows alone in their uid group that still have model tokens: ``response_mask`` -> 0 in place.

    A lone row is the survivor of a group whose other samples failed and left it (``#env_error`` /
    ``#needs_judge`` uids): it has no baseline, and its raw reward as the advantage would only reinforce.
    Rows already masked (the failed ones) are not counted.

    Returns:
        The number of rows dropped.
    """
    uids = to_object_array(data.non_tensor_batch["uid"])
    codes, _ = pd.factorize(uids)
    alone = torch.from_numpy(np.bincount(codes)[codes] == 1)
    mask = data.batch["response_mask"]
    lone = alone.to(mask.device) & (mask.sum(dim=-1) > 0)
    if bool(lone.any()):
        mask[lone] = 0
    return int(lone.sum())


def compute_advantage(data, adv_estimator, config=None):
    """Run the registered estimator on a DataProto and store ``advantages`` / ``returns``.

    Passes ``token_level_rewards``, ``response_mask``, ``config``, ``index`` (= uid), and when
    present ``values``, ``reward_baselines`` and the non-tensor keys in ``_OPTIONAL_NON_TENSOR``.
    For a group estimator, rows alone in their group are first dropped (``drop_lone_survivors``; see the
    module docstring); their number goes to ``meta_info["lone_survivors"]``.
    """
    fn = get_adv_estimator_fn(adv_estimator)
    if estimator_info(adv_estimator).needs_groups:
        data.meta_info["lone_survivors"] = drop_lone_survivors(data)
    batch, non_tensor = data.batch, data.non_tensor_batch
    kwargs = {"token_level_rewards": batch["token_level_rewards"], "response_mask": batch["response_mask"],
              "config": config, "index": non_tensor.get("uid")}
    for key in ("values", "reward_baselines"):
        if key in batch.keys():
            kwargs[key] = batch[key]
    for key in _OPTIONAL_NON_TENSOR:
        if key in non_tensor:
            kwargs[key] = non_tensor[key]
    advantages, returns = fn(**kwargs)
    data.batch["advantages"] = advantages
    data.batch["returns"] = returns
    return data
