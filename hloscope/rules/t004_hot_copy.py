"""T004 hot-copy: copies and relayouts that take a large share of step time."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import TraceRule, human_seconds
from hloscope.rules.registry import register


@register
class HotCopy(TraceRule):
    """Copies and relayouts that take a large share of step time."""

    code = "T004"
    name = "hot-copy"
    severity = Severity.WARNING
    summary = "copies/relayouts taking more than a share of step time"

    class Options(RuleOptions):
        min_share: float = 0.05

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        in_loops = None
        for instr, s in self.measured(ctx):
            if s.category != "data formatting":
                continue
            share = ctx.trace.share(s)
            if share < self.options.min_share:
                continue
            evidence = {"share": share, "total_seconds": s.total_ns * 1e-9, "count": s.count}
            help = ("See H001/H002 for why the copy exists; remove it at the source (donation, "
                    "matching layouts) rather than making it faster.")
            if _slices(instr, ctx.module):
                in_loops = loop_computations(ctx.module) if in_loops is None else in_loops
                if instr.computation in in_loops:
                    evidence["loop_slice"] = True
                    help = ("The loop slices one element of a stacked array per iteration (a scan "
                            "over layers' weights), and XLA copies each slice. Unrolled "
                            "(jax.lax.scan(..., unroll=True), or a Python loop over the layers), the "
                            "slices are static and their users read them in place.")
            yield self.finding(
                ctx, instr,
                f"%{instr.name} ({instr.opcode}) takes {share * 100:.1f}% of step time: "
                f"{human_seconds(s.total_ns * 1e-9)} over {s.count} run(s)",
                evidence=evidence, help=help,
            )


def _slices(instr, module) -> bool:
    """A dynamic-slice, or a fusion whose root is one."""
    if instr.opcode == "fusion" and instr.called_computations:
        # (a callee the parser found defined, with a root)
        return module.by_name[instr.called_computations[0]].root.opcode == "dynamic-slice"
    return instr.opcode == "dynamic-slice"


def loop_computations(module) -> set[str]:
    """The computations a while loop runs (its condition, its body, and what they call: an
    async slice's wrapped computation, inside the body), transitively."""
    from hloscope.graph.queries import called_instructions

    return {i.computation for w in module.of_opcode("while") for i in called_instructions(module, w)}
