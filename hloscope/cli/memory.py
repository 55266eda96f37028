"""`hloscope memory`: the static peak of HBM (and each other memory space) over the schedule."""

from __future__ import annotations

from hloscope.cli.common import ChipOpt, FileArg, Format, FormatOpt, NoCacheOpt, analyse, chip, emit


def memory(file: FileArg, chip_name: ChipOpt = "v5e", format: FormatOpt = Format.text,
           no_cache: NoCacheOpt = False) -> None:
    """Peak memory from static liveness over a scheduled module (is_scheduled=true).

    HBM is reported as XLA's compiled.memory_analysis() splits it: arguments + outputs -
    aliased (donated) + peak temporaries, the last being the most bytes of temporaries live
    at one point of the schedule (XLA's temp_size_in_bytes is that heap after buffer reuse).
    Other memory spaces (S(1): on-chip VMEM, ...) are reported apart: XLA's
    peak_memory_in_bytes adds the VMEM preallocation to HBM, so it is not an HBM peak.

    Example: hloscope memory fixtures/memory/vocab_loss_v5e.hlo.txt --chip v5e
    """
    spec = chip(chip_name)

    def run(modules: list) -> None:
        from hloscope.cost.liveness import memory as peak
        from hloscope.report.memory import memory_text

        records = [peak(m).to_dict() for m in modules]
        emit(format, lambda: {"version": 1, "chip": spec.key, "hbm_bytes": spec.hbm_bytes, "modules": records},
             lambda: memory_text(records, {"name": spec.name, "hbm_bytes": spec.hbm_bytes}))

    analyse(file, no_cache, run)
