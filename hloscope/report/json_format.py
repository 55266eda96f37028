"""Machine-readable findings: {"version", "findings": [...], "summary": {...}}."""

from __future__ import annotations

import json

from hloscope.report.common import LintReport

VERSION = 1


def render(report: LintReport) -> str:
    payload = {"version": VERSION, "findings": [f.to_json() for f in report.findings],
               "summary": report.summary()}
    return json.dumps(payload, indent=1) + "\n"
