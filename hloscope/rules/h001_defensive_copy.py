"""H001 defensive-copy: a full-buffer copy whose result has its operand's layout, tiling and memory space."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.cost.layout import padded_bytes
from hloscope.ir import Instruction
from hloscope.rules.base import Finding, InstructionRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import (
    copy_io,
    human_bytes,
    human_seconds,
    layout_key,
    loop_trips,
    memory_space,
    moved_cost,
    sharding_annotation,
)
from hloscope.rules.registry import register
from hloscope.stage import AFTER


@register
class DefensiveCopy(InstructionRule):
    """A full-buffer copy whose result has its operand's layout, tiling and memory space."""

    code = "H001"
    name = "defensive-copy"
    severity = Severity.WARNING
    summary = "copy with unchanged layout and memory space: a read+write that buys nothing"
    stages = frozenset({AFTER})  # layouts and copies are XLA's after optimization
    targets = frozenset({"copy", "copy-start"})
    located = True  # (its findings are at the instruction checked)

    class Options(RuleOptions):
        min_bytes: int = 1024  # smaller copies (loop counters) are not worth a finding

    def check(self, instr: Instruction, ctx: RuleContext) -> Iterator[Finding]:
        if sharding_annotation(instr):
            return  # with_sharding_constraint, not a copy
        io = copy_io(instr, ctx)
        if io is None:
            return
        src, dst = io
        if layout_key(src) != layout_key(dst) or memory_space(src) != memory_space(dst):
            return
        nbytes = padded_bytes(dst)
        if nbytes < self.options.min_bytes:
            return
        trips = loop_trips(instr, ctx)
        cost = moved_cost(ctx, 2 * nbytes, trips, instr)
        where = f" in a loop body ({trips} trips)" if trips else (" in a loop body" if trips == 0 else "")
        est = f", ~{human_seconds(cost['est_seconds'])}" if "est_seconds" in cost else ""
        yield self.finding(
            ctx, instr,
            f"%{instr.name} copies {human_bytes(nbytes)} ({dst.text()}) with an unchanged layout "
            f"and memory space{where}{est}",
            evidence={"operand": instr.operands[0], "shape": dst.text(), "bytes": nbytes,
                      "trips": trips},
            cost=cost,
            help=_help(ctx, instr),
        )


def _help(ctx: RuleContext, instr: Instruction) -> str:
    """Advice that knows where the copied value comes from: an input already donated (the
    module's input_output_alias), an input not donated, or a value made in the program."""
    from hloscope.cost.sharing import alias_pairs

    number = _entry_parameter(ctx, instr)
    donated = {n for _, n, _ in alias_pairs(ctx.module.input_output_alias)}
    why = ("Find why XLA needs a second buffer: a value both returned and updated, or a loop "
           "carry that is also read after the loop.")
    if number is None:
        return why + " Restructure so one buffer suffices (return the updated value only)."
    if number in donated:
        return (f"Parameter {number} already aliases an output (input_output_alias): this copy is "
                f"not for want of buffer reuse. " + why + " Return only the updated value (not the "
                "input as well), or read what you need of the input before updating it.")
    return (f"Parameter {number} is not donated: XLA copies it before updating it in place. "
            f"Donate it (donate_argnums) if the caller does not need it afterwards, or " + why[0].lower()
            + why[1:])


def _entry_parameter(ctx: RuleContext, instr: Instruction) -> int | None:
    """The entry parameter number the copied value is (through bitcasts and tuples), if any."""
    comp = ctx.module.entry
    if instr.computation != comp.name:
        return None
    # (each op here has its one operand, defined before it: the parser holds them to that)
    source = comp.by_name[instr.operands[0]]
    while source.opcode in ("bitcast", "copy", "get-tuple-element"):
        source = comp.by_name[source.operands[0]]
    return source.parameter_number if source.opcode == "parameter" else None
