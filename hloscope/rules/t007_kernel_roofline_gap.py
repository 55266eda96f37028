"""T007 kernel-roofline-gap: a measured kernel far slower than the roofline of its body."""

from __future__ import annotations

from collections.abc import Iterator

from hloscope.rules.base import Finding, RuleContext, Severity
from hloscope.rules.options import RuleOptions
from hloscope.rules.helpers import TraceRule, human_seconds
from hloscope.rules.registry import register


@register
class KernelRooflineGap(TraceRule):
    """A kernel whose measured time is far above its roofline bound, its FLOPs and bytes
    taken from its cost_estimate or derived from its body (grid x per-step work, BlockSpec
    traffic)."""

    code = "T007"
    name = "kernel-roofline-gap"
    severity = Severity.WARNING
    summary = "a measured Pallas kernel far above the roofline of its own body"

    class Options(RuleOptions):
        ratio: float = 2.0
        min_seconds: float = 10e-6

    def check_module(self, ctx: RuleContext) -> Iterator[Finding]:
        if ctx.chip is None:
            return
        from hloscope.cost.ops import CostModel
        from hloscope.cost.roofline import op_times
        from hloscope.mlir.cost import body_costs

        model = CostModel(ctx.module, kernel_costs=body_costs(ctx.module))
        for instr, view in self.kernel_views(ctx):
            cost = model.cost(instr)
            t_compute, t_memory = op_times(model, ctx.chip, instr, cost)
            bound = max(t_compute, t_memory)
            mean = view.seconds / view.runs
            if bound <= 0 or mean < self.options.min_seconds or mean < self.options.ratio * bound:
                continue
            yield self.finding(
                ctx, instr,
                f"%{instr.name} takes {human_seconds(mean)} per run, {mean / bound:.1f}x the "
                f"roofline of its body on {ctx.chip.name} ({human_seconds(bound)}: "
                f"{cost.flops:.3g} FLOPs, {cost.hbm_bytes / 2**20:.1f} MiB of HBM traffic, "
                f"{'compute' if t_compute >= t_memory else 'memory'}-bound)",
                evidence={"mean_seconds": mean, "roofline_seconds": bound, "flops": cost.flops,
                          "hbm_bytes": cost.hbm_bytes, "runs": view.runs,
                          "dma_wait_share": view.share("dma wait"), "counters": view.counters},
                cost={"measured_seconds": (mean - bound) * view.runs},
                help="The kernel view (hloscope profile, kernel --trace) shows where the time "
                     "goes: DMA waits (T005), an idle MXU (T006), or compute the body spends "
                     "outside matmuls.",
            )
