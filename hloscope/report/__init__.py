"""Everything hloscope prints. Lint results: one module per format (`render(name, report)`
writes one); every other command: one module of text formatting each (parse, stats,
roofline, sharding, kernels, profile, shape), fed the same plain data as its JSON output."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (the other commands' text modules load no lint types)
    from hloscope.report.common import LintReport

# format name -> the module whose render(report) writes it (imported when used)
FORMAT_MODULES = {"text": "lint_text", "json": "lint_json", "sarif": "sarif", "github": "github"}


def render(name: str, report: LintReport) -> str:
    return import_module(f"hloscope.report.{FORMAT_MODULES[name]}").render(report)
