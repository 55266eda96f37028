"""`hloscope graph`: a computation or an instruction's neighbourhood, drawn by Graphviz."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import ModuleOpt, NoCacheOpt, analyse, fail, settle, source_bytes


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
    module: ModuleOpt = None,
) -> None:
    """Draw a computation or an instruction's neighbourhood with Graphviz. A computation
    with more than --max-nodes instructions is drawn as its costliest region: the ops with
    the most time (measured with --trace, else roofline) and their operands and users.

    Examples:

      hloscope graph fixtures/tpu/transformer_v5p.hlo.txt -o step.svg

      hloscope graph big.hlo.txt --around fusion.3 --depth 2 -o around.png
    """
    suffix = output.suffix.lower()
    if suffix not in (".svg", ".png", ".pdf", ".dot"):
        fail(f"error: unsupported output {output}; use .svg, .png, .pdf or .dot")
    if around is None:  # (a computation too big to draw shows its costliest region)
        from hloscope.parser.load import digest_structures

        digest_structures()

    def run(modules: list) -> None:
        from hloscope.render.graphviz import GraphOptions, drawn_around, render_graph

        module = modules[0]
        opts = GraphOptions(computation=computation, around=around, depth=depth,
                            expand_fusions=expand_fusions, max_nodes=max_nodes)
        if findings or trace is not None:
            from hloscope import cache
            from hloscope.lint import LintError, LintOptions, lint_files, lint_modules

            try:
                if (trace is None and not cache.is_enabled()) or not Path(module.path).is_file():
                    # (the module at hand: no second parse; standard input has no file), the
                    # instruction rules on what is drawn alone: their findings are there
                    only = drawn_around(module, opts) if around is not None else None
                    report = lint_modules(modules, LintOptions(chip=chip_name), only=only)
                else:  # (cached findings, or the trace's checks as lint makes them)
                    report = lint_files([Path(module.path)], LintOptions(chip=chip_name, trace=trace))
            except LintError as e:
                fail(f"error: {e}")
            opts.findings = report.findings if findings else []
        if trace is not None:
            from hloscope.trace import join, load_profile

            opts.trace = join(load_profile(trace), [module])
        if "custom-call" in module.opcodes():
            from hloscope.mlir.kernels import kernels
            from hloscope.report.kernels import kernel_tooltips

            opts.kernels = kernel_tooltips(kernels(module))
        if around is None:
            opts.costs, opts.cost_source = _cached_costs(Path(module.path), module, computation, max_nodes,
                                                         chip_name, opts.trace)
        try:
            g = render_graph(module, opts)
        except KeyError as e:
            fail(f"{file}: error: {e.args[0]}")
        _write(g, output, suffix)

    analyse(file, no_cache, run, module=module, single=True)


def _cached_costs(file: Path, module, computation: str | None, max_nodes: int,
                  chip_name: str | None, trace) -> tuple[dict[str, float], str]:
    """_costs, kept in the cache of parsed modules when it is on (static costs only)."""
    from hloscope import cache

    if trace is not None or not cache.is_enabled():
        return _costs(module, computation, max_nodes, chip_name, trace)
    from hloscope.parser.files import file_digest

    content = file_digest(file) or source_bytes(file)  # (else the file by its bytes)
    k = cache.key(content, f"graph-costs:{module.name}:{computation}:{max_nodes}:{chip_name}")
    hit = cache.get("graph-costs", k)
    if hit is None:
        hit = _costs(module, computation, max_nodes, chip_name, trace)
        cache.put("graph-costs", k, hit)
    return hit


def _costs(module, computation: str | None, max_nodes: int, chip_name: str | None,
           trace) -> tuple[dict[str, float], str]:
    """Seconds per instruction of the computation drawn, when it is too big to draw whole:
    measured (a trace) or its roofline time; the drawing then shows the costliest region."""
    comp = module.by_name.get(computation) if computation else module.entry
    if comp is None or len(comp.instructions) <= max_nodes:
        return {}, "static"
    if trace is not None:
        measured = {name: s.total_ns * 1e-9 for (mod, name), s in trace.stats.items()
                    if mod == module.name and name in comp}
        if measured:
            return measured, "measured"
    from hloscope.cost.resolve import chip_for
    from hloscope.cost.flops import FREE
    from hloscope.cost.ops import CostModel
    from hloscope.cost.roofline import op_times
    from hloscope.mlir.cost import body_costs

    spec, _ = chip_for(module, chip_name)
    model = CostModel(module, kernel_costs=body_costs(module))
    return {i.name: max(op_times(model, spec, i)) for i in comp.instructions
            if i.opcode not in FREE}, "static"


def _write(g, output: Path, suffix: str) -> None:
    """The graph as the output file asks; without Graphviz's `dot`, its .dot source."""
    settle()  # (nothing is written for a file its checks refuse)
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
