"""`hloscope sharding`: collectives, device groups, mesh axes, bytes and ICI time."""

from __future__ import annotations

from typing import Annotated

import typer

from hloscope.cli.common import (
    ChipOpt,
    FileArg,
    Format,
    FormatOpt,
    NoCacheOpt,
    analyse,
    chip,
    emit,
)


def sharding(
    file: FileArg,
    format: FormatOpt = Format.text,
    chip_name: ChipOpt = "v5e",
    groups: Annotated[bool, typer.Option("--groups", help="Print every device group (text format).")] = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Per-collective table: groups, mesh axis, bytes, global shape, async overlap, ICI time.

    Example: hloscope sharding fixtures/tpu/scaling_book_v5p.hlo.txt --chip v5p
    """
    spec = chip(chip_name)

    def run(modules: list) -> None:
        from hloscope.report.sharding import sharding_text
        from hloscope.sharding import analyze
        from hloscope.sharding.collectives import bytes_per_axis

        results = [(m, *analyze(m, spec)) for m in modules]
        per_axis = [bytes_per_axis(cs) for _, _, cs in results]
        emit(format, lambda: {"version": 1, "chip": spec.key, "modules": [
                {"name": m.name, "devices": mesh.devices, "mesh": mesh.to_dict(),
                 "bytes_per_axis": axes, "collectives": [c.to_dict() for c in cs]}
                for (m, mesh, cs), axes in zip(results, per_axis)]},
             lambda: sharding_text(results, per_axis, groups))

    analyse(file, no_cache, run)
