"""`hloscope roofline`: per-instruction FLOPs, bytes and time bound on a chip."""

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


def roofline(
    file: FileArg,
    chip_name: ChipOpt = "v5e",
    format: FormatOpt = Format.text,
    top: Annotated[int, typer.Option("--top", help="Rows to show in text format (0: all).")] = 20,
    no_trip_counts: Annotated[bool, typer.Option("--no-trip-counts", help="Count loop bodies once (XLA's cost_analysis convention).")] = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Per-instruction FLOPs, bytes, intensity and compute/memory time on a chip.

    Example: hloscope roofline fixtures/tpu/transformer_v5p.hlo.txt --chip v5p
    """
    spec = chip(chip_name)

    def run(modules: list) -> None:
        from hloscope.cost.roofline import roofline as build
        from hloscope.mlir.cost import body_costs
        from hloscope.report.roofline import roofline_text

        records = [build(m, spec, trip_counts=not no_trip_counts, kernel_costs=body_costs(m)).to_dict()
                   for m in modules]
        emit(format, lambda: {"version": 1, "chip": spec.key, "modules": records},
             lambda: roofline_text(records, {"name": spec.name, "ridge": spec.ridge}, top))

    analyse(file, no_cache, run)
