"""`hloscope memory`: the static peak of HBM (and each other memory space) over the schedule."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import (
    AutoChipOpt,
    ChipFileOpt,
    Format,
    FormatOpt,
    NoCacheOpt,
    Refused,
    chip,
    chip_file,
    emit,
    fail,
    guard,
    load_file,
    settle,
    use_cache,
)

PathArg = Annotated[Path, typer.Argument(help=(
    "An HLO text file, or an --xla_dump_to directory (its *after_optimizations.txt modules)."))]
ReportOpt = Annotated[list[Path] | None, typer.Option("--xla-report", help=(
    "XLA's *-buffer-assignment.txt, *-memory-usage-report.txt or *-live-range.txt for the "
    "module (repeatable); by default the ones next to the module file are read."))]


def memory(file: PathArg, chip_name: AutoChipOpt = None, format: FormatOpt = Format.text,
           no_cache: NoCacheOpt = False, xla_report: ReportOpt = None,
           chip_file_path: ChipFileOpt = None) -> None:
    """Peak memory from static liveness over a scheduled module (is_scheduled=true).

    HBM is reported as XLA's compiled.memory_analysis() splits it: arguments + outputs -
    aliased (donated) + peak temporaries, the last being the most bytes of temporaries live
    at one point of the schedule (XLA's temp_size_in_bytes is its heap of them, as laid out).
    Other memory spaces (S(1): on-chip VMEM, ...) are reported apart.

    When XLA's own reports sit next to the module (a --xla_dump_to directory) or are given
    with --xla-report, their numbers are shown beside ours: the buffer assignment's
    arguments, outputs, donated and temporaries per memory space, the memory-usage report's
    total per space, and the live-range dump's peak. In a folder `hloscope compile` wrote,
    XLA's memory_analysis() of the compiled module is shown beside too, with
    peak_memory_in_bytes: XLA's own peak of what is live at once, which hloscope's figure
    equals on most TPU compiles; temp_size_in_bytes adds how XLA's heap lays it out.

    Examples:
      hloscope memory fixtures/memory/vocab_loss_v5e.hlo.txt --chip v5e
      hloscope memory fixtures/dumps/memory_remat_train_v5e
    """
    from hloscope.paths import LintError, expand

    chip_name = chip_file(chip_file_path, chip_name)
    if chip_name:
        chip(chip_name)
    use_cache(no_cache)
    try:
        files = expand([file])
    except LintError as e:
        fail(f"error: {e}")
    if xla_report and len(files) != 1:
        fail(f"error: --xla-report names the reports of one module; {file} holds {len(files)}")
    records, failed = [], False
    for f in files:
        try:
            modules = load_file(f)
        except typer.Exit:  # located error already printed; the other modules go on
            failed = True
            continue
        reports = guard(_xla_reports, f, xla_report)
        try:
            found = guard(_records, modules, reports, chip_name)
            settle()  # (the file's checks ran beside it)
        except Refused:  # as above
            failed = True
            continue
        records.extend(found)

    def text() -> str:
        from hloscope.report.memory import memory_text

        return memory_text(records)

    first = records[0]["chip"] if records else {"key": chip_name, "hbm_bytes": None}
    emit(format, lambda: {"version": 1, "chip": first["key"], "hbm_bytes": first["hbm_bytes"],
                          "modules": records}, text)
    if failed:
        raise typer.Exit(2)


def _xla_reports(module_file: Path, given: list[Path] | None):
    from hloscope.cost import xla_memory

    paths = list(given) if given else list(xla_memory.beside(module_file).values())
    if not paths:
        return None
    try:
        return xla_memory.read(paths)
    except (OSError, xla_memory.ReportError) as e:
        message = f"{e.filename}: cannot read ({e.strerror})" if isinstance(e, OSError) else str(e)
        if given:
            fail(f"error: {message}")
        typer.echo(f"warning: {message}; XLA's reports beside {module_file} left out", err=True)
        return None


def _records(modules: list, reports, chip_name: str | None) -> list[dict]:
    from hloscope.cli.common import chip_choice
    from hloscope.cost.liveness import memory as peak
    from hloscope.cost.resolve import choice_note

    out = []
    for m in modules:
        choice = chip_choice(m, chip_name)  # (a usage error for an unknown chip)
        spec = choice.chip
        out.append(dict(peak(m, chip=spec).to_dict(), chip={"key": spec.key, "name": spec.name,
                                                  "hbm_bytes": spec.hbm_bytes,
                                                  "note": choice_note(m, choice, chip_name),
                                                  "source": choice.source, "assumed": choice.assumed}))
    if reports is not None and len(out) == 1:
        out[0]["xla"] = reports.to_dict()
    from hloscope.cost.xla_memory import analysis_beside

    for m, record in zip(modules, out, strict=True):
        figures = analysis_beside(m.path, m.name)
        if figures:
            record["xla_memory_analysis"] = figures
    return out
