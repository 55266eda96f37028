"""X001 unknown-opcode: an opcode XLA's parser does not know, kept as an opaque instruction."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.ir import Instruction
from hloscope.ir.opcodes import known_opcode
from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.registry import register


@register
class UnknownOpcode(ModuleRule):
    """An opcode the parser does not know (a newer XLA's): one warning per opcode name."""

    code = "X001"
    name = "unknown-opcode"
    severity = Severity.WARNING
    summary = "opcode this hloscope's XLA does not know: kept opaque, its cost and rules unknown"
    include_fused = True

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        found: dict[str, list[Instruction]] = {}
        if all(known_opcode(op) for op in ctx.module.opcodes()):
            return  # (the module's distinct opcodes, asked once each)
        for comp in ctx.module.computations:
            for instr in comp.instructions:
                if not known_opcode(instr.opcode):
                    found.setdefault(instr.opcode, []).append(instr)
        for opcode, instrs in found.items():
            first = instrs[0]
            more = f" and {len(instrs) - 1} more" if len(instrs) > 1 else ""
            yield self.finding(
                ctx, first,
                f"opcode '{opcode}' is not one XLA's parser (jaxlib 0.10.2) knows: %{first.name}"
                f"{more} kept as opaque instruction(s); their cost is unknown and no rule "
                f"reads their semantics",
                evidence={"opcode": opcode, "instructions": [i.name for i in instrs]},
                help="Lint a dump from the XLA version hloscope pins, or check whether a newer "
                     "hloscope knows this opcode; `--strict` rejects it as XLA does.",
            )
