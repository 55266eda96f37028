"""Counts of a module: opcodes, fusion kinds, custom-call targets, memory facts.

`ModuleStats` (the result) and `stats(module)` load on first use (hloscope.stats.record):
`hloscope stats` counts from the compiled pass (hloscope.stats.table) and imports neither."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hloscope.stats.record import ModuleStats, stats

__all__ = ["ModuleStats", "stats"]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module 'hloscope.stats' has no attribute {name!r}")
    value = getattr(import_module("hloscope.stats.record"), name)
    globals()[name] = value
    return value
