"""`hloscope sharding`: collectives, device groups, mesh axes, bytes and link time (ICI, NVLink, network)."""

from __future__ import annotations

from typing import Annotated

import typer

from hloscope.cli.common import (
    analyse,
    AutoChipOpt,
    chip_choice,
    chip_file,
    ChipFileOpt,
    emit,
    FileArg,
    Format,
    FormatOpt,
    GpusPerNodeOpt,
    ModuleOpt,
    NoCacheOpt,
)


def sharding(
    file: FileArg,
    format: FormatOpt = Format.text,
    chip_name: AutoChipOpt = None,
    groups: Annotated[bool, typer.Option("--groups", help="Print every device group (text format).")] = False,
    top: Annotated[int, typer.Option("--top", help="Collectives to list per module in text format, the costliest first (0: all, in program order).")] = 20,
    no_cache: NoCacheOpt = False,
    chip_file_path: ChipFileOpt = None,
    gpus_per_node: GpusPerNodeOpt = None,
    module: ModuleOpt = None,
) -> None:
    """Per-collective table: groups, mesh axis, bytes, global shape, async overlap, link time (ICI on TPUs; NVLink/network with latency on GPUs).

    Example: hloscope sharding fixtures/tpu/scaling_book_v5p.hlo.txt --chip v5p
    """
    chip_name = chip_file(chip_file_path, chip_name, gpus_per_node)

    def run(modules: list) -> None:
        from hloscope.report.sharding import sharding_text
        from hloscope.sharding import analyze
        from hloscope.sharding.collectives import bytes_per_axis

        choices = [chip_choice(m, chip_name) for m in modules]
        results = [(m, *analyze(m, c.chip)) for m, c in zip(modules, choices)]
        per_axis = [bytes_per_axis(cs) for _, _, cs in results]
        emit(format, lambda: {"version": 1, "chip": choices[0].chip.key if choices else None, "modules": [
                {"name": m.name, "chip": c.to_dict(), "devices": mesh.devices, "mesh": mesh.to_dict(),
                 "bytes_per_axis": axes, "collectives": [x.to_dict() for x in cs]}
                for (m, mesh, cs), axes, c in zip(results, per_axis, choices)]},
             lambda: "\n".join(f"note: {c.note}" for c in dict.fromkeys(choices) if c.note)
             + ("\n" if any(c.note for c in choices) else "") + sharding_text(results, per_axis, groups, top))

    analyse(file, no_cache, run, module=module)
