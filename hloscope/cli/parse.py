"""`hloscope parse`: a file's structure (computations, instructions, shapes, operands)."""

from __future__ import annotations

from hloscope.cli.common import (
    analyse,
    emit,
    FileArg,
    Format,
    FormatOpt,
    ModuleOpt,
    source_bytes,
    NoCacheOpt,
    StrictOpt,
)


def parse(file: FileArg, format: FormatOpt = Format.text, strict: StrictOpt = False,
          no_cache: NoCacheOpt = False, module: ModuleOpt = None) -> None:
    """Parse FILE and print its structure (computations, instructions, shapes, operands).

    Example: hloscope parse --format json fixtures/cpu/mlp_cpu.hlo.txt
    """

    def run(modules: list) -> None:
        from hloscope.parser.load import check_values
        from hloscope.report.parse import module_json, parse_text

        # every value typed, as lint does: the two accept exactly the same files
        for path in dict.fromkeys(m.path for m in modules):
            text = source_bytes(path).decode("utf-8", errors="replace")
            check_values([m for m in modules if m.path == path], text.splitlines(), path)

        emit(format, lambda: {"version": 1, "modules": [module_json(m) for m in modules]},
             lambda: parse_text(modules))

    analyse(file, no_cache, run, strict=strict, module=module)
