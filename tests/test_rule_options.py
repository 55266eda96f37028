"""Rule options (`hloscope.rules.options.RuleOptions`): keyword-set, frozen, defaults from
the class, as the frozen dataclasses they replace behaved; and every built-in rule's options
read from a config table."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError, dataclass
from types import MappingProxyType

import pytest

from hloscope.lint import LintOptions, build_rules
from hloscope.rules.base import InstructionRule
from hloscope.rules.options import RuleOptions, option_names
from hloscope.rules.registry import load_rules


class _Opts(RuleOptions):
    min_bytes: int = 1 << 20
    ratio: float = 2.0
    names: tuple[str, ...] = ("dot",)


class _More(_Opts):
    depth: int = 3


def test_defaults_keywords_and_frozen():
    o = _Opts(ratio=4.0)
    assert (o.min_bytes, o.ratio, o.names) == (1 << 20, 4.0, ("dot",))
    assert _Opts().ratio == 2.0  # (the default is the class's, not the last instance's)
    with pytest.raises(FrozenInstanceError):
        o.ratio = 1.0
    with pytest.raises(FrozenInstanceError):
        del o.ratio
    with pytest.raises(TypeError, match="no option 'ratoi'"):
        _Opts(ratoi=1.0)
    with pytest.raises(TypeError):
        _Opts(1.0)  # (keywords only, as a config table gives them)


def test_equality_hash_repr_and_pickle():
    assert _Opts(ratio=4.0) == _Opts(ratio=4.0) != _Opts()
    assert hash(_Opts(ratio=4.0)) == hash(_Opts(ratio=4.0))
    assert _Opts() != _More()  # (another class: never equal)
    assert repr(_Opts()) == "_Opts(min_bytes=1048576, ratio=2.0, names=('dot',))"
    o = pickle.loads(pickle.dumps(_More(depth=5, ratio=1.5)))
    assert (type(o), o.depth, o.ratio, o.min_bytes) == (_More, 5, 1.5, 1 << 20)


def test_subclasses_add_options_and_class_errors_are_caught_where_written():
    assert option_names(_More) == ("min_bytes", "ratio", "names", "depth")
    with pytest.raises(TypeError, match="has no default"):
        type("Bad", (RuleOptions,), {"__annotations__": {"limit": "int"}})
    with pytest.raises(TypeError, match="mutable default"):
        type("Bad", (RuleOptions,), {"__annotations__": {"expect": "dict"}, "expect": {}})
    frozen = type("Ok", (RuleOptions,), {"__annotations__": {"expect": "Mapping"},
                                         "expect": MappingProxyType({})})
    assert dict(frozen().expect) == {}


def test_a_plugin_rule_may_still_give_a_dataclass():
    class Plugin(InstructionRule):
        code, name = "Z902", "dataclass-plugin"

        @dataclass(frozen=True)
        class Options:
            limit: int = 4

    assert option_names(Plugin.Options) == ("limit",)
    assert Plugin.make_options({"limit": 9}).limit == 9
    with pytest.raises(ValueError, match="known: limit"):
        Plugin.make_options({"limt": 9})


def test_every_builtin_rule_takes_each_of_its_options_from_a_config_table():
    """Each option named by its rule's class is set from the table, the others keep their
    defaults; an unknown name is an error naming the known ones."""
    for code, cls in load_rules().items():
        names = option_names(cls.Options)
        default = cls.Options()
        for name in names:
            value = getattr(default, name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = value * 2 + 1
            (rule,) = build_rules(LintOptions(select=[code], rule_options={code: {name: value}}))
            assert getattr(rule.options, name) == value
            assert all(getattr(rule.options, n) == getattr(default, n) for n in names if n != name)
            assert (rule.options == default) == (value == getattr(default, name))
        with pytest.raises(ValueError, match=f"{code} .* has no option"):
            cls.make_options({"no_such_option": 1})
    assert option_names(load_rules()["H007"].Options) == ("max_bytes", "per_layer")
