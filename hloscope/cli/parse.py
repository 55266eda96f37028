"""`hloscope parse`: a file's structure (computations, instructions, shapes, operands)."""

from __future__ import annotations

from hloscope.cli.common import (
    FileArg,
    Format,
    FormatOpt,
    NoCacheOpt,
    StrictOpt,
    emit_json,
    emit_text,
    guard,
    loaded,
)


def parse(file: FileArg, format: FormatOpt = Format.text, strict: StrictOpt = False,
          no_cache: NoCacheOpt = False) -> None:
    """Parse FILE and print its structure (computations, instructions, shapes, operands).

    Example: hloscope parse --format json fixtures/cpu/mlp_cpu.hlo.txt
    """
    modules = loaded(file, no_cache, strict)

    def run() -> None:
        from hloscope.report.parse import module_json, parse_text

        if format == Format.json:
            emit_json({"version": 1, "modules": [module_json(m) for m in modules]})
        else:
            emit_text(parse_text(modules))

    guard(run)
