"""H008 exposed-collective: a synchronous collective, or an async pair with no compute between start and done."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.helpers import collective_instruction, human_bytes, ici_time
from hloscope.rules.registry import register


@register
class ExposedCollective(ModuleRule):
    """A synchronous collective, or an async pair with no compute between start and done."""

    code = "H008"
    name = "exposed-collective"
    severity = Severity.WARNING
    summary = "collective that no compute overlaps: synchronous, or start/done back to back"

    @dataclass(frozen=True)
    class Options:
        min_bytes: int = 256 << 10  # bytes moved per device

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for c in ctx.collectives:
            if c.moved_bytes < self.options.min_bytes:
                continue
            if c.is_async and (c.done is None or c.overlap_instructions > 0):
                continue
            how = ("is synchronous: the chip waits for it" if not c.is_async else
                   f"has nothing scheduled between it and %{c.done}")
            cost = {"est_seconds": c.est_seconds} if c.est_seconds else {}
            yield self.finding(
                ctx, collective_instruction(ctx, c),
                f"%{c.instruction} ({c.opcode}, {human_bytes(c.moved_bytes)} moved per device "
                f"over {c.axis}) {how}{ici_time(c)}",
                evidence={"opcode": c.opcode, "async": c.is_async, "moved_bytes": c.moved_bytes,
                          "axis": c.axis, "overlap_instructions": c.overlap_instructions},
                cost=cost,
                help="Give the scheduler independent work to overlap: split the computation "
                     "into chunks (collective matmul), start the next layer's gather early, "
                     "or return independent results separately so they can run in between.",
            )
