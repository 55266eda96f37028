"""GitHub Actions workflow commands: one ::warning/::error/::notice line per finding."""

from __future__ import annotations

from hloscope.report.common import LintReport
from hloscope.rules.base import Severity

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def _where(f) -> str:
    """The program's line the finding comes from, `file:line` (no `:0`), as Source names it."""
    from hloscope.source import Source

    where = Source(file=f.source.get("file", ""), line=f.source.get("line") or 0).location
    return f" (source: {where})" if where else ""


def render(report: LintReport) -> str:
    lines = [
        f"::{_COMMAND[f.severity]} file={_prop(f.file)},line={f.line},col={f.column},"
        f"title={_prop(f'{f.code} {f.name}')}::{_data(f.message + _where(f))}"
        for f in report.findings
    ] + [
        f"::error file={_prop(e.file)},line={max(e.line, 1)},col={max(e.column, 1)},"
        f"title=hloscope could not lint this file::{_data(e.message)}"
        for e in report.errors
    ]
    return "\n".join(lines) + ("\n" if lines else "")
