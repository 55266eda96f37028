"""Baselines: accept today's findings, report only new ones.

Keys are (code, module, computation, instruction), so re-dumps that shift line
numbers keep matching.
"""

from __future__ import annotations

import json
from pathlib import Path

from hloscope.rules.base import Finding

VERSION = 1


def write_baseline(path: Path, findings: list[Finding]) -> None:
    entries = sorted({f.key for f in findings})
    payload = {"version": VERSION, "findings": [
        {"code": c, "module": m, "computation": comp, "instruction": i} for c, m, comp, i in entries]}
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def read_baseline(path: Path) -> set[tuple[str, str, str, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {(e["code"], e["module"], e["computation"], e["instruction"]) for e in data["findings"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a hloscope baseline ({e})") from None


def apply_baseline(findings: list[Finding], known: set[tuple[str, str, str, str]]) -> tuple[list[Finding], int]:
    kept = [f for f in findings if f.key not in known]
    return kept, len(findings) - len(kept)
