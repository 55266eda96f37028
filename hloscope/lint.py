"""The lint entry point that rule families plug into (the rule engine comes next)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from hloscope.ir import Module


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: str
    message: str
    file: str
    line: int
    column: int
    computation: str
    instruction: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def render(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.code} [{self.name}] {self.message}"


# Each entry: a callable taking the parsed modules and yielding findings.
CHECKS: list[Callable[[list[Module]], Iterable[Finding]]] = []


def run_rules(modules: list[Module]) -> list[Finding]:
    findings = [f for check in CHECKS for f in check(modules)]
    return sorted(findings, key=lambda f: (f.file, f.line, f.column, f.code))
