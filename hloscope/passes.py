"""Which pass made an instruction what it is: the pass dumps of one module (XLA's
--xla_dump_hlo_pass_re), read in the order the passes ran, and the instruction's line in
each; the first dump it appears in names the pass that introduced it, and every later
change of its line names the pass that changed it."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from hloscope.dumpdir import DumpModule


@dataclass
class Step:
    label: str  # `0019 copy-insertion: after_adding_copies_to_resolve_interference`
    path: Path
    line: str | None  # the instruction's line there (None: absent)


def _line_of(text: str, name: str) -> str | None:
    m = re.search(r"^\s*(?:ROOT\s+)?%?" + re.escape(name) + r" = .*$", text, re.M)
    return m.group(0).strip() if m else None


def steps(module: DumpModule) -> list[tuple[str, Path]]:
    """(label, file) of the module's dumps in pipeline order: before optimizations, each
    pass dump, after optimizations."""
    out = []
    if "before_optimizations" in module.stages:
        out.append(("before_optimizations", module.stages["before_optimizations"]))
    out.extend((f"{d.seq:04d} {d.pipeline}: {d.name}", d.path) for d in module.passes)
    if "after_optimizations" in module.stages:
        out.append(("after_optimizations", module.stages["after_optimizations"]))
    return out


def history(module: DumpModule, name: str) -> list[Step]:
    """The dumps where the instruction's line differs from the dump before (its first
    appearance, its changes, its removal), in order."""
    out: list[Step] = []
    previous: str | None = None
    for label, path in steps(module):
        line = _line_of(path.read_text(encoding="utf-8", errors="replace"), name)
        if line != previous:
            out.append(Step(label, path, line))
        previous = line
    return out


def diff(before: str | None, after: str | None) -> list[str]:
    """The change of one line, as ndiff shows it (`- old`, `+ new`, `? markers`)."""
    if before is None or after is None:
        return [f"+ {after}"] if after is not None else [f"- {before}"] if before is not None else []
    return [d.rstrip() for d in difflib.ndiff([before], [after]) if d[:1] in "-+?"]
