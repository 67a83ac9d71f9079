"""The naive reward manager: env scores pass through, rule-scored rows get their score on the last
model token, and the registry lists its choices."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from verl.protocol import DataProto
from verl.workers.reward_manager import NaiveRewardManager, get_reward_manager_cls, register_reward_manager


class CharTokenizer:
    """Decodes ids as characters (chr(id)); enough to isolate the manager from a real tokenizer."""

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i) for i in ids)


def encode(text: str, length: int) -> torch.Tensor:
    ids = [ord(c) for c in text] + [0] * (length - len(text))
    return torch.tensor(ids)


def test_registry_lookup_and_errors():
    assert get_reward_manager_cls("naive") is NaiveRewardManager
    with pytest.raises(ValueError, match="naive") as err:
        get_reward_manager_cls("batch")
    assert "prime" in str(err.value) and "'batch'" in str(err.value)
    with pytest.raises(ValueError, match="already registered"):
        register_reward_manager("naive")(type("Other", (), {}))


def test_env_scores_pass_through_unchanged():
    scores = torch.zeros(2, 5)
    scores[0, 3] = 0.75
    data = DataProto.from_dict(tensors={
        "responses": torch.ones(2, 5, dtype=torch.long), "response_mask": torch.ones(2, 5, dtype=torch.long),
        "token_level_scores": scores,
    })
    out = NaiveRewardManager(tokenizer=None)(data)
    assert torch.equal(out, scores) and out is not scores


def test_ground_truth_rows_scored_on_last_model_token():
    R = 40
    # row 2: the model answered 1/2, then an observation (mask 0) quoting another boxed answer
    texts = ["so #### 42", "so #### 41", "\\boxed{\\frac{1}{2}} obs: \\boxed{7}", "env row"]
    responses = torch.stack([encode(t, R) for t in texts])
    response_mask = (responses != 0).long()
    model_len_2 = len("\\boxed{\\frac{1}{2}}")
    response_mask[2, model_len_2:] = 0
    env_scores = torch.zeros(4, R)
    env_scores[3, 6] = 1.0
    data = DataProto.from_dict(
        tensors={"responses": responses, "response_mask": response_mask, "token_level_scores": env_scores},
        non_tensors={
            "data_source": np.array(["openai/gsm8k", "openai/gsm8k", "lighteval/MATH", "webshop"], dtype=object),
            "reward_model": np.array([{"ground_truth": "42"}, {"ground_truth": "42"}, {"ground_truth": "0.5"},
                                      {"style": "env"}], dtype=object),
        },
    )
    result = NaiveRewardManager(tokenizer=CharTokenizer())(data, return_dict=True)
    reward = result["reward_tensor"]
    last = [len(texts[0]) - 1, len(texts[1]) - 1, model_len_2 - 1]
    assert reward[0, last[0]] == 1.0 and reward[0].sum() == 1.0
    assert reward[1].abs().sum() == 0.0
    assert reward[2, last[2]] == 1.0 and reward[2].sum() == 1.0
    assert torch.equal(reward[3], env_scores[3])  # no ground truth: the env score stays


def test_rule_rows_need_a_tokenizer():
    data = DataProto.from_dict(
        tensors={"responses": torch.ones(1, 3, dtype=torch.long), "response_mask": torch.ones(1, 3, dtype=torch.long)},
        non_tensors={"data_source": np.array(["openai/gsm8k"], dtype=object),
                     "reward_model": np.array([{"ground_truth": "1"}], dtype=object)},
    )
    with pytest.raises(ValueError, match="tokenizer"):
        NaiveRewardManager(tokenizer=None)(data)


def _rm_batch():
    scores = torch.zeros(2, 4)
    scores[0, 2] = 1.0                      # env: row 0 succeeded, row 1 got 0
    rm = torch.zeros(2, 4)
    rm[0, 2], rm[1, 3] = 0.5, -2.0
    return DataProto.from_dict(tensors={
        "responses": torch.ones(2, 4, dtype=torch.long), "response_mask": torch.ones(2, 4, dtype=torch.long),
        "token_level_scores": scores, "rm_scores": rm}), scores, rm


@pytest.mark.parametrize("combine, coef, expected", [
    ("sum", 1.0, lambda env, rm: env + rm),
    ("sum", 0.5, lambda env, rm: env + 0.5 * rm),
    ("rm_only", 2.0, lambda env, rm: 2.0 * rm),
    ("env_only", 1.0, lambda env, rm: env),
])
def test_reward_model_scores_join_by_the_combine_rule(combine, coef, expected):
    from verl.config.schema import RewardModelConfig, RewardModelModelConfig

    data, env, rm = _rm_batch()
    cfg = RewardModelConfig(enable=True, combine=combine, rm_coef=coef, model=RewardModelModelConfig(path="rm"))
    out = NaiveRewardManager(config=cfg)(data, return_dict=True)
    assert torch.allclose(out["reward_tensor"], expected(env, rm))
    assert out["task_scores"].tolist() == [1.0, 0.0]  # the env outcome, whatever the reward model said
    assert out["reward_metrics"]["reward/rm_score/mean"] == pytest.approx(-0.75)
    assert out["reward_metrics"]["reward/rm_score/min"] == -2.0


def test_combine_needs_an_enabled_reward_model():
    from verl.config.schema import RewardModelConfig, RewardModelModelConfig

    with pytest.raises(ValueError, match="reward_model.combine=rm_only"):
        RewardModelConfig(combine="rm_only")
    with pytest.raises(ValueError, match="reward_model.model.path"):
        RewardModelConfig(enable=True)
    with pytest.raises(ValueError, match="reward_model.combine"):
        RewardModelConfig(enable=True, combine="max", model=RewardModelModelConfig(path="rm"))


def test_invalid_actions_are_penalised_in_the_signal_not_the_outcome():
    """`reward_model.invalid_action_penalty`: penalty x refused actions off each row's last model token;
    `task_scores` (reward / success) keep the env outcome; rows without model tokens are left alone."""
    from verl.config.schema import RewardModelConfig

    scores = torch.zeros(3, 5)
    scores[0, 3] = 1.0
    mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 0, 1, 1], [0, 0, 0, 0, 0]])
    data = DataProto.from_dict(
        tensors={"responses": torch.ones(3, 5, dtype=torch.long), "response_mask": mask, "token_level_scores": scores},
        non_tensors={"invalid_actions": np.array([1, 3, 2], dtype=object)})
    out = NaiveRewardManager(config=RewardModelConfig(invalid_action_penalty=0.1))(data, return_dict=True)
    expected = scores.clone()
    expected[0, 3] -= 0.1      # row 0: success 1.0 with one refused action
    expected[1, 4] -= 0.3      # row 1: its last model token is position 4
    assert torch.allclose(out["reward_tensor"], expected)
    assert out["task_scores"].tolist() == [1.0, 0.0, 0.0]
    assert out["reward_metrics"]["reward/invalid_action_penalty_mean"] == pytest.approx(0.2)
    off = NaiveRewardManager(config=RewardModelConfig())(data, return_dict=True)  # the default: 0, no penalty
    assert torch.equal(off["reward_tensor"], scores)
    assert "reward/invalid_action_penalty_mean" not in off["reward_metrics"]
    with pytest.raises(ValueError, match="invalid_action_penalty"):
        RewardModelConfig(invalid_action_penalty=-0.1)


def test_invalid_action_penalty_also_applies_beside_a_reward_model():
    from verl.config.schema import RewardModelConfig, RewardModelModelConfig

    data, env, rm = _rm_batch()
    data.non_tensor_batch["invalid_actions"] = np.array([0, 2], dtype=object)
    cfg = RewardModelConfig(enable=True, model=RewardModelModelConfig(path="rm"), invalid_action_penalty=0.25)
    out = NaiveRewardManager(config=cfg)(data, return_dict=True)
    expected = env + rm
    expected[1, 3] -= 0.5      # row 1's last model token, after the reward model's score is joined
    assert torch.allclose(out["reward_tensor"], expected)
    assert out["task_scores"].tolist() == [1.0, 0.0]
