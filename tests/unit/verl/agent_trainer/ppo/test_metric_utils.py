"""Batch metrics on a small hand-built batch."""
import numpy as np
import pytest
import torch

from verl.agent_trainer.ppo.metric_utils import (
    compute_data_metrics,
    compute_throughout_metrics,
    compute_timing_metrics,
    reduce_metrics,
)
from verl.protocol import DataProto


def _batch():
    R = 4  # prompt length 2 + response length 4 = the 6 attention columns
    attn = torch.tensor([[0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0], [0, 1, 1, 1, 1, 1]])
    resp_mask = torch.tensor([[1, 0, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.float32)
    scores = torch.zeros(4, R)
    scores[0, 3], scores[1, 1], scores[2, 0], scores[3, 3] = 1.0, 1.0, 0.0, 1.0
    adv = torch.tensor([[1.0, 9, 1, 1], [2, 2, 9, 9], [-3, 9, 9, 9], [0, 0, 0, 0]])
    return DataProto.from_dict(
        tensors={"responses": torch.zeros(4, R, dtype=torch.long), "attention_mask": attn, "response_mask": resp_mask,
                 "token_level_scores": scores, "token_level_rewards": scores, "advantages": adv, "returns": adv,
                 "values": torch.zeros(4, R), "entropys": torch.ones(4, R) * 0.5,
                 "old_log_probs": torch.zeros(4, R), "ref_log_prob": torch.full((4, R), -0.2)},
        non_tensors={"uid": ["a", "a", "b", "b"], "num_turns": [3, 1, 1, 2], "success": [True, True, False, True],
                     "reward": [1.0, 1.0, 0.0, 1.0], "env_error": ["", "", "timeout", ""],
                     "truncated": [False, False, True, False]},
    )


def test_compute_data_metrics_hand_values():
    m = compute_data_metrics(_batch(), use_critic=True)
    assert m["critic/score/mean"] == pytest.approx(0.75)
    assert m["critic/score/zero_variance_group_frac"] == pytest.approx(0.5)   # group a: (1, 1)
    assert m["critic/advantages/max"] == 2.0 and m["critic/advantages/min"] == -3.0   # 9s are masked out
    assert m["response_length/mean"] == pytest.approx((4 + 2 + 1 + 4) / 4)
    assert m["response_length/clip_ratio"] == pytest.approx(0.5)
    assert m["prompt_length/mean"] == pytest.approx((1 + 2 + 2 + 1) / 4)
    assert m["rollout/model_tokens/mean"] == pytest.approx((3 + 2 + 1 + 4) / 4)
    assert m["env/num_turns/mean"] == pytest.approx(1.75) and m["env/num_turns/max"] == 3
    assert m["env/success_rate"] == pytest.approx(0.75)
    assert m["env/error_rate"] == pytest.approx(0.25) and m["env/truncated_rate"] == pytest.approx(0.25)
    assert m["actor/entropy"] == pytest.approx(0.5)
    assert m["rollout/ref_kl"] == pytest.approx(0.2)
    assert "critic/vf_explained_var" in m
    assert "critic/values/mean" not in compute_data_metrics(_batch(), use_critic=False)


def test_step_means_get_a_ci_over_goals_not_trajectories():
    """Goal a: rewards (1, 1), goal b: (0, 1) -> goal means 1.0 and 0.5; the step's CI is the bootstrap of those two
    means (goals are the sampling unit), not of the four trajectories."""
    from verl.utils.stats import bootstrap_mean_ci

    m = compute_data_metrics(_batch(), use_critic=False)
    assert [m["env/reward/mean_ci95_lo"], m["env/reward/mean_ci95_hi"]] == list(bootstrap_mean_ci([1.0, 0.5], seed=0))
    assert [m["env/success_rate_ci95_lo"], m["env/success_rate_ci95_hi"]] == list(
        bootstrap_mean_ci([1.0, 0.5], seed=0))
    assert m["env/reward/mean_ci95_lo"] == 0.5 and m["env/reward/mean_ci95_hi"] == 1.0


def test_timing_throughput_and_reduce():
    b = _batch()
    t = compute_timing_metrics(b, {"gen": 1.1, "update_actor": 0.19, "step": 2.0})
    assert t["timing_s/gen"] == 1.1
    assert t["timing_per_token_ms/gen"] == pytest.approx(1100 / 11)
    assert t["timing_per_token_ms/update_actor"] == pytest.approx(190 / 17)
    p = compute_throughout_metrics(b, {"step": 2.0}, n_gpus=1)
    assert p["perf/total_num_tokens"] == 17 and p["perf/throughput"] == pytest.approx(8.5)
    assert reduce_metrics({"a": [1.0, 2.0, 3.0], "b": 4}) == {"a": 2.0, "b": 4.0}
    assert reduce_metrics({"c": np.array([1.0, 3.0])})["c"] == 2.0


def test_rank_metrics_reduce_over_every_rank():
    from verl.agent_trainer.ppo.metric_utils import reduce_rank_metrics

    rank0 = {"global_step": 3, "temperature": 1.0, "timing_s/rollout": 2.0, "rollout/env_errors": 0,
             "rollout/generated_tokens": 100, "rollout/env_call_s_sum": 1.5, "rollout/gen_tokens_per_s": 50.0,
             "rollout/reward_mean": 1.0, "metrics": {"actor/pg_loss": 0.25, "actor/grad_norm": 2.0,
                                                      "perf/update_actor_s": 4.0}}
    rank1 = {"global_step": 3, "temperature": 1.0, "timing_s/rollout": 3.0, "rollout/env_errors": 3,
             "rollout/generated_tokens": 60, "rollout/env_call_s_sum": 0.5, "rollout/gen_tokens_per_s": 20.0,
             "rollout/reward_mean": 0.0, "metrics": {"actor/pg_loss": 0.75, "actor/grad_norm": 2.0,
                                                      "perf/update_actor_s": 5.0}}
    out = reduce_rank_metrics([rank0, rank1])
    assert out["global_step"] == 3 and out["temperature"] == 1.0
    assert out["timing_s/rollout"] == 3.0                     # the slowest rank
    assert out["rollout/env_errors"] == 3 and out["rollout/generated_tokens"] == 160
    assert out["rollout/env_call_s_sum"] == 2.0 and out["rollout/gen_tokens_per_s"] == 70.0
    assert out["rollout/reward_mean"] == 0.5
    assert out["metrics"] == {"actor/pg_loss": 0.5, "actor/grad_norm": 2.0, "perf/update_actor_s": 5.0}
    assert reduce_rank_metrics([rank0]) == rank0
