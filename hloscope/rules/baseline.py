"""Baselines: accept today's findings, report only new ones.

A baseline records each finding's fingerprint (its pattern: code, opcode, shapes and source
line, never instruction numbers or lines), so it keeps matching across re-dumps and
recompiles that renumber every instruction. Version-1 baselines (code, module,
computation, instruction) are still read.
"""

from __future__ import annotations

import json
from pathlib import Path

from hloscope.rules.base import Finding

VERSION = 2


def write_baseline(path: Path, findings: list[Finding]) -> None:
    entries = sorted({(f.code, f.fingerprint) for f in findings})
    payload = {"version": VERSION, "findings": [{"code": c, "fingerprint": fp} for c, fp in entries]}
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def read_baseline(path: Path) -> set[tuple[str, ...]]:
    """The baseline's keys: (code, fingerprint), or (code, module, computation,
    instruction) from a version-1 file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version", 1) >= 2:
            return {(e["code"], e["fingerprint"]) for e in data["findings"]}
        return {(e["code"], e["module"], e["computation"], e["instruction"]) for e in data["findings"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{path}: not a hloscope baseline ({e})") from None


def apply_baseline(findings: list[Finding], known: set[tuple[str, ...]]) -> tuple[list[Finding], int]:
    kept = [f for f in findings if (f.code, f.fingerprint) not in known and f.key not in known]
    return kept, len(findings) - len(kept)
