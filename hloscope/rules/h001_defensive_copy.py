"""H001 defensive-copy: a full-buffer copy whose result has its operand's layout, tiling and memory space."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hloscope.cost.layout import padded_bytes
from hloscope.ir import Instruction
from hloscope.rules.base import Finding, InstructionRule, RuleContext, Severity
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

    @dataclass(frozen=True)
    class Options:
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
        cost = moved_cost(ctx, 2 * nbytes, trips)
        where = f" in a loop body ({trips} trips)" if trips else (" in a loop body" if trips == 0 else "")
        est = f", ~{human_seconds(cost['est_seconds'])}" if "est_seconds" in cost else ""
        yield self.finding(
            ctx, instr,
            f"%{instr.name} copies {human_bytes(nbytes)} ({dst.text()}) with an unchanged layout "
            f"and memory space{where}{est}",
            evidence={"operand": instr.operands[0], "shape": dst.text(), "bytes": nbytes,
                      "trips": trips},
            cost=cost,
            help="Find why XLA needs a second buffer: a value both returned and updated, a loop "
                 "carry that is also read after the loop, or a non-donated input that is "
                 "updated in place. Donate the input (donate_argnums) or restructure so one "
                 "buffer suffices.",
        )
