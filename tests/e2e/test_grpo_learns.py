"""End to end: the trainer LEARNS. GRPO and RLOO through the real Hydra entry point, real Ray and
the HF engine raise a rule-based reward on a toy single-turn task with a tiny random model.

The task: a verl-format parquet of chat prompts with `reward_model.ground_truth = "e"`, scored by a
`custom_reward_function` file as the fraction of characters of the response that are "e". A random
tiny model (near-uniform over 2k BPE tokens) gets ~6%; pushing up the tokens that contain "e" is
easy, so a few steps of a correct policy gradient raise it clearly (seeds 0-2: ~0.05 -> 0.27-0.37
over 16 steps), while a sign error in the advantages or the loss drives it to ~0 (checked by hand
when this test was written). ~30 s per estimator on 2 cores.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(300)

STEPS = 16
WINDOW = 4  # steps averaged at each end of the run

SCORER = '''
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """Fraction of the response's characters equal to the ground-truth character."""
    if not solution_str:
        return 0.0
    return solution_str.count(ground_truth) / len(solution_str)
'''


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from verl.utils.tiny_model import build_tiny_model

    return build_tiny_model(str(tmp_path_factory.mktemp("tiny") / "model"))


def _write_task(tmp_path) -> tuple[str, str]:
    import pandas as pd

    words = ["apple", "river", "stone", "cloud", "paper", "light", "green", "music"]
    rows = [{"data_source": "toy_char_frac",
             "prompt": [{"role": "user", "content": f"Write a word like {w}."}],
             "reward_model": {"style": "rule", "ground_truth": "e"},
             "extra_info": {"index": i}} for i, w in enumerate(words)]
    data = tmp_path / "toy_train.parquet"
    pd.DataFrame(rows).to_parquet(data)
    scorer = tmp_path / "toy_reward.py"
    scorer.write_text(SCORER)
    return str(data), str(scorer)


def _train(tmp_path, tiny_model, estimator: str, steps: int = STEPS, validate: bool = False,
           extra: tuple[str, ...] = ()) -> list[dict]:
    data, scorer = _write_task(tmp_path)
    logs = tmp_path / "logs"
    val = [f"data.val_files={data}", "trainer.val_before_train=True", "trainer.test_freq=1",
           "actor_rollout_ref.rollout.val_kwargs.do_sample=True", "actor_rollout_ref.rollout.val_kwargs.n=4",
           "actor_rollout_ref.rollout.val_kwargs.temperature=1.0"] if validate else ["data.val_file=null"]
    args = [
        f"algorithm.adv_estimator={estimator}", f"data.train_files={data}", *val,
        "data.prompt_key=prompt", "data.train_batch_size=4", "data.max_prompt_length=64",
        "data.max_response_length=8", "data.seed=0",
        f"custom_reward_function.path={scorer}", "custom_reward_function.name=compute_score",
        f"actor_rollout_ref.model.path={tiny_model}", "actor_rollout_ref.rollout.name=hf",
        "actor_rollout_ref.rollout.n=8", "actor_rollout_ref.rollout.max_tokens=8",
        "actor_rollout_ref.rollout.max_model_len=128", "actor_rollout_ref.rollout.max_concurrency=32",
        "actor_rollout_ref.rollout.seed=0",
        "actor_rollout_ref.actor.ppo_mini_batch_size=2", "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=32",
        "actor_rollout_ref.actor.optim.lr=1e-2", "actor_rollout_ref.actor.entropy_coeff=0",
        "actor_rollout_ref.actor.use_kl_loss=False", "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=32",
        f"trainer.total_training_steps={steps}", "trainer.device=cpu", "trainer.seed=0", "trainer.export_hf=False",
        "trainer.logger=[file]", f"trainer.default_local_dir={tmp_path / 'ckpt'}", f"trainer.log_dir={logs}",
        "trainer.resume_mode=disable", "ray_init.num_cpus=2", "ray_init.object_store_memory=200000000",
        *extra,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0", "TOKENIZERS_PARALLELISM": "false",
           "HYDRA_FULL_ERROR": "1"}
    proc = subprocess.run([sys.executable, "-m", "verl.agent_trainer.main_ppo", *args], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=240)
    if proc.returncode != 0:
        raise AssertionError(f"main_ppo failed (rc {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
    with open(logs / "metrics.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


# GRPO's own learning run is slow-only: test_filter_groups_keeps_informative_groups_and_still_learns is GRPO on the
# same reward with the filter on, which keeps (nearly) every group, and it asserts the same rise
@pytest.mark.parametrize("estimator", [pytest.param("grpo", marks=pytest.mark.slow), "rloo"])
def test_policy_gradient_raises_rule_reward(tiny_model, tmp_path, estimator):
    rows = _train(tmp_path, tiny_model, estimator)
    assert [r["step"] for r in rows] == list(range(1, STEPS + 1))
    scores = [r["critic/score/mean"] for r in rows]
    first, last = sum(scores[:WINDOW]) / WINDOW, sum(scores[-WINDOW:]) / WINDOW
    print(estimator, "score/mean per step:", [round(s, 3) for s in scores])
    assert 0.0 < first < 0.2, scores  # the random model gets the reward only partially
    assert last > first + 0.1 and last > 2 * first, scores


def test_rule_scored_single_turn_rows_validate_with_the_training_reward(tiny_model, tmp_path):
    """Validation reads the reward manager's result, as training does (it used to read the env reward,
    which single-turn rows do not have, and always reported 0)."""
    rows = _train(tmp_path, tiny_model, "grpo", steps=1, validate=True)
    val = [r for r in rows if "val/sampled/mean_reward" in r]
    assert len(val) == 2, rows  # before training and after the step
    for r in val:
        assert 0.0 < r["val/sampled/mean_reward"] < 0.5, r  # sampled: the random model's share of "e"s
        assert 0.0 <= r["val/greedy/mean_reward"] < 1.0, r
        assert r["val/sampled/success_rate"] == 0.0  # a fraction below 1 is never a success
    train = [r for r in rows if "critic/score/mean" in r]
    assert train and train[0]["env/reward/mean"] == pytest.approx(train[0]["critic/score/mean"])


def test_remax_gets_its_greedy_baseline_through_the_estimator_registry(tiny_model, tmp_path):
    """ReMax declares the need `reward_baselines` when it registers; the trainer produces it (one greedy
    rollout per prompt, scored by the reward manager) without naming the estimator."""
    from verl.agent_trainer.ppo import core_algos

    assert core_algos.estimator_needs("remax") == {"reward_baselines"}
    assert core_algos.estimator_needs("grpo") == frozenset()
    rows = _train(tmp_path, tiny_model, "remax", steps=2)
    assert [r["step"] for r in rows] == [1, 2]
    for r in rows:  # A = score - greedy score: both signs appear, and the update ran
        assert r["critic/advantages/max"] > r["critic/advantages/min"], r
        assert "actor/pg_loss" in r


def test_filter_groups_keeps_informative_groups_and_still_learns(tiny_model, tmp_path):
    """DAPO's dynamic sampling on the graded toy reward: groups almost always differ, so the update sees
    the full batch and the reward still rises; the filter's metrics are logged every step."""
    rows = _train(tmp_path, tiny_model, "grpo", extra=("algorithm.filter_groups.enable=true",))
    assert [r["step"] for r in rows] == list(range(1, STEPS + 1))
    for r in rows:
        assert r["filter_groups/gen_batches"] == 1.0 and r["filter_groups/seen_groups"] == 4.0, r
        assert r["filter_groups/kept_groups"] == 4.0 - 4.0 * r["filter_groups/dropped_frac"], r
    scores = [r["critic/score/mean"] for r in rows]
    first, last = sum(scores[:WINDOW]) / WINDOW, sum(scores[-WINDOW:]) / WINDOW
    assert 0.0 < first < 0.2, scores
    assert last > first + 0.1 and last > 2 * first, scores  # the plain GRPO test's bar


def test_filter_groups_refills_then_skips_the_update_when_no_group_differs(tiny_model, tmp_path):
    """metric=success on a reward that is never a success (a fraction below 1): every group scores the
    same, so each step rolls out max_num_gen_batches batches, keeps nothing and skips the update (no
    actor/* metrics), while the step's env metrics still describe every generated row."""
    rows = _train(tmp_path, tiny_model, "grpo", steps=2,
                  extra=("algorithm.filter_groups.enable=true", "algorithm.filter_groups.metric=success",
                         "algorithm.filter_groups.max_num_gen_batches=2"))
    assert [r["step"] for r in rows] == [1, 2]
    for r in rows:
        assert r["filter_groups/gen_batches"] == 2.0 and r["filter_groups/seen_groups"] == 8.0, r
        assert r["filter_groups/kept_groups"] == 0.0 and r["filter_groups/dropped_frac"] == 1.0, r
        assert not any(k.startswith("actor/") for k in r), r
        assert r["env/success_rate"] == 0.0 and 0.0 < r["critic/score/mean"] < 0.5, r
