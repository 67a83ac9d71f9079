"""An episode the env could not score without an LLM judge (`info["eval_status"] == "needs_judge"`) is kept
out of the update the way env failures are (no model token trained on, out of its GRPO group, no reward
placed), counted in the metrics, and left out of success rates in validation and evaluation."""
import logging
import math

import numpy as np
import pytest
import torch

from agentenv.controller import ResetResult, StepResult
from verl.agent_trainer.main_generation import compute_metrics
from verl.agent_trainer.ppo import core_algos
from verl.agent_trainer.ppo.metric_utils import compute_data_metrics, compute_outcome_metrics
from verl.protocol import DataProto
from verl.workers.rollout.agent_loop import AgentLoop, check_env_failures

START = ({"from": "human", "loss": None, "value": "Answer the question, then stop."},
         {"from": "gpt", "loss": False, "value": "Ok."})


class JudgedEnv:
    """Ends at the first step: task 1 needs a judge (reward 0), task 0 scores 1, task 2 scores 0."""

    conversation_start = START

    def reset(self, idx):
        self.idx = idx
        return ResetResult(observation=f"question {idx}")

    def step(self, action):
        if self.idx == 1:
            return StepResult(observation="done", reward=0.0, terminated=True,
                              info={"eval_status": "needs_judge", "eval_error": "no judge configured"})
        return StepResult(observation="done", reward=1.0 if self.idx == 0 else 0.0, terminated=True,
                          info={"eval_status": "scored"})

    def close(self):
        pass


def _rollout(tokenizer, scripted_engine_cls, caplog):
    ids = tokenizer.encode("```stop [it is on hold]```", add_special_tokens=False)
    engine = scripted_engine_cls(lambda prompt_ids, sampling: (ids + [tokenizer.eos_token_id], "stop"))
    loop = AgentLoop(engine, tokenizer, {"max_tokens": 32, "max_model_len": 8192, "max_concurrency": 4},
                     {"task_name": "webarena", "max_rounds": 3}, {"max_prompt_length": 256, "max_response_length": 128},
                     env_client_factory=JudgedEnv)
    batch = DataProto.from_dict(non_tensors={"item_id": np.array([f"webarena_{i}" for i in (0, 1, 2)], dtype=object),
                                             "uid": np.array(["g", "g", "g"], dtype=object)},
                                meta_info={"max_rounds": 3, "global_step": 1})
    try:
        with caplog.at_level(logging.WARNING):
            return loop.run(batch)
    finally:
        loop.close()


def test_needs_judge_trajectory_is_left_out_of_the_update(tokenizer, scripted_engine_cls, caplog):
    out = _rollout(tokenizer, scripted_engine_cls, caplog)
    nt, td = out.non_tensor_batch, out.batch
    assert list(nt["needs_judge"]) == [False, True, False] and list(nt["env_error"]) == ["", "", ""]
    assert list(nt["uid"]) == ["g", "g#needs_judge1", "g"]  # out of its group: the baseline sees real samples
    assert td["response_mask"][1].sum() == 0 and td["response_mask"][0].sum() > 0
    assert td["responses"][1].ne(tokenizer.pad_token_id).any()  # the tokens are kept, only masked
    assert td["token_level_scores"][1].abs().sum() == 0 and td["token_level_scores"][0].sum() == 1.0
    assert out.meta_info["rollout/needs_judge"] == 1 and out.meta_info["rollout/env_errors"] == 0
    assert any("need an LLM judge" in r.getMessage() and "--judge-base-url" in r.getMessage() for r in caplog.records)
    assert check_env_failures(out, max_failed_frac=0.0) == 0  # not an env failure: the step goes on

    # GRPO: the group baseline is that of the two scored samples, as if the judged one had not run
    td["token_level_rewards"] = td["token_level_scores"]
    adv = core_algos.compute_advantage(out, "grpo").batch["advantages"]
    scored = out.select_idxs(np.array([True, False, True]))
    alone = core_algos.compute_advantage(scored, "grpo").batch["advantages"]
    assert torch.allclose(adv[[0, 2]], alone)
    assert adv[0][td["response_mask"][0].bool()][0] == pytest.approx(1 / math.sqrt(2), rel=1e-4)
    # and the loss does not move, whatever values sit on the judged row (its mask is all 0)
    loss = torch.randn(td["response_mask"].shape)
    moved = loss.clone()
    moved[1] = 1e6
    for mode in ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum"):
        assert core_algos.agg_loss(loss, td["response_mask"], mode) == core_algos.agg_loss(moved, td["response_mask"],
                                                                                            mode)

    # metrics: counted, and no failure in the success rate
    m = compute_data_metrics(out)
    assert m["env/needs_judge"] == 1.0 and m["env/needs_judge_rate"] == pytest.approx(1 / 3)
    assert m["env/success_rate"] == 0.5 and m["env/reward/mean"] == 0.5


def test_validation_and_evaluation_leave_needs_judge_out_of_the_rates():
    out = compute_outcome_metrics(["a", "b", "c"], [1.0, 0.0, 0.0], [True, False, False], needs_judge=[0, 1, 0])
    assert (out["num_items"], out["scored_items"], out["needs_judge"]) == (3, 2, 1)
    assert out["success_rate"] == 0.5 and out["mean_reward"] == 0.5
    every = compute_outcome_metrics(["a"], [0.0], [False], needs_judge=[True])
    assert every["needs_judge"] == 1 and math.isnan(every["success_rate"])

    records = [{"item_id": item, "reward": r, "num_turns": 1, "env_error": "", "needs_judge": j}
               for item, r, j in (("a", 1.0, False), ("a", 0.0, True), ("b", 0.0, False), ("c", 0.0, True))]
    m = compute_metrics(records)
    assert (m["num_items"], m["scored_items"], m["needs_judge"], m["num_trajectories"]) == (3, 2, 2, 4)
    assert m["success_rate"] == 0.5 and m["pass_at_k_success"] == 0.5 and m["k"] == 1
