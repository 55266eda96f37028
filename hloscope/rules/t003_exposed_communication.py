"""T003 exposed-communication: async -done ops with measured duration: compute waited for communication."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.cost.category import COLLECTIVE_PREFIXES
from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import TraceRule, human_seconds
from hloscope.rules.registry import register


@register
class ExposedCommunication(TraceRule):
    """Async -done ops with measured duration: compute waited for communication."""

    code = "T003"
    name = "exposed-communication"
    severity = Severity.WARNING
    summary = "async collective -done events that take time: compute waits for them"

    class Options(RuleOptions):
        min_seconds: float = 1e-6

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for instr, s in self.measured(ctx):
            communication = instr.opcode.startswith(COLLECTIVE_PREFIXES) or instr.opcode == "async-done"
            if (not instr.opcode.endswith("-done") or not communication
                    or s.mean_ns * 1e-9 < self.options.min_seconds):
                continue
            yield self.finding(
                ctx, instr,
                f"%{instr.name} waits {human_seconds(s.mean_ns * 1e-9)} per run "
                f"({human_seconds(s.total_ns * 1e-9)} over {s.count}): the transfer is not hidden",
                evidence={"mean_seconds": s.mean_ns * 1e-9, "count": s.count},
                help="Schedule more independent compute between start and done (H008), or make "
                     "the transfer smaller (shard differently, reduce in lower precision).",
            )
