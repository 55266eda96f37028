"""`hloscope report`: one self-contained HTML page for people."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import AutoChipOpt, NoCacheOpt, chip, fail, use_cache

PathsArg = Annotated[list[Path], typer.Argument(help=(
    "HLO text files or --xla_dump_to directories (their *after_optimizations.txt modules)."))]


def report(
    paths: PathsArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")] = Path("report.html"),
    chip_name: AutoChipOpt = None,
    trace: Annotated[Path | None, typer.Option("--trace", help=(
        "A profile of the program (jax.profiler directory, *.xplane.pb, *.trace.json.gz): "
        "top ops by measured time, measured roofline points."))] = None,
    allow_mismatch: Annotated[bool, typer.Option("--allow-mismatch", help=(
        "Use a profile that does not match the HLO."))] = False,
    select: Annotated[list[str] | None, typer.Option("--select", help="Rule codes or prefixes to run.")] = None,
    against: Annotated[Path | None, typer.Option("--against", help=(
        "An earlier compile (file or dump folder): adds each module's A/B comparison (hloscope diff)."))] = None,
    no_cache: NoCacheOpt = False,
) -> None:
    """Write one HTML report that works offline: header figures (stage, chip, step
    estimate, MFU, peak memory), findings grouped and filterable, roofline plot, top ops,
    memory timeline, collectives, kernels, and graphs around the worst findings.

    Exit codes: 0 written; 2 a usage error, or an input could not be read (the report is
    still written with the other inputs and lists the failure).

    Examples:

      hloscope report fixtures/tpu/transformer_v5p.hlo.txt -o report.html

      hloscope report fixtures/rules/T001/matmul_cpu.hlo.txt --trace fixtures/rules/T001/matmul_cpu.trace.json.gz
    """
    if output.suffix.lower() not in (".html", ".htm"):
        fail(f"error: {output}: the report is HTML; name the file .html")
    if chip_name:
        chip(chip_name)
    use_cache(no_cache)
    from hloscope.parser.load import digest_structures

    digest_structures()  # (its cost model then costs an unrolled model's repeated fusions once)
    from hloscope.html import build_report
    from hloscope.lint import LintError
    from hloscope.trace import TraceError

    try:
        built = build_report(paths, chip_name, trace, allow_mismatch, select,
                             progress=lambda p: typer.echo(f"analysing {p}", err=True), against=against)
    except (LintError, TraceError) as e:
        message = str(e)
        fail(message if ": error: " in message else f"error: {message}")
    for e in built.errors:
        typer.echo(e.render(), err=True)
    try:
        output.write_text(built.html, encoding="utf-8")
    except OSError as e:
        fail(f"error: cannot write {output}: {e.strerror}")
    size = len(built.html.encode("utf-8"))
    typer.echo(f"wrote {output} ({len(built.pages)} module(s), {size / 1e6:.2f} MB)", err=True)
    if built.errors:
        raise typer.Exit(2)
