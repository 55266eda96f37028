"""Performance budgets in your own test suite: compile a function for a TPU topology here
(deviceless, as `hloscope compile` does) or take what jax compiled, then assert budgets —
step time, HBM peak, FLOPs, bytes — and findings: none of these codes, nothing new against a
baseline file. A failed budget raises AssertionError with the numbers and findings, which
pytest prints as they are.

    import hloscope.testing as ht

    def test_train_step_budget():
        program = ht.compile_tpu(train_step, example_args, topology="v5e:2x2", mesh={"data": 4})
        ht.assert_budget(program, step_time="2 ms", hbm="12 GiB")
        ht.assert_no_findings(program, ["H001", "H002"])
        ht.assert_no_new_findings(program, "tests/hloscope-baseline.json")
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hloscope.api import Program, load
from hloscope.units import human_bytes, human_seconds

_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9,
          "b": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
          "kib": 2.0**10, "mib": 2.0**20, "gib": 2.0**30, "tib": 2.0**40,
          "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15, "flops": 1.0, "gflops": 1e9, "tflops": 1e12}
_AMOUNT = re.compile(r"^\s*([0-9.]+(?:e[+-]?\d+)?)\s*([a-zµ]*)\s*$", re.I)


def amount(value: float | int | str) -> float:
    """A budget: a number (seconds, bytes, FLOPs) or text with a unit: '2 ms', '12 GiB', '3e12'."""
    if isinstance(value, (int, float)):
        return float(value)
    m = _AMOUNT.match(str(value))
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"budget {value!r}: a number, or a number and a unit "
                         f"(s, ms, us, B, KiB, MiB, GiB, GB, T, ...)")
    return float(m.group(1)) * _UNITS[m.group(2).lower()]


def compile_tpu(fn, args: Any, topology: str = "v5e:2x2", mesh: dict[str, int] | None = None,
                **jit_kwargs) -> Program:
    """`fn` compiled for a TPU topology on this machine (needs libtpu: pip install
    'hloscope[tpu]'). `args`: jax.ShapeDtypeStructs (a tuple), or a function of the mesh
    returning them; ones without a sharding are placed on the mesh, replicated. `mesh`: axis
    name -> size (default: one axis `x` over every device)."""
    import os

    # deviceless: no TPU to find, and other processes (a test run's workers, hloscope
    # compile) may hold libtpu's lock; as `hloscope compile`'s child sets them
    os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")
    os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
    try:
        import jax
        from jax.experimental import topologies
    except ImportError:
        raise ImportError("compile_tpu needs jax, jaxlib and libtpu: pip install 'hloscope[tpu]'") from None

    from hloscope.compile import check_platform, mesh_of, on_mesh

    topo = topologies.get_topology_desc(topology_name=topology, platform="tpu")
    axes = mesh or {"x": len(topo.devices)}
    where = mesh_of(topo, tuple(axes.values()), tuple(axes))
    made = args(where) if callable(args) else args
    made = on_mesh(tuple(made) if isinstance(made, (list, tuple)) else (made,), where)
    compiled = jax.jit(fn, **jit_kwargs).lower(*made).compile()
    check_platform(compiled, topology)
    from hloscope.compile import chip_of_topology

    return Program(load(compiled).module, default_chip=chip_of_topology(topology))


def program_of(source) -> Program:
    """A Program from what you have: a Program, a jax Compiled/Lowered, HLO text or a path."""
    return source if isinstance(source, Program) else load(source)


def measure(source, chip: str | None = None) -> dict[str, float]:
    """The figures budgets are held to: step_time (s), hbm (bytes: XLA's static peak), flops
    and bytes (per step, loop trips counted), with the chip they were taken on."""
    program = program_of(source)
    step = program.step_time(chip)
    report = program.roofline(chip)
    return {"step_time": step.step_seconds, "hbm": float(program.memory(chip).hbm_bytes),
            "flops": float(report.totals.flops), "bytes": float(report.totals.bytes),
            "mfu": step.mfu or 0.0, "chip": program.chip(chip).chip.name}


def assert_budget(source, chip: str | None = None, *, step_time=None, hbm=None, flops=None,
                  bytes=None) -> dict[str, float]:  # noqa: A002 - the figure's name
    """Raise AssertionError when a figure is over its budget (None: not checked); the
    message lists every figure against its budget. Returns the figures."""
    figures = measure(source, chip)
    budgets = {"step_time": step_time, "hbm": hbm, "flops": flops, "bytes": bytes}
    lines, over = [], False
    for name, budget in budgets.items():
        if budget is None:
            continue
        limit = amount(budget)
        value = figures[name]
        bad = value > limit
        over |= bad
        lines.append(f"  {name:9} {_fmt(name, value):>12} {'>' if bad else '<='} budget "
                     f"{_fmt(name, limit):>12}{'  OVER by ' + f'{(value / limit - 1) * 100:.1f}%' if bad else ''}")
    if over:
        name = program_of(source).name
        raise AssertionError(f"hloscope budget exceeded for {name} on {figures['chip']} "
                             f"(MFU {figures['mfu'] * 100:.1f}%):\n" + "\n".join(lines))
    return figures


def _fmt(name: str, v: float) -> str:
    if name == "step_time":
        return human_seconds(v, 3)
    if name in ("hbm", "bytes"):
        return human_bytes(v, 2)
    return f"{v:.4g}"


def _lines(findings) -> str:
    return "\n".join(f"  {f.code} {f.line}:{f.column} %{f.instruction}: {f.message}" for f in findings)


def assert_no_findings(source, codes: list[str] | None = None, chip: str | None = None) -> None:
    """Raise AssertionError listing the findings of these rule codes (prefixes like "H0"
    select several; None: every rule)."""
    program = program_of(source)
    report = program.lint(select=codes, chip=chip or program.default_chip)
    if len(report):
        raise AssertionError(f"{len(report)} hloscope finding(s) on {program.name}:\n{_lines(report)}")


def assert_no_new_findings(source, baseline: str | Path, chip: str | None = None,
                           codes: list[str] | None = None, update: bool = False) -> None:
    """Raise AssertionError listing findings that are not in the baseline file (a lint
    baseline: `hloscope lint --write-baseline`). A missing file, or update=True, writes the
    current findings as the baseline (the test then passes: commit the file)."""
    from hloscope.rules.baseline import apply_baseline, read_baseline, write_baseline

    program = program_of(source)
    report = program.lint(select=codes, chip=chip or program.default_chip)
    path = Path(baseline)
    if update or not path.exists():
        write_baseline(path, list(report))
        return
    new, _ = apply_baseline(list(report), read_baseline(path))
    if new:
        raise AssertionError(f"{len(new)} new hloscope finding(s) on {program.name} against "
                             f"{path}:\n{_lines(new)}")
