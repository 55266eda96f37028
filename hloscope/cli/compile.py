"""`hloscope compile`: compile a jax function for a TPU topology here, without a TPU, and lint it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import fail


def compile(  # noqa: A001 - the command's name
    target: Annotated[str, typer.Argument(help="The function: path/to/model.py:train_step or package.module:train_step.")],
    topology: Annotated[str, typer.Option("--topology", "-t", help="A TPU topology: v5e:2x2, v5p:2x2x1, v4:2x2x1, v6e:2x2.")] = "v5e:2x2",
    args: Annotated[list[str] | None, typer.Option("--args", help=(
        "One argument's type and shape, in order: 'bf16[8,128]', sharded with '@data,_' (repeatable)."))] = None,
    args_from: Annotated[str | None, typer.Option("--args-from", help=(
        "A function returning the arguments as jax.ShapeDtypeStructs (given the mesh if it takes one)."))] = None,
    mesh: Annotated[str | None, typer.Option("--mesh", help="Mesh axes: 'data:2,model:2' (default: one axis 'x' over all devices).")] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="The folder to write the dump into.")] = Path("hloscope-compile"),
    lint: Annotated[bool, typer.Option("--lint/--no-lint", help="Lint the compiled module when done.")] = True,
) -> None:
    """Compile a jax function for a TPU topology on this machine (jax's deviceless AOT) and
    write XLA's dump of it (HLO before and after optimizations, buffer assignment, memory
    report) with cost_analysis.json and memory_analysis.json into a folder, then lint it.

    Arguments given as unsharded jax.ShapeDtypeStructs are placed on the mesh, replicated; a
    compile that still lands on another backend is refused. A failure (your code, a bad
    topology, libtpu) is one line and your own frames, exit 2. A Pallas kernel compiles like
    any function; give `--mesh x:1` to run it on one chip.

    Needs libtpu: pip install 'hloscope[tpu]'. Exit codes as lint's (0, 1 findings, 2 errors).

    Examples:

      hloscope compile examples/mlp.py:train_step --topology v5e:2x2 --mesh data:4 --args 'bf16[1024,4096]' --args 'bf16[4096,1024]' --args 'bf16[256,1024]@data' --args 'bf16[256,1024]@data' -o out/

      hloscope compile examples/mlp.py:train_step --mesh data:4 --args-from examples/mlp.py:example_args -o out/
    """
    from hloscope.compile import CompileError, have_libtpu, parse_arg, parse_mesh, run_child

    if not have_libtpu():
        fail("error: compiling for TPU needs libtpu: pip install 'hloscope[tpu]' "
             "(libtpu 0.0.42, the version jax 0.10.2 pins)")
    if bool(args) == bool(args_from):
        fail("error: give the arguments with --args (one per argument) or --args-from, not both or neither")
    try:
        for a in args or []:
            parse_arg(a)
        if mesh:
            parse_mesh(mesh, 1 << 30)
    except CompileError as e:
        fail(f"error: {e}")
    typer.echo(f"compiling {target} for {topology}...", err=True)
    try:
        done = run_child({"target": target, "topology": topology, "args": args or [],
                          "args_from": args_from, "mesh": mesh, "out": str(output)})
    except CompileError as e:
        fail(f"error: {e}")
    typer.echo(f"wrote {output}/ (module {done['module']}, {done['devices']} devices, mesh "
               f"{done['mesh']}): XLA's dump, cost_analysis.json, memory_analysis.json", err=True)
    if lint:
        from hloscope.cli.lint import lint as lint_command

        lint_command(_own_modules(output, done["module"]))


def _own_modules(folder, module: str) -> list:
    """The after-optimization text(s) of the function compiled (module `jit_<name>`), not the
    helper programs its argument function compiled (PRNG keys, initialisers); says which
    others the folder holds (their dumps stay there, for `hloscope lint FOLDER`)."""
    from hloscope.dumpdir import scan

    mine, others = [], []
    for m in scan(folder):
        text = m.text()
        if text is None:
            continue
        name = m.name.split(".cl_")[0]  # (jit_step.cl_933746096: the compile's cache key after it)
        (mine if name == module else others).append((name, text))
    if others:
        typer.echo(f"also compiled (not linted): {', '.join(sorted({n for n, _ in others}))}; "
                   f"`hloscope lint {folder}` lints them all", err=True)
    return [text for _, text in mine] or [folder]
