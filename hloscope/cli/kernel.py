"""`hloscope kernel`: decoded custom-call kernels (Pallas/Mosaic MLIR, grid, blocks, VMEM)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import (
    analyse,
    emit,
    fail,
    FileArg,
    Format,
    FormatOpt,
    ModuleOpt,
    NoCacheOpt,
)


def kernel(
    file: FileArg,
    instruction: Annotated[str | None, typer.Option("--instruction", "-i", help="Only this custom-call instruction.")] = None,
    mlir: Annotated[bool, typer.Option("--mlir", help="Print the kernel's MLIR (text format).")] = False,
    top: Annotated[int, typer.Option("--top", help="Custom calls to show in text format (0: all).")] = 20,
    format: FormatOpt = Format.text,
    trace: Annotated[Path | None, typer.Option("--trace", help=(
        "A TPU capture of the program: each kernel's measured runs, TraceMe regions (DMA wait "
        "/ copy / compute), utilization counters and LLO bundles."))] = None,
    no_cache: NoCacheOpt = False,
    module: ModuleOpt = None,
) -> None:
    """Decode custom-call kernels: Pallas/Mosaic MLIR, grid, blocks, memory spaces, VMEM;
    with --trace, what each kernel did when it ran.

    Examples:

      hloscope kernel fixtures/tpu/flash_attention_v5e.hlo.txt

      hloscope kernel fixtures/tpu/pallas_matmul_v5e.hlo.txt --mlir

      hloscope kernel fixtures/rules/T005/dma_bound_matmul_v5e.hlo.txt --trace fixtures/rules/T005/dma_bound_matmul_v5e.xplane.pb
    """

    def run(modules: list) -> None:
        from hloscope.mlir.kernels import kernels
        from hloscope.report.kernels import kernels_text

        found = [k for m in modules for k in kernels(m)
                 if instruction is None or k.instruction.name == instruction.lstrip("%")]
        if instruction is not None and not found:
            fail(f"{file}: error: no custom-call named %{instruction.lstrip('%')}")
        views = _views(modules) if trace is not None else {}

        def record(k) -> dict:
            out = k.to_dict(with_mlir=True)
            view = views.get(k.instruction.name)
            if trace is not None:
                out["measured"] = view.to_dict() if view is not None else None
            return out

        emit(format, lambda: {"version": 1, "kernels": [record(k) for k in found]},
             lambda: kernels_text(found if top <= 0 else found[:top], mlir, views if trace is not None else None)
             + (f"\nand {len(found) - top} more custom calls (--top 0 shows all)" if 0 < top < len(found) else ""))

    def _views(modules: list) -> dict:
        from hloscope.trace import TraceError, join, load_profile, mismatch

        try:
            prof = load_profile(trace)
        except TraceError as e:
            fail(str(e) if e.path else f"{trace}: error: {e}")
        index = join(prof, modules)
        why = mismatch(prof, index, modules)
        if why is not None:
            fail(f"{trace}: error: {why}")
        return {name: v for (_, name), v in index.kernels.items()}

    analyse(file, no_cache, run, module=module)
