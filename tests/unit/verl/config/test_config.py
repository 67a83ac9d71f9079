"""The shipped ppo_trainer.yaml loads into the config dataclasses; bad keys/values fail clearly."""
import dataclasses

import pytest
from omegaconf import OmegaConf

from verl.config.schema import PPOConfig, check_override_keys, default_config_path, load_config, to_dict


def _yaml():
    return OmegaConf.load(default_config_path())


def test_shipped_yaml_matches_dataclass_defaults():
    from_yaml = to_dict(load_config(_yaml(), resolve_auto=False))
    assert from_yaml == to_dict(PPOConfig())


def test_yaml_has_every_dataclass_key_and_no_extra():
    yaml_dict = OmegaConf.to_container(_yaml(), resolve=True)

    def keys(d, prefix=""):
        out = set()
        for k, v in d.items():
            out.add(prefix + k)
            if isinstance(v, dict) and v and k not in ("override_config",):
                out |= keys(v, prefix + k + ".")
        return out

    assert keys(yaml_dict) == keys(to_dict(PPOConfig()))


@pytest.mark.parametrize("key", [
    "data.train_file", "data.train_batch_size", "data.max_prompt_length", "data.max_response_length",
    "actor_rollout_ref.model.path", "actor_rollout_ref.agentgym.task_name", "actor_rollout_ref.agentgym.env_addr",
    "actor_rollout_ref.agentgym.max_retries", "actor_rollout_ref.agentgym.timeout", "actor_rollout_ref.rollout.n",
    "actor_rollout_ref.rollout.max_tokens", "actor_rollout_ref.rollout.rollout_log_dir",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", "actor_rollout_ref.actor.policy_loss.loss_mode",
    "actor_rollout_ref.actor.optim.lr", "algorithm.kl_ctrl.kl_coef", "algorithm.rounds_ctrl.steps_scaling_inter",
    "trainer.resume_mode", "trainer.n_gpus_per_node", "trainer.device", "ray_init.object_store_memory",
])
def test_agentgym_and_verl_key_names_exist(key):
    node = _yaml()
    for part in key.split("."):
        assert part in node, key
        node = node[part]
    check_override_keys([f"{key}=1"])  # known keys pass the override check


def test_agentgym_rl_script_overrides_load():
    overrides = ["algorithm.adv_estimator=grpo", "algorithm.rounds_ctrl.type=scaling_inter_stepwise",
                 "algorithm.rounds_ctrl.steps_scaling_inter=80", "algorithm.rounds_ctrl.rounds=[8,12,15]",
                 "data.train_batch_size=32", "data.max_prompt_length=750", "data.max_response_length=14098",
                 "actor_rollout_ref.agentgym.timeout=600", "actor_rollout_ref.actor.use_kl_loss=True",
                 "actor_rollout_ref.rollout.n=4", "actor_rollout_ref.rollout.max_tokens=512",
                 "actor_rollout_ref.actor.ppo_mini_batch_size=4", "trainer.save_freq=25",
                 "trainer.logger=[console,wandb]"]
    check_override_keys(overrides)
    cfg = load_config(OmegaConf.merge(_yaml(), OmegaConf.from_dotlist(overrides)))
    assert cfg.algorithm.rounds_ctrl.rounds == [8, 12, 15]
    from verl.agent_trainer.ppo.ray_trainer import use_critic

    assert cfg.use_reference_policy and not use_critic(cfg)
    assert cfg.trainer.device in ("cpu", "cuda") and cfg.actor_rollout_ref.rollout.name in ("hf", "vllm")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.data.train_batch_size = 3


def test_unknown_key_names_key_and_close_match():
    with pytest.raises(ValueError,
                       match=r"actor_rollout_ref\.rollout\.tempreature.*actor_rollout_ref\.rollout\.temperature"):
        check_override_keys(["actor_rollout_ref.rollout.tempreature=0.5"])
    bad = OmegaConf.merge(_yaml(), {"trainer": {"save_frq": 3}})
    with pytest.raises(ValueError, match=r"trainer\.save_frq.*trainer\.save_freq"):
        load_config(bad)


@pytest.mark.parametrize("override,needle", [
    ("trainer.resume_mode=sometimes", "trainer.resume_mode='sometimes'"),
    ("actor_rollout_ref.actor.loss_agg_mode=mean", "actor_rollout_ref.actor.loss_agg_mode"),
    ("actor_rollout_ref.rollout.n=0", "actor_rollout_ref.rollout.n"),
    ("algorithm.rounds_ctrl.rounds=[8,0]", "algorithm.rounds_ctrl.rounds"),
    ("data.train_batch_size=abc", "data.train_batch_size='abc'"),
    ("actor_rollout_ref.actor.ppo_mini_batch_size=3", "divisible"),
    ("trainer.logger=[console,mlflw]", "trainer.logger"),
])
def test_bad_values_name_the_key(override, needle):
    with pytest.raises(ValueError) as info:
        load_config(OmegaConf.merge(_yaml(), OmegaConf.from_dotlist([override])))
    assert needle in str(info.value)


def test_cli_rejects_unknown_key_before_starting():
    import subprocess
    import sys

    for module in ("verl.agent_trainer.main_ppo", "verl.trainer.main_ppo"):
        proc = subprocess.run([sys.executable, "-m", module, "actor_rollout_ref.rollout.max_token=8"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0
        assert "actor_rollout_ref.rollout.max_token" in proc.stderr
        assert "actor_rollout_ref.rollout.max_tokens" in proc.stderr


@pytest.mark.parametrize("loader,root", [
    ("verl.config.schema:load_config", "verl.config.schema:PPOConfig"),
    ("verl.config.generation_schema:load_generation_config",
     "verl.config.generation_schema:GenerationConfig"),
    ("verl.config.sft_schema:load_sft_config", "verl.config.sft_schema:SFTConfig"),
])
def test_each_shipped_yaml_loads_into_its_dataclasses_with_their_defaults(loader, root):
    import importlib

    def attr(spec):
        module, name = spec.split(":")
        return getattr(importlib.import_module(module), name)

    assert to_dict(attr(loader)(None, resolve_auto=False)) == to_dict(attr(root)())


def test_compat_only_keys_warn_once_when_set_and_exist_in_the_schema(caplog):
    import typing

    from verl.config import schema

    for (section, key) in schema.COMPAT_ONLY_KEYS:
        assert key in typing.get_type_hints(getattr(schema, section)), (section, key)
    schema._WARNED_COMPAT.clear()
    overrides = ["actor_rollout_ref.rollout.mode=sync", "actor_rollout_ref.model.use_remove_padding=true",
                 "actor_rollout_ref.rollout.load_format=auto"]
    with caplog.at_level("WARNING", logger="verl.config.schema"):
        load_config(OmegaConf.merge(_yaml(), OmegaConf.from_dotlist(overrides)), resolve_auto=False)
        load_config(OmegaConf.merge(_yaml(), OmegaConf.from_dotlist(overrides)), resolve_auto=False)
        load_config(_yaml(), resolve_auto=False)  # defaults: silent
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 3
    for key in ("actor_rollout_ref.rollout.mode='sync'", "actor_rollout_ref.model.use_remove_padding=True",
                "actor_rollout_ref.rollout.load_format='auto'"):
        assert sum(key in m for m in warned) == 1, key


def test_env_addr_takes_one_url_or_a_list():
    two = ["actor_rollout_ref.agentgym.env_addr=[http://10.0.0.1:36001,http://10.0.0.2:36001/]"]
    check_override_keys(two)
    cfg = load_config(OmegaConf.merge(_yaml(), OmegaConf.from_dotlist(two)), resolve_auto=False)
    assert cfg.actor_rollout_ref.agentgym.env_addrs == ["http://10.0.0.1:36001", "http://10.0.0.2:36001"]
    assert load_config(_yaml(), resolve_auto=False).actor_rollout_ref.agentgym.env_addrs == ["http://127.0.0.1:36001"]


@pytest.mark.parametrize("override,needle", [
    ("actor_rollout_ref.agentgym.env_addr=[]", r"env_addr is an empty list"),
    ("actor_rollout_ref.agentgym.env_addr=[http://a:1,ftp://b:2]", r"env_addr='ftp://b:2'"),
    ("actor_rollout_ref.agentgym.env_addr=[http://a:1,http://a:1/]", r"names a server twice"),
    ("actor_rollout_ref.agentgym.server_max_backoff_s=1", r"server_max_backoff_s=1.*server_backoff_s=5"),
    ("actor_rollout_ref.agentgym.env_servers.cmd='python -m x.launch'", r"env_servers\.cmd=.*\{port\}"),
    ("actor_rollout_ref.agentgym.env_servers.resources={CPU: -1}", r"env_servers\.resources\.CPU=-1"),
    ("actor_rollout_ref.agentgym.env_servers.nmu=2", r"env_servers\.nmu.*env_servers\.num"),
])
def test_env_server_settings_are_checked(override, needle):
    with pytest.raises(ValueError, match=needle):
        check_override_keys([override])
        load_config(OmegaConf.merge(_yaml(), OmegaConf.from_dotlist([override])), resolve_auto=False)
