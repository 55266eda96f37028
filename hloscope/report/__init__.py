"""Output formats for lint results: one module per format, `render(name, report)` writes one."""

from __future__ import annotations

from importlib import import_module

from hloscope.report.common import LintReport

# format name -> the module whose render(report) writes it (imported when used)
FORMAT_MODULES = {"text": "text", "json": "json_format", "sarif": "sarif", "github": "github"}


def render(name: str, report: LintReport) -> str:
    return import_module(f"hloscope.report.{FORMAT_MODULES[name]}").render(report)
