"""H008 exposed-collective: a synchronous collective, or an async pair with no compute between start and done."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from hloscope.rules.base import Finding, ModuleRule, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import collective_instruction, human_bytes, ici_time
from hloscope.rules.registry import register


@register
class ExposedCollective(ModuleRule):
    """A synchronous collective, or an async pair with no compute between start and done."""

    code = "H008"
    name = "exposed-collective"
    severity = Severity.WARNING
    summary = "collective that no compute overlaps: synchronous, or start/done back to back"

    class Options(RuleOptions):
        min_bytes: int = 256 << 10  # bytes moved per device

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        if not ctx.stage.optimized:
            yield from self._not_scheduled_yet(ctx)
            return
        for c in ctx.collectives:
            if c.moved_bytes < self.options.min_bytes:
                continue
            if c.is_async and c.done is not None and c.overlap_instructions > 0:
                continue  # (a start whose done is not in its computation: nothing is seen to hide it)
            how = ("is synchronous: the chip waits for it" if not c.is_async else
                   f"has nothing scheduled between it and %{c.done}" if c.done is not None else
                   f"has no done in %{c.computation}: nothing is seen to overlap it")
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

    def _not_scheduled_yet(self, ctx: RuleContext) -> Iterator[Finding]:
        """Before optimization XLA has not made collectives async: one note, not one each."""
        big = [c for c in ctx.collectives if c.moved_bytes >= self.options.min_bytes]
        if not big:
            return
        finding = self.finding(
            ctx, collective_instruction(ctx, big[0]),
            f"{ctx.stage.name} module: its {len(big)} collective(s) are not scheduled yet "
            f"(XLA makes them async and overlaps them later); lint the after_optimizations "
            f"dump to see which stay exposed",
            evidence={"collectives": len(big), "stage": ctx.stage.name},
            help="Dump the optimized module: XLA_FLAGS=--xla_dump_to=DIR, then lint "
                 "DIR/*after_optimizations.txt.")
        yield replace(finding, severity=Severity.INFO)
