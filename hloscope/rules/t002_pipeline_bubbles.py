"""T002 pipeline-bubbles: idle device time between ops in steady-state steps."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import TraceRule, human_seconds
from hloscope.rules.registry import register


@register
class PipelineBubbles(TraceRule):
    """Idle device time between ops in steady-state steps."""

    code = "T002"
    name = "pipeline-bubbles"
    severity = Severity.WARNING
    summary = "device idle between ops for more than 10% of steady-state step time"

    class Options(RuleOptions):
        max_idle: float = 0.10

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        t = ctx.trace
        if not any(k[0] == ctx.module.name for k in t.stats) or t.idle_fraction <= self.options.max_idle:
            return
        yield self.finding(
            ctx, ctx.module.entry.root,  # (the parser holds every module to an entry with a root)
            f"the device is idle {t.idle_fraction * 100:.0f}% of {t.steps} step(s) "
            f"({human_seconds(t.step_ns * 1e-9)}): gaps between ops, not op time",
            evidence={"idle_fraction": t.idle_fraction, "steps": t.steps,
                      "step_seconds": t.step_ns * 1e-9},
            cost={"measured_seconds": (t.step_ns - t.busy_ns) * 1e-9 / max(t.steps, 1)},
            help="Find what the device waits for: host callbacks, input pipelines, "
                 "synchronous collectives, or many tiny ops with launch overhead.",
        )
