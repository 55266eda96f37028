"""The public Python API, for notebooks and scripts (what `import hloscope` offers):

    import hloscope
    m = hloscope.load("module.hlo.txt")       # also HLO text, or a jax Compiled/Lowered
    m.stats(); m.roofline(); m.lint(select=["H0"]); m.kernels(); m.graph()
    hloscope.load_profile("trace_dir/").join(m)

Results are plain dataclasses with to_dict(), the same objects the CLI's JSON is built from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hloscope.ir import Module


def _text_of(source: Any) -> tuple[str | None, str]:
    """(HLO text or None for a path, a name for messages) of what load() was given."""
    if isinstance(source, Path):
        return None, str(source)
    if isinstance(source, str):
        if "\n" in source or source.lstrip().startswith("HloModule"):
            return source, "<string>"
        return None, source
    as_text = getattr(source, "as_text", None)
    if callable(as_text):  # jax.stages.Compiled; a Lowered prints StableHLO: compile it
        if callable(getattr(source, "compile", None)):
            source = source.compile()
        return source.as_text(), f"<{type(source).__name__}>"
    raise TypeError(f"hloscope.load takes a path, HLO text or a jax Compiled/Lowered object, "
                    f"not {type(source).__name__}")


def load_all(source: Any, strict: bool = False, module: str | None = None) -> list[Program]:
    """Every module of a file (`.gz` too; "-" reads standard input), a directory or
    --xla_dump_to folder (each module's after-optimizations text), HLO text or a jax object;
    `module` (a name or id, module_0021 or 21) keeps that one."""
    from hloscope.parser import load as load_file
    from hloscope.parser import parse
    from hloscope.parser.load import digest_structures
    from hloscope.paths import expand, pick_modules

    digest_structures()  # (a program's roofline and step time cost repeated fusions once)

    text, name = _text_of(source)
    if text is not None:
        modules = parse(text, name, strict=strict)
    else:
        modules = [m for path in expand([name]) for m in load_file(path, strict=strict)]
    return [Program(m) for m in pick_modules(modules, module, name)]


def load(source: Any, strict: bool = False, module: str | None = None) -> Program:
    """The one module of a file, folder, HLO text, or jax Compiled/Lowered object (whose
    `as_text()` after compilation is the HLO); `module` picks one of several. Raises
    hloscope.ParseError on bad input, ValueError when there are several to pick from."""
    programs = load_all(source, strict, module)
    if len(programs) != 1:
        names = ", ".join(p.name for p in programs[:8])
        raise ValueError(f"{len(programs)} modules in the input ({names}); pick one with "
                         f"module=NAME or ID, or use hloscope.load_all")
    return programs[0]


@dataclass
class Program:
    """One HLO module and the analyses on it."""

    module: Module
    default_chip: str | None = None  # the chip it was compiled for, when known (hloscope.testing)

    @property
    def name(self) -> str:
        return self.module.name

    def stats(self, per_computation: bool = True):
        """Opcode, fusion-kind and custom-call counts and memory facts (ModuleStats)."""
        from hloscope.stats import stats

        return stats(self.module, per_computation)

    def chip(self, chip: str | None = None):
        """The chip this program is costed on and how it was chosen (cost.resolve.ChipChoice:
        the one asked for, the dump folder's record, what the module shows, or an assumed one),
        the same choice the CLI makes."""
        from hloscope.cost.resolve import resolve_chip

        return resolve_chip(self.module, chip or self.default_chip)

    def roofline(self, chip: str | None = None, trip_counts: bool = True):
        """Per-instruction FLOPs, bytes and roofline time on a chip (cost.roofline.Report;
        chip: a name from the table, else chosen as `chip()` says)."""
        from hloscope.cost.roofline import roofline
        from hloscope.mlir.cost import body_costs

        return roofline(self.module, self.chip(chip).chip, trip_counts=trip_counts,
                        kernel_costs=body_costs(self.module))

    def breakdown(self, by: str = "layer", chip: str | None = None) -> dict:
        """The roofline time added up by JAX named scope, layer, source line or pass
        (forward/backward): {"by", "total", "groups": [{"key", "seconds", "share", ...}]}
        (hloscope.cost.aggregate), as `hloscope roofline --by` prints it."""
        from hloscope.cost.aggregate import breakdown

        return breakdown(self.module, self.roofline(chip), by)

    def step_time(self, chip: str | None = None, trip_counts: bool = True):
        """The step estimate: roofline time of every op plus the communication compute does
        not hide, exposed communication and MFU (sharding.step.StepTime)."""
        from hloscope.sharding.step import estimate

        spec = self.chip(chip).chip
        return estimate(self.module, spec, self.roofline(spec.key, trip_counts))

    def lint(self, select: list[str] | None = None, ignore: list[str] | None = None,
             chip: str | None = None, trace: Trace | None = None):
        """Findings of the selected rules (a LintReport: .findings, .notes, to_dict())."""
        from hloscope.lint import LintOptions, lint_modules

        opts = LintOptions(select=select, ignore=list(ignore or []), chip=chip or self.default_chip)
        return lint_modules([self.module], opts,
                            trace=trace.join(self) if trace is not None else None)

    def kernels(self) -> list:
        """Decoded custom-call kernels (Pallas/Mosaic bodies, grid, blocks, VMEM)."""
        from hloscope.mlir.kernels import kernels

        return kernels(self.module)

    def memory(self, chip: str | None = None):
        """The static HBM peak over the schedule (cost.liveness.MemoryReport: arguments,
        outputs, aliases, peak temporaries and what is live at the peak), as XLA's
        memory_analysis counts it."""
        from hloscope.cost.liveness import memory

        return memory(self.module, chip=self.chip(chip).chip)

    def sharding(self, chip: str | None = None):
        """The module's mesh and collectives (sharding.Sharding; unpacks as `mesh,
        collectives`): groups, axes, bytes, link time."""
        from hloscope.sharding import analyze

        return analyze(self.module, self.chip(chip).chip)

    def graph(self):
        """The instruction graph (a networkx MultiDiGraph; see hloscope.graph)."""
        from hloscope.graph import build_graph

        return build_graph(self.module)

    def __repr__(self) -> str:
        return f"<hloscope.Program {self.module.name} ({len(self.module.computations)} computations)>"

    def _repr_html_(self) -> str:
        from hloscope.stage import detect_stage
        from hloscope.units import html_table

        m = self.module
        choice = self.chip()
        rows = [["file", m.path], ["computations", len(m.computations)],
                ["instructions", sum(len(c.instructions) for c in m.computations)],
                ["stage", detect_stage(m).name], ["chip", f"{choice.chip.name} ({choice.source})"]]
        return html_table(f"hloscope.Program {m.name}", ["", ""], rows)


@dataclass
class Trace:
    """A loaded profile (jax.profiler output, XProf hlo_stats JSON)."""

    profile: Any

    def join(self, program: Program | Module):
        """Measured statistics per instruction of the program (trace.TraceIndex)."""
        from hloscope.trace import join

        module = program.module if isinstance(program, Program) else program
        return join(self.profile, [module])


def load_profile(path: str | Path) -> Trace:
    """A profile: a directory of jax.profiler output, *.xplane.pb, *.trace.json.gz, or
    XProf hlo_stats JSON. Raises hloscope.trace.TraceError on bad input."""
    from hloscope.trace import load_profile as load_trace

    return Trace(load_trace(path))
