"""Machine-readable findings: {"version", "findings": [...], "summary": {...}}."""

from __future__ import annotations

import json

from hloscope.report.common import LintReport


def render(report: LintReport) -> str:
    return json.dumps(report.to_dict(), indent=1) + "\n"
