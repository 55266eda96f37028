"""Rule discovery: hloscope's own rule modules plus the `hloscope.rules` entry points."""

from __future__ import annotations

from functools import cache
from importlib import import_module, metadata

from hloscope.rules.base import Rule

REGISTRY: dict[str, type[Rule]] = {}

# Modules holding hloscope's own rule families (imported to register them).
BUILTIN_FAMILIES = ("copies", "padding", "matmul", "duplicates", "layout_chain", "collectives", "kernel", "trace_rules")


def register(cls: type[Rule]) -> type[Rule]:
    """Class decorator: add a rule. Codes are a public contract and never reused."""
    existing = REGISTRY.get(cls.code)
    if existing is not None and existing is not cls:
        raise ValueError(f"rule code {cls.code} is taken by {existing.__name__}")
    REGISTRY[cls.code] = cls
    return cls


@cache
def load_rules() -> dict[str, type[Rule]]:
    """All rules by code: built-in families, then third-party entry points."""
    for family in BUILTIN_FAMILIES:
        import_module(f"hloscope.rules.{family}")
    for ep in metadata.entry_points(group="hloscope.rules"):
        loaded = ep.load()
        for rule in loaded if isinstance(loaded, (list, tuple)) else [loaded]:
            register(rule)
    return dict(sorted(REGISTRY.items()))
