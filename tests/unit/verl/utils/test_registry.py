"""verl.utils.registry.Registry: the one registry behind every verl extension point."""
import enum
import json

import pytest

from verl.utils.registry import Registry


class Color(str, enum.Enum):
    RED = "red"


def test_register_is_a_dict_decorator_with_enum_and_many_names():
    reg = Registry("color fn", "paint.color")

    @reg.register(Color.RED, "crimson")
    def red():
        return 1

    assert isinstance(reg, dict) and dict(reg) == {"red": red, "crimson": red}
    assert reg.get(Color.RED) is red and reg.get("crimson") is red and reg["red"] is red
    assert reg.register("red")(red) is red  # same object again: no-op
    assert len(reg) == 2


def test_different_object_under_taken_name_names_both():
    reg = Registry("color fn", "paint.color")
    reg.register("red")(lambda: 1)

    def other():
        return 2

    with pytest.raises(ValueError, match=r"color fn 'red' is already registered to .*<lambda>.*other"):
        reg.register("red")(other)
    assert reg["red"] is not other


def test_get_lists_choices_and_hint_and_dict_get_default_still_works():
    reg = Registry("color fn", "paint.color", {"red": len, "blue": max}, hint="or set paint.custom")
    with pytest.raises(ValueError) as err:
        reg.get("RED")
    assert str(err.value) == "paint.color='RED' is not registered; choose one of ['blue', 'red'] or set paint.custom"
    assert reg.get("green", None) is None and reg.get("red", None) is len


def test_lazy_module_target_resolves_once_and_accepts_its_object():
    reg = Registry("codec", "io.codec", {"json": "json.decoder:JSONDecoder"})
    assert reg.register("json")(json.JSONDecoder) is json.JSONDecoder  # the object its lazy string names
    assert reg["json"] is json.JSONDecoder
    reg.register("json")("json.decoder:JSONDecoder")                        # the string again: keeps the object
    assert reg["json"] is json.JSONDecoder

    lazy = Registry("codec", "io.codec", {"enc": "json:JSONEncoder"})
    assert lazy.get("enc") is json.JSONEncoder and lazy["enc"] is json.JSONEncoder
    with pytest.raises(ValueError, match="already registered"):
        lazy.register("enc")("json:JSONDecoder")


def test_lazy_target_whose_module_is_missing_names_key_and_module():
    reg = Registry("codec", "io.codec", {"x": "no_such_module_xyz:Thing"})
    with pytest.raises(ImportError, match=r"io\.codec='x' needs no_such_module_xyz"):
        reg.get("x")
    assert reg["x"] == "no_such_module_xyz:Thing"
