"""T005 kernel-dma-bound: a measured kernel that spends a large share of its time waiting on DMA."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import TraceRule, human_seconds
from hloscope.rules.registry import register


@register
class KernelDmaBound(TraceRule):
    """A kernel whose TraceMe regions show it waiting on DMA for much of its time."""

    code = "T005"
    name = "kernel-dma-bound"
    severity = Severity.WARNING
    summary = "a measured Pallas kernel blocked on DMA waits for a large share of its time"

    class Options(RuleOptions):
        min_wait_share: float = 0.3
        min_seconds: float = 10e-6  # kernels shorter than this in all are left alone

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        for instr, view in self.kernel_views(ctx):
            wait = view.share("dma wait")
            if wait < self.options.min_wait_share or view.seconds < self.options.min_seconds:
                continue
            waited = view.kinds.get("dma wait", 0.0)
            yield self.finding(
                ctx, instr,
                f"%{instr.name} waits on DMA for {wait:.0%} of its measured time "
                f"({human_seconds(waited)} of {human_seconds(view.seconds)} over {view.runs} "
                f"run(s)): its pipeline is input-bound",
                evidence={"dma_wait_share": wait, "dma_wait_seconds": waited,
                          "kernel_seconds": view.seconds, "runs": view.runs,
                          "compute_share": view.share("compute")},
                cost={"measured_seconds": waited},
                help="Hide the copies behind compute: deeper buffering of the inputs "
                     "(pipeline_mode=pl.Buffered(3) on their BlockSpecs), larger blocks so each "
                     "step computes longer per byte fetched, or fewer re-fetches (an index map "
                     "that keeps a block resident across the inner grid axis).",
            )
