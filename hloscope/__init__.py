"""hloscope: static analysis of XLA HLO text (and the Mosaic kernels inside it).

    import hloscope
    m = hloscope.load("module.hlo.txt")
    m.stats(); m.roofline(); m.lint(select=["H0"]); m.kernels(); m.graph()

Names are imported on first use (`import hloscope` stays cheap); see hloscope.api.
"""

from __future__ import annotations

from typing import Any

from hloscope._version import __version__

_API = {
    "load": "hloscope.api", "load_all": "hloscope.api", "load_profile": "hloscope.api",
    "Program": "hloscope.api", "Trace": "hloscope.api", "ParseError": "hloscope.parser",
    "Finding": "hloscope.rules.base", "Severity": "hloscope.rules.base",
    "ModuleStats": "hloscope.stats", "TraceError": "hloscope.trace",
}


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'hloscope' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])


__all__ = ["__version__", *_API]
