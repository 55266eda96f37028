"""`hloscope roofline`: per-instruction FLOPs, bytes and time bound on a chip."""

from __future__ import annotations

from typing import Annotated

import typer

from hloscope.cli.common import (
    analyse,
    AutoChipOpt,
    chip,
    chip_file,
    ChipFileOpt,
    emit,
    fail,
    FileArg,
    Format,
    FormatOpt,
    GpusPerNodeOpt,
    ModuleOpt,
    NoCacheOpt,
)


def roofline(
    file: FileArg,
    chip_name: AutoChipOpt = None,
    format: FormatOpt = Format.text,
    top: Annotated[int, typer.Option("--top", help="Rows to show in text format (0: all).")] = 20,
    no_trip_counts: Annotated[bool, typer.Option("--no-trip-counts", help="Count loop bodies once (XLA's cost_analysis convention).")] = False,
    no_cache: NoCacheOpt = False,
    chip_file_path: ChipFileOpt = None,
    gpus_per_node: GpusPerNodeOpt = None,
    by: Annotated[str | None, typer.Option("--by", help=(
        "Add the time up by JAX named scope (`scope`), layer (`layer`: layer_3, layers.3, "
        "block3 in the op_name; a scanned loop body), source line (`source`) or forward / "
        "backward (`pass`), instead of the per-op table."))] = None,
    module: ModuleOpt = None,
) -> None:
    """Per-instruction FLOPs, bytes, intensity and compute/memory time on a chip, and the
    step-time estimate: every op at its roofline time plus the communication that compute
    does not hide (each logical collective at its link time: ICI, or NCCL over NVLink and the network; an async one hidden by the
    compute scheduled between its start and its done), exposed communication and MFU.

    Examples:
      hloscope roofline fixtures/tpu/transformer_v5p.hlo.txt --chip v5p
      hloscope roofline fixtures/tpu/fsdp_async_fusion_v5p.hlo.txt --chip v5p --top 5
      hloscope roofline fixtures/tpu/train_16_layers_v5e.hlo.txt --by layer
    """
    chip_name = chip_file(chip_file_path, chip_name, gpus_per_node)
    from hloscope.cost.aggregate import BY
    from hloscope.parser.load import digest_structures

    digest_structures()  # (its cost model then costs an unrolled model's repeated fusions once)

    if by is not None and by not in BY:
        fail(f"error: --by {by!r}: one of {', '.join(BY)}")
    if chip_name:
        chip(chip_name)

    def run(modules: list) -> None:
        from hloscope.cost.resolve import chip_for
        from hloscope.cost.roofline import roofline as build
        from hloscope.mlir.cost import body_costs
        from hloscope.report.roofline import roofline_text
        from hloscope.sharding.step import estimate

        records = []
        for m in modules:
            spec, note = chip_for(m, chip_name)
            report = build(m, spec, trip_counts=not no_trip_counts, kernel_costs=body_costs(m))
            # (the text shows the `top` costliest rows: only those become records)
            shown = top if format != Format.json else 0
            record = dict(report.to_dict(shown), step=estimate(m, spec, report).to_dict(),
                          chip={"key": spec.key, "name": spec.name, "ridge": spec.ridge, "note": note})
            if by is not None:
                from hloscope.cost.aggregate import breakdown

                record["breakdown"] = breakdown(m, report, by)
            records.append(record)
        emit(format, lambda: {"version": 1, "chip": records[0]["chip"]["key"] if records else chip_name,
                              "modules": records},
             lambda: roofline_text(records, top))

    analyse(file, no_cache, run, module=module)
