"""Trace rules (T001-T004): need `lint --trace`; skipped with a note without one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hloscope.cost.category import COLLECTIVE_PREFIXES
from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.registry import register
from hloscope.rules.util import human_seconds


class TraceRule(ModuleRule):
    requires = frozenset({"trace"})

    def measured(self, ctx: RuleContext):
        """(instruction, stats) for this module's instructions seen in the trace."""
        for instr in ctx.module.instructions():
            s = ctx.trace.stats.get((ctx.module.name, instr.name))
            if s is not None:
                yield instr, s


@register
class RooflineGap(TraceRule):
    """An op whose measured time exceeds its roofline bound by a ratio."""

    code = "T001"
    name = "roofline-gap"
    severity = Severity.WARNING
    summary = "measured time far above the op's roofline bound (compute or memory)"

    @dataclass(frozen=True)
    class Options:
        ratio: float = 3.0
        min_seconds: float = 10e-6

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        if ctx.chip is None:
            return
        for instr, s in self.measured(ctx):
            if s.category == "control flow":
                continue  # its time is its body's ops, measured on their own
            c = ctx.model.cost(instr)
            bound = max(c.flops / ctx.chip.peak_bf16_flops, c.hbm_bytes / ctx.chip.hbm_bandwidth)
            mean = s.mean_ns * 1e-9
            if mean < self.options.min_seconds or bound <= 0 or mean < self.options.ratio * bound:
                continue
            yield self.finding(
                ctx, instr,
                f"%{instr.name} takes {human_seconds(mean)} per run, {mean / bound:.1f}x its "
                f"roofline bound of {human_seconds(bound)} on {ctx.chip.name}",
                evidence={"mean_seconds": mean, "roofline_seconds": bound, "flops": c.flops,
                          "hbm_bytes": c.hbm_bytes},
                cost={"est_seconds": (mean - bound) * s.count},
                help="Look at what the roofline does not see: padding (H003), relayouts (H002), "
                     "poor MXU shapes (H005), or an op the compiler could not fuse.",
            )


@register
class PipelineBubbles(TraceRule):
    """Idle device time between ops in steady-state steps."""

    code = "T002"
    name = "pipeline-bubbles"
    severity = Severity.WARNING
    summary = "device idle between ops for more than 10% of steady-state step time"

    @dataclass(frozen=True)
    class Options:
        max_idle: float = 0.10

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        t = ctx.trace
        if not any(k[0] == ctx.module.name for k in t.stats) or t.idle_fraction <= self.options.max_idle:
            return
        root = ctx.module.entry.root if ctx.module.entry else None
        if root is None:
            return
        yield self.finding(
            ctx, root,
            f"the device is idle {t.idle_fraction * 100:.0f}% of {t.steps} step(s) "
            f"({human_seconds(t.step_ns * 1e-9)}): gaps between ops, not op time",
            evidence={"idle_fraction": t.idle_fraction, "steps": t.steps,
                      "step_seconds": t.step_ns * 1e-9},
            cost={"measured_seconds": (t.step_ns - t.busy_ns) * 1e-9 / max(t.steps, 1)},
            help="Find what the device waits for: host callbacks, input pipelines, "
                 "synchronous collectives, or many tiny ops with launch overhead.",
        )


@register
class ExposedCommunication(TraceRule):
    """Async -done ops with measured duration: compute waited for communication."""

    code = "T003"
    name = "exposed-communication"
    severity = Severity.WARNING
    summary = "async collective -done events that take time: compute waits for them"

    @dataclass(frozen=True)
    class Options:
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
