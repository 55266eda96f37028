"""`hloscope graph`: a computation or an instruction's neighbourhood, drawn by Graphviz."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import NoCacheOpt, analyse, fail


def graph(
    file: Annotated[Path, typer.Argument(help="An HLO text file (as XLA dumps or prints it).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Output file: .svg, .png, .pdf or .dot.")] = Path("graph.svg"),
    computation: Annotated[str | None, typer.Option("--computation", help="Draw this computation (default: the entry).")] = None,
    around: Annotated[str | None, typer.Option("--around", help="Draw the neighbourhood of this instruction.")] = None,
    depth: Annotated[int, typer.Option("--depth", help="Steps around --around.")] = 2,
    trace: Annotated[Path | None, typer.Option("--trace", help="A profile: fill nodes by measured share of step time.")] = None,
    findings: Annotated[bool, typer.Option("--findings/--no-findings", help="Mark lint findings (red border, codes).")] = True,
    expand_fusions: Annotated[bool, typer.Option("--expand-fusions/--collapse-fusions", help="Draw fused computations as clusters.")] = False,
    max_nodes: Annotated[int, typer.Option("--max-nodes", help="Draw at most this many instructions.")] = 200,
    chip_name: Annotated[str | None, typer.Option("--chip", "-c", help="Chip for the lint findings shown.")] = None,
    no_cache: NoCacheOpt = False,
) -> None:
    """Draw a computation or an instruction's neighbourhood with Graphviz.

    Examples:

      hloscope graph fixtures/tpu/transformer_v5p.hlo.txt -o step.svg

      hloscope graph big.hlo.txt --around fusion.3 --depth 2 -o around.png
    """
    suffix = output.suffix.lower()
    if suffix not in (".svg", ".png", ".pdf", ".dot"):
        fail(f"error: unsupported output {output}; use .svg, .png, .pdf or .dot")

    def run(modules: list) -> None:
        from hloscope.render.graphviz import GraphOptions, render_graph

        module = modules[0]
        opts = GraphOptions(computation=computation, around=around, depth=depth,
                            expand_fusions=expand_fusions, max_nodes=max_nodes)
        if findings or trace is not None:
            from hloscope.lint import LintError, LintOptions, lint_files

            try:
                report = lint_files([file], LintOptions(chip=chip_name, trace=trace))
            except LintError as e:
                fail(f"error: {e}")
            opts.findings = report.findings if findings else []
        if trace is not None:
            from hloscope.trace import join, load_profile

            opts.trace = join(load_profile(trace), [module])
        if any(i.opcode == "custom-call" for i in module.instructions()):
            from hloscope.mlir.kernels import kernels
            from hloscope.report.kernels import kernel_tooltips

            opts.kernels = kernel_tooltips(kernels(module))
        try:
            g = render_graph(module, opts)
        except KeyError as e:
            fail(f"{file}: error: {e.args[0]}")
        _write(g, output, suffix)

    analyse(file, no_cache, run)


def _write(g, output: Path, suffix: str) -> None:
    """The graph as the output file asks; without Graphviz's `dot`, its .dot source."""
    if suffix == ".dot":
        output.write_text(g.source)
        typer.echo(f"wrote {output}", err=True)
        return
    import graphviz

    try:
        output.write_bytes(g.pipe(format=suffix[1:]))
    except graphviz.ExecutableNotFound:
        dot = output.with_suffix(".dot")
        dot.write_text(g.source)
        typer.echo(f"warning: Graphviz's `dot` program is not installed, so {output} was not "
                   f"rendered; wrote {dot} instead (install it: apt-get install graphviz, then "
                   f"dot -T{suffix[1:]} {dot} -o {output})", err=True)
        return
    typer.echo(f"wrote {output}", err=True)
