"""The interaction YAML is typed: shipped files load, unknown keys fail with close matches."""
from __future__ import annotations

import glob
import os

import pytest

from verl.config.interaction import EnvInteractionConfig
from verl.interactions import BaseInteraction, WebarenaInteraction, WebshopInteraction
from verl.interactions.registry import initialize_interactions_from_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
WEBSHOP = "verl.interactions.webshop_interaction.WebshopInteraction"


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "scripts", "multiturn", "*_interaction.yaml"))))
def test_each_shipped_interaction_yaml_loads_into_its_dataclass(path, monkeypatch):
    monkeypatch.setenv("ENV_ADDR", "http://10.0.0.7:4000")  # the recipe's ${oc.env:ENV_ADDR,...}
    made = initialize_interactions_from_config(path)
    try:
        (name, interaction), = made.items()
        assert isinstance(interaction, (WebshopInteraction, WebarenaInteraction)) and name in path
        settings = interaction.settings
        assert isinstance(settings, EnvInteractionConfig) and settings.task_name == name == interaction.name
        assert settings.env_server_base == "http://10.0.0.7:4000" and settings.max_retries == 10
        assert interaction.pool.addrs == ["http://10.0.0.7:4000"]
        assert interaction.pool.timeout == settings.timeout
    finally:
        for interaction in made.values():
            interaction.close()


@pytest.mark.parametrize("raw,needle", [
    ({"interaction": [{"class_name": WEBSHOP, "config": {"env_server_bas": "http://a:1"}}]},
     r"interaction\[0\]\.config\.env_server_bas'.*did you mean interaction\[0\]\.config\.env_server_base"),
    ({"interaction": [{"class_name": WEBSHOP, "config": {"timout": 3}}]},
     r"interaction\[0\]\.config\.timout'.*interaction\[0\]\.config\.timeout"),
    ({"interaction": [{"clas_name": WEBSHOP}]}, r"interaction\[0\]\.clas_name'.*interaction\[0\]\.class_name"),
    ({"interaction": [], "interactions": []}, r"'interactions'.*did you mean interaction\?"),
    ({"interaction": [{"class_name": WEBSHOP, "config": {"timeout": "soon"}}]},
     r"interaction\[0\]\.config\.timeout='soon' has the wrong type"),
    ({"interaction": [{"class_name": WEBSHOP, "config": {"env_server_base": "ftp://a:1"}}]},
     r"env_server_base='ftp://a:1' must be an http\(s\) URL"),
    ({"interaction": [{"class_name": WEBSHOP, "config": {"env_server_base": "http://a:1", "env_addr": "http://b:2"}}]},
     r"env_server_base='http://a:1' and env_addr='http://b:2'.*keep one"),
    ({"interaction": [{"class_name": WEBSHOP, "config": {"env_addr": ["http://a:1", "http://a:1/"]}}]},
     r"config\.env_addr=\['http://a:1', 'http://a:1/'\] names a server twice"),
])
def test_bad_interaction_keys_fail_naming_the_key(raw, needle):
    with pytest.raises(ValueError, match=needle):
        initialize_interactions_from_config(raw)


def test_direct_construction_is_typed_too():
    with pytest.raises(ValueError, match=r"interaction\[\]\.config\.max_retires'.*max_retries"):
        WebshopInteraction({"max_retires": 1})
    inter = WebarenaInteraction({"env_addr": "http://127.0.0.1:1", "timeout": 7})
    try:
        assert inter.settings.task_name == "webarena" and inter.config["name"] == "webarena"
        assert inter.pool.addrs == ["http://127.0.0.1:1"] and inter.pool.timeout == 7.0
    finally:
        inter.close()


def test_an_interaction_without_a_config_class_gets_the_dict_verl_passes():
    made = initialize_interactions_from_config(
        {"interaction": [{"name": "any", "class_name": "verl.interactions.base.BaseInteraction",
                          "config": {"whatever": 1}}]})
    assert type(made["any"]) is BaseInteraction and made["any"].config == {"whatever": 1, "name": "any"}
