"""T004 hot-copy: copies and relayouts that take a large share of step time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.helpers import TraceRule, human_seconds
from hloscope.rules.registry import register


@register
class HotCopy(TraceRule):
    """Copies and relayouts that take a large share of step time."""

    code = "T004"
    name = "hot-copy"
    severity = Severity.WARNING
    summary = "copies/relayouts taking more than a share of step time"

    @dataclass(frozen=True)
    class Options:
        min_share: float = 0.05

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for instr, s in self.measured(ctx):
            if s.category != "data formatting":
                continue
            share = ctx.trace.share(s)
            if share < self.options.min_share:
                continue
            yield self.finding(
                ctx, instr,
                f"%{instr.name} ({instr.opcode}) takes {share * 100:.1f}% of step time: "
                f"{human_seconds(s.total_ns * 1e-9)} over {s.count} run(s)",
                evidence={"share": share, "total_seconds": s.total_ns * 1e-9, "count": s.count},
                help="See H001/H002 for why the copy exists; remove it at the source (donation, "
                     "matching layouts) rather than making it faster.",
            )
