"""The `hloscope` typer application: the commands, in the order `--help` lists them (`app`),
or the one a command line names (`app_for`)."""

from __future__ import annotations

import signal
from importlib import import_module
from typing import Annotated

import typer

from hloscope._version import __version__
from hloscope.cli.common import set_debug


def _typer() -> typer.Typer:
    return typer.Typer(
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


def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show Python tracebacks on errors.")] = False,
) -> None:
    set_debug(debug)
    if hasattr(signal, "SIGPIPE"):  # `hloscope ... | head` ends quietly, like other tools
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


# The commands in the order `--help` lists them: name -> (module of hloscope.cli, function).
COMMANDS = {
    "parse": ("parse", "parse"),
    "stats": ("stats", "stats"),
    "roofline": ("roofline", "roofline"),
    "memory": ("memory", "memory"),
    "shape": ("shape", "shape"),
    "sharding": ("sharding", "sharding"),
    "kernel": ("kernel", "kernel"),
    "profile": ("profile", "profile"),
    "graph": ("graph", "graph"),
    "lint": ("lint", "lint"),
    "report": ("report", "report"),
    "passes": ("passes", "passes"),
    "diff": ("diff", "diff"),
    "compile": ("compile", "compile"),
    "explorer": ("explorer", "explorer"),
    "rules": ("rules", "list_rules"),
    "rule": ("rules", "show_rule"),
}


def make_app(only: str | None = None) -> typer.Typer:
    """The application with every command, or (`only`) with that command alone: a run
    builds the options of the command it runs, not of all seventeen (typer reads each
    command's signature and types, about 16 ms for all of them)."""
    made = _typer()
    made.callback()(main)
    for name, (module, function) in COMMANDS.items():
        if only is None or name == only:
            made.command(name)(getattr(import_module(f"hloscope.cli.{module}"), function))
    return made


def app_for(args: list[str]) -> typer.Typer:
    """The application a command line needs: the command it names alone; none for
    `--version` alone; else (no command, or a name that is none: typer lists them) every
    command."""
    named = next((a for a in args if not a.startswith("-")), None)
    if named is None and "--version" in args and "--help" not in args:
        return make_app("")
    return make_app(named if named in COMMANDS else None)


def __getattr__(name: str):
    """`app`: the application with every command (made on first use: the console entry
    makes the one its command line needs, app_for)."""
    if name != "app":
        raise AttributeError(f"module 'hloscope.cli.app' has no attribute {name!r}")
    made = globals()["app"] = make_app()
    return made
