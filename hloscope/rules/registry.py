"""The one way rules are known: `@register` on the class. hloscope's own rules are the
modules of this package named by their code (`h001_defensive_copy.py`), found by that
name; third-party rules come from `hloscope.rules` entry points and register the same way."""

from __future__ import annotations

import re
from functools import cache
from importlib import import_module
from pathlib import Path

from hloscope._speed.plugins import may_have_plugins
from hloscope.rules.base import Rule

REGISTRY: dict[str, type[Rule]] = {}

# A built-in rule's module: its code in lower case, then its name (h001_defensive_copy).
RULE_MODULE = re.compile(r"([fghktx]\d{3})_[a-z0-9_]+\.py")


def register(cls: type[Rule]) -> type[Rule]:
    """Class decorator: add a rule. Codes are a public contract and never reused."""
    existing = REGISTRY.get(cls.code)
    if existing is not None and existing is not cls:
        raise ValueError(f"rule code {cls.code} is taken by {existing.__name__}")
    REGISTRY[cls.code] = cls
    return cls


def builtin_modules() -> list[str]:
    """The module names of hloscope's own rules, in code order."""
    here = Path(__file__).parent
    return sorted(p.stem for p in here.iterdir() if RULE_MODULE.fullmatch(p.name))


@cache
def load_rules() -> dict[str, type[Rule]]:
    """All rules by code: hloscope's own, then third-party entry points."""
    for name in builtin_modules():
        import_module(f"hloscope.rules.{name}")
    if not may_have_plugins():
        return dict(sorted(REGISTRY.items()))
    from importlib import metadata

    for ep in metadata.entry_points(group="hloscope.rules"):
        loaded = ep.load()
        for rule in loaded if isinstance(loaded, (list, tuple)) else [loaded]:
            register(rule)
    return dict(sorted(REGISTRY.items()))
