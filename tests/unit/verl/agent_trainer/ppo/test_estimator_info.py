"""Estimator facts (needs a critic, needs groups) live once, in the registry; the trainer derives
`use_critic` and the `rollout.n` check from them at start-up."""
from __future__ import annotations

import ast
import glob
import os

import pytest
import torch
from omegaconf import OmegaConf

from verl.agent_trainer.ppo import core_algos as ca
from verl.agent_trainer.ppo.ray_trainer import check_config, use_critic
from verl.config.schema import default_config_path, load_config


def _cfg(*overrides):
    return load_config(OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist(list(overrides))),
                       resolve_auto=False)


def test_every_estimator_records_its_needs():
    built_in = {e.value for e in ca.AdvantageEstimator}
    assert built_in <= set(ca.ESTIMATOR_INFO) and built_in <= set(ca.ADV_ESTIMATOR_REGISTRY)
    assert {k for k in built_in if ca.estimator_info(k).needs_critic} == {"gae"}
    assert {k for k in built_in if ca.estimator_info(k).needs_groups} == {
        "grpo", "grpo_passk", "rloo", "opo", "reinforce_plus_plus_baseline", "gpg", "gigpo"}
    assert ca.estimator_needs("remax") == {"reward_baselines"}
    with pytest.raises(ValueError, match=r"algorithm\.adv_estimator='nope' is not registered; choose one of"):
        ca.estimator_info("nope")


def test_use_critic_follows_the_registry_unless_set():
    assert use_critic(_cfg("algorithm.adv_estimator=gae"))
    assert not use_critic(_cfg("algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=2"))
    assert use_critic(_cfg("algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=2", "critic.enable=true"))


@pytest.fixture
def custom_estimator():
    name = "test_group_mean"

    @ca.register_adv_est(name, needs_groups=True)
    def group_mean(token_level_rewards, response_mask, **kwargs):
        return torch.zeros_like(token_level_rewards), torch.zeros_like(token_level_rewards)

    try:
        yield name, group_mean
    finally:
        ca.ADV_ESTIMATOR_REGISTRY.pop(name)
        ca.ESTIMATOR_INFO.pop(name)


def test_a_new_estimator_gets_the_checks_from_its_registration(custom_estimator):
    name, fn = custom_estimator
    with pytest.raises(ValueError, match=rf"adv_estimator={name} compares .*rollout\.n=1.*without groups \(gae, "):
        check_config(_cfg(f"algorithm.adv_estimator={name}", "actor_rollout_ref.rollout.n=1"))
    check_config(_cfg(f"algorithm.adv_estimator={name}", "actor_rollout_ref.rollout.n=2"))
    assert not use_critic(_cfg(f"algorithm.adv_estimator={name}", "actor_rollout_ref.rollout.n=2"))
    ca.register_adv_est(name, needs_groups=True)(fn)  # the same registration again is a no-op
    with pytest.raises(ValueError, match=rf"advantage estimator '{name}' is already registered with"):
        ca.register_adv_est(name, needs_critic=True)(fn)


def test_critic_checks_run_only_when_a_critic_is_trained():
    with pytest.raises(ValueError, match=r"adv_estimator=gae needs values from a critic, but critic\.enable=false"):
        check_config(_cfg("algorithm.adv_estimator=gae", "critic.enable=false"))
    bad_mini = ("data.train_batch_size=4", "actor_rollout_ref.actor.ppo_mini_batch_size=4",
                "critic.ppo_mini_batch_size=3")
    with pytest.raises(ValueError, match=r"train_batch_size=4 must be divisible by critic\.ppo_mini_batch_size=3"):
        check_config(_cfg("algorithm.adv_estimator=gae", *bad_mini))
    check_config(_cfg("algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=2", *bad_mini))  # no critic


def test_no_second_list_of_estimator_names():
    """Only the registry names estimators: no tuple/list/set of two or more of them in the trainer or config."""
    names = set(ca.ADV_ESTIMATOR_REGISTRY)
    here = os.path.dirname(os.path.abspath(ca.__file__))
    files = glob.glob(os.path.join(here, "*.py")) + glob.glob(os.path.join(here, "..", "config", "*.py"))
    found = []
    for path in files:
        if os.path.basename(path) == "core_algos.py":
            continue
        with open(path) as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                listed = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in names]
                if len(listed) >= 2:
                    found.append((os.path.basename(path), listed))
    assert found == []
