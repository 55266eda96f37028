"""`hloscope kernel`: decoded custom-call kernels (Pallas/Mosaic MLIR, grid, blocks, VMEM)."""

from __future__ import annotations

from typing import Annotated

import typer

from hloscope.cli.common import (
    FileArg,
    Format,
    FormatOpt,
    NoCacheOpt,
    analyse,
    emit,
    fail,
)


def kernel(
    file: FileArg,
    instruction: Annotated[str | None, typer.Option("--instruction", "-i", help="Only this custom-call instruction.")] = None,
    mlir: Annotated[bool, typer.Option("--mlir", help="Print the kernel's MLIR (text format).")] = False,
    format: FormatOpt = Format.text,
    no_cache: NoCacheOpt = False,
) -> None:
    """Decode custom-call kernels: Pallas/Mosaic MLIR, grid, blocks, memory spaces, VMEM.

    Examples:

      hloscope kernel fixtures/tpu/flash_attention_v5e.hlo.txt

      hloscope kernel fixtures/tpu/pallas_matmul_v5e.hlo.txt --mlir
    """

    def run(modules: list) -> None:
        from hloscope.mlir.kernels import kernels
        from hloscope.report.kernels import kernels_text

        found = [k for m in modules for k in kernels(m)
                 if instruction is None or k.instruction.name == instruction.lstrip("%")]
        if instruction is not None and not found:
            fail(f"{file}: error: no custom-call named %{instruction.lstrip('%')}")
        emit(format, lambda: {"version": 1, "kernels": [k.to_dict(with_mlir=True) for k in found]},
             lambda: kernels_text(found, mlir))

    analyse(file, no_cache, run)
