"""Rule discovery: hloscope's own rule modules plus the `hloscope.rules` entry points."""

from __future__ import annotations

import os
import sys
from functools import cache
from importlib import import_module

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
    if not _may_have_plugins():
        return dict(sorted(REGISTRY.items()))
    from importlib import metadata

    for ep in metadata.entry_points(group="hloscope.rules"):
        loaded = ep.load()
        for rule in loaded if isinstance(loaded, (list, tuple)) else [loaded]:
            register(rule)
    return dict(sorted(REGISTRY.items()))


def _may_have_plugins() -> bool:
    """False only when no installed distribution on sys.path declares `hloscope.rules`
    entry points (a direct look at their entry_points.txt: importlib.metadata takes
    ~15 ms to say the same). Anything unusual on sys.path: ask importlib.metadata."""
    for base in sys.path:
        try:
            entries = os.scandir(base or ".")
        except (NotADirectoryError, FileNotFoundError):
            if os.path.isfile(base):  # a zip on sys.path may hold distributions
                return True
            continue
        except OSError:
            return True
        with entries:
            for entry in entries:
                if entry.name.endswith((".dist-info", ".egg-info")):
                    try:
                        with open(os.path.join(entry.path, "entry_points.txt"), encoding="utf-8") as f:
                            if "[hloscope.rules]" in f.read():
                                return True
                    except OSError:
                        continue
    return False
