"""`hloscope diff A B`: what changed between two compiles (or two profiles) of a program."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import (
    AutoChipOpt,
    Format,
    FormatOpt,
    NoCacheOpt,
    chip,
    emit,
    fail,
    use_cache,
)

_PROFILE_SUFFIXES = (".xplane.pb", ".trace.json.gz", ".trace.json")


def _is_profile(p: Path) -> bool:
    return p.name.endswith(_PROFILE_SUFFIXES) or (p.is_dir() and (p / "plugins" / "profile").is_dir())


def diff(
    a: Annotated[Path, typer.Argument(help="The before: an HLO file, an --xla_dump_to folder, or a profile.")],
    b: Annotated[Path, typer.Argument(help="The after, of the same kind.")],
    chip_name: AutoChipOpt = None,
    fail_if: Annotated[list[str] | None, typer.Option("--fail-if", help=(
        "Exit 1 when B regresses past a threshold: METRIC>+N% or METRIC>+N, METRIC one of "
        "step_time, flops, bytes, hbm_peak, exposed, mfu, findings (repeatable)."))] = None,
    format: FormatOpt = Format.text,
    no_cache: NoCacheOpt = False,
) -> None:
    """Compare two compiles of a program: FLOPs, bytes and static time per op category, the
    step estimate and exposed communication, static peak HBM, ops added/removed/changed,
    collectives, findings new and fixed. Two profiles: measured time per module and op.

    Exit codes: 0, 1 when a --fail-if gate trips, 2 on bad input.

    Examples:

      hloscope diff fixtures/rules/H010/bf16_matmul_v5e.hlo.txt fixtures/rules/H010/f32_matmul_v5e.hlo.txt

      hloscope diff before/ after/ --fail-if 'step_time>+3%' --fail-if 'findings>+0'
    """
    from hloscope.diff import Gate

    try:
        gates = [Gate.parse(g) for g in fail_if or []]
    except ValueError as e:
        fail(f"error: {e}")
    if chip_name:
        chip(chip_name)
    use_cache(no_cache)
    from hloscope.parser.load import digest_structures

    digest_structures()  # (its cost model then costs an unrolled model's repeated fusions once)
    if _is_profile(a) != _is_profile(b):
        fail(f"error: compare like with like: {a if _is_profile(a) else b} is a profile, the other is not")
    if _is_profile(a):
        if gates:
            fail("error: --fail-if gates read compiles; two profiles compare measured times only")
        _profiles(a, b, format)
        return
    _compiles(a, b, chip_name, gates, format)


def _load(path: Path) -> list:
    from hloscope.cli.common import load_file
    from hloscope.paths import LintError, expand

    try:
        files = expand([path])
    except LintError as e:
        fail(f"error: {e}")
    return [m for f in files for m in load_file(f)]


def _compiles(a: Path, b: Path, chip_name: str | None, gates: list, format: Format) -> None:
    from hloscope.cost.resolve import chip_for
    from hloscope.diff import Pair, apply_gates, pair_modules, side
    from hloscope.lint import LintOptions, lint_files
    from hloscope.report.diff import diff_text

    ma, mb = _load(a), _load(b)
    matched, notes = pair_modules(ma, mb)
    if not matched:
        fail(f"error: no module of {a} matches one of {b} by name ({'; '.join(notes)})")
    fa = lint_files([a], LintOptions(chip=chip_name)).findings
    fb = lint_files([b], LintOptions(chip=chip_name)).findings
    pairs = []
    for x, y in matched:
        spec, _ = chip_for(y, chip_name)
        pairs.append(Pair(side(x, spec, fa), side(y, spec, fb)))
    tripped = apply_gates(pairs, gates)
    record = {"version": 1, "a": str(a), "b": str(b), "pairs": [p.to_dict() for p in pairs],
              "notes": notes, "tripped": tripped}
    emit(format, lambda: record, lambda: diff_text(record))
    if tripped:
        raise typer.Exit(1)


def _profiles(a: Path, b: Path, format: Format) -> None:
    from hloscope.report.diff import profile_diff_text
    from hloscope.trace import TraceError, load_profile
    from hloscope.trace.report import raw_ops

    try:
        pa, pb = load_profile(a), load_profile(b)
    except TraceError as e:
        fail(str(e))
    ops_a = {(r["module"], r["hlo_op"]): r for r in raw_ops(pa)}
    ops_b = {(r["module"], r["hlo_op"]): r for r in raw_ops(pb)}
    rows = []
    for key in set(ops_a) | set(ops_b):
        ta = ops_a.get(key, {}).get("total_seconds", 0.0)
        tb = ops_b.get(key, {}).get("total_seconds", 0.0)
        rows.append({"module": key[0], "hlo_op": key[1], "a": ta, "b": tb, "delta": tb - ta,
                     "count_a": ops_a.get(key, {}).get("count", 0), "count_b": ops_b.get(key, {}).get("count", 0)})
    rows.sort(key=lambda r: -abs(r["delta"]))
    modules: dict[str, dict] = {}
    for r in rows:
        m = modules.setdefault(r["module"], {"a": 0.0, "b": 0.0})
        m["a"] += r["a"]
        m["b"] += r["b"]
    record = {"version": 1, "a": str(a), "b": str(b), "modules": modules, "ops": rows}
    emit(format, lambda: record, lambda: profile_diff_text(record))
