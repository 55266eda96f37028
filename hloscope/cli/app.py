"""The `hloscope` typer application: the commands, in the order `--help` lists them."""

from __future__ import annotations

import signal
from typing import Annotated

import typer

from hloscope._version import __version__
from hloscope.cli import (
    compile,
    diff,
    explorer,
    graph,
    kernel,
    lint,
    memory,
    parse,
    passes,
    profile,
    report,
    roofline,
    rules,
    shape,
    sharding,
    stats,
)
from hloscope.cli.common import set_debug

app = typer.Typer(
    name="hloscope",
    help="Static analysis of XLA HLO dumps: parse, count, lint.\n\n"
    "Examples:\n\n"
    "  hloscope stats fixtures/tpu/mlp_v5e.hlo.txt\n\n"
    "  hloscope parse --format json module.hlo.txt | jq '.modules[0].computations[0]'\n\n"
    "  hloscope lint kernel.hlo.txt",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hloscope {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show Python tracebacks on errors.")] = False,
) -> None:
    set_debug(debug)
    if hasattr(signal, "SIGPIPE"):  # `hloscope ... | head` ends quietly, like other tools
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


app.command()(parse.parse)
app.command()(stats.stats)
app.command()(roofline.roofline)
app.command()(memory.memory)
app.command()(shape.shape)
app.command()(sharding.sharding)
app.command()(kernel.kernel)
app.command()(profile.profile)
app.command()(graph.graph)
app.command()(lint.lint)
app.command()(report.report)
app.command()(passes.passes)
app.command()(diff.diff)
app.command("compile")(compile.compile)
app.command()(explorer.explorer)
app.command("rules")(rules.list_rules)
app.command("rule")(rules.show_rule)
