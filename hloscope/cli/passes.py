"""`hloscope passes`: the pass dumps of a --xla_dump_to directory, and which pass made an
instruction."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import Format, FormatOpt, emit, fail


def passes(
    directory: Annotated[Path, typer.Argument(help="An --xla_dump_to directory dumped with --xla_dump_hlo_pass_re.")],
    instruction: Annotated[str | None, typer.Option("--instruction", "-i", help=(
        "Show the passes that introduced and changed this instruction (e.g. copy.1)."))] = None,
    module: Annotated[str | None, typer.Option("--module", "-m", help=(
        "Only the module of this name or id (jit_f, module_0006)."))] = None,
    format: FormatOpt = Format.text,
) -> None:
    """List the pass dumps of each module in the order the passes ran; with --instruction,
    the pass that introduced it (its first appearance) and each pass that changed its line.

    Examples:

      hloscope passes fixtures/dumps/passes_cpu

      hloscope passes fixtures/dumps/passes_cpu --instruction copy.1
    """
    from hloscope.dumpdir import is_dump_dir, scan
    from hloscope.passes import diff, history, steps

    if not is_dump_dir(directory):
        fail(f"error: {directory}: not an --xla_dump_to directory (no module_NNNN.* files)")
    modules = [m for m in scan(directory)
               if module is None or module in (m.id, m.name, m.name.split(".")[0])]
    if not modules:
        fail(f"error: {directory}: no module named {module}")
    records = []
    for m in modules:
        rec = {"id": m.id, "name": m.name, "passes": [label for label, _ in steps(m)]}
        if instruction is not None:
            name = instruction.lstrip("%")
            rec["instruction"] = name
            rec["history"] = [{"after": s.label, "file": str(s.path), "line": s.line} for s in history(m, name)]
        records.append(rec)
    if instruction is not None and not any(r["history"] for r in records):
        fail(f"error: %{instruction.lstrip('%')} appears in no dump of {directory}")

    def text() -> str:
        out = []
        for r in records:
            if instruction is None:
                out.append(f"{r['id']}.{r['name']}: {len(r['passes'])} dumps")
                out.extend(f"  {label}" for label in r["passes"])
                continue
            if not r["history"]:
                continue
            out.append(f"{r['id']}.{r['name']}: %{r['instruction']}")
            before = None
            for k, h in enumerate(r["history"]):
                verb = ("introduced by" if k == 0 and h["line"] else "removed by" if not h["line"]
                        else "changed by")
                out.append(f"  {verb} {h['after']}")
                out.extend(f"    {d}" for d in diff(before, h["line"]) if h["line"] or before)
                before = h["line"]
        return "\n".join(out)

    emit(format, lambda: {"version": 1, "modules": records}, text)
