"""What every format needs: the run's findings plus its context."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from hloscope.rules.base import Finding, Rule


@dataclass
class LintReport:
    findings: list[Finding]
    rules: list[type[Rule]]  # the rules that ran, for SARIF's tool.driver.rules
    files: list[str]
    instructions: int = 0
    suppressed: int = 0
    baselined: int = 0
    notes: list[str] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The JSON output of `hloscope lint`."""
        return {"version": 1, "findings": [f.to_dict() for f in self.findings],
                "summary": self.summary()}

    def summary(self) -> dict:
        return {
            "files": len(self.files),
            "instructions": self.instructions,
            "findings": len(self.findings),
            "by_severity": dict(Counter(str(f.severity) for f in self.findings)),
            "by_code": dict(sorted(Counter(f.code for f in self.findings).items())),
            "suppressed": self.suppressed,
            "baselined": self.baselined,
            "notes": self.notes,
        }
