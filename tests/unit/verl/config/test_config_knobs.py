"""Knobs the code reads are settable from the config and change behaviour (one test per family)."""
import dataclasses

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from verl.agent_trainer.ppo import core_algos as ca
from verl.config.schema import ActorConfig, default_config_path, from_dict, load_config
from verl.workers.agent_actor.dp_actor import DataParallelPPOActor


def _cfg(*overrides):
    return load_config(OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist(list(overrides))),
                       resolve_auto=False)


def _gigpo(algo):
    m = torch.tensor([[1, 0, 1, 1], [1, 0, 1, 0], [1, 0, 1, 0]], dtype=torch.float32)
    anchor = np.empty(3, dtype=object)
    anchor[:] = [["s0", "s1"], ["s0", "s1"], ["s0", "s2"]]
    rewards = np.empty(3, dtype=object)
    rewards[:] = [[0.0, 0.0], [0.0, 1.0], [0.5, 0.0]]
    r = torch.zeros(3, 4)
    r[1, 2], r[2, 2] = 1.0, 0.5
    adv, _ = ca.compute_gigpo_outcome_advantage(r, m, index=["u", "u", "u"], anchor_obs=anchor, turn_rewards=rewards,
                                                config=algo)
    return adv


def test_gigpo_knobs_are_settable_and_change_advantages():
    base = _cfg("algorithm.adv_estimator=gigpo", "actor_rollout_ref.rollout.n=3")
    assert base.algorithm.gigpo.step_advantage_w == 1.0 and base.algorithm.gigpo.mode == "mean_norm"
    a = _gigpo(base.algorithm)
    no_step = _gigpo(_cfg("algorithm.gigpo.step_advantage_w=0.0").algorithm)
    std = _gigpo(_cfg("algorithm.gigpo.mode=mean_std_norm").algorithm)
    assert not torch.allclose(a, no_step) and not torch.allclose(a, std)
    # Without the step term only the episode advantage is left: one value per sample on its model tokens.
    assert torch.allclose(no_step[:, 0], no_step[:, 2])
    with pytest.raises(ValueError, match=r"algorithm\.gigpo\.mode='mean'"):
        _cfg("algorithm.gigpo.mode=mean")


def _actor_loss(*overrides):
    actor = DataParallelPPOActor(_cfg(*overrides).actor_rollout_ref.actor, torch.nn.Linear(1, 1), None)
    old = torch.zeros(2, 4)
    logp = torch.tensor([[-0.1, -2.0, -2.0, -2.0], [-0.5, -0.3, -1.0, -2.0]])
    adv = torch.tensor([[3.0, 0.0, 0.0, 0.0], [1.0, -1.0, 0.5, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0]])
    loss, _ = actor._policy_loss(old, logp, adv, mask)
    return loss.item()


def test_policy_loss_knobs_reach_the_loss():
    kl_cov = "actor_rollout_ref.actor.policy_loss.loss_mode=kl_cov"
    base = _actor_loss(kl_cov, "actor_rollout_ref.actor.policy_loss.kl_cov_ratio=0.2")
    assert _actor_loss(kl_cov, "actor_rollout_ref.actor.policy_loss.kl_cov_ratio=0.2",
                       "actor_rollout_ref.actor.policy_loss.ppo_kl_coef=5.0") != pytest.approx(base)
    assert _actor_loss(kl_cov, "actor_rollout_ref.actor.policy_loss.kl_cov_ratio=0.0") != pytest.approx(base)
    clip_cov = "actor_rollout_ref.actor.policy_loss.loss_mode=clip_cov"
    # A covariance window no token falls in cuts nothing; a window holding every token with
    # clip_cov_ratio=1 cuts all candidates (deterministic), so the A=3 token's term goes.
    kept = _actor_loss(clip_cov, "actor_rollout_ref.actor.policy_loss.clip_cov_lb=1e8",
                       "actor_rollout_ref.actor.policy_loss.clip_cov_ub=1e9")
    cut = _actor_loss(clip_cov, "actor_rollout_ref.actor.policy_loss.clip_cov_lb=-1e9",
                      "actor_rollout_ref.actor.policy_loss.clip_cov_ub=1e9",
                      "actor_rollout_ref.actor.policy_loss.clip_cov_ratio=1.0")
    assert kept == pytest.approx(_actor_loss()) and cut > kept + 0.3
    with pytest.raises(ValueError, match=r"policy_loss\.clip_cov_lb"):
        _cfg("actor_rollout_ref.actor.policy_loss.clip_cov_lb=9.0")


def test_loss_scale_factor_divides_the_dr_grpo_loss():
    mode = "actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum-norm"
    by_length = _actor_loss(mode)                                   # null: divide by the response length (4)
    by_one = _actor_loss(mode, "actor_rollout_ref.actor.loss_scale_factor=1.0")
    assert by_one == pytest.approx(4 * by_length)
    with pytest.raises(ValueError, match=r"actor_rollout_ref\.actor\.loss_scale_factor"):
        _cfg("actor_rollout_ref.actor.loss_scale_factor=-1")


def test_rollout_vllm_knobs_reach_the_engine_args_with_the_schema_defaults(monkeypatch):
    from verl.workers.rollout.agent_vllm_rollout.vllm_rollout import engine_args  # needs no vLLM install

    rollout = _cfg().actor_rollout_ref.rollout
    gpu = engine_args("m", rollout, on_cpu=False)
    # One default for each: the schema's (the engine used to say enforce_eager=False, max_num_seqs=256).
    # enforce_eager null (auto): CUDA graphs on CUDA, eager on CPU
    assert rollout.enforce_eager is None and gpu["enforce_eager"] is False
    assert gpu["max_num_seqs"] == rollout.max_num_seqs == 1024
    assert gpu["logprobs_mode"] == "processed_logprobs"
    raw = _cfg("actor_rollout_ref.rollout.logprobs_mode=raw_logprobs", "actor_rollout_ref.rollout.enforce_eager=false",
               "actor_rollout_ref.rollout.kv_cache_space_gb=3").actor_rollout_ref.rollout
    assert engine_args("m", raw, on_cpu=False)["logprobs_mode"] == "raw_logprobs"
    assert engine_args("m", raw, on_cpu=False)["enforce_eager"] is False
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    assert engine_args("m", raw, on_cpu=True)["enforce_eager"] is True  # graph capture is GPU-only
    import os
    assert os.environ["VLLM_CPU_KVCACHE_SPACE"] == "3"
    with pytest.raises(ValueError, match=r"actor_rollout_ref\.rollout\.logprobs_mode='logits'"):
        _cfg("actor_rollout_ref.rollout.logprobs_mode=logits")


def test_optimizer_and_actor_defaults_come_from_the_schema():
    from verl.utils.model_utils import build_optimizer

    opt = build_optimizer(torch.nn.Linear(2, 2), {})          # a bare section: the OptimConfig defaults
    assert opt.param_groups[0]["weight_decay"] == 0.01 and opt.param_groups[0]["lr"] == 1e-6
    actor = DataParallelPPOActor(ActorConfig(), torch.nn.Linear(1, 1), None)
    assert actor.config.entropy_coeff == 0.001 and actor.config.policy_loss.loss_mode == "vanilla"
    with pytest.raises(ValueError, match=r"actor_rollout_ref\.actor\.entropy_coef\b.*entropy_coeff"):
        from_dict(ActorConfig, {"entropy_coef": 0.1}, "actor_rollout_ref.actor")
    with pytest.raises(TypeError, match="ActorConfig"):  # a raw mapping is loaded before it reaches the actor
        DataParallelPPOActor({}, torch.nn.Linear(1, 1), None)


def test_max_failed_frac_is_settable_and_checked():
    assert _cfg().actor_rollout_ref.agentgym.max_failed_frac == 0.5
    assert _cfg("actor_rollout_ref.agentgym.max_failed_frac=0.9").actor_rollout_ref.agentgym.max_failed_frac == 0.9
    with pytest.raises(ValueError, match=r"actor_rollout_ref\.agentgym\.max_failed_frac=1\.5"):
        _cfg("actor_rollout_ref.agentgym.max_failed_frac=1.5")


@pytest.mark.parametrize("estimator", ["grpo", "rloo", "opo", "gigpo", "grpo_passk"])
def test_group_estimators_without_a_group_fail_at_start_up(estimator):
    from verl.agent_trainer.ppo.ray_trainer import check_config

    with pytest.raises(ValueError, match=rf"adv_estimator={estimator} compares .*rollout\.n=1"):
        check_config(_cfg(f"algorithm.adv_estimator={estimator}", "actor_rollout_ref.rollout.n=1"))
    cfg = _cfg(f"algorithm.adv_estimator={estimator}", "actor_rollout_ref.rollout.n=2")
    check_config(cfg)
    assert cfg.actor_rollout_ref.rollout.n == 2
    check_config(_cfg("algorithm.adv_estimator=reinforce_plus_plus", "actor_rollout_ref.rollout.n=1"))  # no groups


def test_kl_modes_are_those_core_algos_implements():
    from verl.config.schema import KL_TYPES

    assert KL_TYPES == ca.KL_PENALTY_TYPES
    for key in ("algorithm.kl_penalty", "actor_rollout_ref.actor.kl_loss_type"):
        with pytest.raises(ValueError, match=rf"{key.replace('.', '[.]')}='full'"):
            _cfg(f"{key}=full")
        _cfg(f"{key}=k3+")  # straight-through forms are accepted


def test_val_temperature_without_sampling_is_refused():
    with pytest.raises(ValueError,
                       match=r"val_kwargs\.temperature=0\.6 has no effect while val_kwargs\.do_sample=false"):
        _cfg("actor_rollout_ref.rollout.val_kwargs.temperature=0.6")
    cfg = _cfg("actor_rollout_ref.rollout.val_kwargs.temperature=0.6",
               "actor_rollout_ref.rollout.val_kwargs.do_sample=true")
    assert cfg.actor_rollout_ref.rollout.val_kwargs.temperature == 0.6


def test_a_batch_the_ranks_cannot_share_fails_before_workers_start():
    from verl.agent_trainer.ppo.ray_trainer import check_batch_divides_ranks

    cfg = _cfg("data.train_batch_size=5", "actor_rollout_ref.rollout.n=3",
               "actor_rollout_ref.actor.ppo_mini_batch_size=5", "critic.ppo_mini_batch_size=5")
    with pytest.raises(ValueError,
                       match=r"train_batch_size=5 x actor_rollout_ref\.rollout\.n=3 = 15 .* 4 ranks.*\[4, 8, 12\]"):
        check_batch_divides_ranks(cfg, 4)
    check_batch_divides_ranks(cfg, 5)  # 15 rows over 5 ranks: 3 each
    check_batch_divides_ranks(cfg, 1)


def test_attn_implementation_is_selectable_and_reaches_the_models(tmp_path):
    from verl.config.schema import resolve_model_and_rollout
    from verl.utils import model_utils
    from verl.utils.tiny_model import build_tiny_model
    from verl.workers.rollout.base import build_rollout_engine

    assert _cfg().actor_rollout_ref.model.attn_implementation == "sdpa"
    model = _cfg("actor_rollout_ref.model.attn_implementation=eager").actor_rollout_ref.model
    with pytest.raises(ValueError, match=r"attn_implementation='flash'"):
        _cfg("actor_rollout_ref.model.attn_implementation=flash")
    flash = _cfg("actor_rollout_ref.model.attn_implementation=flash_attention_2").actor_rollout_ref.model
    with pytest.raises(ValueError, match="flash_attention_2 needs a CUDA device"):
        resolve_model_and_rollout(flash, None, "cpu")
    path = build_tiny_model(str(tmp_path / "tiny"))
    lm = model_utils.load_causal_lm(path, attn_implementation="eager")
    assert lm.config._attn_implementation == "eager"
    # the HF rollout engine builds its copy like the actor: attention kernel and override_config
    model = dataclasses.replace(model, path=path, override_config={"num_hidden_layers": 1})
    engine = build_rollout_engine(path, _cfg().actor_rollout_ref.rollout, torch.device("cpu"), model)
    try:
        assert engine.model.config._attn_implementation == "eager" and len(engine.model.model.layers) == 1
    finally:
        engine.shutdown()


def test_critic_attn_implementation_is_selectable_and_reaches_the_value_model():
    from verl.utils.tiny_model import build_tiny_model
    from verl.workers.fsdp_workers import CriticWorker

    assert _cfg().critic.model.attn_implementation == "sdpa"
    with pytest.raises(ValueError, match=r"critic\.model\.attn_implementation='flash'"):
        _cfg("critic.model.attn_implementation=flash")
    path = build_tiny_model()
    cfg = _cfg(f"actor_rollout_ref.model.path={path}", "critic.model.attn_implementation=eager", "trainer.device=cpu")
    critic = CriticWorker(cfg.critic, cfg.actor_rollout_ref, cfg.trainer)
    critic.init_model()
    assert critic.module.config._attn_implementation == "eager"


def test_flash_attention_2_fails_at_start_up_where_it_cannot_run(monkeypatch):
    from verl.agent_trainer.ppo.ray_trainer import check_config
    from verl.config import device

    for key in ("actor_rollout_ref.model.attn_implementation", "critic.model.attn_implementation"):
        cfg = OmegaConf.merge(OmegaConf.load(default_config_path()),
                              OmegaConf.from_dotlist([f"{key}=flash_attention_2", "trainer.device=cpu"]))
        with pytest.raises(ValueError, match=rf"{key.replace('.', '[.]')}=flash_attention_2 needs a CUDA device"):
            check_config(load_config(cfg))  # the critic's is checked with the trainer's start-up checks
    # on a GPU without the package: the message names the extra to install
    monkeypatch.setattr(device.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ValueError, match=r"needs the flash-attn package \(pip install '\.\[gpu\]'\)"):
        device.check_attn_implementation("actor_rollout_ref.model.attn_implementation", "flash_attention_2", "cuda")
    device.check_attn_implementation("critic.model.attn_implementation", "sdpa", "cpu")  # sdpa/eager run anywhere
    # a critic that is not trained is not checked
    cfg = OmegaConf.merge(OmegaConf.load(default_config_path()), OmegaConf.from_dotlist(
        ["critic.model.attn_implementation=flash_attention_2", "trainer.device=cpu", "critic.enable=false"]))
    assert load_config(cfg).critic.model.attn_implementation == "flash_attention_2"


def test_vllm_gets_trust_remote_code_and_override_config(monkeypatch):
    from verl.workers.rollout import base

    seen = {}
    monkeypatch.setattr(base, "get_engine_cls", lambda name: lambda path, cfg, **kw: seen.update(name=name, kw=kw))
    model = _cfg("actor_rollout_ref.model.trust_remote_code=true").actor_rollout_ref.model
    rollout = _cfg("actor_rollout_ref.rollout.name=vllm").actor_rollout_ref.rollout
    base.build_rollout_engine("m", rollout, torch.device("cpu"), model)
    assert seen == {"name": "vllm", "kw": {"trust_remote_code": True}}
    base.build_rollout_engine("m", rollout, torch.device("cpu"), dataclasses.replace(model, override_config={"x": 1}))
    assert seen["kw"]["engine_kwargs"] == {"hf_overrides": {"x": 1}}
    sglang = dataclasses.replace(rollout, name="sglang")
    base.build_rollout_engine("m", sglang, torch.device("cpu"), dataclasses.replace(model, override_config={"x": 1}))
    assert seen["name"] == "sglang" and seen["kw"]["engine_kwargs"] == {"json_model_override_args": '{"x": 1}'}


def test_verl_multi_turn_keys_are_settable_and_checked():
    cfg = _cfg("actor_rollout_ref.rollout.multi_turn.enable=true",
               "actor_rollout_ref.rollout.multi_turn.interaction_config_path=x.yaml",
               "actor_rollout_ref.rollout.multi_turn.max_assistant_turns=7",
               "actor_rollout_ref.rollout.agent.default_agent_loop=tool_agent",
               "actor_rollout_ref.rollout.prompt_length=2048", "data.max_prompt_length=2048")
    assert cfg.actor_rollout_ref.rollout.multi_turn.max_assistant_turns == 7
    with pytest.raises(ValueError, match=r"multi_turn\.enable=true needs .*interaction_config_path"):
        _cfg("actor_rollout_ref.rollout.multi_turn.enable=true")
    with pytest.raises(ValueError, match=r"default_agent_loop='react'"):
        _cfg("actor_rollout_ref.rollout.agent.default_agent_loop=react")
    with pytest.raises(ValueError, match=r"rollout\.response_length=99 disagrees with data\.max_response_length"):
        _cfg("actor_rollout_ref.rollout.response_length=99")
