"""The `hloscope` command line. Typer only: parse arguments, call the API, format, exit.

Exit codes: 0 success (lint: nothing at or above --fail-on), 1 findings,
2 usage or input error (printed as FILE:LINE:COL: error: ...).
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from hloscope import __version__

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

_state = {"debug": False}


class Format(str, Enum):
    text = "text"
    json = "json"


FileArg = Annotated[Path, typer.Argument(help="An HLO text file (as XLA dumps or prints it).")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Parse everything through the full grammar now.")
]


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
    _state["debug"] = debug


def fail(message: str) -> NoReturn:
    typer.echo(message, err=True)
    raise typer.Exit(2)


def _load(path: Path, strict: bool = False):
    from hloscope.parser import ParseError, load

    try:
        return load(path, strict=strict)
    except ParseError as e:
        if _state["debug"]:
            raise
        fail(e.render())


def _guard(fn, *args):
    """Run fn; a located error exits 2 with one line, anything else too (unless --debug)."""
    from hloscope.parser import ParseError

    try:
        return fn(*args)
    except ParseError as e:
        if _state["debug"]:
            raise
        fail(e.render())
    except (typer.Exit, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - never a traceback for a user's file
        if _state["debug"]:
            raise
        fail(f"error: internal error ({type(e).__name__}: {e}); rerun with --debug for details")


def _emit_json(payload: object) -> None:
    json.dump(payload, sys.stdout, indent=1)
    sys.stdout.write("\n")


@app.command()
def parse(file: FileArg, format: FormatOpt = Format.text, strict: StrictOpt = False) -> None:
    """Parse FILE and print its structure (computations, instructions, shapes, operands).

    Example: hloscope parse --format json fixtures/cpu/mlp_cpu.hlo.txt
    """
    modules = _load(file, strict)

    def run() -> None:
        from hloscope.summary import module_json

        if format == Format.json:
            _emit_json({"version": 1, "modules": [module_json(m) for m in modules]})
            return
        for m in modules:
            typer.echo(f"HloModule {m.name} ({len(m.computations)} computations)")
            for c in m.computations:
                mark = "ENTRY " if c is m.entry else ""
                typer.echo(f"  {mark}{c.name}: {len(c.instructions)} instructions")
                for i in c.instructions:
                    ops = ", ".join(i.operands) if i.literal is None else i.literal
                    root = "ROOT " if i.is_root else ""
                    typer.echo(f"    {root}{i.name} = {i.shape} {i.opcode}({ops})")

    _guard(run)


@app.command()
def stats(file: FileArg, format: FormatOpt = Format.text, strict: StrictOpt = False,
          per_computation: Annotated[bool, typer.Option(
              "--per-computation", help="Also list every computation's counts (text format).")] = False,
          ) -> None:
    """Count opcodes, fusion kinds and custom-call targets per module and computation.

    Example: hloscope stats fixtures/tpu/transformer_v5p.hlo.txt
    """
    modules = _load(file, strict)

    def run() -> None:
        from hloscope.summary import module_stats

        result = [module_stats(m) for m in modules]
        if format == Format.json:
            _emit_json({"version": 1, "modules": result})
            return
        for s in result:
            typer.echo(f"HloModule {s['name']}: {s['instructions']} instructions in "
                       f"{s['computations']} computations ({s['fusion_computations']} fused)")
            _print_counts(s, "  ")
            if per_computation:
                for c in s["per_computation"]:
                    tag = " [entry]" if c["is_entry"] else (" [fusion]" if c["is_fusion"] else "")
                    typer.echo(f"  {c['name']}{tag}: {c['instructions']} instructions")
                    _print_counts(c, "    ")

    _guard(run)


def _print_counts(s: dict, indent: str) -> None:
    typer.echo(indent + "opcodes: " + ", ".join(f"{k} {v}" for k, v in s["opcodes"].items()))
    if s["fusion_kinds"]:
        typer.echo(indent + "fusion kinds: " + ", ".join(f"{k} {v}" for k, v in s["fusion_kinds"].items()))
    if s["custom_call_targets"]:
        typer.echo(indent + "custom-call targets: "
                   + ", ".join(f"{k} {v}" for k, v in s["custom_call_targets"].items()))


@app.command()
def lint(files: Annotated[list[Path], typer.Argument(help="HLO text files.")],
         format: FormatOpt = Format.text, strict: StrictOpt = False) -> None:
    """Check HLO files against hloscope's rules and report findings.

    Example: hloscope lint fixtures/tpu/transformer_v5p.hlo.txt
    """
    from hloscope.lint import run_rules

    findings = []
    checked = 0
    for path in files:
        modules = _load(path, strict)
        findings.extend(_guard(run_rules, modules))
        checked += sum(len(m.instructions()) for m in modules)
    if format == Format.json:
        _emit_json({"version": 1, "findings": [f.to_json() for f in findings],
                    "summary": {"files": len(files), "instructions": checked,
                                "findings": len(findings)}})
    else:
        for f in findings:
            typer.echo(f.render())
        typer.echo(f"{len(findings)} finding(s) in {len(files)} file(s), {checked} instructions checked")
    raise typer.Exit(1 if findings else 0)


if __name__ == "__main__":  # pragma: no cover
    app()
