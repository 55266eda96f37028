"""Rules and findings: the plain data the engine passes around."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from hloscope.resources import rule_docs_dir
from hloscope.rules.options import RuleOptions, option_names
from hloscope.stage import AFTER, BEFORE, Stage, detect_stage

if TYPE_CHECKING:  # (a lint answered from the cache unpickles findings and loads no IR)
    from hloscope.cost.chips import Chip
    from hloscope.cost.ops import CostModel
    from hloscope.ir import Computation, Instruction, Module


MATMUL = frozenset({"dot", "convolution"})


class Severity(IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}; use error, warning or info") from None

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Finding:
    """One problem at one instruction. `fingerprint` names the pattern, not the place: the
    code, the instruction's opcode and shapes, and its source line (or op_name with layer
    numbers taken out), never instruction numbers or lines, which change on every compile;
    findings with equal fingerprints are one group (a repeated layer), shown once."""

    code: str
    name: str
    severity: Severity
    message: str
    file: str
    line: int
    column: int
    module: str
    computation: str
    instruction: str
    evidence: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    cost: dict[str, float] = field(default_factory=dict, compare=False, hash=False)
    help: str = ""
    fingerprint: str = field(default="", compare=False)
    source: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)  # Source.to_dict

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.code, self.module, self.computation, self.instruction)

    @property
    def sort_cost(self) -> float:
        """Measured seconds first, then estimated seconds, then bytes wasted."""
        c = self.cost
        return c.get("measured_seconds") or c.get("est_seconds") or c.get("bytes_wasted", 0) * 1e-12

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code, "name": self.name, "severity": str(self.severity),
            "message": self.message, "file": self.file, "line": self.line,
            "column": self.column, "module": self.module, "computation": self.computation,
            "instruction": self.instruction, "evidence": self.evidence, "cost": self.cost,
            "help": self.help, "group": self.group, "source": self.source,
        }

    @property
    def group(self) -> str:
        """The id of the finding's group (findings of one pattern)."""
        return self.fingerprint[:16]


class RuleContext:
    """What a rule may look at: the module, the cost model, the chip, the trace, the flags."""

    def __init__(self, module: Module, chip: Chip | None = None,
                 trace=None, stage: Stage | None = None, flags: str | None = None,
                 assumed_chip: Chip | None = None) -> None:
        self.module = module
        self.chip = chip  # asked for, recorded beside the module, or shown by it
        # no chip known: the one assumed (hloscope.cost.resolve), for figures said to rest on
        # it, never for a verdict
        self.assumed_chip = assumed_chip
        self.trace = trace  # hloscope.trace.TraceIndex when linting with --trace
        self.stage = stage if stage is not None else detect_stage(module)
        self.given_flags = flags  # lint --flags: XLA_FLAGS / LIBTPU_INIT_ARGS text

    @cached_property
    def flags(self) -> tuple[dict[str, str], list[str]]:
        """(compiler flags, where they were read): XLA's flag files beside the module in its
        dump folder, then --flags over them; ({}, []) when nothing says."""
        from hloscope.flags import flags_for

        return flags_for(self.module.path, self.given_flags)

    @cached_property
    def model(self) -> CostModel:
        from hloscope.cost.ops import CostModel

        return CostModel(self.module)

    @cached_property
    def fused(self) -> set[str]:
        return self.module.fusion_computations()

    @cached_property
    def platform(self) -> str:
        """"tpu", "gpu" or "cpu": the chip's (known or assumed), else what the module shows."""
        chip = self.chip or self.assumed_chip
        if chip is not None:
            return chip.platform
        from hloscope.cost.chips import platform_of

        return platform_of(self.module) or "tpu"

    @cached_property
    def is_tpu(self) -> bool:
        """TPU output: the chip says so, or the layouts carry TPU tiles."""
        if self.chip is not None:
            return self.chip.key.startswith("tpu")
        from hloscope.cost.layout import has_tiled_layouts

        return has_tiled_layouts(self.module)

    def users(self, instr: Instruction) -> list[Instruction]:
        """Its users in its computation (Computation.users: built once, shared)."""
        return self.module.by_name[instr.computation].users().get(instr.name, [])

    @cached_property
    def loop_trips(self) -> dict[str, int]:
        """Trip count of each while body computation, by name (0: the loop states none)."""
        out: dict[str, int] = {}
        for instr in self.module.of_opcode("while"):
            body = instr.attr("body")
            if body is not None and body not in out:
                out[body] = self.model.trip_count(instr) or 0
        return out

    @cached_property
    def matmul_computations(self) -> frozenset[str]:
        """Computations that hold a dot or convolution."""
        return frozenset([i.computation for op in MATMUL for i in self.module.of_opcode(op)])

    @cached_property
    def collectives(self) -> list:
        """The module's collectives (hloscope.sharding.analyze), analysed once."""
        from hloscope.ir.opcodes import MAY_BE_COLLECTIVE

        if self.module.opcodes().isdisjoint(MAY_BE_COLLECTIVE):
            return []  # (none: the analysis is not even imported)
        from hloscope.sharding import analyze

        return analyze(self.module, self.chip)[1]

    undecoded: list = []  # Mosaic kernels that could not be decoded (set by `kernels`)

    @cached_property
    def kernels(self) -> list:
        """The module's decoded custom-call kernels that have a summary."""
        # (only a Mosaic body decodes to a summary: with no tpu_custom_call, say a GPU
        # dump's cuDNN and TransformerEngine calls, the MLIR machinery is not even imported)
        if not any(i.may_contain("tpu_custom_call") for i in self.module.of_opcode("custom-call")):
            return []
        from hloscope.mlir.kernels import kernels

        found = kernels(self.module, self.model.operand_shapes)
        self.undecoded = [k for k in found if k.summary is None and k.target == "tpu_custom_call"]
        return [k for k in found if k.summary is not None]

    def computation(self, instr: Instruction) -> Computation:
        return self.module[instr.computation]

    def operand(self, instr: Instruction, index: int) -> Instruction | None:
        comp = self.computation(instr)
        name = instr.operands[index] if index < len(instr.operands) else None
        return comp.by_name.get(name) if name else None


class Rule:
    """A rule: metadata, options, and a check. Subclass InstructionRule or ModuleRule."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    summary: ClassVar[str] = ""
    requires: ClassVar[frozenset[str]] = frozenset()
    include_fused: ClassVar[bool] = False
    # The compile stages the rule's pattern means something in (hloscope.stage); in the
    # others it is a compiler artifact and the rule is skipped, with a note.
    stages: ClassVar[frozenset[str]] = frozenset({BEFORE, AFTER})

    class Options(RuleOptions):
        pass

    def __init__(self, options: Any = None) -> None:
        self.options = options if options is not None else self.Options()

    @classmethod
    def make_options(cls, values: dict[str, Any]) -> Any:
        """Options from a config table; unknown keys are an error, not ignored."""
        known = set(option_names(cls.Options))
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"{cls.code} ({cls.name}) has no option(s) {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(sorted(known)) or 'none'}")
        return cls.Options(**values)

    @classmethod
    def doc(cls) -> str:
        return rule_doc(cls.code, cls.name)

    def finding(self, ctx: RuleContext, instr: Instruction, message: str, *,
                evidence: dict[str, Any] | None = None, cost: dict[str, float] | None = None,
                help: str = "", severity: Severity | None = None) -> Finding:
        """A finding of this rule at `instr` (of the rule's severity unless `severity`)."""
        return Finding(
            code=self.code, name=self.name, message=message,
            severity=self.severity if severity is None else severity,
            file=ctx.module.path, line=instr.line, column=instr.column, module=ctx.module.name,
            computation=instr.computation, instruction=instr.name, evidence=evidence or {},
            cost=cost or {}, help=help,
        )


class InstructionRule(Rule):
    """Checked on every instruction whose opcode is in `targets`."""

    targets: ClassVar[frozenset[str]] = frozenset()
    # Its findings are all at the instruction it checks: a run that needs only some
    # instructions' findings (`graph --around`'s overlay) checks only those. hloscope's own
    # rules say so (held to it on every rule fixture); a plug-in is checked everywhere.
    located: ClassVar[bool] = False

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        raise NotImplementedError


class ModuleRule(Rule):
    """Checked once per module."""

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        raise NotImplementedError


def rule_doc(code: str, name: str) -> str:
    path = rule_docs_dir() / f"{code}-{name}.md"
    return path.read_text(encoding="utf-8") if path.is_file() else f"# {code} {name}\n\n(no documentation)\n"
